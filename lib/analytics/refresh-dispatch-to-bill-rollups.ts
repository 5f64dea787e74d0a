/**
 * Keeping dispatch-to-bill's days (docs/rollups.md "Dispatch-to-bill"): recompute marked days
 * from the trips and their linked invoices, bring a report's days up to date before it reads
 * them, drain marks in the background, rebuild a whole store, verify the kept days.
 *
 * Two mark sources. `tripsDispatchToBill` (a trip write: the days its legs touch, stored and new
 * versions) names days to recompute. `dispatchToBillDocs` (every financial-document write: the
 * document's days, stored and new versions) names days whose documents may have changed: settling
 * it reads the documents dated on them and marks, in the trip source, the unload days of every
 * trip linked to one (`idFinan`), then clears the document marks it read. So a cancellation, a
 * re-import that moves an invoice's date, or an invoice that arrives after the trip naming it
 * reaches the trip's days; a report settles every document mark of its tenant first (an invoice
 * of any date bills a trip of the period), then the trip marks of its period.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { trips } from '../db/collections.ts';
import { DISPATCH_TO_BILL_DOCS_SOURCE } from '../finance/financial-doc-days.ts';
import { DISPATCH_TO_BILL_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { mxAddDays, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import type { RebuildOptions, RebuildOutcome, VerifyOutcome } from '../rollups/rollup-kind.ts';
import { isDeepStrictEqual } from 'node:util';
import {
  DISPATCH_TO_BILL_ROLLUP_VERSION,
  rollUpDispatchToBillDays,
  type DispatchToBillDayPart,
  type StoredDeliveryRow,
  type UnbilledEntry,
} from './dispatch-to-bill-day.ts';
import {
  deleteDispatchToBillOf,
  documentIdsDated,
  readAllUnbilled,
  readDispatchToBillDays,
  unloadDaysOfTenant,
  unloadDaysOfTripsLinkedTo,
  writeDispatchToBillDays,
  writeUnbilledEntries,
} from './dispatch-to-bill-rollups-repo.ts';
import { streamStoredDeliveryRows } from './trip-audits-repo.ts';

/** The rollupState entry of these totals. */
export const DISPATCH_TO_BILL_ROLLUP_STATE = 'dispatchToBillRollups';

/** Marks read per pass. */
const MARKS_PER_PASS = 400;

/** Days recomputed at once: a month of a large tenant's trips in memory, not a year. */
const MAX_RUN_DAYS = 31;

/** Runs of consecutive days (sorted, deduplicated, at most MAX_RUN_DAYS each): one read per run. */
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

const rangeOf = (run: readonly string[]): { start: number; end: number } => ({
  start: mxDayStart(run[0] as string),
  end: mxDayEnd(run[run.length - 1] as string),
});

/** One run of days computed from the trips with a leg unloaded on them (nothing written). */
async function computeRun(
  db: Db,
  tenant: string,
  run: readonly string[],
  maxTimeMS: number,
): Promise<{ parts: DispatchToBillDayPart[]; unbilled: UnbilledEntry[] }> {
  const rows: StoredDeliveryRow[] = [];
  for await (const r of streamStoredDeliveryRows(db, tenant, rangeOf(run), maxTimeMS)) rows.push(r);
  return rollUpDispatchToBillDays(tenant, run, rows);
}

/** Recomputes these days of a tenant and keeps them. */
export async function recomputeDispatchToBillDays(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<void> {
  for (const run of runsOf(dayList)) {
    const { parts, unbilled } = await computeRun(db, tenant, run, maxTimeMS);
    await writeDispatchToBillDays(db, tenant, run, parts);
    await writeUnbilledEntries(db, tenant, rangeOf(run), unbilled);
  }
}

/** Turns document marks into the trip marks of the trips linked to the documents dated on their days; clears them. */
async function settleDocumentMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  const tripDays = new Set<string>();
  for (const run of runsOf(marks.map((m) => m.day))) {
    const ids = await documentIdsDated(db, tenant, run[0] as string, run[run.length - 1] as string, maxTimeMS);
    for (const d of await unloadDaysOfTripsLinkedTo(db, tenant, ids, maxTimeMS)) tripDays.add(d);
  }
  await markDays(db, tenant, DISPATCH_TO_BILL_TRIPS_SOURCE, tripDays);
  await clearMarks(db, marks);
}

async function settleTripMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeDispatchToBillDays(
    db,
    tenant,
    marks.map((m) => m.day),
    maxTimeMS,
  );
  await clearMarks(db, marks);
}

/**
 * Brings a tenant's days in [fromDay, toDay] up to date: every document mark of the tenant
 * first (to trip marks), then the trip marks of those days, in passes until none is left.
 */
export async function settleDispatchToBill(
  db: Db,
  tenant: string,
  fromDay: string,
  toDay: string,
  maxTimeMS: number,
  opts: { onDays?: (n: number) => void; stopped?: () => boolean; perPass?: number } = {},
): Promise<void> {
  const perPass = opts.perPass ?? MARKS_PER_PASS;
  for (;;) {
    if (opts.stopped?.()) return;
    const marks = await markedDays(db, tenant, DISPATCH_TO_BILL_DOCS_SOURCE, '0000-00-00', '9999-99-99', perPass);
    await settleDocumentMarks(db, tenant, marks, maxTimeMS);
    if (marks.length < perPass) break;
  }
  if (toDay < fromDay) return;
  for (;;) {
    if (opts.stopped?.()) return;
    const marks = await markedDays(db, tenant, DISPATCH_TO_BILL_TRIPS_SOURCE, fromDay, toDay, perPass);
    await settleTripMarks(db, tenant, marks, maxTimeMS);
    opts.onDays?.(marks.length);
    if (marks.length < perPass) break;
  }
}

/** Whether this store's days were built by this version (else the report reads the trips). */
export async function dispatchToBillRollupsReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, DISPATCH_TO_BILL_ROLLUP_STATE))?.version === DISPATCH_TO_BILL_ROLLUP_VERSION;
}

const byTenant = (marks: readonly RollupMark[]): Map<string, RollupMark[]> => {
  const out = new Map<string, RollupMark[]>();
  for (const m of marks) {
    let list = out.get(m.tenant);
    if (!list) out.set(m.tenant, (list = []));
    list.push(m);
  }
  return out;
};

/** One pass of the background drain: up to `limit` document marks, then up to `limit` trip marks, any tenant. */
export async function drainDispatchToBillMarks(db: Db, limit: number, maxTimeMS: number): Promise<number> {
  const docMarks = await someMarks(db, DISPATCH_TO_BILL_DOCS_SOURCE, limit);
  for (const [tenant, list] of byTenant(docMarks)) await settleDocumentMarks(db, tenant, list, maxTimeMS);
  const tripMarks = await someMarks(db, DISPATCH_TO_BILL_TRIPS_SOURCE, limit);
  for (const [tenant, list] of byTenant(tripMarks)) await settleTripMarks(db, tenant, list, maxTimeMS);
  return docMarks.length + tripMarks.length;
}

/**
 * Rebuilds the kept days of these tenants (default: every tenant with trips): marks every day
 * their trips' legs were unloaded on, forgets what was kept, recomputes, then records the version.
 */
export async function rebuildDispatchToBillRollups(db: Db, opts: RebuildOptions = {}): Promise<RebuildOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await tenantsWithTrips(db);
  const tenants = opts.tenants ?? all;
  let units = 0;
  for (const tenant of tenants) {
    const dayList = await unloadDaysOfTenant(db, tenant, maxTimeMS);
    for (const run of runsOf(dayList)) await markDays(db, tenant, DISPATCH_TO_BILL_TRIPS_SOURCE, run);
    // Every day marked: what was kept (perhaps by another version) goes; a report meanwhile recomputes what it reads.
    await deleteDispatchToBillOf(db, tenant);
    const total = dayList.size;
    opts.onProgress?.({ kind: 'dispatch-to-bill', tenant, phase: 'marking', done: total, total });
    let done = 0;
    await settleDispatchToBill(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS, {
      perPass: opts.stopped ? 31 : MARKS_PER_PASS,
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      onDays: (n) => {
        done += n;
        opts.onProgress?.({ kind: 'dispatch-to-bill', tenant, phase: 'computing', done: Math.min(done, total), total });
      },
    });
    if (opts.stopped?.()) return { tenants: tenants.length, units, stopped: true };
    units += total;
  }
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, DISPATCH_TO_BILL_ROLLUP_STATE, DISPATCH_TO_BILL_ROLLUP_VERSION);
  return { tenants: tenants.length, units, stopped: false };
}

/** Records the store as not built: the report reads the trips until the rollup worker has rebuilt it. */
export async function forgetDispatchToBillRollups(db: Db): Promise<void> {
  await deleteRollupState(db, DISPATCH_TO_BILL_ROLLUP_STATE);
}

/** A store without trips needs no rebuild: recorded as built. */
export async function markEmptyDispatchToBillStoreBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, DISPATCH_TO_BILL_ROLLUP_STATE)) return false;
  if (await trips(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, DISPATCH_TO_BILL_ROLLUP_STATE, DISPATCH_TO_BILL_ROLLUP_VERSION);
  return true;
}

/**
 * Compares a tenant's kept days and unbilled entries with the same days computed from the trips
 * (every day either side holds). Answers the days that differ; `repair` rewrites them.
 */
export async function verifyDispatchToBillRollups(db: Db, tenant: string, opts: { repair?: boolean; maxTimeMS?: number } = {}): Promise<VerifyOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  // Marked days are known to be stale: settled first, so a difference is a fault, not a pending write.
  await settleDispatchToBill(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS);
  const keptParts = await readDispatchToBillDays(db, tenant, '0000-00-00', '9999-99-99', maxTimeMS);
  const keptUnbilled = await readAllUnbilled(db, tenant, maxTimeMS);
  const group = <T extends { day: string }>(xs: readonly T[]): Map<string, T[]> => {
    const m = new Map<string, T[]>();
    for (const x of xs) {
      let l = m.get(x.day);
      if (!l) m.set(x.day, (l = []));
      l.push(x);
    }
    return m;
  };
  const partsBy = group(keptParts);
  const unbilledBy = group(keptUnbilled);
  const dayList = [...new Set([...(await unloadDaysOfTenant(db, tenant, maxTimeMS)), ...partsBy.keys(), ...unbilledBy.keys()])].sort();
  const byTrip = (a: UnbilledEntry, b: UnbilledEntry): number => (a.tripId < b.tripId ? -1 : a.tripId > b.tripId ? 1 : 0);
  const mismatched: string[] = [];
  for (const run of runsOf(dayList)) {
    const computed = await computeRun(db, tenant, run, maxTimeMS);
    const cParts = group(computed.parts);
    const cUnbilled = group(computed.unbilled);
    for (const day of run) {
      const sameParts = isDeepStrictEqual(partsBy.get(day) ?? [], cParts.get(day) ?? []);
      const sameUnbilled = isDeepStrictEqual([...(unbilledBy.get(day) ?? [])].sort(byTrip), [...(cUnbilled.get(day) ?? [])].sort(byTrip));
      if (!sameParts || !sameUnbilled) mismatched.push(day);
    }
  }
  if (opts.repair && mismatched.length) await recomputeDispatchToBillDays(db, tenant, mismatched, maxTimeMS);
  return { checked: dayList.length, mismatched };
}

/** Outstanding marks of both sources (progress of the drain). */
export const outstandingDispatchToBillMarks = async (db: Db): Promise<number> =>
  (await countMarks(db, DISPATCH_TO_BILL_DOCS_SOURCE)) + (await countMarks(db, DISPATCH_TO_BILL_TRIPS_SOURCE));
