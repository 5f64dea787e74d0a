/**
 * Unit economics kept on write (docs/rollups.md "Unit economics"): one document per tenant and
 * Mexico City day. Pure: the day from its trips and received cost documents, and a period's
 * report inputs from its days.
 *
 * A trip has one client, vehicle, driver and route, so the leg sums are kept per **unit
 * combination** (the trip's grouping fields and labels, `UNIT_FIELDS`); a report keeps the
 * combinations its filters allow and adds them per client, vehicle, driver and route. A trip
 * counts once in a period however many of its delivery days fall in it: each delivery day keeps
 * +1 and, when the trip has a later delivery day n, a pair keyed by n that is subtracted when n is
 * in the period too (the days of the trip in an interval are consecutive in its sorted days: k
 * days, k − 1 pairs). km and litres are kept in integer thousandths, money in integer cents.
 *
 * The costs of the day's received CFDIs (issued that day, not cancelled, of a cost category), and
 * of the suppliers' credit notes issued that day on such CFDIs (negative, placed as their invoice:
 * lib/analytics/period-costs.ts streamCreditNoteCosts), are kept by where they go: a trip, a
 * vehicle (assigned), or unassigned with the plate-like words of their concepts (keys of at least
 * 5 characters: only those can name a plate), which the report matches against the period's
 * plates when read: every plate each vehicle's trips delivered that day carried
 * (`vehiclePlates`), so a period's (vehicle, plate) pairs are its days' union (a combination
 * keeps only the greatest plate once folded, a label).
 */
import { mxDateString } from '../time/mexico-city.ts';
import { COST_CATEGORIES, plateIndexOf, plateVehicleOfKeys, type CostCategory, type CostPools, type VehiclePlates, emptyPools } from './trip-costs.ts';
import { fromMilli, type KmGrouping, type KmOnVehicle, type UnitEconomicsGroups, type UnitGroupRow } from './unit-economics.ts';

/** Bump whenever what a day holds or how it is computed changes: a store of another version is rebuilt. */
export const UNIT_ECONOMICS_ROLLUP_VERSION = 7;

/** The trip fields a combination holds, in this order (null when absent or not a string). */
export const UNIT_FIELDS = [
  'client',
  'vehicle',
  'plate',
  'config',
  'driver',
  'driverName',
  'originId',
  'originName',
  'originCity',
  'originState',
  'destinationId',
  'destinationName',
  'destinationCity',
  'destinationState',
] as const;
export type UnitField = (typeof UNIT_FIELDS)[number];
export type UnitCombo = Record<UnitField, string | null>;

/** Sums of a combination's delivered legs (km and litres in thousandths, money in cents). */
export interface UnitSums {
  trips: number;
  legs: number;
  kmM: number;
  revenueC: number;
  tollC: number;
  loadedM: number;
  offloadedM: number;
}

/** A delivered leg as the day reads it: its delivery instant (null: not delivered) and its figures. */
export interface UnitLeg {
  at: number | null;
  kmM: number;
  revenueC: number;
  tollC: number;
  loadedM: number;
  offloadedM: number;
}

/** A trip with a leg unloaded in the days being computed (lib/analytics/trip-audits-repo.ts). */
export interface UnitTrip extends UnitCombo {
  legs: readonly UnitLeg[];
}

/**
 * A received cost document of the day (lib/received/received-assignments-repo.ts streamCostDocs, net in MXN cents), or a
 * credit note issued that day on one (period-costs.ts streamCreditNoteCosts: negative, its invoice's category, assignment and concepts).
 */
export interface UnitCostDoc {
  date: number;
  category: CostCategory;
  netC: number;
  vehicle: string | null;
  tripId: string | null;
  /** plateWordKeys of its concepts. */
  keys: readonly string[];
}

/** The sums of a combination in a day's packed `rows`, in this order after its index in `units`. */
export const SUM_FIELDS = ['trips', 'legs', 'kmM', 'revenueC', 'tollC', 'loadedM', 'offloadedM'] as const satisfies readonly (keyof UnitSums)[];
/** Numbers per row of a day's `rows`: the combination's index, then SUM_FIELDS. */
export const ROW_WIDTH = 1 + SUM_FIELDS.length;

export interface UnitDayPair {
  u: number;
  /** The trip's next delivery day. */
  next: string;
  trips: number;
}

/** The plates a vehicle's trips carried (sorted), the vehicles sorted: `p` each names `v` when no other vehicle carried it. */
export interface UnitVehiclePlates {
  v: string;
  p: string[];
}

export interface UnitDayCosts {
  /** Documents per category, in COST_CATEGORIES order. */
  documents: number[];
  spread: { c: CostCategory; keys: string[]; netC: number }[];
  vehicle: { v: string; c: CostCategory; netC: number }[];
  trip: { t: string; c: CostCategory; netC: number }[];
}

/**
 * A day as kept. A day holds about one combination per trip delivered, so the combinations and
 * their sums are packed: a year's days are a few hundred thousand values read by every report,
 * and one number array costs a fraction of as many document fields to store, send and decode
 * (the repository keeps both arrays as little-endian binary).
 */
export interface UnitEconomicsDay {
  _id: string;
  tenant: string;
  day: string;
  version: number;
  /** The day's distinct values of its combinations' fields, in first-seen order. */
  strings: string[];
  /** The combinations: UNIT_FIELDS.length indexes into `strings` each (−1: null). */
  units: Int32Array;
  /** Per combination with legs delivered that day, ROW_WIDTH numbers: its index in `units`, then its SUM_FIELDS (in index order). */
  rows: Float64Array;
  pairs: UnitDayPair[];
  costs: UnitDayCosts;
  /** Every plate of each vehicle's trips with a leg delivered that day (a month: its days' union). */
  vehiclePlates: UnitVehiclePlates[];
}

export const unitEconomicsDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

const comboValues = (t: UnitCombo): (string | null)[] => UNIT_FIELDS.map((f) => t[f]);

const zeroSums = (): UnitSums => ({ trips: 0, legs: 0, kmM: 0, revenueC: 0, tollC: 0, loadedM: 0, offloadedM: 0 });
const addLeg = (s: UnitSums, l: UnitLeg): void => {
  s.legs += 1;
  s.kmM += l.kmM;
  s.revenueC += l.revenueC;
  s.tollC += l.tollC;
  s.loadedM += l.loadedM;
  s.offloadedM += l.offloadedM;
};

class DayBuilder {
  readonly strings: string[] = [];
  private readonly stringIndex = new Map<string, number>();
  readonly units: number[] = [];
  private readonly unitIndex = new Map<string, number>();
  readonly rows = new Map<number, UnitSums>();
  readonly pairs = new Map<string, UnitDayPair>();
  readonly plates = new Map<string, Set<string>>();
  readonly costs = {
    documents: COST_CATEGORIES.map(() => 0),
    spread: new Map<string, { c: CostCategory; keys: string[]; netC: number }>(),
    vehicle: new Map<string, { v: string; c: CostCategory; netC: number }>(),
    trip: new Map<string, { t: string; c: CostCategory; netC: number }>(),
  };
  unit(t: UnitCombo): number {
    const values = comboValues(t);
    const key = JSON.stringify(values);
    let u = this.unitIndex.get(key);
    if (u === undefined) {
      u = this.units.length / UNIT_FIELDS.length;
      for (const v of values) this.units.push(v === null ? -1 : this.string(v));
      this.unitIndex.set(key, u);
    }
    return u;
  }
  private string(v: string): number {
    let i = this.stringIndex.get(v);
    if (i === undefined) {
      i = this.strings.length;
      this.strings.push(v);
      this.stringIndex.set(v, i);
    }
    return i;
  }
  packedRows(): Float64Array {
    const us = [...this.rows.keys()].sort((a, z) => a - z);
    const out = new Float64Array(us.length * ROW_WIDTH);
    us.forEach((u, i) => {
      const s = this.rows.get(u)!;
      out[i * ROW_WIDTH] = u;
      SUM_FIELDS.forEach((f, j) => (out[i * ROW_WIDTH + 1 + j] = s[f]));
    });
    return out;
  }
  empty(): boolean {
    return this.rows.size === 0 && this.costs.documents.every((n) => n === 0);
  }
}

/**
 * The kept days `days` of a tenant from the trips with a leg unloaded in them and the received
 * cost documents issued in them. A day with neither delivered legs nor cost documents is absent.
 */
export function rollUpUnitEconomicsDays(
  tenant: string,
  days: readonly string[],
  trips: Iterable<UnitTrip>,
  costDocs: Iterable<UnitCostDoc>,
): UnitEconomicsDay[] {
  const builders = new Map(days.map((d) => [d, new DayBuilder()]));
  for (const trip of trips) {
    const byDay = new Map<string, UnitLeg[]>();
    for (const leg of trip.legs) {
      if (leg.at === null) continue;
      const day = mxDateString(leg.at);
      const list = byDay.get(day);
      if (list) list.push(leg);
      else byDay.set(day, [leg]);
    }
    const sorted = [...byDay.keys()].sort();
    sorted.forEach((day, i) => {
      const b = builders.get(day);
      if (!b) return;
      const u = b.unit(trip);
      if (trip.vehicle && trip.plate) {
        const plates = b.plates.get(trip.vehicle);
        if (plates) plates.add(trip.plate);
        else b.plates.set(trip.vehicle, new Set([trip.plate]));
      }
      let row = b.rows.get(u);
      if (!row) b.rows.set(u, (row = zeroSums()));
      row.trips += 1;
      for (const leg of byDay.get(day) ?? []) addLeg(row, leg);
      const next = sorted[i + 1];
      if (next !== undefined) {
        const k = `${u}|${next}`;
        const pair = b.pairs.get(k);
        if (pair) pair.trips += 1;
        else b.pairs.set(k, { u, next, trips: 1 });
      }
    });
  }
  for (const doc of costDocs) {
    const b = builders.get(mxDateString(doc.date));
    if (!b) continue;
    b.costs.documents[COST_CATEGORIES.indexOf(doc.category)]! += 1;
    const c = doc.category;
    if (doc.tripId) {
      const k = JSON.stringify([doc.tripId, c]);
      const at = b.costs.trip.get(k) ?? { t: doc.tripId, c, netC: 0 };
      at.netC += doc.netC;
      b.costs.trip.set(k, at);
    } else if (doc.vehicle) {
      const k = JSON.stringify([doc.vehicle, c]);
      const at = b.costs.vehicle.get(k) ?? { v: doc.vehicle, c, netC: 0 };
      at.netC += doc.netC;
      b.costs.vehicle.set(k, at);
    } else {
      // Assigned to no vehicle ('') is not read for plates (addCostDoc: the assignment wins).
      const keys = doc.vehicle === null ? [...new Set(doc.keys)].sort() : [];
      const k = JSON.stringify([c, keys]);
      const at = b.costs.spread.get(k) ?? { c, keys, netC: 0 };
      at.netC += doc.netC;
      b.costs.spread.set(k, at);
    }
  }
  const out: UnitEconomicsDay[] = [];
  for (const day of [...builders.keys()].sort()) {
    const b = builders.get(day)!;
    if (b.empty()) continue;
    const byKey = <T>(m: Map<string, T>): T[] => [...m.entries()].sort(([a], [z]) => (a < z ? -1 : a > z ? 1 : 0)).map(([, v]) => v);
    out.push({
      _id: unitEconomicsDayId(tenant, day),
      tenant,
      day,
      version: UNIT_ECONOMICS_ROLLUP_VERSION,
      strings: b.strings,
      units: Int32Array.from(b.units),
      rows: b.packedRows(),
      pairs: byKey(b.pairs),
      costs: { documents: b.costs.documents, spread: byKey(b.costs.spread), vehicle: byKey(b.costs.vehicle), trip: byKey(b.costs.trip) },
      vehiclePlates: unionOfPlates([[...b.plates].map(([v, p]) => ({ v, p: [...p] }))]),
    });
  }
  return out;
}

/**
 * Combinations folded by the grouping fields, as numbers (what a month keeps: foldUnits): every
 * distinct string has one id (its index in `strings`), a combination is UNIT_FIELDS.length ids in
 * `fields` (its grouping fields, then the greatest of each label; −1: null) and SUM_FIELDS.length
 * sums in `sums`, in first-seen order.
 */
export interface FoldedUnits {
  strings: string[];
  fields: Int32Array;
  sums: Float64Array;
}

// A kept month's tables (built by lib/analytics/unit-economics-month-tables.ts), as a period reads them.

/** Per group: its key's string ids (−1: none), its labels' (the greatest; −1: none) and its SUM_FIELDS. */
export interface GroupTable {
  keys: Int32Array;
  labels: Int32Array;
  sums: Float64Array;
}

/** Per group of a table, the km (thousandths) on each vehicle: entries start[g] … start[g + 1] − 1. */
export interface KmTable {
  start: Int32Array;
  vehicles: Int32Array;
  kmM: Float64Array;
}

/** A month's trips counted again after it (a pair whose next delivery day is later): by the groups of their combination. */
export interface PendingByGroup {
  /** Group indexes in the client, vehicle, driver and route tables. */
  g: [number, number, number, number];
  next: string;
  trips: number;
}

export interface UnitMonthTables {
  /** Combinations with legs delivered in the month (a period holding it has legs when any). */
  rows: number;
  client: GroupTable;
  vehicle: GroupTable;
  driver: GroupTable;
  route: GroupTable;
  kmClient: KmTable;
  kmDriver: KmTable;
  kmRoute: KmTable;
  pending: PendingByGroup[];
}

/** What a period is folded from: its kept days (a month kept from its days has the same form). */
export type UnitFoldPart = Pick<UnitEconomicsDay, 'strings' | 'units' | 'rows' | 'pairs'>;

const WIDTH = UNIT_FIELDS.length;
const SUMS = SUM_FIELDS.length;
/** The fields a report groups by (the others are labels, the greatest of each group). */
const KEY_FIELDS = ['client', 'vehicle', 'driver', 'originId', 'destinationId'] as const satisfies readonly UnitField[];
const KEY_AT = KEY_FIELDS.map((f) => UNIT_FIELDS.indexOf(f));
const LABEL_AT = UNIT_FIELDS.map((_, i) => i).filter((i) => !KEY_AT.includes(i));
const AT = Object.fromEntries(UNIT_FIELDS.map((f, i) => [f, i])) as Record<UnitField, number>;
/**
 * What each of the report's groupings keys on and labels with (the greatest), as positions in a
 * combination: the groups of a period's rows (periodGroups) and of a month's tables
 * (lib/analytics/unit-economics-month-tables.ts) read the same fields in the same order.
 */
export const GROUPINGS = {
  client: { keys: [AT.client], labels: [] },
  vehicle: { keys: [AT.vehicle], labels: [AT.plate, AT.config] },
  driver: { keys: [AT.driver], labels: [AT.driverName] },
  route: {
    keys: [AT.originId, AT.destinationId],
    labels: [AT.originName, AT.originCity, AT.originState, AT.destinationName, AT.destinationCity, AT.destinationState],
  },
} as const satisfies Record<string, { keys: readonly number[]; labels: readonly number[] }>;
/**
 * Dense numbers for tuples of `width` integers, in first-seen order: an open-addressing table
 * over typed arrays, so numbering a tuple is one hash and a probe or two (a Map per field, or a
 * string key per tuple, costs several lookups and allocations: a year is some 130,000 tuples).
 */
export class TupleIds {
  private keys: Int32Array;
  private slots: Int32Array;
  size = 0;
  /** `expected`: about how many tuples will be numbered (the tables are sized for them: no rehash on the way). */
  constructor(
    private readonly width: number,
    expected = 256,
  ) {
    const n = Math.max(256, expected);
    this.keys = new Int32Array(width * n);
    this.slots = new Int32Array(2 ** Math.ceil(Math.log2(n * 2 + 1)));
  }
  private hash(t: ArrayLike<number>, at: number): number {
    let h = 0x811c9dc5;
    for (let j = 0; j < this.width; j++) h = Math.imul(h ^ t[at + j]!, 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    return h ^ (h >>> 12);
  }
  /** The number of the tuple t[at], …, t[at + width − 1]: the next one when it is new. */
  id(t: ArrayLike<number>, at = 0): number {
    const w = this.width;
    const mask = this.slots.length - 1;
    let i = this.hash(t, at) & mask;
    for (let s = this.slots[i]!; s !== 0; i = (i + 1) & mask, s = this.slots[i]!) {
      const base = (s - 1) * w;
      let j = 0;
      while (j < w && this.keys[base + j] === t[at + j]) j++;
      if (j === w) return s - 1;
    }
    const id = this.size++;
    if (this.size * w > this.keys.length) {
      const keys = new Int32Array(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
    }
    for (let j = 0; j < w; j++) this.keys[id * w + j] = t[at + j]!;
    this.slots[i] = id + 1;
    // At most half full: probes stay short.
    if (this.size * 2 > this.slots.length) this.rehash();
    return id;
  }
  /** Component j of tuple `id`. */
  tuple(id: number, j: number): number {
    return this.keys[id * this.width + j]!;
  }
  private rehash(): void {
    const slots = new Int32Array(this.slots.length * 2);
    const mask = slots.length - 1;
    for (let id = 0; id < this.size; id++) {
      let i = this.hash(this.keys, id * this.width) & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = id + 1;
    }
    this.slots = slots;
  }
}

/** The distinct strings of several parts numbered once, in first-seen order. */
class StringNumbers {
  readonly strings: string[] = [];
  private readonly ids = new Map<string, number>();
  /** A part's strings as these numbers (its index → the number). */
  of(part: readonly string[]): Int32Array {
    const local = new Int32Array(part.length);
    part.forEach((s, i) => {
      let id = this.ids.get(s);
      if (id === undefined) {
        id = this.strings.length;
        this.strings.push(s);
        this.ids.set(s, id);
      }
      local[i] = id;
    });
    return local;
  }
}

/**
 * Folds kept days (or months) into a period's combinations: each trip counted once (its first
 * delivery day in the period adds 1, a later one adds 1 and its pair, whose next day is ≤ `to`,
 * takes it back). Combinations that share the grouping fields are one (labels the greatest, sums
 * added): every group and filter of the report is on those fields and takes the greatest label,
 * so the answer is the same, and a year reads as many combinations as there are client × vehicle
 * × driver × route. A part's combination is looked up once, by its grouping fields' ids.
 */
export function foldUnits(
  parts: readonly UnitFoldPart[],
  to: string,
  /** Told of each pair left pending (its next day after `to`), by folded combination: a month keeps them. */
  pending?: (unit: number, next: string, trips: number) => void,
): FoldedUnits {
  const numbers = new StringNumbers();
  const { strings } = numbers;
  // At most every part's combinations: allocated once.
  const most = parts.reduce((n, d) => n + d.units.length / WIDTH, 0);
  const fields = new Int32Array(most * WIDTH);
  const sums = new Float64Array(most * SUMS);
  let count = 0;
  const keys = new TupleIds(KEY_AT.length, most);
  const key = new Int32Array(KEY_AT.length);
  for (const d of parts) {
    const local = numbers.of(d.strings);
    const packed = d.units;
    const byUnit = new Int32Array(packed.length / WIDTH).fill(-1);
    const at = (u: number): number => {
      const seen = byUnit[u]!;
      if (seen >= 0) return seen;
      const base = u * WIDTH;
      for (let l = 0; l < KEY_AT.length; l++) {
        const s = packed[base + KEY_AT[l]!]!;
        key[l] = s < 0 ? -1 : local[s]!;
      }
      // The combinations are numbered in first-seen order: a new one is the next.
      const k = keys.id(key);
      if (k === count) {
        count++;
        for (let i = 0; i < WIDTH; i++) {
          const s = packed[base + i]!;
          fields[k * WIDTH + i] = s < 0 ? -1 : local[s]!;
        }
      } else {
        const g = k * WIDTH;
        for (const i of LABEL_AT) {
          const s = packed[base + i]!;
          if (s < 0) continue;
          const v = local[s]!;
          const cur = fields[g + i]!;
          if (v !== cur && (cur < 0 || strings[v]! > strings[cur]!)) fields[g + i] = v;
        }
      }
      byUnit[u] = k;
      return k;
    };
    const { rows } = d;
    for (let r = 0; r < rows.length; r += ROW_WIDTH) {
      const s = at(rows[r]! | 0) * SUMS;
      for (let j = 0; j < SUMS; j++) sums[s + j]! += rows[r + 1 + j]!;
    }
    for (const p of d.pairs)
      if (p.next <= to) sums[at(p.u) * SUMS]! -= p.trips;
      else pending?.(at(p.u), p.next, p.trips);
  }
  // Views, not copies: a year's arrays are tens of megabytes, read once by the report.
  return { strings, fields: fields.subarray(0, count * WIDTH), sums: sums.subarray(0, count * SUMS) };
}

/**
 * A period's parts as a report reads them: every distinct string of the period numbered once
 * (`strings`), each part's combinations as those numbers (UNIT_FIELDS.length each; −1: null), its
 * rows as kept, and the trips its pairs take back (those whose next delivery day is in the
 * period). The report's groups are added from these rows straight into arrays indexed by string
 * number (routes by a number per origin and destination): no combination of the period is built
 * or looked up, so each of a year's million rows at 1M/1M costs a few array additions.
 */
export interface PeriodUnits {
  strings: string[];
  parts: (RowsPart | TablesPart)[];
}
interface RowsPart {
  units: Int32Array;
  rows: Float64Array;
  takenBack: { u: number; trips: number }[];
}
/** A month read as its tables: `local` maps its string ids to the period's. */
interface TablesPart {
  tables: UnitMonthTables;
  local: Int32Array;
  takenBack: PendingByGroup[];
}

/** A kept month as a report without filters reads it: its strings and tables (lib/analytics/unit-economics-month-tables.ts), not its combinations. */
export interface MonthTablesPart {
  strings: string[];
  tables: UnitMonthTables;
}

/** A period's parts (its kept months and days, or days; a month as its combinations or its tables), the period ending on `to`. */
export function periodUnitsOf(parts: readonly (UnitFoldPart | MonthTablesPart)[], to: string): PeriodUnits {
  const numbers = new StringNumbers();
  return {
    strings: numbers.strings,
    parts: parts.map((d): RowsPart | TablesPart => {
      if (!('units' in d)) return { tables: d.tables, local: numbers.of(d.strings), takenBack: d.tables.pending.filter((p) => p.next <= to) };
      const local = numbers.of(d.strings);
      const units = new Int32Array(d.units.length);
      for (let i = 0; i < units.length; i++) {
        const s = d.units[i]!;
        units[i] = s < 0 ? -1 : local[s]!;
      }
      return { units, rows: d.rows, takenBack: d.pairs.filter((p) => p.next <= to).map((p) => ({ u: p.u, trips: p.trips })) };
    }),
  };
}

/** The same of a period [from, to] from its kept days (in any order; days outside are skipped). */
export function periodUnits(days: readonly (UnitFoldPart & Pick<UnitEconomicsDay, 'day'>)[], from: string, to: string): PeriodUnits {
  return periodUnitsOf(
    days.filter((d) => d.day >= from && d.day <= to),
    to,
  );
}

/** Cost parts of a period: kept days or months. */
export type CostFoldPart = Pick<UnitEconomicsDay, 'costs' | 'vehiclePlates'>;

/** The union of parts' vehicle plates: each vehicle once (sorted), with each plate it carried in any of them once (sorted). */
export function unionOfPlates(parts: Iterable<readonly UnitVehiclePlates[]>): UnitVehiclePlates[] {
  const byVehicle = new Map<string, Set<string>>();
  for (const part of parts)
    for (const { v, p } of part) {
      const set = byVehicle.get(v) ?? new Set<string>();
      for (const plate of p) set.add(plate);
      byVehicle.set(v, set);
    }
  const order = (a: string, z: string): number => (a < z ? -1 : a > z ? 1 : 0);
  return [...byVehicle.keys()].sort(order).map((v) => ({ v, p: [...byVehicle.get(v)!].sort(order) }));
}

/** Every (vehicle, plate) pair of a period's parts: what its unassigned documents' plate words are matched against. */
export const periodVehiclePlates = (parts: readonly Pick<CostFoldPart, 'vehiclePlates'>[]): VehiclePlates[] =>
  unionOfPlates(parts.map((d) => d.vehiclePlates)).map(({ v, p }) => ({ vehicle: v, plates: p }));

/**
 * The cost pools of a period's parts (its kept days, or months and days), unassigned documents placed
 * by the period's plates: every plate any of its delivered trips carried, not a vehicle's label only.
 */
export function costPoolsOf(parts: readonly CostFoldPart[]): CostPools {
  const plates = plateIndexOf(periodVehiclePlates(parts));
  const pools = emptyPools();
  const add = (m: Map<string, Record<CostCategory, number>>, key: string, c: CostCategory, netC: number): void => {
    const cents = m.get(key) ?? { fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 };
    cents[c] += netC;
    m.set(key, cents);
  };
  for (const d of parts) {
    COST_CATEGORIES.forEach((c, i) => (pools.documents[c] += d.costs.documents[i] ?? 0));
    for (const x of d.costs.trip) add(pools.byTrip, x.t, x.c, x.netC);
    for (const x of d.costs.vehicle) add(pools.byVehicle, x.v, x.c, x.netC);
    for (const x of d.costs.spread) {
      const v = plateVehicleOfKeys(x.keys, plates);
      if (v) add(pools.byVehicle, v, x.c, x.netC);
      else pools.spread[x.c] += x.netC;
    }
  }
  return pools;
}

/** The cost pools of a period (its kept days), unassigned documents placed by the period's plates. */
export function periodCostPools(days: readonly (CostFoldPart & Pick<UnitEconomicsDay, 'day'>)[], from: string, to: string): CostPools {
  return costPoolsOf(days.filter((d) => d.day >= from && d.day <= to));
}

/**
 * Groups numbered by a dense key (a string number + 1, 0 for none; or a route number), in
 * first-seen order: per group its key, its sums (SUM_FIELDS, or only km: `kmOnly`) and the
 * greatest of its labels (`$max` of strings as the database groups them: absent values are
 * skipped; none gives '').
 */
class Groups {
  private groupOf = new Int32Array(256);
  readonly keys: number[] = [];
  private sums = new Float64Array(64 * SUMS);
  private labels = new Int32Array(64);
  private readonly width: number;
  constructor(
    private readonly strings: readonly string[],
    private readonly labelAt: readonly number[] = [],
    kmOnly = false,
  ) {
    this.width = kmOnly ? 1 : SUMS;
  }
  /** The number of the group of `key` (a new group when unseen). */
  group(key: number): number {
    if (key >= this.groupOf.length) {
      const grown = new Int32Array(Math.max(key + 1, this.groupOf.length * 2));
      grown.set(this.groupOf);
      this.groupOf = grown;
    }
    let g = this.groupOf[key]! - 1;
    if (g < 0) {
      g = this.keys.length;
      this.groupOf[key] = g + 1;
      this.keys.push(key);
      if ((g + 1) * this.width > this.sums.length) {
        const grown = new Float64Array(this.sums.length * 2);
        grown.set(this.sums);
        this.sums = grown;
      }
      const n = this.labelAt.length;
      if ((g + 1) * n > this.labels.length) {
        const grown = new Int32Array(this.labels.length * 2);
        grown.set(this.labels);
        this.labels = grown;
      }
      this.labels.fill(-1, g * n, (g + 1) * n);
    }
    return g;
  }
  /** Adds row r of `rows` (its sums after the combination's index) to group g, and the labels of the row's combination. */
  add(g: number, rows: Float64Array, r: number, units: Int32Array, base: number): void {
    const w = this.width;
    if (w === 1) this.sums[g]! += rows[r + 1 + KM]!;
    else for (let j = 0; j < SUMS; j++) this.sums[g * SUMS + j]! += rows[r + 1 + j]!;
    const n = this.labelAt.length;
    for (let i = 0; i < n; i++) {
      const v = units[base + this.labelAt[i]!]!;
      const cur = this.labels[g * n + i]!;
      if (v >= 0 && v !== cur && (cur < 0 || this.strings[v]! > this.strings[cur]!)) this.labels[g * n + i] = v;
    }
  }
  /** Adds group k of a month's table (its sums, and its labels as `local` numbers them) to group g. */
  addTableGroup(g: number, t: GroupTable, k: number, local: Int32Array): void {
    for (let j = 0; j < SUMS; j++) this.sums[g * SUMS + j]! += t.sums[k * SUMS + j]!;
    const n = this.labelAt.length;
    const width = t.labels.length / (t.sums.length / SUMS);
    for (let i = 0; i < n; i++) {
      const l = t.labels[k * width + i]!;
      if (l < 0) continue;
      const v = local[l]!;
      const cur = this.labels[g * n + i]!;
      if (v !== cur && (cur < 0 || this.strings[v]! > this.strings[cur]!)) this.labels[g * n + i] = v;
    }
  }
  /** Adds km (thousandths) to group g of a `kmOnly` grouping. */
  addKm(g: number, kmM: number): void {
    this.sums[g]! += kmM;
  }
  takeBack(g: number, trips: number): void {
    this.sums[g * SUMS]! -= trips;
  }
  /** Per group: its key, a label by position, its row of sums. */
  map<T>(f: (key: number, label: (i: number) => string, row: UnitGroupRow) => T): T[] {
    const n = this.labelAt.length;
    return this.keys.map((key, g) => f(key, (i) => str(this.strings[this.labels[g * n + i]!]), groupRow(this.sums, g * SUMS)));
  }
  /** Per group of a `kmOnly` grouping: its key and its km. */
  mapKm<T>(f: (key: number, km: number) => T): T[] {
    return this.keys.map((key, g) => f(key, fromMilli(this.sums[g]!)));
  }
}

const KM = SUM_FIELDS.indexOf('kmM');
const groupRow = (s: Float64Array, at: number): UnitGroupRow => ({
  trips: s[at]!,
  legs: s[at + 1]!,
  km: fromMilli(s[at + 2]!),
  revenueC: s[at + 3]!,
  loaded: fromMilli(s[at + 5]!),
  offloaded: fromMilli(s[at + 6]!),
  tollC: s[at + 4]!,
});
const str = (v: string | null | undefined): string => v ?? '';

/**
 * Each row of the period (the combination in `units` at `base`), then each trip taken back, of the
 * combinations `keep` allows; a month read as its tables goes to `tables` (a reader without filters).
 */
function eachRow(
  p: PeriodUnits,
  keep: (units: Int32Array, base: number) => boolean,
  row: (units: Int32Array, base: number, rows: Float64Array, r: number) => void,
  takeBack: (units: Int32Array, base: number, trips: number) => void,
  tables?: (part: TablesPart) => void,
): void {
  for (const part of p.parts) {
    if ('tables' in part) {
      if (!tables) throw new RangeError('unit economics: a month read as its tables serves a report without filters only');
      tables(part);
      continue;
    }
    const { units, rows, takenBack } = part;
    for (let r = 0; r < rows.length; r += ROW_WIDTH) {
      const base = (rows[r]! | 0) * WIDTH;
      if (keep(units, base)) row(units, base, rows, r);
    }
    for (const t of takenBack) if (keep(units, t.u * WIDTH)) takeBack(units, t.u * WIDTH, t.trips);
  }
}

/**
 * The report's groups (as lib/analytics/trip-audits-repo.ts unitEconomicsGroups answers them)
 * from a period's parts: the rows of the combinations the filters allow, added per client,
 * vehicle, driver and route, labels the greatest of the period's trips. The km on each vehicle
 * are added when asked, for the keys asked, keyed as the report reads them (the client, driver
 * or "origin→destination" as text: none and '' are one).
 */
export function periodGroups(p: PeriodUnits, filter: { client?: string; vehicle?: string }): UnitEconomicsGroups {
  const { strings } = p;
  // A value no combination holds matches none (−2: not even a null).
  const idOf = (v: string | undefined): number | undefined => {
    if (v === undefined) return undefined;
    const i = strings.indexOf(v);
    return i < 0 ? -2 : i;
  };
  const client = idOf(filter.client);
  const vehicle = idOf(filter.vehicle);
  const keep = (units: Int32Array, base: number): boolean =>
    (client === undefined || units[base + AT.client] === client) && (vehicle === undefined || units[base + AT.vehicle] === vehicle);
  const routes = new TupleIds(2);
  const pair = new Int32Array(2);
  const routeOf = (units: Int32Array, base: number): number => {
    pair[0] = units[base + AT.originId]!;
    pair[1] = units[base + AT.destinationId]!;
    return routes.id(pair);
  };
  // A month table's keys as the rows' keys: a string number + 1 (0: none), a route's number.
  const tableKey = (t: GroupTable, k: number, local: Int32Array): number => {
    const id = t.keys[k]!;
    return id < 0 ? 0 : local[id]! + 1;
  };
  const tableRoute = (t: GroupTable, k: number, local: Int32Array): number => {
    const [o, d] = [t.keys[2 * k]!, t.keys[2 * k + 1]!];
    pair[0] = o < 0 ? -1 : local[o]!;
    pair[1] = d < 0 ? -1 : local[d]!;
    return routes.id(pair);
  };
  const byClient = new Groups(strings, GROUPINGS.client.labels);
  const byVehicle = new Groups(strings, GROUPINGS.vehicle.labels);
  const byDriver = new Groups(strings, GROUPINGS.driver.labels);
  const byRoute = new Groups(strings, GROUPINGS.route.labels);
  const total = new Float64Array(SUMS);
  let selected = 0;
  eachRow(
    p,
    keep,
    (units, base, rows, r) => {
      selected++;
      for (let j = 0; j < SUMS; j++) total[j]! += rows[r + 1 + j]!;
      byClient.add(byClient.group(units[base + AT.client]! + 1), rows, r, units, base);
      byVehicle.add(byVehicle.group(units[base + AT.vehicle]! + 1), rows, r, units, base);
      byDriver.add(byDriver.group(units[base + AT.driver]! + 1), rows, r, units, base);
      byRoute.add(byRoute.group(routeOf(units, base)), rows, r, units, base);
    },
    (units, base, trips) => {
      total[0]! -= trips;
      byClient.takeBack(byClient.group(units[base + AT.client]! + 1), trips);
      byVehicle.takeBack(byVehicle.group(units[base + AT.vehicle]! + 1), trips);
      byDriver.takeBack(byDriver.group(units[base + AT.driver]! + 1), trips);
      byRoute.takeBack(byRoute.group(routeOf(units, base)), trips);
    },
    (part) => {
      if (client !== undefined || vehicle !== undefined) throw new RangeError('unit economics: a filtered report reads the combinations');
      const { tables, local, takenBack } = part;
      selected += tables.rows;
      // Each table's groups added to the period's, in the table's order (its combinations' first-seen order).
      const added = (groups: Groups, t: GroupTable, keyOf: (t: GroupTable, k: number) => number): Int32Array => {
        const ids = new Int32Array(t.sums.length / SUMS);
        for (let k = 0; k < ids.length; k++) groups.addTableGroup((ids[k] = groups.group(keyOf(t, k))), t, k, local);
        return ids;
      };
      const c = added(byClient, tables.client, (t, k) => tableKey(t, k, local));
      const v = added(byVehicle, tables.vehicle, (t, k) => tableKey(t, k, local));
      const d = added(byDriver, tables.driver, (t, k) => tableKey(t, k, local));
      const o = added(byRoute, tables.route, (t, k) => tableRoute(t, k, local));
      // Every combination is in one client's group: the clients' sums are the month's.
      const { sums } = tables.client;
      for (let i = 0; i < sums.length; i += SUMS) for (let j = 0; j < SUMS; j++) total[j]! += sums[i + j]!;
      for (const { g, trips } of takenBack) {
        total[0]! -= trips;
        byClient.takeBack(c[g[0]]!, trips);
        byVehicle.takeBack(v[g[1]]!, trips);
        byDriver.takeBack(d[g[2]]!, trips);
        byRoute.takeBack(o[g[3]]!, trips);
      }
    },
  );
  const name = (key: number): string => str(strings[key - 1]);
  const routeEnds = (route: number): [string, string] => [str(strings[routes.tuple(route, 0)]), str(strings[routes.tuple(route, 1)])];
  /**
   * The km of the keys asked on each vehicle, the three groupings in one walk of the rows: a key
   * number (string number + 1, or route number) maps to its index among the keys asked (−1: not
   * asked), and a (key, vehicle) pair is the dense number index × (strings + 1) + vehicle + 1.
   */
  const kmOnVehicles = (keys: Readonly<Record<KmGrouping, ReadonlySet<string>>>): Record<KmGrouping, KmOnVehicle[]> => {
    const span = strings.length + 1;
    const askedIn = (grouping: KmGrouping, keyCount: number, text: (key: number) => string) => {
      const asked = [...keys[grouping]];
      const at = new Map(asked.map((k, i) => [k, i]));
      const index = new Int32Array(keyCount);
      for (let k = 0; k < keyCount; k++) index[k] = at.get(text(k)) ?? -1;
      return { asked, index, km: new Groups(strings, [], true) };
    };
    const client = askedIn('client', span, name);
    const driver = askedIn('driver', span, name);
    const route = askedIn('route', routes.size, (r) => routeEnds(r).join('→'));
    const add = (g: { index: Int32Array; km: Groups }, key: number, units: Int32Array, base: number, rows: Float64Array, r: number): void => {
      const a = g.index[key]!;
      if (a >= 0) g.km.add(g.km.group(a * span + units[base + AT.vehicle]! + 1), rows, r, units, base);
    };
    // A month's km table: the vehicles of the groups asked only.
    const addTable = (g: { index: Int32Array; km: Groups }, km: KmTable, key: (k: number) => number, local: Int32Array): void => {
      for (let k = 0; k < km.start.length - 1; k++) {
        const a = g.index[key(k)]!;
        if (a < 0) continue;
        for (let e = km.start[k]!; e < km.start[k + 1]!; e++) {
          const vehicle = km.vehicles[e]!;
          g.km.addKm(g.km.group(a * span + (vehicle < 0 ? 0 : local[vehicle]! + 1)), km.kmM[e]!);
        }
      }
    };
    eachRow(
      p,
      keep,
      (units, base, rows, r) => {
        add(client, units[base + AT.client]! + 1, units, base, rows, r);
        add(driver, units[base + AT.driver]! + 1, units, base, rows, r);
        add(route, routeOf(units, base), units, base, rows, r);
      },
      () => undefined,
      ({ tables, local }) => {
        addTable(client, tables.kmClient, (k) => tableKey(tables.client, k, local), local);
        addTable(driver, tables.kmDriver, (k) => tableKey(tables.driver, k, local), local);
        addTable(route, tables.kmRoute, (k) => tableRoute(tables.route, k, local), local);
      },
    );
    const out = (g: { asked: string[]; km: Groups }): KmOnVehicle[] =>
      g.km.mapKm((pair, km) => ({ key: g.asked[Math.floor(pair / span)]!, vehicle: name(pair % span), km }));
    return { client: out(client), driver: out(driver), route: out(route) };
  };
  return {
    total: selected ? groupRow(total, 0) : null,
    byClient: byClient.map((key, _label, row) => ({ client: name(key), ...row })),
    byVehicle: byVehicle.map((key, label, row) => ({ vehicle: name(key), plate: label(0), config: label(1), ...row })),
    byDriver: byDriver.map((key, label, row) => ({ driver: name(key), name: label(0), ...row })),
    byRoute: byRoute.map((route, label, row) => {
      const [originId, destinationId] = routeEnds(route);
      return {
        originId,
        originName: label(0),
        originCity: label(1),
        originState: label(2),
        destinationId,
        destinationName: label(3),
        destinationCity: label(4),
        destinationState: label(5),
        ...row,
      };
    }),
    kmOnVehicles,
  };
}

/** Tenant-wide delivered km per vehicle of a period, with its greatest plate, its label (lib/analytics/trip-audits-repo.ts deliveredKmByVehicle). */
export function periodVehicles(p: PeriodUnits): { vehicle: string; plate: string; km: number }[] {
  const g = new Groups(p.strings, [AT.plate]);
  eachRow(
    p,
    () => true,
    (units, base, rows, r) => g.add(g.group(units[base + AT.vehicle]! + 1), rows, r, units, base),
    (units, base, trips) => g.takeBack(g.group(units[base + AT.vehicle]! + 1), trips),
  );
  return g.map((key, label, row) => ({ vehicle: str(p.strings[key - 1]), plate: label(0), km: row.km }));
}
