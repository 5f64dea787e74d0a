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
 * The costs of the day's received CFDIs (issued that day, not cancelled, of a cost category) are
 * kept by where they go: a trip, a vehicle (assigned), or unassigned with the plate-like words of
 * their concepts (keys of at least 5 characters: only those can name a plate), which the report
 * matches against the period's plates when read.
 */
import { mxDateString } from '../time/mexico-city.ts';
import { COST_CATEGORIES, plateIndex, plateVehicleOfKeys, type CostCategory, type CostPools, emptyPools } from './trip-costs.ts';
import { fromMilli, type KmOnVehicle, type UnitEconomicsGroups, type UnitGroupRow } from './unit-economics.ts';

/** Bump whenever what a day holds or how it is computed changes: a store of another version is rebuilt. */
export const UNIT_ECONOMICS_ROLLUP_VERSION = 1;

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

/** A received cost document of the day (lib/received/received-assignments-repo.ts streamCostDocs, net in MXN cents). */
export interface UnitCostDoc {
  date: number;
  category: CostCategory;
  netC: number;
  vehicle: string | null;
  tripId: string | null;
  /** plateWordKeys of its concepts. */
  keys: readonly string[];
}

export interface UnitDayRow extends UnitSums {
  /** Index in `units`. */
  u: number;
}

export interface UnitDayPair {
  u: number;
  /** The trip's next delivery day. */
  next: string;
  trips: number;
}

export interface UnitDayCosts {
  /** Documents per category, in COST_CATEGORIES order. */
  documents: number[];
  spread: { c: CostCategory; keys: string[]; netC: number }[];
  vehicle: { v: string; c: CostCategory; netC: number }[];
  trip: { t: string; c: CostCategory; netC: number }[];
}

export interface UnitEconomicsDay {
  _id: string;
  tenant: string;
  day: string;
  version: number;
  /** The combinations, each as its UNIT_FIELDS values. */
  units: (string | null)[][];
  rows: UnitDayRow[];
  pairs: UnitDayPair[];
  costs: UnitDayCosts;
}

export const unitEconomicsDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

const comboValues = (t: UnitCombo): (string | null)[] => UNIT_FIELDS.map((f) => t[f]);
const comboOf = (values: readonly (string | null)[]): UnitCombo => Object.fromEntries(UNIT_FIELDS.map((f, i) => [f, values[i] ?? null])) as UnitCombo;

const zeroSums = (): UnitSums => ({ trips: 0, legs: 0, kmM: 0, revenueC: 0, tollC: 0, loadedM: 0, offloadedM: 0 });
const addLeg = (s: UnitSums, l: UnitLeg): void => {
  s.legs += 1;
  s.kmM += l.kmM;
  s.revenueC += l.revenueC;
  s.tollC += l.tollC;
  s.loadedM += l.loadedM;
  s.offloadedM += l.offloadedM;
};
const addSums = (s: UnitSums, x: UnitSums, sign = 1): void => {
  s.trips += sign * x.trips;
  s.legs += sign * x.legs;
  s.kmM += sign * x.kmM;
  s.revenueC += sign * x.revenueC;
  s.tollC += sign * x.tollC;
  s.loadedM += sign * x.loadedM;
  s.offloadedM += sign * x.offloadedM;
};

class DayBuilder {
  readonly units: (string | null)[][] = [];
  private readonly unitIndex = new Map<string, number>();
  readonly rows = new Map<number, UnitDayRow>();
  readonly pairs = new Map<string, UnitDayPair>();
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
      u = this.units.length;
      this.units.push(values);
      this.unitIndex.set(key, u);
    }
    return u;
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
      let row = b.rows.get(u);
      if (!row) b.rows.set(u, (row = { u, ...zeroSums() }));
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
      units: b.units,
      rows: [...b.rows.values()].sort((a, z) => a.u - z.u),
      pairs: byKey(b.pairs),
      costs: { documents: b.costs.documents, spread: byKey(b.costs.spread), vehicle: byKey(b.costs.vehicle), trip: byKey(b.costs.trip) },
    });
  }
  return out;
}

/** A combination's sums over a period. */
export interface PeriodUnit {
  combo: UnitCombo;
  sums: UnitSums;
}

/**
 * The combinations of a period [from, to] (its kept days, in any order): each trip counted once
 * (its first delivery day in the period adds 1, a later one in it adds 1 and its pair takes it back).
 */
export function periodUnits(days: readonly Pick<UnitEconomicsDay, 'day' | 'units' | 'rows' | 'pairs'>[], from: string, to: string): PeriodUnit[] {
  const units = new Map<string, PeriodUnit>();
  const at = (values: readonly (string | null)[]): PeriodUnit => {
    const key = JSON.stringify(values);
    let u = units.get(key);
    if (!u) units.set(key, (u = { combo: comboOf(values), sums: zeroSums() }));
    return u;
  };
  for (const d of days) {
    if (d.day < from || d.day > to) continue;
    for (const r of d.rows) addSums(at(d.units[r.u]!).sums, r);
    for (const p of d.pairs) if (p.next <= to) at(d.units[p.u]!).sums.trips -= p.trips;
  }
  return [...units.values()];
}

/** The cost pools of a period (its kept days), unassigned documents placed by the period's plates. */
export function periodCostPools(
  days: readonly Pick<UnitEconomicsDay, 'day' | 'costs'>[],
  from: string,
  to: string,
  vehicles: readonly { vehicle: string; plate: string }[],
): CostPools {
  const plates = plateIndex(vehicles);
  const pools = emptyPools();
  const add = (m: Map<string, Record<CostCategory, number>>, key: string, c: CostCategory, netC: number): void => {
    const cents = m.get(key) ?? { fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 };
    cents[c] += netC;
    m.set(key, cents);
  };
  for (const d of days) {
    if (d.day < from || d.day > to) continue;
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

/** `$max` of strings as the database groups them: absent values are skipped; none gives ''. */
const maxLabel = (a: string | null, b: string | null): string | null => (a === null ? b : b === null ? a : b > a ? b : a);

interface Acc {
  sums: UnitSums;
  labels: Partial<Record<UnitField, string | null>>;
}

function accumulate(units: readonly PeriodUnit[], key: (c: UnitCombo) => string, labels: readonly UnitField[]): Map<string, Acc & { combo: UnitCombo }> {
  const m = new Map<string, Acc & { combo: UnitCombo }>();
  for (const u of units) {
    const k = key(u.combo);
    let a = m.get(k);
    if (!a) m.set(k, (a = { combo: u.combo, sums: zeroSums(), labels: {} }));
    addSums(a.sums, u.sums);
    for (const f of labels) a.labels[f] = maxLabel(a.labels[f] ?? null, u.combo[f]);
  }
  return m;
}

const groupRow = (s: UnitSums): UnitGroupRow => ({
  trips: s.trips,
  legs: s.legs,
  km: fromMilli(s.kmM),
  revenueC: s.revenueC,
  loaded: fromMilli(s.loadedM),
  offloaded: fromMilli(s.offloadedM),
  tollC: s.tollC,
});
const str = (v: string | null | undefined): string => v ?? '';

/**
 * The report's groups (as lib/analytics/trip-audits-repo.ts unitEconomicsGroups answers them)
 * from a period's combinations: those the filters allow, added per client, vehicle, driver and
 * route, labels the greatest of the period's trips.
 */
export function periodGroups(all: readonly PeriodUnit[], filter: { client?: string; vehicle?: string }): UnitEconomicsGroups {
  const units = all.filter(
    (u) => (filter.client === undefined || u.combo.client === filter.client) && (filter.vehicle === undefined || u.combo.vehicle === filter.vehicle),
  );
  const by = (key: (c: UnitCombo) => unknown, labels: readonly UnitField[] = []) => [...accumulate(units, (c) => JSON.stringify(key(c)), labels).values()];
  const total = zeroSums();
  for (const u of units) addSums(total, u.sums);
  const kmOn = (key: (c: UnitCombo) => string): KmOnVehicle[] =>
    by((c) => [key(c), c.vehicle]).map((a) => ({ key: key(a.combo), vehicle: str(a.combo.vehicle), km: fromMilli(a.sums.kmM) }));
  const routeKey = (c: UnitCombo): string => `${str(c.originId)}→${str(c.destinationId)}`;
  return {
    total: units.length ? groupRow(total) : null,
    byClient: by((c) => c.client).map((a) => ({ client: str(a.combo.client), ...groupRow(a.sums) })),
    byVehicle: by((c) => c.vehicle, ['plate', 'config']).map((a) => ({
      vehicle: str(a.combo.vehicle),
      plate: str(a.labels.plate),
      config: str(a.labels.config),
      ...groupRow(a.sums),
    })),
    byDriver: by((c) => c.driver, ['driverName']).map((a) => ({ driver: str(a.combo.driver), name: str(a.labels.driverName), ...groupRow(a.sums) })),
    clientVehicle: kmOn((c) => str(c.client)),
    routeVehicle: kmOn(routeKey),
    driverVehicle: kmOn((c) => str(c.driver)),
    byRoute: by(
      (c) => [c.originId, c.destinationId],
      ['originName', 'originCity', 'originState', 'destinationName', 'destinationCity', 'destinationState'],
    ).map((a) => ({
      originId: str(a.combo.originId),
      originName: str(a.labels.originName),
      originCity: str(a.labels.originCity),
      originState: str(a.labels.originState),
      destinationId: str(a.combo.destinationId),
      destinationName: str(a.labels.destinationName),
      destinationCity: str(a.labels.destinationCity),
      destinationState: str(a.labels.destinationState),
      ...groupRow(a.sums),
    })),
  };
}

/** Tenant-wide delivered km per vehicle of a period, with its greatest plate (lib/analytics/trip-audits-repo.ts deliveredKmByVehicle). */
export function periodVehicles(all: readonly PeriodUnit[]): { vehicle: string; plate: string; km: number }[] {
  return [...accumulate(all, (c) => JSON.stringify(c.vehicle), ['plate']).values()].map((a) => ({
    vehicle: str(a.combo.vehicle),
    plate: str(a.labels.plate),
    km: fromMilli(a.sums.kmM),
  }));
}
