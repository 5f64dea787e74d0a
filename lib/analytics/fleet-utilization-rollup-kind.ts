/**
 * Fleet utilization's kept days as a kind of kept totals (lib/rollups/marked-rollup-kind.ts),
 * and what the report reads through it: its days brought up to date first.
 */
import type { Db } from 'mongodb';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { FLEET_UTILIZATION_SOURCE } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { FLEET_ROLLUP_VERSION, type StoredFleetDay } from './fleet-day-rollup.ts';
import { deleteFleetRollupsOf, readStoredFleetDays, type FleetDayPart } from './fleet-rollups-repo.ts';
import { tripHistoryDays } from './trip-history-days.ts';
import { differingFleetDays, keptFleetDays, recomputeFleetDays } from './refresh-fleet-rollups.ts';

export const fleetUtilizationRollups = markedRollupKind({
  name: 'fleet-utilization',
  stateName: 'fleetUtilizationRollups',
  version: FLEET_ROLLUP_VERSION,
  sources: [FLEET_UTILIZATION_SOURCE],
  grain: 'day',
  // A report reads at most 398 + 366 days.
  marksPerPass: 800,
  // A run's days are computed and written alone (rollUpFleetDays keeps the run's days only, each from the trips
  // touching it, read over the run's span): a sparse history is rebuilt by one read per rebuild run, not one per stretch.
  rebuildAcrossGaps: true,
  tenants: tenantsWithTrips,
  isEmpty: async (db) => !(await trips(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) => new Map([[FLEET_UTILIZATION_SOURCE, (await tripHistoryDays(db, tenant)).touched]]),
  keptUnits: keptFleetDays,
  deleteOf: deleteFleetRollupsOf,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeFleetDays(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingFleetDays(db, tenant, run, maxTimeMS),
});

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
  await fleetUtilizationRollups.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: 4, maxTimeMS });
  return readStoredFleetDays(db, tenant, fromDay, toDay, part, maxTimeMS);
}
