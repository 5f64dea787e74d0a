/**
 * Keeping the as-of reports' forms (docs/rollups.md "Receivables"): recompute marked days from
 * the documents (the open items of the invoices emitted on them, the revenue of those invoices,
 * the payment complements dated on them), bring the days a report reads up to date first, drain
 * marks in the background, rebuild a store, and verify what is kept against the documents.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { financialDocs } from '../db/collections.ts';
import { elementInRange } from '../db/pipeline.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { RECEIVABLES_SOURCE, financialDocDays } from '../finance/financial-doc-days.ts';
import { tenantsWithDocuments } from '../finance/financial-docs-repo.ts';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { RollupProgress } from '../rollups/rollup-kind.ts';
import { openItemOf, type OpenItem, type OpenItemSource } from './open-items.ts';
import { RECEIVABLES_ROLLUP_VERSION, rollUpReceivablesDay, type ReceivablesDay, type ReceivablesDaySource } from './receivables-day.ts';
import { deleteReceivablesRollupsOf, openItemDays, readOpenItemsOfDays, readReceivablesDays, writeReceivablesDays } from './receivables-rollups-repo.ts';

/** The rollupState entry of these forms. */
export const RECEIVABLES_ROLLUP_STATE = 'receivables';

/** Marks read per pass. */
const MARKS_PER_PASS = 400;
/** Passes a report settles before it reads (400 days each): writes racing it leave marks the drain settles. */
const MAX_PASSES = 50;
/** Days recomputed at once: a month of a large tenant's documents in memory, not a year. */
const MAX_RUN_DAYS = 31;

type SourceDoc = OpenItemSource & ReceivablesDaySource;

const PROJECTION = {
  _id: 1,
  id: 1,
  client: 1,
  clientName: 1,
  date: 1,
  iTot: 1,
  iSub: 1,
  iDesc: 1,
  iFalt: 1,
  currency: 1,
  exchangeRate: 1,
  'invoice.uuid': 1,
  payments: 1,
  canceled: 1,
} as const;

/** Runs of consecutive days (sorted, deduplicated, at most MAX_RUN_DAYS each): one query per run. */
function runsOf(dayList: Iterable<string>): string[][] {
  const sorted = [...new Set(dayList)].sort();
  const runs: string[][] = [];
  for (const d of sorted) {
    const run = runs[runs.length - 1];
    if (run && run.length < MAX_RUN_DAYS && mxAddDays(run[run.length - 1] as string, 1) === d) run.push(d);
    else runs.push([d]);
  }
  return runs;
}

function groupByDay<T>(docs: readonly T[], dayOf: (d: T) => string[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const d of docs)
    for (const day of dayOf(d)) {
      let list = out.get(day);
      if (!list) out.set(day, (list = []));
      list.push(d);
    }
  return out;
}

/** The days (a run of consecutive ones) and their invoices' entries computed from the documents (in memory, nothing written). */
export async function computeReceivablesDays(
  db: Db,
  tenant: string,
  run: readonly string[],
  maxTimeMS: number,
): Promise<{ kept: ReceivablesDay[]; entries: OpenItem[] }> {
  const start = mxDayStart(run[0] as string);
  const end = mxDayEnd(run[run.length - 1] as string);
  const [emitted, paidOn] = await Promise.all([
    financialDocs(db)
      .find({ company: tenant, date: { $gte: start, $lte: end } }, { projection: PROJECTION, maxTimeMS, batchSize: 5000 })
      .toArray() as Promise<SourceDoc[]>,
    financialDocs(db)
      .find({ company: tenant, ...elementInRange('payments', 'date', start, end) }, { projection: PROJECTION, maxTimeMS, batchSize: 5000 })
      .toArray() as Promise<SourceDoc[]>,
  ]);
  const inRun = new Set(run);
  const emittedBy = groupByDay(emitted, (d) => [mxDateString(d.date)]);
  const paidBy = groupByDay(paidOn, (d) => [...new Set((d.payments ?? []).map((p) => mxDateString(p.date)))].filter((day) => inRun.has(day)));
  const kept: ReceivablesDay[] = [];
  const entries: OpenItem[] = [];
  for (const day of run) {
    const docs = emittedBy.get(day) ?? [];
    const k = rollUpReceivablesDay(tenant, day, { start: mxDayStart(day), end: mxDayEnd(day) }, docs, paidBy.get(day) ?? []);
    if (k) kept.push(k);
    for (const d of docs) {
      const e = openItemOf(tenant, d);
      if (e) entries.push(e);
    }
  }
  return { kept, entries };
}

/** Recomputes these days of a tenant from its documents and keeps them. */
export async function recomputeReceivablesDays(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<void> {
  for (const run of runsOf(dayList)) {
    const { kept, entries } = await computeReceivablesDays(db, tenant, run, maxTimeMS);
    await writeReceivablesDays(db, tenant, run, kept, entries);
  }
}

/** Recomputes the days these marks stand for, then clears the marks no write has bumped since. */
async function settleMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeReceivablesDays(
    db,
    tenant,
    marks.map((m) => m.day),
    maxTimeMS,
  );
  await clearMarks(db, marks);
}

/**
 * Settles a tenant's marked days up to `lastDay` (an as-of report reads invoices of any age), in
 * passes of MARKS_PER_PASS days. Answers how many marks it settled.
 */
export async function settleReceivablesMarks(
  db: Db,
  tenant: string,
  lastDay: string,
  maxTimeMS: number,
  opts: { onDays?: (n: number) => void; stopped?: () => boolean; perPass?: number; maxPasses?: number } = {},
): Promise<number> {
  let settled = 0;
  for (let pass = 0; pass < (opts.maxPasses ?? MAX_PASSES); pass++) {
    if (opts.stopped?.()) break;
    const marks = await markedDays(db, tenant, RECEIVABLES_SOURCE, '0000-00-00', lastDay, opts.perPass ?? MARKS_PER_PASS);
    if (!marks.length) break;
    await settleMarks(db, tenant, marks, maxTimeMS);
    settled += marks.length;
    opts.onDays?.(marks.length);
  }
  return settled;
}

/** Whether this store's forms were built by this version (else the reports read the documents). */
export async function receivablesRollupsReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, RECEIVABLES_ROLLUP_STATE))?.version === RECEIVABLES_ROLLUP_VERSION;
}

/** One pass of the background drain: recomputes the days of up to `limit` marks, any tenant. Answers how many it worked on. */
export async function drainReceivablesMarks(db: Db, limit: number, maxTimeMS: number): Promise<number> {
  const marks = await someMarks(db, RECEIVABLES_SOURCE, limit);
  const byTenant = new Map<string, RollupMark[]>();
  for (const m of marks) {
    let list = byTenant.get(m.tenant);
    if (!list) byTenant.set(m.tenant, (list = []));
    list.push(m);
  }
  for (const [tenant, list] of byTenant) await settleMarks(db, tenant, list, maxTimeMS);
  return marks.length;
}

/** Every day a tenant's documents touch (invoice and payment dates). */
async function documentDays(db: Db, tenant: string): Promise<Set<string>> {
  const out = new Set<string>();
  const cursor = financialDocs(db).find({ company: tenant }, { projection: { _id: 0, date: 1, 'payments.date': 1 }, batchSize: 5000 });
  for await (const d of cursor) for (const day of financialDocDays(d)) out.add(day);
  return out;
}

/**
 * Rebuilds the kept forms of these tenants (default: every tenant with documents): marks every
 * day their documents touch, forgets what was kept, recomputes, reporting progress; then records
 * that the store holds this version.
 */
export async function rebuildReceivablesRollups(
  db: Db,
  opts: { tenants?: readonly string[]; maxTimeMS?: number; onProgress?: (p: RollupProgress) => void; stopped?: () => boolean } = {},
): Promise<{ tenants: number; days: number; stopped: boolean }> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await tenantsWithDocuments(db);
  const tenants = opts.tenants ?? all;
  let total = 0;
  for (const tenant of tenants) {
    const dayList = await documentDays(db, tenant);
    for (const run of runsOf(dayList)) await markDays(db, tenant, RECEIVABLES_SOURCE, run);
    await deleteReceivablesRollupsOf(db, tenant);
    opts.onProgress?.({ kind: 'receivables', tenant, phase: 'marking', done: dayList.size, total: dayList.size });
    let done = 0;
    await settleReceivablesMarks(db, tenant, '9999-99-99', maxTimeMS, {
      perPass: opts.stopped ? 31 : MARKS_PER_PASS,
      maxPasses: Number.MAX_SAFE_INTEGER,
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      onDays: (n) => {
        done += n;
        opts.onProgress?.({ kind: 'receivables', tenant, phase: 'computing', done: Math.min(done, dayList.size), total: dayList.size });
      },
    });
    if (opts.stopped?.()) return { tenants: tenants.length, days: total, stopped: true };
    total += dayList.size;
  }
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, RECEIVABLES_ROLLUP_STATE, RECEIVABLES_ROLLUP_VERSION);
  return { tenants: tenants.length, days: total, stopped: false };
}

/** Records the store as not built: the reports read the documents until the rollup worker has rebuilt it. */
export async function forgetReceivablesRollups(db: Db): Promise<void> {
  await deleteRollupState(db, RECEIVABLES_ROLLUP_STATE);
}

/** A fresh store needs no rebuild: recorded as built, so every write from now on keeps the forms. */
export async function markEmptyReceivablesStoreBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, RECEIVABLES_ROLLUP_STATE)) return false;
  if (await financialDocs(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, RECEIVABLES_ROLLUP_STATE, RECEIVABLES_ROLLUP_VERSION);
  return true;
}

/**
 * Compares a tenant's kept days and entries with the same computed from the documents (every
 * day either side holds), after settling its marks. Answers the days that differ; `repair`
 * rewrites them.
 */
export async function verifyReceivablesRollups(
  db: Db,
  tenant: string,
  opts: { repair?: boolean; maxTimeMS?: number } = {},
): Promise<{ days: number; mismatched: string[] }> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  await settleReceivablesMarks(db, tenant, '9999-99-99', maxTimeMS, { maxPasses: Number.MAX_SAFE_INTEGER });
  const keptDays = await readReceivablesDays(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS);
  const dayList = [...new Set([...(await documentDays(db, tenant)), ...keptDays.map((k) => k.day), ...(await openItemDays(db, tenant))])].sort();
  const mismatched: string[] = [];
  for (const run of runsOf(dayList)) {
    const { kept, entries } = await computeReceivablesDays(db, tenant, run, maxTimeMS);
    const storedDays = new Map(
      (await readReceivablesDays(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS)).map((k) => [k.day, k] as const),
    );
    const computedDays = new Map(kept.map((k) => [k.day, k] as const));
    const stored = await readOpenItemsOfDays(db, tenant, run, maxTimeMS);
    for (const day of run) {
      const a = storedDays.get(day);
      const b = computedDays.get(day);
      const ea = stored.filter((e) => e.day === day).sort((x, y) => (x._id < y._id ? -1 : 1));
      const eb = entries.filter((e) => e.day === day).sort((x, y) => (x._id < y._id ? -1 : 1));
      if ((a && b ? !sameContent(a, b) : a !== b) || !sameContent(ea, eb)) mismatched.push(day);
    }
  }
  if (opts.repair && mismatched.length) await recomputeReceivablesDays(db, tenant, mismatched, maxTimeMS);
  return { days: dayList.length, mismatched };
}

/** Outstanding marks (progress of the drain). */
export const outstandingReceivablesMarks = (db: Db): Promise<number> => countMarks(db, RECEIVABLES_SOURCE);
