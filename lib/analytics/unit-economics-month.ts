/**
 * Unit economics' months kept from their days (docs/rollups.md "Unit economics"), pure: a month
 * is its days folded as a report folds a period (lib/analytics/unit-economics-day.ts foldUnits),
 * kept in a day's form, so a year reads about 12 months and the days of its partial months.
 *
 * - Combinations: one per client, vehicle, driver, origin and destination, labels the greatest,
 *   sums added; a trip delivered on several days of the month counts once (its pairs whose next
 *   day is in the month are taken back here).
 * - Pairs: those whose next delivery day is after the month, per combination and next day: a
 *   period holding the month takes them back when that day is in the period too.
 * - Costs: the days' costs added per destination (trip, vehicle, or category and plate words), and
 *   every plate each vehicle carried on the month's days (their union: the month's combinations keep
 *   only the greatest plate, a label).
 * - Tables: the combinations added per client, vehicle, driver and route, and their km on each
 *   vehicle (lib/analytics/unit-economics-month-tables.ts), what a report without filters reads.
 *
 * Every sum is an integer (cents, thousandths), so the fold of folds is the fold of the days:
 * exact whatever the grouping.
 */
import { COST_CATEGORIES } from './trip-costs.ts';
import {
  foldUnits,
  SUM_FIELDS,
  ROW_WIDTH,
  UNIT_ECONOMICS_ROLLUP_VERSION,
  UNIT_FIELDS,
  type UnitDayCosts,
  type UnitDayPair,
  type UnitEconomicsDay,
  type UnitFoldPart,
  type CostFoldPart,
  type UnitMonthTables,
  unionOfPlates,
} from './unit-economics-day.ts';
import { monthTables } from './unit-economics-month-tables.ts';

/** A month as kept: a day's form (strings, packed combinations and rows, pairs, costs). */
export interface UnitEconomicsMonth extends UnitFoldPart, CostFoldPart {
  _id: string;
  tenant: string;
  /** 'YYYY-MM' (Mexico City). */
  month: string;
  version: number;
  tables: UnitMonthTables;
}

export const unitEconomicsMonthId = (tenant: string, month: string): string => `${tenant}|${month}`;

const byKey = <T>(m: Map<string, T>): T[] => [...m.entries()].sort(([a], [z]) => (a < z ? -1 : a > z ? 1 : 0)).map(([, v]) => v);

/** The days' costs added per destination, in the days' own order of keys. */
export function foldCosts(days: readonly CostFoldPart[]): UnitDayCosts {
  const documents = COST_CATEGORIES.map(() => 0);
  const spread = new Map<string, UnitDayCosts['spread'][number]>();
  const vehicle = new Map<string, UnitDayCosts['vehicle'][number]>();
  const trip = new Map<string, UnitDayCosts['trip'][number]>();
  for (const { costs } of days) {
    costs.documents.forEach((n, i) => (documents[i]! += n));
    for (const x of costs.spread) {
      const k = JSON.stringify([x.c, x.keys]);
      const at = spread.get(k);
      if (at) at.netC += x.netC;
      else spread.set(k, { c: x.c, keys: [...x.keys], netC: x.netC });
    }
    for (const x of costs.vehicle) {
      const k = JSON.stringify([x.v, x.c]);
      const at = vehicle.get(k);
      if (at) at.netC += x.netC;
      else vehicle.set(k, { ...x });
    }
    for (const x of costs.trip) {
      const k = JSON.stringify([x.t, x.c]);
      const at = trip.get(k);
      if (at) at.netC += x.netC;
      else trip.set(k, { ...x });
    }
  }
  return { documents, spread: byKey(spread), vehicle: byKey(vehicle), trip: byKey(trip) };
}

/** The month `month` ('YYYY-MM') of a tenant from its kept days (others are skipped); null when it has none. */
export function foldUnitEconomicsMonth(tenant: string, month: string, days: readonly UnitEconomicsDay[]): UnitEconomicsMonth | null {
  const own = days.filter((d) => d.day.slice(0, 7) === month).sort((a, z) => (a.day < z.day ? -1 : 1));
  if (!own.length) return null;
  const pending = new Map<string, UnitDayPair>();
  // Every day of the month is ≤ `${month}-31` and every later day is after it.
  const folded = foldUnits(own, `${month}-31`, (u, next, trips) => {
    const k = `${u}|${next}`;
    const at = pending.get(k);
    if (at) at.trips += trips;
    else pending.set(k, { u, next, trips });
  });
  // Only the strings the folded combinations hold, numbered in order of use.
  const strings: string[] = [];
  const renumber = new Map<number, number>();
  const units = folded.fields.map((id) => {
    if (id < 0) return -1;
    let n = renumber.get(id);
    if (n === undefined) {
      renumber.set(id, (n = strings.length));
      strings.push(folded.strings[id]!);
    }
    return n;
  });
  const count = units.length / UNIT_FIELDS.length;
  const rows = new Float64Array(count * ROW_WIDTH);
  for (let u = 0; u < count; u++) {
    rows[u * ROW_WIDTH] = u;
    for (let j = 0; j < SUM_FIELDS.length; j++) rows[u * ROW_WIDTH + 1 + j] = folded.sums[u * SUM_FIELDS.length + j]!;
  }
  const pairs = [...pending.values()].sort((a, z) => a.u - z.u || (a.next < z.next ? -1 : a.next > z.next ? 1 : 0));
  return {
    _id: unitEconomicsMonthId(tenant, month),
    tenant,
    month,
    version: UNIT_ECONOMICS_ROLLUP_VERSION,
    strings,
    units,
    rows,
    pairs,
    costs: foldCosts(own),
    vehiclePlates: unionOfPlates(own.map((d) => d.vehiclePlates)),
    tables: monthTables({ strings, units, rows, pairs }),
  };
}
