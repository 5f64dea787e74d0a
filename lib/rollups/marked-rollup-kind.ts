/**
 * The lifecycle every kind of totals kept over marked days shares (docs/rollups.md "How the days
 * stay right"). An area says how to recompute and keep a unit (a day, or a month) of a tenant
 * from its documents and how to compare it with what is kept; `markedRollupKind` builds the rest
 * of a RollupKind: settling marks (recompute, then the seq-guarded clear), a report's bounded
 * settle of its period, the background drain, the rebuild with progress, forget, verify and
 * repair, outstanding marks, and an empty store recorded as built. Area-free: lib/db and lib/time.
 */
import type { Db } from 'mongodb';
import { perDb } from '../db/per-db.ts';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { settleByTenant, settleTenant, throwIfTenantsFailed } from '../db/settle-by-tenant.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { mxAddDays } from '../time/mexico-city.ts';
import type { RebuildOptions, RebuildOutcome, RollupKind, VerifyOutcome } from './rollup-kind.ts';

/** What a kind keeps per tenant: a Mexico City day, or a month ('YYYY-MM', recomputed whole when any of its days is marked). */
export type RollupGrain = 'day' | 'month';

/**
 * Months kept from the days (the tax summary's payment basis): when a day is settled its month
 * is marked under `source` (the mark's `day` is the month), and the month is recomputed from
 * those marks after the days. Verified over the months of every document day.
 */
export interface DerivedMonths<C> {
  source: string;
  /**
   * Months handed to recompute and differing at once (default 1), sorted, any gaps, each computed
   * from its own month's documents: a kind that reads them once for many sets it (a settle of a
   * rebuild's marks and a verify read the documents once per `runMonths` months).
   */
  runMonths?: number;
  /** Recomputes these months and keeps them: idempotent. */
  recompute(db: Db, tenant: string, months: readonly string[], ctx: C, maxTimeMS: number): Promise<void>;
  /** The months whose kept form differs from the same computed from the documents (nothing written). */
  differing(db: Db, tenant: string, months: readonly string[], ctx: C, maxTimeMS: number): Promise<string[]>;
  /** The months a tenant's kept forms hold. */
  keptMonths(db: Db, tenant: string, maxTimeMS: number): Promise<Iterable<string>>;
}

export interface MarkedRollupOptions<C = undefined> {
  /** The kind's name: the logs, the progress, `npm run rollups -- --kind`. */
  name: string;
  /** Its entry in rollupState. */
  stateName: string;
  /** The version the store must have been built by (the area's *_ROLLUP_VERSION): a store of another is rebuilt. */
  version: number;
  /** The mark sources it reads and alone clears: a mark of any of them on a day stands for that day's unit. */
  sources: readonly string[];
  grain: RollupGrain;
  /** Marks read per source and pass: a report's period fits in one pass. */
  marksPerPass: number;
  /** Day grain: consecutive days recomputed together (one read of the documents). Default 31. A month is recomputed alone. */
  maxRunDays?: number;
  /**
   * Day grain: the same for a rebuild and a verify, which read a tenant's whole history: fewer,
   * larger reads (a run's documents are held in memory while it is computed). Default 92.
   */
  rebuildRunDays?: number;
  /**
   * Day grain: a rebuild's or a verify's run may skip days without documents (it spans at most
   * rebuildRunDays calendar days), for a kind whose recompute computes and writes the run's days
   * only, each from the documents of its own day (sparse days: one read for many, not one each).
   */
  rebuildAcrossGaps?: boolean;
  /**
   * Month grain: months a rebuild's or a verify's run holds (default 1), for a kind whose
   * recompute and differing take a run of months (sorted, any gaps), each computed from its own
   * month's documents: one read for many months.
   */
  rebuildRunMonths?: number;
  /** Every tenant with documents this kind reads: a rebuild's default, and the store is built once all are. */
  tenants(db: Db): Promise<readonly string[]>;
  /** Whether the store holds no document this kind reads (then it is recorded as built at once). */
  isEmpty(db: Db): Promise<boolean>;
  /** Per source, the days a tenant's documents touch: what a rebuild marks and verify computes. */
  documentDays(db: Db, tenant: string): Promise<ReadonlyMap<string, Iterable<string>>>;
  /** The units a tenant's kept forms hold (verify compares them too: a kept unit without documents is a fault). */
  keptUnits(db: Db, tenant: string, maxTimeMS: number): Promise<Iterable<string>>;
  /** Forgets everything kept of a tenant (a rebuild, once every day is marked). */
  deleteOf(db: Db, tenant: string): Promise<void>;
  /** What a recompute needs of a tenant besides its documents (the tax summary's settings): read once per tenant and pass. */
  context?(db: Db, tenant: string): Promise<C>;
  /** Recomputes a run of units (consecutive days, or one month; see rebuildAcrossGaps, rebuildRunMonths) from the documents and keeps it: idempotent. */
  recompute(db: Db, tenant: string, run: readonly string[], ctx: C, maxTimeMS: number): Promise<void>;
  /** The units of a run whose kept form differs from the same computed from the documents (nothing written). */
  differing(db: Db, tenant: string, run: readonly string[], ctx: C, maxTimeMS: number): Promise<string[]>;
  months?: DerivedMonths<C>;
}

/** The context a caller hands over when the kind has one (a report already holds it). */
export type WithContext<C> = undefined extends C ? { ctx?: C } : { ctx: C };

export interface SettleQuery {
  /** Days (or, for derived months, months) [from, to], inclusive. */
  from: string;
  to: string;
  /** Passes of `marksPerPass` marks per source at most: writes racing a report leave marks the drain settles. */
  maxPasses: number;
  maxTimeMS: number;
}

export interface MarkedRollupKind<C = undefined> extends RollupKind {
  rebuild(db: Db, opts?: RebuildOptions): Promise<RebuildOutcome>;
  verify(db: Db, tenant: string, opts?: { repair?: boolean; maxTimeMS?: number }): Promise<VerifyOutcome>;
  /** Before a report reads [from, to]: recomputes the units marked there, in passes. Answers how many marks it settled. */
  settle(db: Db, tenant: string, q: SettleQuery & WithContext<C>): Promise<number>;
  /** The same for the derived months' marks in [from, to] ('YYYY-MM'), one pass. */
  settleMonths(db: Db, tenant: string, q: Omit<SettleQuery, 'maxPasses'> & WithContext<C>): Promise<void>;
  /** Recomputes these units (any, grouped into runs) and keeps them: a report's units kept by another version or settings. */
  recompute(db: Db, tenant: string, units: Iterable<string>, ctx: C, maxTimeMS: number): Promise<void>;
}

/**
 * How long this process takes a kind's store as built without reading rollupState again (per
 * database handle), so a report costs no extra round trip. Only "built" is remembered: a store
 * not built yet is read again by every report, which reads the kept totals as soon as the rebuild
 * records them. This process's `forget` and a rebuild's start drop it at once; another
 * instance's `forget` (before a bulk load that bypasses the marks) is seen here within the TTL,
 * as settings written elsewhere are (lib/settings/settings-cache.ts).
 */
const READY_TTL_MS = 5_000;
const builtUntil = perDb(() => new Map<string, number>());

const FIRST = '0000-00-00';
const LAST = '9999-99-99';

/** Consecutive slices of at most `size` (at least 1). */
function chunks<T>(xs: readonly T[], size: number): T[][] {
  const n = Math.max(1, Math.floor(size));
  const out: T[][] = [];
  for (let i = 0; i < xs.length; i += n) out.push(xs.slice(i, i + n));
  return out;
}

export function markedRollupKind<C = undefined>(o: MarkedRollupOptions<C>): MarkedRollupKind<C> {
  const maxRunDays = o.maxRunDays ?? 31;
  const rebuildRunDays = Math.max(o.rebuildRunDays ?? 92, maxRunDays);
  const unitOf = o.grain === 'month' ? (day: string): string => day.slice(0, 7) : (day: string): string => day;
  const contextOf = (db: Db, tenant: string): Promise<C> => (o.context ? o.context(db, tenant) : Promise.resolve(undefined as C));

  /**
   * Runs of units (sorted, deduplicated): consecutive days, at most maxRunDays each; a month alone.
   * `whole` (a rebuild, a verify): at most rebuildRunDays, and across gaps when the kind allows it.
   */
  function runsOf(units: Iterable<string>, whole = false): string[][] {
    const runDays = whole ? rebuildRunDays : maxRunDays;
    const acrossGaps = whole && o.rebuildAcrossGaps === true;
    const sorted = [...new Set(units)].sort();
    if (o.grain === 'month') return chunks(sorted, whole ? (o.rebuildRunMonths ?? 1) : 1);
    const runs: string[][] = [];
    for (const d of sorted) {
      const run = runs[runs.length - 1];
      const next = acrossGaps ? d <= mxAddDays(run?.[0] ?? d, runDays - 1) : mxAddDays(run?.[run.length - 1] ?? d, 1) === d;
      if (run && run.length < runDays && next) run.push(d);
      else runs.push([d]);
    }
    return runs;
  }

  async function recompute(db: Db, tenant: string, units: Iterable<string>, ctx: C, maxTimeMS: number, whole = false): Promise<void> {
    for (const run of runsOf(units, whole)) await o.recompute(db, tenant, run, ctx, maxTimeMS);
  }

  /**
   * Recomputes the units these marks stand for (and marks their derived months), then clears the
   * marks no write has bumped since. A crash in between leaves the marks: the next reader recomputes.
   */
  async function settleMarks(db: Db, tenant: string, marks: readonly RollupMark[], ctx: C, maxTimeMS: number, whole = false): Promise<number> {
    if (!marks.length) return 0;
    const units = new Set(marks.map((m) => unitOf(m.day)));
    await recompute(db, tenant, units, ctx, maxTimeMS, whole);
    if (o.months)
      await markDays(
        db,
        tenant,
        o.months.source,
        marks.map((m) => m.day.slice(0, 7)),
      );
    await clearMarks(db, marks);
    return units.size;
  }

  /** Recomputes these derived months (sorted), `runMonths` at a time. */
  async function recomputeMonths(db: Db, tenant: string, months: readonly string[], ctx: C, maxTimeMS: number): Promise<void> {
    const m = o.months;
    if (m) for (const run of chunks(months, m.runMonths ?? 1)) await m.recompute(db, tenant, run, ctx, maxTimeMS);
  }

  async function settleMonthMarks(db: Db, tenant: string, marks: readonly RollupMark[], ctx: C, maxTimeMS: number): Promise<void> {
    if (!marks.length || !o.months) return;
    await recomputeMonths(db, tenant, [...new Set(marks.map((m) => m.day))].sort(), ctx, maxTimeMS);
    await clearMarks(db, marks);
  }

  /**
   * One pass: up to `perPass` marks of each source in [from, to], earliest first. When a source
   * filled its page, only the units up to its last are settled (the others' later marks wait for
   * the next pass), so the sources advance together and a unit is recomputed once.
   */
  async function settlePass(
    db: Db,
    tenant: string,
    ctx: C,
    from: string,
    to: string,
    perPass: number,
    maxTimeMS: number,
    whole = false,
  ): Promise<{ marks: number; units: number; full: boolean }> {
    const pages = await Promise.all(o.sources.map((source) => markedDays(db, tenant, source, from, to, perPass)));
    const full = pages.filter((p) => p.length === perPass);
    const cut = full.length ? full.map((p) => unitOf((p[p.length - 1] as RollupMark).day)).sort()[0] : undefined;
    const marks = pages.flat().filter((m) => cut === undefined || unitOf(m.day) <= cut);
    const units = await settleMarks(db, tenant, marks, ctx, maxTimeMS, whole);
    return { marks: marks.length, units, full: full.length > 0 };
  }

  /** Settles every marked unit of a tenant, then its derived months (the days mark them). */
  async function settleAll(
    db: Db,
    tenant: string,
    ctx: C,
    maxTimeMS: number,
    opts: { onUnits?: (n: number) => void; stopped?: () => boolean; perPass?: number; whole?: boolean } = {},
  ): Promise<void> {
    const perPass = opts.perPass ?? o.marksPerPass;
    for (;;) {
      if (opts.stopped?.()) return;
      const r = await settlePass(db, tenant, ctx, FIRST, LAST, perPass, maxTimeMS, opts.whole);
      if (!r.marks) break;
      opts.onUnits?.(r.units);
    }
    if (!o.months) return;
    for (;;) {
      if (opts.stopped?.()) return;
      const marks = await markedDays(db, tenant, o.months.source, FIRST, LAST, perPass);
      if (!marks.length) break;
      await settleMonthMarks(db, tenant, marks, ctx, maxTimeMS);
    }
  }

  /** Marks every unit a tenant's documents touch; answers how many units that is. */
  async function markAll(db: Db, tenant: string): Promise<number> {
    const bySource = await o.documentDays(db, tenant);
    const units = new Set<string>();
    for (const source of o.sources) {
      const own = new Set([...(bySource.get(source) ?? [])].map(unitOf));
      for (const u of own) units.add(u);
      // A month is marked by its first day; days in writes of at most rebuildRunDays marks (any days: a mark is its own upsert).
      if (o.grain === 'month')
        await markDays(
          db,
          tenant,
          source,
          [...own].map((m) => `${m}-01`),
        );
      else {
        const days = [...own].sort();
        for (let i = 0; i < days.length; i += rebuildRunDays) await markDays(db, tenant, source, days.slice(i, i + rebuildRunDays));
      }
    }
    return units.size;
  }

  return {
    name: o.name,

    async ready(db) {
      const known = builtUntil(db);
      if ((known.get(o.stateName) ?? 0) > Date.now()) return true;
      const built = (await readRollupState(db, o.stateName))?.version === o.version;
      if (built) known.set(o.stateName, Date.now() + READY_TTL_MS);
      else known.delete(o.stateName);
      return built;
    },

    /**
     * Rebuilds the kept forms of these tenants (default: every tenant with documents): marks every
     * unit their documents touch, forgets what was kept (a report meanwhile recomputes what it
     * reads), then settles the marks, reporting progress. Once every tenant is done, records that
     * the store holds this version.
     */
    async rebuild(db, opts = {}) {
      const maxTimeMS = opts.maxTimeMS ?? 600_000;
      builtUntil(db).delete(o.stateName);
      const all = await o.tenants(db);
      const tenants = opts.tenants ?? all;
      let units = 0;
      const failures = new Map<string, unknown>();
      for (const tenant of tenants) {
        const total = await markAll(db, tenant);
        await o.deleteOf(db, tenant);
        opts.onProgress?.({ kind: o.name, tenant, phase: 'marking', done: total, total });
        const ctx = await contextOf(db, tenant);
        let done = 0;
        // A tenant whose recompute fails keeps the marks of the days not yet settled, as after any failed
        // write: kept days and marks still answer alike, and the drain retries them. The rebuild goes on:
        // stopping there had the worker start it again from the first tenant every second.
        await settleTenant(
          tenant,
          () =>
            // A run per pass when the rebuild may be told to stop (the service shutting down): it stops within one; the marks stay for the next start.
            // Runs of rebuildRunDays: the whole history is read, in fewer and larger reads than a report's settle.
            settleAll(db, tenant, ctx, maxTimeMS, {
              whole: true,
              perPass: opts.stopped ? (o.grain === 'day' ? rebuildRunDays : 1) : Math.max(o.marksPerPass, rebuildRunDays),
              ...(opts.stopped ? { stopped: opts.stopped } : {}),
              onUnits: (n) => {
                done += n;
                opts.onProgress?.({ kind: o.name, tenant, phase: 'computing', done: Math.min(done, total), total });
              },
            }),
          failures,
        );
        if (opts.stopped?.()) return { tenants: tenants.length, units, stopped: true };
        units += total;
      }
      if (all.every((t) => tenants.includes(t))) await writeRollupState(db, o.stateName, o.version);
      throwIfTenantsFailed(failures);
      return { tenants: tenants.length, units, stopped: false };
    },

    async forget(db) {
      builtUntil(db).delete(o.stateName);
      await deleteRollupState(db, o.stateName);
    },

    async markEmptyStoreBuilt(db) {
      if (await readRollupState(db, o.stateName)) return false;
      if (!(await o.isEmpty(db))) return false;
      await writeRollupState(db, o.stateName, o.version);
      return true;
    },

    /**
     * One pass over the marks of any tenant, `limit` marks in all: the sources' marks settled
     * together (a unit that several sources marked, as an import of issued and received CFDIs
     * does, is recomputed once), then the derived months'.
     */
    async drain(db, limit, maxTimeMS, window) {
      const marks: RollupMark[] = [];
      for (const source of o.sources) {
        if (marks.length >= limit) break;
        marks.push(...(await someMarks(db, source, limit - marks.length, window)));
      }
      const failures = await settleByTenant(marks, async (tenant, list) => settleMarks(db, tenant, list, await contextOf(db, tenant), maxTimeMS));
      let worked = marks.length;
      if (o.months && worked < limit) {
        const monthMarks = await someMarks(db, o.months.source, limit - worked, window);
        await settleByTenant(monthMarks, async (tenant, list) => settleMonthMarks(db, tenant, list, await contextOf(db, tenant), maxTimeMS), failures);
        worked += monthMarks.length;
      }
      throwIfTenantsFailed(failures);
      return worked;
    },

    /**
     * Compares a tenant's kept units with the same computed from the documents (every unit either
     * side holds), after settling its marks: a difference is a fault, not a pending write. Answers
     * the units that differ; `repair` rewrites them.
     */
    async verify(db, tenant, opts = {}) {
      const maxTimeMS = opts.maxTimeMS ?? 600_000;
      const ctx = await contextOf(db, tenant);
      await settleAll(db, tenant, ctx, maxTimeMS);
      const days = new Set<string>();
      for (const list of (await o.documentDays(db, tenant)).values()) for (const d of list) days.add(d);
      const units = [...new Set([...[...days].map(unitOf), ...(await o.keptUnits(db, tenant, maxTimeMS))])].sort();
      const mismatched: string[] = [];
      for (const run of runsOf(units, true)) mismatched.push(...(await o.differing(db, tenant, run, ctx, maxTimeMS)));
      let checked = units.length;
      const badMonths: string[] = [];
      if (o.months) {
        const months = [...new Set([...[...days].map((d) => d.slice(0, 7)), ...(await o.months.keptMonths(db, tenant, maxTimeMS))])].sort();
        for (const run of chunks(months, o.months.runMonths ?? 1)) badMonths.push(...(await o.months.differing(db, tenant, run, ctx, maxTimeMS)));
        checked += months.length;
      }
      if (opts.repair) {
        if (mismatched.length) await recompute(db, tenant, mismatched, ctx, maxTimeMS);
        // A repaired day's month too: a month kept from its days (the tax position's) was compared with the days as they were.
        const repairMonths = o.months ? [...new Set([...badMonths, ...mismatched.map((d) => d.slice(0, 7))])].sort() : [];
        await recomputeMonths(db, tenant, repairMonths, ctx, maxTimeMS);
      }
      return { checked, mismatched: [...mismatched, ...badMonths] };
    },

    outstanding: async (db) => {
      let n = 0;
      for (const source of o.sources) n += await countMarks(db, source);
      return n;
    },

    async settle(db, tenant, q) {
      if (q.to < q.from) return 0;
      const ctx = q.ctx as C;
      let settled = 0;
      for (let pass = 0; pass < q.maxPasses; pass++) {
        const r = await settlePass(db, tenant, ctx, q.from, q.to, o.marksPerPass, q.maxTimeMS);
        settled += r.marks;
        if (!r.full) break;
      }
      return settled;
    },

    async settleMonths(db, tenant, q) {
      if (!o.months) return;
      await settleMonthMarks(db, tenant, await markedDays(db, tenant, o.months.source, q.from, q.to, o.marksPerPass), q.ctx as C, q.maxTimeMS);
    },

    recompute,
  };
}
