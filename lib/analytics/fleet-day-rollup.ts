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
import { Binary } from 'mongodb';
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
  /** PIECE_WIDTH doubles per row. */
  pieces: Binary;
  bridges: Binary;
  /** JSON of [vehicle, plate][]. */
  fleetUnits: string;
  /** FLEET_WIDTH doubles per vehicle (NaN: null). */
  fleet: Binary;
}

const PIECE_WIDTH = 9;
const FLEET_WIDTH = 5;

function packDoubles(values: readonly (number | null)[]): Binary {
  const view = new DataView(new ArrayBuffer(values.length * 8));
  values.forEach((v, i) => view.setFloat64(i * 8, v === null ? NaN : v, true));
  return new Binary(new Uint8Array(view.buffer));
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function unpackDoubles(b: Binary): Float64Array {
  const bytes = b.buffer.subarray(0, b.position);
  // One copy into an aligned buffer read in place (every platform Node runs on is little-endian; else element by element).
  if (LITTLE_ENDIAN) return new Float64Array(new Uint8Array(bytes).buffer);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Float64Array(bytes.byteLength / 8);
  for (let i = 0; i < out.length; i += 1) out[i] = view.getFloat64(i * 8, true);
  return out;
}

function packInts(values: readonly number[]): Binary {
  const view = new DataView(new ArrayBuffer(values.length * 4));
  values.forEach((v, i) => view.setInt32(i * 4, v, true));
  return new Binary(new Uint8Array(view.buffer));
}

function unpackInts(b: Binary): number[] {
  const bytes = b.buffer.subarray(0, b.position);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out: number[] = [];
  for (let i = 0; i < bytes.byteLength; i += 4) out.push(view.getInt32(i, true));
  return out;
}

const nullable = (x: number): number | null => (Number.isNaN(x) ? null : x);

export function encodeFleetDay(d: FleetDayRollup): StoredFleetDay {
  const rows = (rs: readonly PieceRow[]): Binary => packDoubles(rs.flatMap(([u, other, ...sums]) => [u, daysBetweenDates(d.day, other), ...sums]));
  return {
    _id: d._id,
    tenant: d.tenant,
    day: d.day,
    version: d.version,
    units: JSON.stringify(d.units),
    active: packInts(d.active),
    pieces: rows(d.pieces),
    bridges: rows(d.bridges),
    fleetUnits: JSON.stringify(d.fleet.map((f) => [f[0], f[1]])),
    fleet: packDoubles(d.fleet.flatMap((f) => f.slice(2) as (number | null)[])),
  };
}

/** The stored parts read back (those a reader projected: the others empty). */
export function decodeFleetDay(s: Partial<StoredFleetDay> & Pick<StoredFleetDay, '_id' | 'day'>): FleetDayRollup {
  const rows = (b: Binary | undefined): PieceRow[] => {
    if (!b) return [];
    const x = unpackDoubles(b);
    const out: PieceRow[] = [];
    for (let i = 0; i < x.length; i += PIECE_WIDTH)
      out.push([x[i] as number, mxAddDays(s.day, x[i + 1] as number), ...(Array.from(x.subarray(i + 2, i + PIECE_WIDTH)) as Sums)]);
    return out;
  };
  const fleetUnits = s.fleetUnits === undefined ? [] : (JSON.parse(s.fleetUnits) as [string, string][]);
  const fx = s.fleet ? unpackDoubles(s.fleet) : new Float64Array(0);
  return {
    _id: s._id,
    tenant: s.tenant ?? '',
    day: s.day,
    version: s.version ?? 0,
    units: s.units === undefined ? [] : (JSON.parse(s.units) as UnitCombo[]),
    active: s.active ? unpackInts(s.active) : [],
    pieces: rows(s.pieces),
    bridges: rows(s.bridges),
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
  /** Active days in the period, ascending, distinct. */
  days: string[];
  loaded: number;
  offloaded: number;
  km: number;
  revenueC: number;
}

/** The parts of a stored day the report reads. */
export type StoredSums = Pick<StoredFleetDay, 'day' | 'units' | 'active' | 'pieces' | 'bridges'>;

/**
 * The units' totals of the period [from, to] from its stored days and the 31 before (`days`,
 * ascending), read in place: offsets and packed sums, no row decoded into objects. A unit is
 * there when it was active on a day of the period.
 */
export function foldFleetDays(
  days: readonly StoredSums[],
  by: 'vehicle' | 'driver',
  period: { from: string; to: string },
  scope: FleetScope,
): Map<string, KeptUnitTotals> {
  const out = new Map<string, KeptUnitTotals>();
  for (const d of days) {
    if (d.day > period.to) continue;
    const combos = JSON.parse(d.units) as UnitCombo[];
    // Per combination of the day: its unit's totals, or null when the filters leave it out.
    const units = combos.map((c): KeptUnitTotals | null => {
      if (!inScope(c, scope)) return null;
      const key = by === 'vehicle' ? c[0] : c[2];
      let u = out.get(key);
      if (!u)
        out.set(
          key,
          (u = {
            label: by === 'vehicle' ? c[1] : c[3],
            labelDay: '',
            trips: 0,
            legs: 0,
            inTransit: 0,
            days: [],
            loaded: 0,
            offloaded: 0,
            km: 0,
            revenueC: 0,
          }),
        );
      return u;
    });
    const inPeriod = d.day >= period.from;
    if (inPeriod)
      for (const i of unpackInts(d.active)) {
        const u = units[i];
        if (!u) continue;
        const c = combos[i] as UnitCombo;
        const label = by === 'vehicle' ? c[1] : c[3];
        // Days come in order: a day already counted is the last one.
        if (u.days[u.days.length - 1] !== d.day) u.days.push(d.day);
        // The label of the latest active day in the period (the greatest when several).
        if (d.day > u.labelDay || (d.day === u.labelDay && label > u.label)) {
          u.label = label;
          u.labelDay = d.day;
        }
      }
    const fromOff = daysBetweenDates(d.day, period.from);
    const toOff = daysBetweenDates(d.day, period.to);
    const add = (x: Float64Array, sign: 1 | -1, keep: (off: number) => boolean): void => {
      for (let r = 0; r < x.length; r += PIECE_WIDTH) {
        const u = units[x[r] as number];
        if (!u || !keep(x[r + 1] as number)) continue;
        u.trips += sign * (x[r + 2] as number);
        u.legs += sign * (x[r + 3] as number);
        u.inTransit += sign * (x[r + 4] as number);
        u.loaded += sign * (x[r + 5] as number);
        u.offloaded += sign * (x[r + 6] as number);
        u.km += sign * (x[r + 7] as number);
        u.revenueC += sign * (x[r + 8] as number);
      }
    };
    // Pieces starting here meet the period when they last until its first day; pairs ending here in it are subtracted when the next piece starts by its last day.
    add(unpackDoubles(d.pieces), 1, (last) => last >= fromOff);
    if (inPeriod) add(unpackDoubles(d.bridges), -1, (next) => next <= toOff);
  }
  // Units of the days before the period only: a piece meeting the period holds an active day of its unit in it, so
  // these have no sums (only days recomputed between this report's reads could disagree, and the next report reads
  // them settled).
  for (const [key, u] of out) if (u.days.length === 0) out.delete(key);
  return out;
}

/**
 * The idle check's rows (lib/analytics/utilization.ts idleFleet) from the stored days of its
 * window (asOf − 365 days … asOf): per vehicle the latest over the days. `windowEndsToday`
 * reads every leg of the trips, as the query over the documents does; a past window the legs
 * dated up to it.
 */
export function fleetActivityOf(
  days: readonly Pick<StoredFleetDay, 'day' | 'fleetUnits' | 'fleet'>[],
  vehicle: string | undefined,
  windowEndsToday: boolean,
): VehicleActivity[] {
  const by = new Map<string, VehicleActivity>();
  for (const d of days) {
    // A past window: the day itself is a trip's latest leg date within it when it is the latest such day.
    const dayYmd = Number(d.day.replace(/-/g, ''));
    const vehicles = JSON.parse(d.fleetUnits) as [string, string][];
    const x = unpackDoubles(d.fleet);
    vehicles.forEach(([v, plate], i) => {
      if (vehicle !== undefined && v !== vehicle) return;
      const at = (k: number): number | null => nullable(x[i * FLEET_WIDTH + k] as number);
      const u = windowEndsToday ? at(2) : at(0);
      const l = windowEndsToday ? at(3) : at(1);
      const legDate = windowEndsToday ? at(4) : dayYmd;
      const prev = by.get(v);
      if (!prev) by.set(v, { vehicle: v, plate, lastUnload: u, lastLoad: l, lastLegDate: legDate });
      else {
        prev.plate = maxStr(prev.plate, plate);
        prev.lastUnload = maxOf(prev.lastUnload, u);
        prev.lastLoad = maxOf(prev.lastLoad, l);
        prev.lastLegDate = maxOf(prev.lastLegDate, legDate);
      }
    });
  }
  return [...by.values()];
}
