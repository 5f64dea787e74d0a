/**
 * Fleet utilization's kept days and months as a kind of kept totals
 * (lib/rollups/marked-rollup-kind.ts), and what the report reads through it: the months wholly in
 * its period and the days of its partial months, brought up to date first. A trip write marks its
 * days; a day recomputed marks its month (FLEET_MONTHS_SOURCE), folded again from its days.
 */
import type { Db } from 'mongodb';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { daysOfMonth, wholeMonths } from '../time/calendar-months.ts';
import { mxAddDays } from '../time/mexico-city.ts';
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

/**
 * A tenant's kept totals of [fromDay, toDay] (the `part` a reader needs; the months of `client`,
 * or of every client), brought up to date first: the days marked by a write are recomputed from
 * the trips, in passes when many are pending, which marks their months; the months wholly in the
 * period are folded again from their days when marked, then read, with the other days.
 */
async function readFreshParts(
  db: Db,
  tenant: string,
  range: { fromDay: string; toDay: string; client: string },
  part: 'sums' | 'fleet',
  maxTimeMS: number,
): Promise<{ days: StoredFleetDay[]; months: StoredFleetMonth[] }> {
  const { fromDay, toDay, client } = range;
  if (toDay < fromDay) return { days: [], months: [] };
  await fleetUtilizationRollups.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: 4, maxTimeMS });
  const months = wholeMonths(fromDay, toDay);
  if (!months.length) return { days: await readStoredFleetDays(db, tenant, fromDay, toDay, part, maxTimeMS), months: [] };
  const first = daysOfMonth(months[0] as string)[0] as string;
  const last = daysOfMonth(months[months.length - 1] as string).pop() as string;
  await fleetUtilizationRollups.settleMonths(db, tenant, { from: months[0] as string, to: months[months.length - 1] as string, maxTimeMS });
  const [kept, before, after] = await Promise.all([
    readStoredFleetMonths(db, tenant, months, client, part, maxTimeMS),
    readStoredFleetDays(db, tenant, fromDay, mxAddDays(first, -1), part, maxTimeMS),
    readStoredFleetDays(db, tenant, mxAddDays(last, 1), toDay, part, maxTimeMS),
  ]);
  return { days: [...before, ...after], months: kept };
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
