/**
 * Unit economics' kept days and months as a kind of kept totals (lib/rollups/marked-rollup-kind.ts),
 * and what the report reads through it: its whole months and the days of its partial months,
 * brought up to date first. Two sources mark a day: trip writes and received-document writes and
 * assignments; a day marked by either is recomputed whole, then marks its month
 * (UNIT_ECONOMICS_MONTHS_SOURCE), which is folded again from its days.
 */
import type { Db } from 'mongodb';
import { mxAddDays } from '../time/mexico-city.ts';
import { daysOfMonth, wholeMonths } from '../time/calendar-months.ts';
import { receivedDocs } from '../received/received-repo.ts';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { UNIT_ECONOMICS_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { UNIT_ECONOMICS_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { UNIT_ECONOMICS_ROLLUP_VERSION, type UnitEconomicsDay } from './unit-economics-day.ts';
import type { UnitEconomicsMonth } from './unit-economics-month.ts';
import { deleteUnitEconomicsDaysOf, readUnitEconomicsDays, readUnitEconomicsMonths } from './unit-economics-rollups-repo.ts';
import {
  differingUnitEconomicsDays,
  issueDaysOfReceived,
  keptUnitEconomicsDays,
  keptUnitEconomicsMonths,
  recomputeUnitEconomicsDays,
  recomputeUnitEconomicsMonth,
  unitEconomicsMonthDiffers,
} from './refresh-unit-economics-rollups.ts';
import { tripHistoryDays } from './trip-history-days.ts';

/** Marks of months ('YYYY-MM') whose days changed: set when a day is recomputed. */
export const UNIT_ECONOMICS_MONTHS_SOURCE = 'unitEconomicsMonths';

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
      [UNIT_ECONOMICS_TRIPS_SOURCE, (await tripHistoryDays(db, tenant)).unloadedAny],
      [UNIT_ECONOMICS_RECEIVED_SOURCE, await issueDaysOfReceived(db, tenant)],
    ]),
  keptUnits: keptUnitEconomicsDays,
  deleteOf: deleteUnitEconomicsDaysOf,
  recompute: (db, tenant, run, _ctx, maxTimeMS) => recomputeUnitEconomicsDays(db, tenant, run, maxTimeMS),
  differing: (db, tenant, run, _ctx, maxTimeMS) => differingUnitEconomicsDays(db, tenant, run, maxTimeMS),
  months: {
    source: UNIT_ECONOMICS_MONTHS_SOURCE,
    // One month per call (runMonths 1): a month is folded from its kept days.
    recompute: (db, tenant, [month], _ctx, maxTimeMS) => recomputeUnitEconomicsMonth(db, tenant, month as string, maxTimeMS),
    differing: async (db, tenant, [month], _ctx, maxTimeMS) =>
      (await unitEconomicsMonthDiffers(db, tenant, month as string, maxTimeMS)) ? [month as string] : [],
    keptMonths: keptUnitEconomicsMonths,
  },
});

/** What a period reads: its whole months, and the days of the months it holds in part. */
export interface UnitEconomicsParts {
  months: UnitEconomicsMonth[];
  days: UnitEconomicsDay[];
}

/**
 * A tenant's kept totals of [fromDay, toDay], brought up to date first: the days marked by a write
 * are recomputed from the documents, in passes when many are pending, which marks their months;
 * the months wholly in the period are folded again from their days when marked, then read, with
 * the days of the partial months at either end.
 */
export async function readFreshUnitEconomics(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<UnitEconomicsParts> {
  if (toDay < fromDay) return { months: [], days: [] };
  await unitEconomicsRollups.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: 4, maxTimeMS });
  const months = wholeMonths(fromDay, toDay);
  if (!months.length) return { months: [], days: await readUnitEconomicsDays(db, tenant, fromDay, toDay, maxTimeMS) };
  const first = daysOfMonth(months[0] as string)[0] as string;
  const last = daysOfMonth(months[months.length - 1] as string).pop() as string;
  await unitEconomicsRollups.settleMonths(db, tenant, { from: months[0] as string, to: months[months.length - 1] as string, maxTimeMS });
  const [kept, before, after] = await Promise.all([
    readUnitEconomicsMonths(db, tenant, months, maxTimeMS),
    fromDay < first ? readUnitEconomicsDays(db, tenant, fromDay, mxAddDays(first, -1), maxTimeMS) : [],
    last < toDay ? readUnitEconomicsDays(db, tenant, mxAddDays(last, 1), toDay, maxTimeMS) : [],
  ]);
  return { months: kept, days: [...before, ...after] };
}
