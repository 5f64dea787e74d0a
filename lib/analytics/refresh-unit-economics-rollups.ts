/**
 * Keeping unit economics' days (docs/rollups.md "Unit economics"): recompute marked days from the
 * trips delivered and the received cost documents issued on them, bring a report's days up to
 * date before it reads them, drain marks in the background, rebuild a whole store, and verify
 * kept days against the documents. Two mark sources stand for a day: trip writes
 * (UNIT_ECONOMICS_TRIPS_SOURCE) and received-document writes and assignments
 * (UNIT_ECONOMICS_RECEIVED_SOURCE); a day marked by either is recomputed whole.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { trips } from '../db/collections.ts';
import { UNIT_ECONOMICS_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { UNIT_ECONOMICS_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { receivedDocs, streamReceivedDocDays, tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { streamCostDocs } from '../received/received-assignments-repo.ts';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { RebuildOptions, RebuildOutcome, VerifyOutcome } from '../rollups/rollup-kind.ts';
import { COST_CATEGORIES, isCostCategory, plateWordKeys } from './trip-costs.ts';
import { costDocNetC } from './period-costs.ts';
import { rollUpUnitEconomicsDays, UNIT_ECONOMICS_ROLLUP_VERSION, type UnitCostDoc, type UnitEconomicsDay } from './unit-economics-day.ts';
import { deleteUnitEconomicsDaysOf, readUnitEconomicsDays, writeUnitEconomicsDays } from './unit-economics-rollups-repo.ts';
import { streamUnitTrips } from './trip-audits-repo.ts';

/** The rollupState entry of these totals. */
export const UNIT_ECONOMICS_ROLLUP_STATE = 'unitEconomicsRollups';

const SOURCES = [UNIT_ECONOMICS_TRIPS_SOURCE, UNIT_ECONOMICS_RECEIVED_SOURCE] as const;

/** Marks read per pass and source: a report reads at most 366 days. */
const MARKS_PER_PASS = 400;

/** Days recomputed at once: a month of a large tenant's trips and cost documents in memory, not a year. */
const MAX_RUN_DAYS = 31;

/** Runs of consecutive days (sorted, deduplicated, at most MAX_RUN_DAYS each): one read of trips and documents per run. */
function runsOf(days: Iterable<string>): string[][] {
  const sorted = [...new Set(days)].sort();
  const runs: string[][] = [];
  for (const d of sorted) {
    const run = runs[runs.length - 1];
    if (run && run.length < MAX_RUN_DAYS && mxAddDays(run[run.length - 1] as string, 1) === d) run.push(d);
    else runs.push([d]);
  }
  return runs;
}

async function* costDocsOf(db: Db, tenant: string, q: { start: number; end: number }, maxTimeMS: number): AsyncIterable<UnitCostDoc> {
  for await (const d of streamCostDocs(db, tenant, { ...q, categories: COST_CATEGORIES }, maxTimeMS)) {
    if (!isCostCategory(d.category)) continue;
    yield { date: d.date, category: d.category, netC: costDocNetC(d), vehicle: d.vehicle, tripId: d.tripId, keys: plateWordKeys(d.descriptions) };
  }
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

/** The days' kept form computed from the documents (in memory, nothing written). */
export async function computeUnitEconomicsDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<UnitEconomicsDay[]> {
  const out: UnitEconomicsDay[] = [];
  for (const run of runsOf(days)) {
    const q = { start: mxDayStart(run[0] as string), end: mxDayEnd(run[run.length - 1] as string) };
    const [legs, costs] = await Promise.all([collect(streamUnitTrips(db, tenant, q, maxTimeMS)), collect(costDocsOf(db, tenant, q, maxTimeMS))]);
    out.push(...rollUpUnitEconomicsDays(tenant, run, legs, costs));
  }
  return out;
}

/** Recomputes these days of a tenant from its documents and keeps them. */
export async function recomputeUnitEconomicsDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<void> {
  for (const run of runsOf(days)) await writeUnitEconomicsDays(db, tenant, run, await computeUnitEconomicsDays(db, tenant, run, maxTimeMS));
}

/** Recomputes the days these marks (of either source) stand for, then clears the marks no write has bumped since. */
async function settleMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeUnitEconomicsDays(
    db,
    tenant,
    marks.map((m) => m.day),
    maxTimeMS,
  );
  await clearMarks(db, marks);
}

async function marksOf(db: Db, tenant: string, fromDay: string, toDay: string, perPass: number): Promise<{ marks: RollupMark[]; more: boolean }> {
  const lists = await Promise.all(SOURCES.map((s) => markedDays(db, tenant, s, fromDay, toDay, perPass)));
  return { marks: lists.flat(), more: lists.some((l) => l.length >= perPass) };
}

/**
 * A tenant's kept days in [fromDay, toDay], brought up to date first: the days marked by a write
 * are recomputed from the documents, in passes when many are pending.
 */
export async function readFreshUnitEconomicsDays(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<UnitEconomicsDay[]> {
  if (toDay < fromDay) return [];
  // A period holds at most 366 days per source, under a pass: the further passes are for a longer range.
  for (let pass = 0; pass < 4; pass += 1) {
    const { marks, more } = await marksOf(db, tenant, fromDay, toDay, MARKS_PER_PASS);
    await settleMarks(db, tenant, marks, maxTimeMS);
    if (!more) break;
  }
  return readUnitEconomicsDays(db, tenant, fromDay, toDay, maxTimeMS);
}

/** Whether this store's days were built by this version (else the report reads the documents). */
export async function unitEconomicsRollupsReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, UNIT_ECONOMICS_ROLLUP_STATE))?.version === UNIT_ECONOMICS_ROLLUP_VERSION;
}

/** One pass of the background drain: recomputes the days of up to `limit` marks per source, any tenant. */
export async function drainUnitEconomicsMarks(db: Db, limit: number, maxTimeMS: number): Promise<number> {
  const marks = (await Promise.all(SOURCES.map((s) => someMarks(db, s, limit)))).flat();
  const byTenant = new Map<string, RollupMark[]>();
  for (const m of marks) {
    let list = byTenant.get(m.tenant);
    if (!list) byTenant.set(m.tenant, (list = []));
    list.push(m);
  }
  for (const [tenant, list] of byTenant) await settleMarks(db, tenant, list, maxTimeMS);
  return marks.length;
}

/** Settles every marked day of a tenant. */
async function settleAll(
  db: Db,
  tenant: string,
  maxTimeMS: number,
  opts: { onDays?: (n: number) => void; stopped?: () => boolean; perPass?: number } = {},
): Promise<void> {
  for (;;) {
    if (opts.stopped?.()) return;
    const { marks } = await marksOf(db, tenant, '0000-00-00', '9999-99-99', opts.perPass ?? MARKS_PER_PASS);
    if (!marks.length) return;
    await settleMarks(db, tenant, marks, maxTimeMS);
    opts.onDays?.(new Set(marks.map((m) => m.day)).size);
  }
}

/** Every day a tenant's documents can keep something on: its trips' unload days and its received documents' issue days. */
async function daysOfDocuments(db: Db, tenant: string): Promise<Set<string>> {
  const days = new Set<string>();
  const cursor = trips(db).find({ company: tenant }, { projection: { _id: 0, 'shipments.unloadDate': 1 }, batchSize: 2000 });
  for await (const t of cursor) for (const leg of t.shipments ?? []) if (typeof leg.unloadDate === 'number') days.add(mxDateString(leg.unloadDate));
  for await (const d of streamReceivedDocDays(db, tenant)) if (Number.isFinite(d.date)) days.add(mxDateString(d.date));
  return days;
}

/** Every tenant with trips or received CFDIs. */
async function tenantsOfStore(db: Db): Promise<string[]> {
  return [...new Set([...(await tenantsWithTrips(db)), ...(await tenantsWithReceivedDocs(db))])].sort();
}

/**
 * Rebuilds the kept days of these tenants (default: every tenant with trips or received CFDIs):
 * marks every day their documents touch, then recomputes them, reporting progress; then records the version.
 */
export async function rebuildUnitEconomicsRollups(db: Db, opts: RebuildOptions = {}): Promise<RebuildOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await tenantsOfStore(db);
  const tenants = opts.tenants ?? all;
  let units = 0;
  for (const tenant of tenants) {
    const days = await daysOfDocuments(db, tenant);
    for (const run of runsOf(days)) await markDays(db, tenant, UNIT_ECONOMICS_TRIPS_SOURCE, run);
    // Every day marked: what was kept (perhaps by another version) goes; a report meanwhile recomputes what it reads.
    await deleteUnitEconomicsDaysOf(db, tenant);
    const total = days.size;
    opts.onProgress?.({ kind: 'unit-economics', tenant, phase: 'marking', done: total, total });
    let done = 0;
    await settleAll(db, tenant, maxTimeMS, {
      perPass: opts.stopped ? 31 : MARKS_PER_PASS,
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      onDays: (n) => {
        done += n;
        opts.onProgress?.({ kind: 'unit-economics', tenant, phase: 'computing', done: Math.min(done, total), total });
      },
    });
    if (opts.stopped?.()) return { tenants: tenants.length, units, stopped: true };
    units += total;
  }
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, UNIT_ECONOMICS_ROLLUP_STATE, UNIT_ECONOMICS_ROLLUP_VERSION);
  return { tenants: tenants.length, units, stopped: false };
}

/** Records the store as not built: the report reads the documents until the rollup worker has rebuilt it. */
export async function forgetUnitEconomicsRollups(db: Db): Promise<void> {
  await deleteRollupState(db, UNIT_ECONOMICS_ROLLUP_STATE);
}

/** A store without trips or received CFDIs needs no rebuild: recorded as built. */
export async function markEmptyUnitEconomicsStoreBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, UNIT_ECONOMICS_ROLLUP_STATE)) return false;
  if (await trips(db).findOne({}, { projection: { _id: 1 } })) return false;
  if (await receivedDocs(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, UNIT_ECONOMICS_ROLLUP_STATE, UNIT_ECONOMICS_ROLLUP_VERSION);
  return true;
}

/**
 * Compares a tenant's kept days with the same days computed from the documents (every day either
 * side holds). Answers the days that differ; `repair` rewrites them.
 */
export async function verifyUnitEconomicsRollups(db: Db, tenant: string, opts: { repair?: boolean; maxTimeMS?: number } = {}): Promise<VerifyOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  // Marked days are known to be stale: settled first, so a difference is a fault, not a pending write.
  await settleAll(db, tenant, maxTimeMS);
  const kept = await readUnitEconomicsDays(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS);
  const keptBy = new Map(kept.map((k) => [k.day, k]));
  const days = [...new Set([...(await daysOfDocuments(db, tenant)), ...keptBy.keys()])].sort();
  const mismatched: string[] = [];
  for (const run of runsOf(days)) {
    const computedBy = new Map((await computeUnitEconomicsDays(db, tenant, run, maxTimeMS)).map((k) => [k.day, k]));
    for (const day of run) {
      const a = keptBy.get(day);
      const b = computedBy.get(day);
      if (!a || !b ? a !== b : !sameContent(a, b)) mismatched.push(day);
    }
  }
  if (opts.repair && mismatched.length) await recomputeUnitEconomicsDays(db, tenant, mismatched, maxTimeMS);
  return { checked: days.length, mismatched };
}

/** Outstanding marks of both sources (progress of the drain). */
export const outstandingUnitEconomicsMarks = async (db: Db): Promise<number> =>
  (await Promise.all(SOURCES.map((s) => countMarks(db, s)))).reduce((a, b) => a + b, 0);
