/**
 * Fleet utilization's totals kept per tenant and Mexico City day (docs/rollups.md "Fleet
 * utilization"), computed from the trips (the same rows as FleetUtilizationAccumulator over the
 * trips, lib/analytics/utilization.ts, once folded: lib/analytics/fleet-period-fold.ts).
 *
 * A trip belongs to one unit combination (vehicle, plate, driver, driver name, client). A period
 * P = [from, to] counts a leg when one of its active days is in P, a trip when one of its legs
 * is. An active-day set S (a leg's, or a trip's: the union of its legs') is cut into pieces:
 * its runs of consecutive days, each cut again into spans of at most 32 days. S meets P exactly
 * once per piece that meets P, less once per pair of consecutive pieces that both meet it (P is
 * an interval: those pieces are consecutive, k pieces and k − 1 pairs). A piece [a, b] meets P
 * when it starts in P, or started before and lasts until `from`; a pair (earlier piece ending on
 * e, next starting on n) when from ≤ e and n ≤ to. So a day keeps, per combination, the sums of
 * the pieces starting on it (`starts`), of those started before and lasting until it (`carry`:
 * read for a period's first day only), and of the pairs whose earlier piece ends on it, keyed by
 * the next piece's first day (`bridges`, subtracted). Sums without a day key add up: a month
 * keeps its days' (lib/analytics/fleet-month-rollup.ts). Every leg, trip and amount then counts
 * once, however its days are spread.
 *
 * Distinct active days: the combinations active on each day. Idle vehicles: per vehicle, over
 * the trips with a leg dated that day, the latest unload, load and leg date (see `fleetRowsOf`).
 */
import type { Binary } from 'mongodb';
import { toCents } from '../money/cents.ts';
import { packDoubles, packInts, unpackDoubles, unpackInts } from '../db/packed-numbers.ts';
import { creditedUnloadDate, legActiveDays, MAX_LEG_SPAN_DAYS, safeYmd } from '../trips/leg-active-days.ts';
import { daysBetweenDates, mxAddDays } from '../time/mexico-city.ts';
import type { UtilizationTrip } from './utilization.ts';

/** Bump whenever what a day or month holds or how it is computed changes: a store of another version is rebuilt. */
export const FLEET_ROLLUP_VERSION = 4;

/** [vehicle id, plate, driver id, driver name, client]. */
export type UnitCombo = [string, string, string, string, string];

/** trips, legs, legs in transit, loaded litres, offloaded litres (delivered legs), km, revenue cents. */
export type Sums = [number, number, number, number, number, number, number];
export const SUM_COUNT = 7;

/** [combination index, ...sums]. */
export type SumRow = [number, ...Sums];

/** [combination index, other day ('YYYY-MM-DD'), ...sums]. */
export type PieceRow = [number, string, ...Sums];

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
  /** Pieces starting here. */
  starts: SumRow[];
  /** Pieces started before this day that last until it. */
  carry: SumRow[];
  /** Pairs of consecutive pieces whose earlier one ends here: the other day is the later one's first day. Subtracted. */
  bridges: PieceRow[];
  /** Vehicles with a leg dated here. */
  fleet: FleetRow[];
}

/**
 * A day as stored: the combinations as one JSON string and the rows as packed little-endian
 * doubles (nulls as NaN), the other day as a whole number of days after this one. A year of a
 * large tenant's days is then a few strings and buffers per day to decode, not tens of
 * thousands of BSON array elements (the engine and the driver decode every element).
 */
export interface StoredFleetDay {
  _id: string;
  tenant: string;
  day: string;
  version: number;
  /** JSON of UnitCombo[]. */
  units: string;
  /** Int32 indexes into units. */
  active: Binary;
  /** SUM_ROW_WIDTH doubles per row. */
  starts: Binary;
  carry: Binary;
  /** PIECE_ROW_WIDTH doubles per row. */
  bridges: Binary;
  /** JSON of [vehicle, plate][]. */
  fleetUnits: string;
  /** FLEET_WIDTH doubles per vehicle (NaN: null). */
  fleet: Binary;
}

export const SUM_ROW_WIDTH = 1 + SUM_COUNT;
export const PIECE_ROW_WIDTH = 2 + SUM_COUNT;
export const FLEET_WIDTH = 5;

const nullable = (x: number): number | null => (Number.isNaN(x) ? null : x);

export function encodeFleetDay(d: FleetDayRollup): StoredFleetDay {
  return {
    _id: d._id,
    tenant: d.tenant,
    day: d.day,
    version: d.version,
    units: JSON.stringify(d.units),
    active: packInts(d.active),
    starts: packDoubles(d.starts.flat()),
    carry: packDoubles(d.carry.flat()),
    bridges: packDoubles(d.bridges.flatMap(([u, other, ...sums]) => [u, daysBetweenDates(d.day, other), ...sums])),
    fleetUnits: JSON.stringify(d.fleet.map((f) => [f[0], f[1]])),
    fleet: packDoubles(d.fleet.flatMap((f) => f.slice(2) as (number | null)[])),
  };
}

const sumRowsOf = (b: Binary | undefined): SumRow[] => {
  if (!b) return [];
  const x = unpackDoubles(b);
  const out: SumRow[] = [];
  for (let i = 0; i < x.length; i += SUM_ROW_WIDTH) out.push(Array.from(x.subarray(i, i + SUM_ROW_WIDTH)) as SumRow);
  return out;
};

/** Rows [index, other day as an offset from `from`, ...sums] read back with the other day as a date. */
export function pieceRowsOf(b: Binary | undefined, from: string): PieceRow[] {
  if (!b) return [];
  const x = unpackDoubles(b);
  const out: PieceRow[] = [];
  for (let i = 0; i < x.length; i += PIECE_ROW_WIDTH)
    out.push([x[i] as number, mxAddDays(from, x[i + 1] as number), ...(Array.from(x.subarray(i + 2, i + PIECE_ROW_WIDTH)) as Sums)]);
  return out;
}

/** The stored parts read back (those a reader projected: the others empty). */
export function decodeFleetDay(s: Partial<StoredFleetDay> & Pick<StoredFleetDay, '_id' | 'day'>): FleetDayRollup {
  const fleetUnits = s.fleetUnits === undefined ? [] : (JSON.parse(s.fleetUnits) as [string, string][]);
  const fx = s.fleet ? unpackDoubles(s.fleet) : new Float64Array(0);
  return {
    _id: s._id,
    tenant: s.tenant ?? '',
    day: s.day,
    version: s.version ?? 0,
    units: s.units === undefined ? [] : (JSON.parse(s.units) as UnitCombo[]),
    active: s.active ? unpackInts(s.active) : [],
    starts: sumRowsOf(s.starts),
    carry: sumRowsOf(s.carry),
    bridges: pieceRowsOf(s.bridges, s.day),
    fleet: fleetUnits.map(([v, plate], i): FleetRow => {
      const at = (k: number): number | null => nullable(fx[i * FLEET_WIDTH + k] as number);
      return [v, plate, at(0), at(1), at(2), at(3), at(4)];
    }),
  };
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

export const maxOf = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));
export const maxStr = (a: string, b: string): string => (b > a ? b : a);

/**
 * Per leg date D of a trip (valid compact dates), what the idle check needs when its window
 * holds D: the latest unload and load over the legs dated ≤ D (a window ending at `to` reads the
 * legs dated up to it; the trip's latest leg date within the window stands for all) and over all
 * legs (a window ending today reads every leg), and the latest leg date of all legs.
 */
function fleetRowsOf(trip: FleetTrip): Map<string, FleetRow> {
  const out = new Map<string, FleetRow>();
  // An unloading instant past the days a leg is credited with (a mistyped date) ends with the last of them.
  const legs = trip.legs.map((l, i) => {
    const load = trip.raw[i]?.loadDate ?? null;
    return { date: l.date, unload: creditedUnloadDate(load, trip.raw[i]?.unloadDate ?? null), load };
  });
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

interface Keyed {
  unit: string;
  s: Sums;
}

interface DayAcc {
  units: Map<string, UnitCombo>;
  active: Set<string>;
  starts: Map<string, Keyed>;
  carry: Map<string, Keyed>;
  bridges: Map<string, Keyed & { other: string }>;
  fleet: Map<string, FleetRow>;
}

function addSums(into: Sums, s: Readonly<Sums>): void {
  for (let i = 0; i < SUM_COUNT; i += 1) into[i] = (into[i] as number) + (s[i] as number);
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
    if (!a) acc.set(day, (a = { units: new Map(), active: new Set(), starts: new Map(), carry: new Map(), bridges: new Map(), fleet: new Map() }));
    return a;
  };
  const add = (a: DayAcc, into: Map<string, Keyed>, combo: UnitCombo, unit: string, s: Sums): void => {
    a.units.set(unit, combo);
    const e = into.get(unit);
    if (!e) into.set(unit, { unit, s: [...s] });
    else addSums(e.s, s);
  };
  const credit = (days: readonly string[], combo: UnitCombo, unit: string, s: Sums): void => {
    const pieces = piecesOf(days);
    pieces.forEach(([first, last], i) => {
      const a = dayAcc(first);
      if (a) add(a, a.starts, combo, unit, s);
      for (let d = mxAddDays(first, 1); d <= last; d = mxAddDays(d, 1)) {
        const c = dayAcc(d);
        if (c) add(c, c.carry, combo, unit, s);
      }
      const next = pieces[i + 1];
      const b = next ? dayAcc(last) : null;
      if (b && next) {
        b.units.set(unit, combo);
        const k = `${unit}\u0000${next[0]}`;
        const e = b.bridges.get(k);
        if (!e) b.bridges.set(k, { unit, other: next[0], s: [...s] });
        else addSums(e.s, s);
      }
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
    const sumRows = (m: Map<string, Keyed>): SumRow[] => [...m.values()].map((e): SumRow => [index.get(e.unit) as number, ...e.s]).sort((x, y) => x[0] - y[0]);
    out.push({
      _id: fleetRollupId(tenant, day),
      tenant,
      day,
      version: FLEET_ROLLUP_VERSION,
      units: keys.map((k) => a.units.get(k) as UnitCombo),
      active: [...a.active].map((k) => index.get(k) as number).sort((x, y) => x - y),
      starts: sumRows(a.starts),
      carry: sumRows(a.carry),
      bridges: [...a.bridges.values()]
        .map((e): PieceRow => [index.get(e.unit) as number, e.other, ...e.s])
        .sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0)),
      fleet: [...a.fleet.values()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)),
    });
  }
  return out;
}
