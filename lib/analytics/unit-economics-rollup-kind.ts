/**
 * Unit economics' kept days and months as a kind of kept totals (lib/rollups/marked-rollup-kind.ts),
 * and what the report reads through it: its whole months and the days of its partial months,
 * brought up to date first. Two sources mark a day: trip writes and received-document writes and
 * assignments; a day marked by either is recomputed whole, then marks its month
 * (UNIT_ECONOMICS_MONTHS_SOURCE), which is folded again from its days.
 */
import type { Db } from 'mongodb';
import { receivedDocs } from '../received/received-repo.ts';
import { trips } from '../db/collections.ts';
import { markedRollupKind } from '../rollups/marked-rollup-kind.ts';
import { readFreshPeriodParts, type PeriodParts } from '../rollups/fresh-period-parts.ts';
import { UNIT_ECONOMICS_TRIPS_SOURCE } from '../trips/trip-days.ts';
import { UNIT_ECONOMICS_RECEIVED_SOURCE } from '../received/received-doc-days.ts';
import { tenantsWithTrips } from '../trips/trips-repo.ts';
import { tenantsWithReceivedDocs } from '../received/received-repo.ts';
import { UNIT_ECONOMICS_ROLLUP_VERSION, type UnitEconomicsDay } from './unit-economics-day.ts';
import {
  deleteUnitEconomicsDaysOf,
  readUnitEconomicsDays,
  readUnitEconomicsMonthCombinations,
  readUnitEconomicsMonthTables,
  type UnitEconomicsMonthCombinations,
  type UnitEconomicsMonthTables,
} from './unit-economics-rollups-repo.ts';
import {
  differingUnitEconomicsDays,
  receivedCostDays,
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
      [UNIT_ECONOMICS_RECEIVED_SOURCE, await receivedCostDays(db, tenant)],
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
export type UnitEconomicsParts = PeriodParts<UnitEconomicsMonthCombinations, UnitEconomicsDay>;
/** The same with its months as their tables (a report without filters). */
export type UnitEconomicsTableParts = PeriodParts<UnitEconomicsMonthTables, UnitEconomicsDay>;

/** A tenant's kept totals of [fromDay, toDay], brought up to date first (lib/rollups/fresh-period-parts.ts). */
export function readFreshUnitEconomics(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<UnitEconomicsParts> {
  return readFresh(db, tenant, { fromDay, toDay, maxTimeMS }, (months) => readUnitEconomicsMonthCombinations(db, tenant, months, maxTimeMS));
}

/** The same, its whole months read as their tables (lib/analytics/unit-economics-month-tables.ts). */
export function readFreshUnitEconomicsTables(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<UnitEconomicsTableParts> {
  return readFresh(db, tenant, { fromDay, toDay, maxTimeMS }, (months) => readUnitEconomicsMonthTables(db, tenant, months, maxTimeMS));
}

function readFresh<M>(
  db: Db,
  tenant: string,
  range: { fromDay: string; toDay: string; maxTimeMS: number },
  months: (months: string[]) => Promise<M[]>,
): Promise<PeriodParts<M, UnitEconomicsDay>> {
  return readFreshPeriodParts(unitEconomicsRollups, db, tenant, range, {
    months,
    days: (from, to) => readUnitEconomicsDays(db, tenant, from, to, range.maxTimeMS),
  });
}
