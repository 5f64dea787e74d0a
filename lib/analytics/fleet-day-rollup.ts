/**
 * Fleet utilization's totals kept per tenant and Mexico City day (docs/rollups.md "Fleet
 * utilization"), and the report folded from them (the same rows as FleetUtilizationAccumulator
 * over the trips, lib/analytics/utilization.ts).
 *
 * A trip belongs to one unit combination (vehicle, plate, driver, driver name, client). A period
 * P = [from, to] counts a leg when one of its active days is in P, a trip when one of its legs
 * is. An active-day set S (a leg's, or a trip's: the union of its legs') is cut into pieces:
 * its runs of consecutive days, each cut again into spans of at most 32 days. S meets P exactly
 * once per piece that meets P, less once per pair of consecutive pieces that both meet it (P is
 * an interval: those pieces are consecutive, k pieces and k − 1 pairs). So a day keeps, per
 * combination, the sums of the pieces starting on it (keyed by their last day: a piece [a, b]
 * meets P when a ≤ to and b ≥ from) and the sums of the pairs whose earlier piece ends on it
 * (keyed by the next piece's first day n: both meet P when from ≤ e and n ≤ to), to subtract.
 * A period reads its days and the 31 before (a piece is at most 32 days long). Every leg,
 * trip and amount then counts once, however its days are spread.
 *
 * Distinct active days: the combinations active on each day. Idle vehicles: per vehicle, over
 * the trips with a leg dated that day, the latest unload, load and leg date (see `fleetRowsOf`).
 */
import { toCents } from '../money/cents.ts';
import { legActiveDays, MAX_LEG_SPAN_DAYS, safeYmd } from '../trips/leg-active-days.ts';
import { daysBetweenDates, mxAddDays } from '../time/mexico-city.ts';
import type { UtilizationTrip, VehicleActivity } from './utilization.ts';

/** Bump whenever what a day holds or how it is computed changes: a store of another version is rebuilt. */
export const FLEET_ROLLUP_VERSION = 1;

/** [vehicle id, plate, driver id, driver name, client]. */
export type UnitCombo = [string, string, string, string, string];

/** [combination index, other day ('YYYY-MM-DD'), trips, legs, legs in transit, loaded litres, offloaded litres (delivered legs), km, revenue cents]. */
export type PieceRow = [number, string, number, number, number, number, number, number, number];

/** [vehicle, plate, unload ≤, load ≤, unload (all legs), load (all legs), leg date (all legs)]: see fleetRowsOf. */
export type FleetRow = [string, string, number | null, number | null, number | null, number | null, number | null];

export interface FleetDayRollup {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  /** 'YYYY-MM-DD', Mexico City. */
  day: string;
  version: number;
  /** The combinations the rows below name, sorted. */
  units: UnitCombo[];
  /** Combinations with an active day here (indexes into units, ascending). */
  active: number[];
  /** Pieces starting here: the other day is their last day. */
  pieces: PieceRow[];
  /** Pairs of consecutive pieces whose earlier one ends here: the other day is the later one's first day. Subtracted. */
  bridges: PieceRow[];
  /** Vehicles with a leg dated here. */
  fleet: FleetRow[];
}

export const fleetRollupId = (tenant: string, day: string): string => `${tenant}|${day}`;

/** A trip as the kept days read it: the compact utilization form, its client and the raw instants of its legs. */
export interface FleetTrip extends UtilizationTrip {
  _id: string;
  client: string;
  /** Per leg, as stored: the unload instant (delivered or not) and the load instant. */
  raw: { unloadDate: number | null; loadDate: number | null }[];
}

/** The runs of a sorted day set, cut into pieces of at most MAX_LEG_SPAN_DAYS + 1 days: [first, last] each. */
export function piecesOf(days: readonly string[]): [string, string][] {
  const out: [string, string][] = [];
  for (const d of days) {
    const last = out[out.length - 1];
    if (last && mxAddDays(last[1], 1) === d && daysBetweenDates(last[0], d) <= MAX_LEG_SPAN_DAYS) last[1] = d;
    else out.push([d, d]);
  }
  return out;
}

type Sums = [number, number, number, number, number, number, number];

const maxOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));
const maxStr = (a: string, b: string): string => (b > a ? b : a);

/**
 * Per leg date D of a trip (valid compact dates), what the idle check needs when its window
 * holds D: the latest unload and load over the legs dated ≤ D (a window ending at `to` reads the
 * legs dated up to it; the trip's latest leg date within the window stands for all) and over all
 * legs (a window ending today reads every leg), and the latest leg date of all legs.
 */
function fleetRowsOf(trip: FleetTrip): Map<string, FleetRow> {
  const out = new Map<string, FleetRow>();
  const legs = trip.legs.map((l, i) => ({ date: l.date, unload: trip.raw[i]?.unloadDate ?? null, load: trip.raw[i]?.loadDate ?? null }));
  let uAll: number | null = null;
  let lAll: number | null = null;
  let dAll: number | null = null;
  for (const l of legs) {
    uAll = maxOf(uAll, l.unload);
    lAll = maxOf(lAll, l.load);
    dAll = maxOf(dAll, typeof l.date === 'number' ? l.date : null);
  }
  for (const l of legs) {
    const day = typeof l.date === 'number' ? safeYmd(l.date) : null;
    if (day === null || out.has(day)) continue;
    let u: number | null = null;
    let ld: number | null = null;
    for (const o of legs)
      if (typeof o.date === 'number' && o.date <= l.date) {
        u = maxOf(u, o.unload);
        ld = maxOf(ld, o.load);
      }
    out.set(day, [trip.vehicleId, trip.plate, u, ld, uAll, lAll, dAll]);
  }
  return out;
}

interface DayAcc {
  units: Map<string, UnitCombo>;
  active: Set<string>;
  pieces: Map<string, { unit: string; other: string; s: Sums }>;
  bridges: Map<string, { unit: string; other: string; s: Sums }>;
  fleet: Map<string, FleetRow>;
}

/**
 * The kept days `days` of a tenant from the trips that touch them (any order: they are folded
 * by id, so the float sums do not depend on the order the database returned them in). A day
 * with nothing is left out.
 */
export function rollUpFleetDays(tenant: string, days: Iterable<string>, trips: readonly FleetTrip[]): FleetDayRollup[] {
  const wanted = new Set(days);
  const acc = new Map<string, DayAcc>();
  const dayAcc = (day: string): DayAcc | null => {
    if (!wanted.has(day)) return null;
    let a = acc.get(day);
    if (!a) acc.set(day, (a = { units: new Map(), active: new Set(), pieces: new Map(), bridges: new Map(), fleet: new Map() }));
    return a;
  };
  const add = (into: Map<string, { unit: string; other: string; s: Sums }>, combo: UnitCombo, unit: string, other: string, s: Sums, a: DayAcc): void => {
    a.units.set(unit, combo);
    const k = `${unit}\u0000${other}`;
    const e = into.get(k);
    if (!e) into.set(k, { unit, other, s: [...s] });
    else for (let i = 0; i < s.length; i += 1) e.s[i] = (e.s[i] as number) + (s[i] as number);
  };
  const credit = (days: readonly string[], combo: UnitCombo, unit: string, s: Sums): void => {
    const pieces = piecesOf(days);
    pieces.forEach(([first, last], i) => {
      const a = dayAcc(first);
      if (a) add(a.pieces, combo, unit, last, s, a);
      const next = pieces[i + 1];
      const b = next ? dayAcc(last) : null;
      if (b && next) add(b.bridges, combo, unit, next[0], s, b);
    });
  };
  const sorted = [...trips].sort((x, y) => (x._id < y._id ? -1 : x._id > y._id ? 1 : 0));
  for (const trip of sorted) {
    const combo: UnitCombo = [trip.vehicleId, trip.plate, trip.driverId, trip.driverName, trip.client];
    const unit = JSON.stringify(combo);
    const tripDays = new Set<string>();
    for (const leg of trip.legs) {
      const days = legActiveDays(leg);
      for (const d of days) tripDays.add(d);
      const delivered = leg.unloadDate !== null;
      credit(days, combo, unit, [0, 1, delivered ? 0 : 1, leg.loaded, delivered ? leg.offloaded : 0, leg.distanceKm, toCents(leg.billedFreight)]);
    }
    const all = [...tripDays].sort();
    credit(all, combo, unit, [1, 0, 0, 0, 0, 0, 0]);
    for (const d of all) {
      const a = dayAcc(d);
      if (!a) continue;
      a.units.set(unit, combo);
      a.active.add(unit);
    }
    for (const [day, row] of fleetRowsOf(trip)) {
      const a = dayAcc(day);
      if (!a) continue;
      const prev = a.fleet.get(row[0]);
      a.fleet.set(
        row[0],
        prev
          ? [
              row[0],
              maxStr(prev[1], row[1]),
              maxOf(prev[2], row[2]),
              maxOf(prev[3], row[3]),
              maxOf(prev[4], row[4]),
              maxOf(prev[5], row[5]),
              maxOf(prev[6], row[6]),
            ]
          : row,
      );
    }
  }
  const out: FleetDayRollup[] = [];
  for (const [day, a] of [...acc.entries()].sort(([x], [y]) => (x < y ? -1 : 1))) {
    const keys = [...a.units.keys()].sort();
    const index = new Map(keys.map((k, i) => [k, i]));
    const rows = (m: DayAcc['pieces']): PieceRow[] =>
      [...m.values()]
        .map((e): PieceRow => [index.get(e.unit) as number, e.other, ...e.s])
        .sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0));
    out.push({
      _id: fleetRollupId(tenant, day),
      tenant,
      day,
      version: FLEET_ROLLUP_VERSION,
      units: keys.map((k) => a.units.get(k) as UnitCombo),
      active: [...a.active].map((k) => index.get(k) as number).sort((x, y) => x - y),
      pieces: rows(a.pieces),
      bridges: rows(a.bridges),
      fleet: [...a.fleet.values()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)),
    });
  }
  return out;
}

export interface FleetScope {
  client?: string;
  vehicle?: string;
  driver?: string;
}

const inScope = (c: UnitCombo, s: FleetScope): boolean =>
  (s.vehicle === undefined || c[0] === s.vehicle) && (s.driver === undefined || c[2] === s.driver) && (s.client === undefined || c[4] === s.client);

/** One unit's totals over a period, as FleetUtilizationAccumulator keeps them. */
export interface KeptUnitTotals {
  label: string;
  labelDay: string;
  trips: number;
  legs: number;
  inTransit: number;
  days: Set<string>;
  loaded: number;
  offloaded: number;
  km: number;
  revenueC: number;
}

/**
 * The units' totals of the period [from, to] from its kept days and the 31 before (`days`,
 * ascending, only those parts read). A unit is there when it was active on a day of the period.
 */
export function foldFleetDays(
  days: readonly Pick<FleetDayRollup, 'day' | 'units' | 'active' | 'pieces' | 'bridges'>[],
  by: 'vehicle' | 'driver',
  period: { from: string; to: string },
  scope: FleetScope,
): Map<string, KeptUnitTotals> {
  const out = new Map<string, KeptUnitTotals>();
  const keyOf = (c: UnitCombo): string => (by === 'vehicle' ? c[0] : c[2]);
  const labelOf = (c: UnitCombo): string => (by === 'vehicle' ? c[1] : c[3]);
  const unitOf = (c: UnitCombo, day: string): KeptUnitTotals => {
    const key = keyOf(c);
    let u = out.get(key);
    if (!u)
      out.set(key, (u = { label: labelOf(c), labelDay: day, trips: 0, legs: 0, inTransit: 0, days: new Set(), loaded: 0, offloaded: 0, km: 0, revenueC: 0 }));
    return u;
  };
  // A piece meeting the period always comes with an active day of its unit in it (unitOf finds the unit); only days
  // recomputed between this report's reads could disagree, and then the next report reads them settled.
  const apply = (c: UnitCombo, r: PieceRow, sign: 1 | -1): void => {
    const u = unitOf(c, '');
    u.trips += sign * r[2];
    u.legs += sign * r[3];
    u.inTransit += sign * r[4];
    u.loaded += sign * r[5];
    u.offloaded += sign * r[6];
    u.km += sign * r[7];
    u.revenueC += sign * r[8];
  };
  // Active days first (they make the units), then the sums.
  for (const d of days) {
    if (d.day < period.from || d.day > period.to) continue;
    for (const i of d.active) {
      const c = d.units[i] as UnitCombo;
      if (!inScope(c, scope)) continue;
      const label = labelOf(c);
      const u = unitOf(c, d.day);
      u.days.add(d.day);
      // The label of the latest active day in the period (the greatest when several).
      if (d.day > u.labelDay || (d.day === u.labelDay && label > u.label)) {
        u.label = label;
        u.labelDay = d.day;
      }
    }
  }
  for (const d of days) {
    if (d.day > period.to) continue;
    for (const r of d.pieces) {
      const c = d.units[r[0]] as UnitCombo;
      if (r[1] >= period.from && inScope(c, scope)) apply(c, r, 1);
    }
    if (d.day < period.from) continue;
    for (const r of d.bridges) {
      const c = d.units[r[0]] as UnitCombo;
      if (r[1] <= period.to && inScope(c, scope)) apply(c, r, -1);
    }
  }
  return out;
}

/**
 * The idle check's rows (lib/analytics/utilization.ts idleFleet) from the kept days of its window
 * (asOf − 365 days … asOf): per vehicle the latest over the days. `windowEndsToday` reads every
 * leg of the trips, as the query over the documents does; a past window the legs dated up to it.
 */
export function fleetActivityOf(
  days: readonly Pick<FleetDayRollup, 'day' | 'fleet'>[],
  vehicle: string | undefined,
  windowEndsToday: boolean,
): VehicleActivity[] {
  const by = new Map<string, VehicleActivity>();
  for (const d of days) {
    // A past window: the day itself is the trip's latest leg date within it when it is the latest such day.
    const dayYmd = Number(d.day.replace(/-/g, ''));
    for (const [v, plate, uLe, lLe, uAll, lAll, dAll] of d.fleet) {
      if (vehicle !== undefined && v !== vehicle) continue;
      const prev = by.get(v);
      by.set(v, {
        vehicle: v,
        plate: prev ? maxStr(prev.plate, plate) : plate,
        lastUnload: maxOf(prev?.lastUnload ?? null, windowEndsToday ? uAll : uLe),
        lastLoad: maxOf(prev?.lastLoad ?? null, windowEndsToday ? lAll : lLe),
        lastLegDate: maxOf(prev?.lastLegDate ?? null, windowEndsToday ? dAll : dayYmd),
      });
    }
  }
  return [...by.values()];
}
