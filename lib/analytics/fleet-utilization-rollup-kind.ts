/**
 * Fleet utilization's kept days and months as a kind of kept totals
 * (lib/rollups/marked-rollup-kind.ts), and what the report reads through it: the months wholly in
 * its period and the days of its partial months, brought up to date first. A trip write marks its
 * days; a day recomputed marks its month (FLEET_MONTHS_SOURCE), folded again from its days.
 */
import type { Db } from 'mongodb';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { readFreshPeriodParts, type PeriodParts } from '../rollups/fresh-period-parts.ts';
import { FLEET_UTILIZATION_SOURCE } from '../trips/trip-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { FLEET_ROLLUP_VERSION, type StoredFleetDay } from './fleet-day-rollup.ts';
import { EVERY_CLIENT, type StoredFleetMonth } from './fleet-month-rollup.ts';
import type { FleetPeriodParts, FleetWindowParts } from './fleet-period-fold.ts';
import { deleteFleetRollupsOf, readStoredFleetCarry, readStoredFleetDays, readStoredFleetMonths } from './fleet-rollups-repo.ts';
import { tripHistoryDays } from './trip-history-days.ts';
import { differingFleetDays, fleetMonthDiffers, keptFleetDays, keptFleetMonths, recomputeFleetDays, recomputeFleetMonth } from './refresh-fleet-rollups.ts';

/** Marks of months ('YYYY-MM') whose days changed: set when a day is recomputed. */
export const FLEET_MONTHS_SOURCE = 'fleetUtilizationMonths';

export const fleetUtilizationRollups = markedRollupKind({
  name: 'fleet-utilization',
  stateName: 'fleetUtilizationRollups',
  version: FLEET_ROLLUP_VERSION,
  sources: [FLEET_UTILIZATION_SOURCE],
  grain: 'day',
  // A report reads at most 366 + 366 days (its period and the idle check's window).
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
  months: {
    source: FLEET_MONTHS_SOURCE,
    // One month per call (runMonths 1): a month is folded from its kept days.
    recompute: (db, tenant, [month], _ctx, maxTimeMS) => recomputeFleetMonth(db, tenant, month as string, maxTimeMS),
    differing: async (db, tenant, [month], _ctx, maxTimeMS) => ((await fleetMonthDiffers(db, tenant, month as string, maxTimeMS)) ? [month as string] : []),
    keptMonths: keptFleetMonths,
  },
});

/** A tenant's kept totals of [fromDay, toDay] (the `part` a reader needs; the months of `client`, or of every client), fresh. */
function readFreshParts(
  db: Db,
  tenant: string,
  range: { fromDay: string; toDay: string; client: string },
  part: 'sums' | 'fleet',
  maxTimeMS: number,
): Promise<PeriodParts<StoredFleetMonth, StoredFleetDay>> {
  return readFreshPeriodParts(
    fleetUtilizationRollups,
    db,
    tenant,
    { ...range, maxTimeMS },
    {
      months: (months) => readStoredFleetMonths(db, tenant, months, range.client, part, maxTimeMS),
      days: (from, to) => readStoredFleetDays(db, tenant, from, to, part, maxTimeMS),
    },
  );
}

/** What the report's sums read of its period (for one client, or every client's months): fresh, with its first day's carry. */
export async function readFreshFleetPeriod(
  db: Db,
  tenant: string,
  range: { fromDay: string; toDay: string; client: string },
  maxTimeMS: number,
): Promise<FleetPeriodParts> {
  const parts = await readFreshParts(db, tenant, range, 'sums', maxTimeMS);
  const carry = range.toDay < range.fromDay ? null : await readStoredFleetCarry(db, tenant, range.fromDay, maxTimeMS);
  return { ...parts, carry };
}

/** What the idle check reads of its window: fresh, every client's months. */
export function readFreshFleetWindow(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<FleetWindowParts> {
  return readFreshParts(db, tenant, { fromDay, toDay, client: EVERY_CLIENT }, 'fleet', maxTimeMS);
}
