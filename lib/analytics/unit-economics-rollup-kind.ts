/**
 * Unit economics' kept days as a kind of kept totals (lib/rollups/marked-rollup-kind.ts), and
 * what the report reads through it: its days brought up to date first. Two sources mark a day:
 * trip writes and received-document writes and assignments; a day marked by either is recomputed whole.
 */
import type { Db } from 'mongodb';
import { receivedDocs } from '../received/received-repo.ts';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { UNIT_ECONOMICS_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { UNIT_ECONOMICS_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { UNIT_ECONOMICS_ROLLUP_VERSION, type UnitEconomicsDay } from './unit-economics-day.ts';
import { deleteUnitEconomicsDaysOf, readUnitEconomicsDays } from './unit-economics-rollups-repo.ts';
import {
  differingUnitEconomicsDays,
  issueDaysOfReceived,
  keptUnitEconomicsDays,
  recomputeUnitEconomicsDays,
  unloadDaysOfTrips,
} from './refresh-unit-economics-rollups.ts';

export const unitEconomicsRollups = markedRollupKind({
  name: 'unit-economics',
  stateName: 'unitEconomicsRollups',
  version: UNIT_ECONOMICS_ROLLUP_VERSION,
  sources: [UNIT_ECONOMICS_TRIPS_SOURCE, UNIT_ECONOMICS_RECEIVED_SOURCE],
  grain: 'day',
  // A report reads at most 366 days.
  marksPerPass: 400,
  // A run's days are computed and written alone, each from its own trips and cost documents: the sparse days
  // of received CFDIs (one run each) are rebuilt by one read per rebuild run.
  rebuildAcrossGaps: true,
  tenants: async (db) => [...new Set([...(await tenantsWithTrips(db)), ...(await tenantsWithReceivedDocs(db))])].sort(),
  isEmpty: async (db) => !(await trips(db).findOne({}, { projection: { _id: 1 } })) && !(await receivedDocs(db).findOne({}, { projection: { _id: 1 } })),
  documentDays: async (db, tenant) =>
    new Map([
      [UNIT_ECONOMICS_TRIPS_SOURCE, await unloadDaysOfTrips(db, tenant)],
      [UNIT_ECONOMICS_RECEIVED_SOURCE, await issueDaysOfReceived(db, tenant)],
    ]),
  keptUnits: keptUnitEconomicsDays,
  deleteOf: deleteUnitEconomicsDaysOf,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeUnitEconomicsDays(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingUnitEconomicsDays(db, tenant, run, maxTimeMS),
});

/**
 * A tenant's kept days in [fromDay, toDay], brought up to date first: the days marked by a write
 * are recomputed from the documents, in passes when many are pending.
 */
export async function readFreshUnitEconomicsDays(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<UnitEconomicsDay[]> {
  if (toDay < fromDay) return [];
  await unitEconomicsRollups.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: 4, maxTimeMS });
  return readUnitEconomicsDays(db, tenant, fromDay, toDay, maxTimeMS);
}
