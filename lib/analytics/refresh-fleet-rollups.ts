/**
 * Keeping fleet utilization's days (docs/rollups.md "Fleet utilization"): recompute marked days
 * from the trips, bring a report's days up to date before it reads them, drain marks in the
 * background, rebuild a whole store, and verify kept days against the trips.
 */
import type { Db } from 'mongodb';
import { clearMarks, countMarks, markDays, markedDays, someMarks, type RollupMark } from '../db/rollup-marks.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../db/rollup-state.ts';
import { trips } from '../db/collections.ts';
import { FLEET_UTILIZATION_SOURCE, tripDays } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { mxAddDays } from '../time/mexico-city.ts';
import { sameContent } from '../shared/same-content.ts';
import type { RebuildOptions, RebuildOutcome, VerifyOutcome } from '../rollups/rollup-kind.ts';
import { FLEET_ROLLUP_VERSION, rollUpFleetDays, type FleetDayRollup, type StoredFleetDay } from './fleet-day-rollup.ts';
import { deleteFleetRollupsOf, readFleetDays, readStoredFleetDays, writeFleetDays, type FleetDayPart } from './fleet-rollups-repo.ts';
import { tripsTouchingDays } from './trip-audits-repo.ts';

/** The rollupState entry of these totals. */
export const FLEET_ROLLUP_STATE = 'fleetUtilizationRollups';

/** Marks read per pass: a report reads at most 398 + 366 days. */
const MARKS_PER_PASS = 800;

/** Days recomputed at once: a month of a large tenant's trips in memory, not a year. */
const MAX_RUN_DAYS = 31;

/** Runs of consecutive days (sorted, deduplicated, at most MAX_RUN_DAYS each): one read of trips per run. */
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

/** The days' kept form computed from the trips that touch them (in memory, nothing written). */
export async function computeFleetDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<FleetDayRollup[]> {
  const out: FleetDayRollup[] = [];
  for (const run of runsOf(days)) {
    const touching = await tripsTouchingDays(db, tenant, { fromDay: run[0] as string, toDay: run[run.length - 1] as string }, maxTimeMS);
    out.push(...rollUpFleetDays(tenant, run, touching));
  }
  return out;
}

/** Recomputes these days of a tenant from its trips and keeps them. */
export async function recomputeFleetDays(db: Db, tenant: string, days: readonly string[], maxTimeMS: number): Promise<void> {
  for (const run of runsOf(days)) await writeFleetDays(db, tenant, run, await computeFleetDays(db, tenant, run, maxTimeMS));
}

/** Recomputes the days these marks stand for, then clears the marks no write has bumped since. */
async function settleMarks(db: Db, tenant: string, marks: readonly RollupMark[], maxTimeMS: number): Promise<void> {
  if (!marks.length) return;
  await recomputeFleetDays(
    db,
    tenant,
    marks.map((m) => m.day),
    maxTimeMS,
  );
  await clearMarks(db, marks);
}

/**
 * A tenant's kept days in [fromDay, toDay] (the `part` a reader needs), brought up to date first:
 * the days marked by a write are recomputed from the trips, in passes when many are pending.
 */
export async function readFreshFleetDays(
  db: Db,
  tenant: string,
  fromDay: string,
  toDay: string,
  part: FleetDayPart,
  maxTimeMS: number,
): Promise<StoredFleetDay[]> {
  if (toDay < fromDay) return [];
  for (let pass = 0; pass < 4; pass += 1) {
    const marks = await markedDays(db, tenant, FLEET_UTILIZATION_SOURCE, fromDay, toDay, MARKS_PER_PASS);
    await settleMarks(db, tenant, marks, maxTimeMS);
    if (marks.length < MARKS_PER_PASS) break;
  }
  return readStoredFleetDays(db, tenant, fromDay, toDay, part, maxTimeMS);
}

/** Whether this store's days were built by this version (else the report reads the trips). */
export async function fleetRollupsReady(db: Db): Promise<boolean> {
  return (await readRollupState(db, FLEET_ROLLUP_STATE))?.version === FLEET_ROLLUP_VERSION;
}

/** One pass of the background drain: recomputes the days of up to `limit` marks, any tenant. */
export async function drainFleetMarks(db: Db, limit: number, maxTimeMS: number): Promise<number> {
  const marks = await someMarks(db, FLEET_UTILIZATION_SOURCE, limit);
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
    const marks = await markedDays(db, tenant, FLEET_UTILIZATION_SOURCE, '0000-00-00', '9999-99-99', opts.perPass ?? MARKS_PER_PASS);
    if (!marks.length) return;
    await settleMarks(db, tenant, marks, maxTimeMS);
    opts.onDays?.(marks.length);
  }
}

/** Every day a tenant's trips touch. */
async function daysOfTrips(db: Db, tenant: string): Promise<Set<string>> {
  const days = new Set<string>();
  const cursor = trips(db).find({ company: tenant }, { projection: { _id: 0, shipments: 1 }, batchSize: 2000 });
  for await (const t of cursor) for (const day of tripDays(t)) days.add(day);
  return days;
}

/**
 * Rebuilds the kept days of these tenants (default: every tenant with trips): marks every day
 * their trips touch, then recomputes them, reporting progress; then records the version.
 */
export async function rebuildFleetRollups(db: Db, opts: RebuildOptions = {}): Promise<RebuildOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  const all = await tenantsWithTrips(db);
  const tenants = opts.tenants ?? all;
  let units = 0;
  for (const tenant of tenants) {
    const days = await daysOfTrips(db, tenant);
    for (const run of runsOf(days)) await markDays(db, tenant, FLEET_UTILIZATION_SOURCE, run);
    // Every day marked: what was kept (perhaps by another version) goes; a report meanwhile recomputes what it reads.
    await deleteFleetRollupsOf(db, tenant);
    const total = days.size;
    opts.onProgress?.({ kind: 'fleet-utilization', tenant, phase: 'marking', done: total, total });
    let done = 0;
    await settleAll(db, tenant, maxTimeMS, {
      perPass: opts.stopped ? 31 : MARKS_PER_PASS,
      ...(opts.stopped ? { stopped: opts.stopped } : {}),
      onDays: (n) => {
        done += n;
        opts.onProgress?.({ kind: 'fleet-utilization', tenant, phase: 'computing', done: Math.min(done, total), total });
      },
    });
    if (opts.stopped?.()) return { tenants: tenants.length, units, stopped: true };
    units += total;
  }
  if (all.every((t) => tenants.includes(t))) await writeRollupState(db, FLEET_ROLLUP_STATE, FLEET_ROLLUP_VERSION);
  return { tenants: tenants.length, units, stopped: false };
}

/** Records the store as not built: the report reads the trips until the rollup worker has rebuilt it. */
export async function forgetFleetRollups(db: Db): Promise<void> {
  await deleteRollupState(db, FLEET_ROLLUP_STATE);
}

/** A store without trips needs no rebuild: recorded as built. */
export async function markEmptyFleetStoreBuilt(db: Db): Promise<boolean> {
  if (await readRollupState(db, FLEET_ROLLUP_STATE)) return false;
  if (await trips(db).findOne({}, { projection: { _id: 1 } })) return false;
  await writeRollupState(db, FLEET_ROLLUP_STATE, FLEET_ROLLUP_VERSION);
  return true;
}

/**
 * Compares a tenant's kept days with the same days computed from the trips (every day either
 * side holds). Answers the days that differ; `repair` rewrites them.
 */
export async function verifyFleetRollups(db: Db, tenant: string, opts: { repair?: boolean; maxTimeMS?: number } = {}): Promise<VerifyOutcome> {
  const maxTimeMS = opts.maxTimeMS ?? 600_000;
  // Marked days are known to be stale: settled first, so a difference is a fault, not a pending write.
  await settleAll(db, tenant, maxTimeMS);
  const kept = await readFleetDays(db, tenant, '0000-00-00', '9999-99-99', 'all', maxTimeMS);
  const keptBy = new Map(kept.map((k) => [k.day, k]));
  const days = [...new Set([...(await daysOfTrips(db, tenant)), ...keptBy.keys()])].sort();
  const mismatched: string[] = [];
  for (const run of runsOf(days)) {
    const computedBy = new Map((await computeFleetDays(db, tenant, run, maxTimeMS)).map((k) => [k.day, k]));
    for (const day of run) {
      const a = keptBy.get(day);
      const b = computedBy.get(day);
      if (!a || !b ? a !== b : !sameContent(a, b)) mismatched.push(day);
    }
  }
  if (opts.repair && mismatched.length) await recomputeFleetDays(db, tenant, mismatched, maxTimeMS);
  return { checked: days.length, mismatched };
}

/** Outstanding marks (progress of the drain). */
export const outstandingFleetMarks = (db: Db): Promise<number> => countMarks(db, FLEET_UTILIZATION_SOURCE);
