/**
 * Fleet utilization's report folded from its kept totals (docs/rollups.md "Fleet utilization"):
 * the months wholly in the period, the days of its partial months, and what its first day
 * carries from the pieces started before it (lib/analytics/fleet-day-rollup.ts,
 * fleet-month-rollup.ts). Read in place: offsets and packed sums, no row decoded into objects.
 * Every leg, trip and amount counts as FleetUtilizationAccumulator counts it over the trips.
 */
import { unpackDoubles, unpackInts } from '../db/packed-numbers.ts';
import { daysBetweenDates } from '../time/mexico-city.ts';
import { FLEET_WIDTH, maxOf, maxStr, PIECE_ROW_WIDTH, SUM_COUNT, SUM_ROW_WIDTH, type StoredFleetDay } from './fleet-day-rollup.ts';
import { MONTH_FLEET_WIDTH, MONTH_ROW_WIDTH, type StoredFleetMonth } from './fleet-month-rollup.ts';
import type { Period, VehicleActivity } from './utilization.ts';

export interface FleetScope {
  client?: string;
  vehicle?: string;
  driver?: string;
}

/** One unit's totals over a period, as FleetUtilizationAccumulator keeps them. */
export interface KeptUnitTotals {
  label: string;
  trips: number;
  legs: number;
  inTransit: number;
  /** Distinct active days in the period. */
  activeDays: number;
  loaded: number;
  offloaded: number;
  km: number;
  revenueC: number;
}

/** What a period's sums read: its first day's carry, the days of its partial months, its whole months (of its client, or of every client). */
export interface FleetPeriodParts {
  carry: Pick<StoredFleetDay, 'units' | 'carry'> | null;
  days: Pick<StoredFleetDay, 'day' | 'units' | 'active' | 'starts' | 'bridges'>[];
  months: Pick<StoredFleetMonth, 'month' | 'units' | 'rows' | 'pending'>[];
}

interface UnitAcc {
  label: string;
  /** Offset of the label's day from the period's first day (-1: none yet). */
  labelDay: number;
  sums: Float64Array;
  /** One byte per day of the period: 1 when active. */
  days: Uint8Array;
}

/**
 * The units' totals of the period [from, to] (at most 366 days) from its parts, by vehicle or
 * driver, within the filters (a month's client is the one it was read for). A unit is there when
 * it was active on a day of the period; its label is the one of its latest active day in the
 * period, the greatest when several.
 */
export function foldFleetPeriod(parts: FleetPeriodParts, by: 'vehicle' | 'driver', period: Period, scope: FleetScope): Map<string, KeptUnitTotals> {
  const length = daysBetweenDates(period.from, period.to) + 1;
  const out = new Map<string, UnitAcc>();
  const keyAt = by === 'vehicle' ? 0 : 2;
  const labelAt = by === 'vehicle' ? 1 : 3;
  // Per combination (or month unit) of a part: its unit's totals, or null when the filters leave it out, and its label.
  const accsOf = (unitsJson: string, withClient: boolean): { accs: (UnitAcc | null)[]; labels: string[] } => {
    const combos = JSON.parse(unitsJson) as string[][];
    const accs: (UnitAcc | null)[] = new Array<UnitAcc | null>(combos.length);
    const labels: string[] = new Array<string>(combos.length);
    for (let i = 0; i < combos.length; i += 1) {
      const c = combos[i] as string[];
      labels[i] = c[labelAt] as string;
      if (
        (scope.vehicle !== undefined && c[0] !== scope.vehicle) ||
        (scope.driver !== undefined && c[2] !== scope.driver) ||
        (withClient && scope.client !== undefined && c[4] !== scope.client)
      ) {
        accs[i] = null;
        continue;
      }
      const key = c[keyAt] as string;
      let u = out.get(key);
      if (!u) out.set(key, (u = { label: c[labelAt] as string, labelDay: -1, sums: new Float64Array(SUM_COUNT), days: new Uint8Array(length) }));
      accs[i] = u;
    }
    return { accs, labels };
  };
  const markActive = (u: UnitAcc, day: number, label: string): void => {
    u.days[day] = 1;
    if (day > u.labelDay || (day === u.labelDay && label > u.label)) {
      u.label = label;
      u.labelDay = day;
    }
  };
  // Rows of `width` doubles: [index, (other day offset,) ...sums]; a row whose other day is after the period is skipped.
  const addRows = (accs: readonly (UnitAcc | null)[], x: Float64Array, width: number, sign: 1 | -1, otherBase: number | null): void => {
    const first = width - SUM_COUNT;
    for (let r = 0; r < x.length; r += width) {
      const u = accs[x[r] as number];
      if (!u || (otherBase !== null && otherBase + (x[r + 1] as number) >= length)) continue;
      for (let k = 0; k < SUM_COUNT; k += 1) u.sums[k] = (u.sums[k] as number) + sign * (x[r + first + k] as number);
    }
  };

  if (parts.carry) addRows(accsOf(parts.carry.units, true).accs, unpackDoubles(parts.carry.carry), SUM_ROW_WIDTH, 1, null);
  for (const d of parts.days) {
    const day = daysBetweenDates(period.from, d.day);
    if (day < 0 || day >= length) continue;
    const { accs, labels } = accsOf(d.units, true);
    for (const i of unpackInts(d.active)) {
      const u = accs[i];
      if (u) markActive(u, day, labels[i] as string);
    }
    addRows(accs, unpackDoubles(d.starts), SUM_ROW_WIDTH, 1, null);
    // Pairs ending here: subtracted when the next piece starts by the period's last day.
    addRows(accs, unpackDoubles(d.bridges), PIECE_ROW_WIDTH, -1, day);
  }
  for (const m of parts.months) {
    const base = daysBetweenDates(period.from, `${m.month}-01`);
    const { accs, labels } = accsOf(m.units, false);
    const x = unpackDoubles(m.rows);
    for (let r = 0; r < x.length; r += MONTH_ROW_WIDTH) {
      const i = x[r] as number;
      const u = accs[i];
      if (!u) continue;
      // Bit b: the month's day b + 1 (31 bits: an int). Its latest active day gives the label.
      let mask = (x[r + 1] as number) | 0;
      if (mask !== 0) markActive(u, base + 31 - Math.clz32(mask), labels[i] as string);
      for (; mask !== 0; mask &= mask - 1) u.days[base + 31 - Math.clz32(mask & -mask)] = 1;
      for (let k = 0; k < SUM_COUNT; k += 1) u.sums[k] = (u.sums[k] as number) + (x[r + 2 + k] as number);
    }
    addRows(accs, unpackDoubles(m.pending), PIECE_ROW_WIDTH, -1, base);
  }

  const totals = new Map<string, KeptUnitTotals>();
  for (const [key, u] of out) {
    let activeDays = 0;
    for (let i = 0; i < length; i += 1) activeDays += u.days[i] as number;
    // A unit seen only on combinations with sums but no active day in the period has none: a piece meeting the
    // period holds an active day of its unit in it.
    if (activeDays === 0) continue;
    const s = u.sums;
    totals.set(key, {
      label: u.label,
      trips: s[0] as number,
      legs: s[1] as number,
      inTransit: s[2] as number,
      activeDays,
      loaded: s[3] as number,
      offloaded: s[4] as number,
      km: s[5] as number,
      revenueC: s[6] as number,
    });
  }
  return totals;
}

/** What the idle check reads of its window (asOf − 365 days … asOf): its whole months (of every client) and the other days. */
export interface FleetWindowParts {
  days: Pick<StoredFleetDay, 'day' | 'fleetUnits' | 'fleet'>[];
  months: Pick<StoredFleetMonth, 'fleetUnits' | 'fleet'>[];
}

/**
 * The idle check's rows (lib/analytics/utilization.ts idleFleet): per vehicle the latest over the
 * window's days and months. `windowEndsToday` reads every leg of the trips, as the query over the
 * documents does; a past window the legs dated up to it (a day with a leg dated on it stands for
 * the trip's latest leg date within the window when it is the latest such day).
 */
export function fleetActivityOf(parts: FleetWindowParts, vehicle: string | undefined, windowEndsToday: boolean): VehicleActivity[] {
  const by = new Map<string, VehicleActivity>();
  const fold = (v: string, plate: string, u: number | null, l: number | null, legDate: number | null): void => {
    if (vehicle !== undefined && v !== vehicle) return;
    const prev = by.get(v);
    if (!prev) by.set(v, { vehicle: v, plate, lastUnload: u, lastLoad: l, lastLegDate: legDate });
    else {
      prev.plate = maxStr(prev.plate, plate);
      prev.lastUnload = maxOf(prev.lastUnload, u);
      prev.lastLoad = maxOf(prev.lastLoad, l);
      prev.lastLegDate = maxOf(prev.lastLegDate, legDate);
    }
  };
  const nullable = (x: number): number | null => (Number.isNaN(x) ? null : x);
  // A row of `width` doubles: [unload ≤, load ≤, unload (all), load (all), leg date (all), (latest day)].
  const foldRows = (units: string, packed: StoredFleetDay['fleet'], width: number, dayYmd: number | null): void => {
    const vehicles = JSON.parse(units) as [string, string][];
    const x = unpackDoubles(packed);
    for (let i = 0; i < vehicles.length; i += 1) {
      const o = i * width;
      const [v, plate] = vehicles[i] as [string, string];
      if (windowEndsToday) fold(v, plate, nullable(x[o + 2] as number), nullable(x[o + 3] as number), nullable(x[o + 4] as number));
      else fold(v, plate, nullable(x[o] as number), nullable(x[o + 1] as number), dayYmd ?? (x[o + 5] as number));
    }
  };
  for (const d of parts.days) foldRows(d.fleetUnits, d.fleet, FLEET_WIDTH, Number(d.day.replace(/-/g, '')));
  for (const m of parts.months) foldRows(m.fleetUnits, m.fleet, MONTH_FLEET_WIDTH, null);
  return [...by.values()];
}
