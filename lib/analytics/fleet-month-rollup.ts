/**
 * Fleet utilization's months kept from their days (docs/rollups.md "Fleet utilization"), pure.
 * A period holding a whole month counts every piece starting in it and every pair whose two
 * pieces both lie in it (lib/analytics/fleet-day-rollup.ts): those sums add up without a day
 * key, so a month keeps them netted per unit, with its active days as a bit mask, and keeps apart
 * only the pairs whose next piece starts after it (subtracted when that day is in the period).
 *
 * A month is kept once for every client and once per client: a unit is then a vehicle and
 * driver (with their plate and name), not a combination with the client, so a year without a
 * client filter reads about as many rows as the fleet has units per month, and a client filter
 * reads that client's months. The month of every client also keeps the idle check's vehicles.
 */
import type { Binary } from 'mongodb';
import { packDoubles, unpackDoubles } from '../db/packed-numbers.ts';
import { daysOfMonth } from '../time/calendar-months.ts';
import { daysBetweenDates } from '../time/mexico-city.ts';
import {
  FLEET_ROLLUP_VERSION,
  maxOf,
  maxStr,
  pieceRowsOf,
  SUM_COUNT,
  type FleetDayRollup,
  type PieceRow,
  type Sums,
  type UnitCombo,
} from './fleet-day-rollup.ts';

/** [vehicle id, plate, driver id, driver name]: a combination without its client. */
export type MonthUnit = [string, string, string, string];

/** [unit index, active days (bit i: the month's day i + 1), ...net sums]. */
export type MonthRow = [number, number, ...Sums];
export const MONTH_ROW_WIDTH = 2 + SUM_COUNT;

/** [vehicle, plate, unload ≤, load ≤, unload (all legs), load (all legs), leg date (all legs), latest day with a leg (YYYYMMDD)]. */
export type MonthFleetRow = [string, string, number | null, number | null, number | null, number | null, number | null, number];
export const MONTH_FLEET_WIDTH = 6;

/** Every client's month: its `client` (no RFC holds '*'; a trip without a client has the empty one). */
export const EVERY_CLIENT = '*';

export interface FleetMonthRollup {
  /** `${tenant}|${month}|${client}`. */
  _id: string;
  tenant: string;
  /** 'YYYY-MM' (Mexico City). */
  month: string;
  /** The client's RFC, or EVERY_CLIENT. */
  client: string;
  version: number;
  /** Sorted. */
  units: MonthUnit[];
  /** Per unit, sorted by index. */
  rows: MonthRow[];
  /** Pairs whose earlier piece ends in the month and whose next starts after it (the other day). */
  pending: PieceRow[];
  /** Every client's month only: per vehicle with a leg dated in the month, the latest over its days. */
  fleet: MonthFleetRow[];
}

/** A month as stored: units and vehicles as JSON, rows as packed doubles (other days as offsets from the month's first day). */
export interface StoredFleetMonth {
  _id: string;
  tenant: string;
  month: string;
  client: string;
  version: number;
  units: string;
  rows: Binary;
  pending: Binary;
  fleetUnits: string;
  fleet: Binary;
}

export const fleetMonthId = (tenant: string, month: string, client: string): string => `${tenant}|${month}|${client}`;

export function encodeFleetMonth(m: FleetMonthRollup): StoredFleetMonth {
  const first = `${m.month}-01`;
  return {
    _id: m._id,
    tenant: m.tenant,
    month: m.month,
    client: m.client,
    version: m.version,
    units: JSON.stringify(m.units),
    rows: packDoubles(m.rows.flat()),
    pending: packDoubles(m.pending.flatMap(([u, other, ...sums]) => [u, daysBetweenDates(first, other), ...sums])),
    fleetUnits: JSON.stringify(m.fleet.map((f) => [f[0], f[1]])),
    fleet: packDoubles(m.fleet.flatMap((f) => f.slice(2) as (number | null)[])),
  };
}

export function decodeFleetMonth(s: StoredFleetMonth): FleetMonthRollup {
  const rx = unpackDoubles(s.rows);
  const rows: MonthRow[] = [];
  for (let i = 0; i < rx.length; i += MONTH_ROW_WIDTH) rows.push(Array.from(rx.subarray(i, i + MONTH_ROW_WIDTH)) as MonthRow);
  const fx = unpackDoubles(s.fleet);
  const at = (k: number): number | null => (Number.isNaN(fx[k]) ? null : (fx[k] as number));
  return {
    _id: s._id,
    tenant: s.tenant,
    month: s.month,
    client: s.client,
    version: s.version,
    units: JSON.parse(s.units) as MonthUnit[],
    rows,
    pending: pieceRowsOf(s.pending, `${s.month}-01`),
    fleet: (JSON.parse(s.fleetUnits) as [string, string][]).map(([v, plate], i): MonthFleetRow => {
      const o = i * MONTH_FLEET_WIDTH;
      return [v, plate, at(o), at(o + 1), at(o + 2), at(o + 3), at(o + 4), at(o + 5) as number];
    }),
  };
}

interface UnitAcc {
  unit: MonthUnit;
  mask: number;
  s: Sums;
}

interface MonthAcc {
  units: Map<string, UnitAcc>;
  pending: Map<string, { key: string; other: string; s: Sums }>;
}

/** A unit of the month: its JSON (the key the stored form is sorted by) made once, not once per day. */
interface UnitKey {
  key: string;
  unit: MonthUnit;
}

const zero = (): Sums => [0, 0, 0, 0, 0, 0, 0];

/** Adds `sign` × the sums of `row` from `from` (a day's row: [index, ...sums] or [index, other, ...sums]). */
function addSums(into: Sums, row: readonly unknown[], from: number, sign: number): void {
  for (let k = 0; k < SUM_COUNT; k += 1) into[k] = (into[k] as number) + sign * (row[from + k] as number);
}

/**
 * The months of a tenant (every client's, and one per client with activity) from the kept days
 * of `month` (others are skipped): none when it has no day.
 */
export function foldFleetMonth(tenant: string, month: string, days: readonly FleetDayRollup[]): FleetMonthRollup[] {
  const own = days.filter((d) => d.day.slice(0, 7) === month).sort((a, z) => (a.day < z.day ? -1 : 1));
  if (!own.length) return [];
  const last = daysOfMonth(month).pop() as string;
  const accs = new Map<string, MonthAcc>();
  const accOf = (client: string): MonthAcc => {
    let a = accs.get(client);
    if (!a) accs.set(client, (a = { units: new Map(), pending: new Map() }));
    return a;
  };
  const every = accOf(EVERY_CLIENT);
  // By the four fields with their lengths (unambiguous whatever they hold): ~3,000 combinations a day at 1M trips a year.
  const unitKeys = new Map<string, UnitKey>();
  const unitKeyOf = (c: UnitCombo): UnitKey => {
    const raw = `${c[0].length},${c[1].length},${c[2].length},${c[0]}${c[1]}${c[2]}${c[3]}`;
    let k = unitKeys.get(raw);
    if (!k) {
      const unit: MonthUnit = [c[0], c[1], c[2], c[3]];
      unitKeys.set(raw, (k = { key: JSON.stringify(unit), unit }));
    }
    return k;
  };
  const unitOf = (a: MonthAcc, k: UnitKey): UnitAcc => {
    let u = a.units.get(k.key);
    if (!u) a.units.set(k.key, (u = { unit: k.unit, mask: 0, s: zero() }));
    return u;
  };
  const fleet = new Map<string, MonthFleetRow>();
  for (const d of own) {
    const bit = 2 ** (Number(d.day.slice(8, 10)) - 1);
    // Per combination of the day: its unit, and its client's month (every combination's client has a month, rows or not).
    const keys = d.units.map(unitKeyOf);
    const clients = d.units.map((c) => accOf(c[4]));
    // Its entries in every client's month and in its client's, found on first use.
    const entries = new Array<[UnitAcc, UnitAcc] | undefined>(d.units.length);
    const entriesOf = (i: number): [UnitAcc, UnitAcc] => {
      let e = entries[i];
      if (!e) entries[i] = e = [unitOf(every, keys[i] as UnitKey), unitOf(clients[i] as MonthAcc, keys[i] as UnitKey)];
      return e;
    };
    for (const i of d.active) for (const u of entriesOf(i)) u.mask |= bit;
    for (const row of d.starts) for (const u of entriesOf(row[0])) addSums(u.s, row, 1, 1);
    for (const row of d.bridges) {
      const [i, other] = row;
      const [inEvery, inClient] = entriesOf(i);
      if (other <= last) {
        addSums(inEvery.s, row, 2, -1);
        addSums(inClient.s, row, 2, -1);
        continue;
      }
      const key = (keys[i] as UnitKey).key;
      const pk = `${key}\u0000${other}`;
      for (const a of [every, clients[i] as MonthAcc]) {
        const p = a.pending.get(pk);
        if (!p) a.pending.set(pk, { key, other, s: row.slice(2) as Sums });
        else addSums(p.s, row, 2, 1);
      }
    }
    const ymd = Number(d.day.replace(/-/g, ''));
    for (const f of d.fleet) {
      const prev = fleet.get(f[0]);
      fleet.set(
        f[0],
        prev
          ? [f[0], maxStr(prev[1], f[1]), maxOf(prev[2], f[2]), maxOf(prev[3], f[3]), maxOf(prev[4], f[4]), maxOf(prev[5], f[5]), maxOf(prev[6], f[6]), ymd]
          : [f[0], f[1], f[2], f[3], f[4], f[5], f[6], ymd],
      );
    }
  }
  const out: FleetMonthRollup[] = [];
  for (const [client, a] of [...accs].sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0))) {
    const keys = [...a.units.keys()].sort();
    const index = new Map(keys.map((k, i) => [k, i]));
    out.push({
      _id: fleetMonthId(tenant, month, client),
      tenant,
      month,
      client,
      version: FLEET_ROLLUP_VERSION,
      units: keys.map((k) => (a.units.get(k) as UnitAcc).unit),
      rows: keys.map((k, i): MonthRow => {
        const u = a.units.get(k) as UnitAcc;
        return [i, u.mask, ...u.s];
      }),
      pending: [...a.pending.values()]
        .map((p): PieceRow => [index.get(p.key) as number, p.other, ...p.s])
        .sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0)),
      fleet: client === EVERY_CLIENT ? [...fleet.values()].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0)) : [],
    });
  }
  return out;
}
