/**
 * Costs of the unit-economics audit (docs/domain.md, "Costs and margin"): the period's received
 * CFDIs (net of discounts, MXN, before VAT), less the suppliers' credit notes of the period on them
 * (negative documents placed as their invoice), and the legs' tolls, placed on the delivered legs.
 * A document lands on its trip or vehicle when the carrier assigned it or when a concept names a
 * plate one of the period's vehicles carried; the rest is spread over every delivered leg by km. An
 * assignment whose trip or vehicle has no delivered km in the period is spread too. Pure; cents.
 */
import type { ReceivedCategory } from '../model/tenant-settings.ts';

export const COST_CATEGORIES = ['fuel', 'tolls', 'maintenance', 'tyres', 'insurance', 'subcontractedFreight'] as const;
export type CostCategory = (typeof COST_CATEGORIES)[number];

export const isCostCategory = (c: ReceivedCategory): c is CostCategory => (COST_CATEGORIES as readonly string[]).includes(c);

/** Integer MXN cents per category. */
export type CategoryCents = Record<CostCategory, number>;

export const zeroCents = (): CategoryCents => ({ fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 });

/** One received cost document as the audit reads it. */
export interface CostDoc {
  category: CostCategory;
  /** Subtotal − discount, MXN cents (a credit note: its own, negative). */
  netC: number;
  /** The carrier's assignment (PUT /api/received-docs/{id}/assignment), if any. */
  assignedVehicle: string | null;
  assignedTrip: string | null;
  /** The concepts' descriptions, where a plate may be named. */
  descriptions: readonly string[];
}

/** A plate as compared: upper case, letters and digits only ("65-OS-1Y" → "65OS1Y"). */
export const plateKey = (plate: string): string => plate.toUpperCase().replace(/[^A-Z0-9]/g, '');

/** Shorter keys would match ordinary words and numbers. */
const MIN_PLATE_KEY = 5;

/**
 * Plate key → vehicle id, over every (vehicle, plate) pair of the period's delivered trips: a vehicle
 * that carried several plates in the period is named by each. A plate two vehicles share names
 * neither (the text cannot say which), nor does a plate too short to tell from a word.
 */
export function plateIndex(vehicles: readonly { vehicle: string; plate: string }[]): Map<string, string> {
  const byKey = new Map<string, string | null>();
  for (const v of vehicles) {
    const k = plateKey(v.plate);
    if (k.length < MIN_PLATE_KEY || !v.vehicle) continue;
    const seen = byKey.get(k);
    byKey.set(k, seen === undefined || seen === v.vehicle ? v.vehicle : null);
  }
  return new Map([...byKey].filter((e): e is [string, string] => e[1] !== null));
}

/** Every plate a vehicle's delivered trips of a period carried. */
export interface VehiclePlates {
  vehicle: string;
  plates: readonly string[];
}

/** plateIndex of every plate of each vehicle. */
export const plateIndexOf = (vehicles: readonly VehiclePlates[]): Map<string, string> =>
  plateIndex(vehicles.flatMap((v) => v.plates.map((plate) => ({ vehicle: v.vehicle, plate }))));

/**
 * The vehicle whose plate a concept names: a word of the text (split at spaces and punctuation
 * other than hyphens, so "65-OS-1Y" stays whole) equal to a plate. Two different vehicles
 * named: none (the document is spread).
 */
export function plateVehicle(descriptions: readonly string[], plates: ReadonlyMap<string, string>): string | null {
  if (!plates.size) return null;
  return plateVehicleOfKeys(plateWordKeys(descriptions), plates);
}

/** The plate keys of the concepts' words that could name a plate (long enough): what plateVehicle compares. */
export function plateWordKeys(descriptions: readonly string[]): string[] {
  const keys = new Set<string>();
  for (const d of descriptions) {
    for (const word of d.split(/[^\p{L}\p{N}-]+/u)) {
      const k = plateKey(word);
      if (k.length >= MIN_PLATE_KEY) keys.add(k);
    }
  }
  return [...keys];
}

/** The one vehicle these word keys name (plateVehicle on keys already extracted); null for none or several. */
export function plateVehicleOfKeys(keys: Iterable<string>, plates: ReadonlyMap<string, string>): string | null {
  const found = new Set<string>();
  for (const k of keys) {
    const v = plates.get(k);
    if (v !== undefined) found.add(v);
  }
  return found.size === 1 ? [...found][0]! : null;
}

/** The period's costs by where they go, before knowing which targets have km. */
export interface CostPools {
  /** Spread over every delivered leg by km. */
  spread: CategoryCents;
  byVehicle: Map<string, CategoryCents>;
  byTrip: Map<string, CategoryCents>;
  /** Documents counted per category. */
  documents: Record<CostCategory, number>;
}

export const emptyPools = (): CostPools => ({
  spread: zeroCents(),
  byVehicle: new Map(),
  byTrip: new Map(),
  documents: { fuel: 0, tolls: 0, maintenance: 0, tyres: 0, insurance: 0, subcontractedFreight: 0 },
});

const addInto = (m: Map<string, CategoryCents>, key: string, cat: CostCategory, c: number): void => {
  const at = m.get(key) ?? zeroCents();
  at[cat] += c;
  m.set(key, at);
};

/** Folds one document into the pools: the carrier's trip, else its vehicle, else a plate named, else spread. */
export function addCostDoc(pools: CostPools, doc: CostDoc, plates: ReadonlyMap<string, string>): void {
  pools.documents[doc.category]++;
  if (doc.assignedTrip) return addInto(pools.byTrip, doc.assignedTrip, doc.category, doc.netC);
  const vehicle = doc.assignedVehicle ?? plateVehicle(doc.descriptions, plates);
  if (vehicle) return addInto(pools.byVehicle, vehicle, doc.category, doc.netC);
  pools.spread[doc.category] += doc.netC;
}

/** A delivered trip of the period as the costs see it: its groups and its delivered km. */
export interface TripKeys {
  id: string;
  client: string;
  vehicle: string;
  driver: string;
  routeKey: string;
  km: number;
}

/** The pools once targets are known: an assignment whose target has no delivered km joins the spread. */
export interface PlacedCosts {
  spread: CategoryCents;
  byVehicle: Map<string, CategoryCents>;
  byTrip: Map<string, { keys: TripKeys; cents: CategoryCents }>;
  /** Tenant-wide delivered km of the period (the spread's denominator) and per vehicle. */
  totalKm: number;
  vehicleKm: ReadonlyMap<string, number>;
  documents: Record<CostCategory, number>;
}

export function placeCosts(pools: CostPools, totalKm: number, vehicleKm: ReadonlyMap<string, number>, trips: readonly TripKeys[]): PlacedCosts {
  const spread = { ...pools.spread };
  const byVehicle = new Map<string, CategoryCents>();
  const byTrip = new Map<string, { keys: TripKeys; cents: CategoryCents }>();
  const tripById = new Map(trips.map((x) => [x.id, x]));
  for (const [v, cents] of pools.byVehicle) {
    if ((vehicleKm.get(v) ?? 0) > 0) byVehicle.set(v, cents);
    else for (const c of COST_CATEGORIES) spread[c] += cents[c];
  }
  for (const [id, cents] of pools.byTrip) {
    const keys = tripById.get(id);
    if (keys && keys.km > 0) byTrip.set(id, { keys, cents });
    else for (const c of COST_CATEGORIES) spread[c] += cents[c];
  }
  return { spread, byVehicle, byTrip, totalKm, vehicleKm, documents: pools.documents };
}

/** What a group of legs (all, a client, a route, a vehicle, a driver) needs to receive its share. */
export interface CostGroup {
  km: number;
  /** The group's km on each vehicle. */
  /** Its km on each vehicle (each vehicle once): only walked. */
  kmByVehicle: Iterable<readonly [string, number]>;
  /** Σ the legs' tolls (assigned: the leg says it). */
  legTollC: number;
  /** The costs assigned to the group's trips (tripCentsBy: one pass over the assigned trips serves every group). */
  tripC: CategoryCents | undefined;
}

export interface GroupCost {
  assigned: CategoryCents;
  spread: CategoryCents;
  totalC: number;
}

const share = (c: number, part: number, whole: number): number => (whole > 0 && part > 0 ? Math.round((c * part) / whole) : 0);

/** Per vehicle with costs, its pool by category (COST_CATEGORIES' order) and its km: computed once per placement. */
const vehiclePools = new WeakMap<PlacedCosts, Map<string, { cents: number[]; km: number }>>();

function vehiclePoolsOf(placed: PlacedCosts): Map<string, { cents: number[]; km: number }> {
  let pools = vehiclePools.get(placed);
  if (!pools) {
    pools = new Map();
    for (const [v, cents] of placed.byVehicle) pools.set(v, { cents: COST_CATEGORIES.map((c) => cents[c]), km: placed.vehicleKm.get(v) ?? 0 });
    vehiclePools.set(placed, pools);
  }
  return pools;
}

/**
 * The group's costs: the spread pool × its km ÷ all km, each vehicle's pool × its km on that
 * vehicle ÷ the vehicle's km, its trips' own documents and its legs' tolls. Each share is
 * rounded to the cent, so groups may differ from the totals by cents.
 */
export function groupCost(placed: PlacedCosts, g: CostGroup): GroupCost {
  const assigned = zeroCents();
  const spread = zeroCents();
  assigned.tolls += g.legTollC;
  for (const c of COST_CATEGORIES) spread[c] = share(placed.spread[c], g.km, placed.totalKm);
  // The group's vehicles, not every vehicle with costs: a group holds few (the same terms either way).
  const pools = vehiclePoolsOf(placed);
  const sums = COST_CATEGORIES.map(() => 0);
  for (const [v, km] of g.kmByVehicle) {
    const pool = km > 0 ? pools.get(v) : undefined;
    if (pool) for (let i = 0; i < sums.length; i += 1) sums[i]! += share(pool.cents[i]!, km, pool.km);
  }
  COST_CATEGORIES.forEach((c, i) => (assigned[c] += sums[i]!));
  if (g.tripC) for (const c of COST_CATEGORIES) assigned[c] += g.tripC[c];
  let totalC = 0;
  for (const c of COST_CATEGORIES) totalC += assigned[c] + spread[c];
  return { assigned, spread, totalC };
}

/** The costs assigned to trips, added per group (the key `groupOf` gives a trip; trips it gives none of are left out). */
export function tripCentsBy(placed: PlacedCosts, groupOf: (t: TripKeys) => string | null): Map<string, CategoryCents> {
  const out = new Map<string, CategoryCents>();
  for (const { keys, cents } of placed.byTrip.values()) {
    const k = groupOf(keys);
    if (k === null) continue;
    const sum = out.get(k) ?? zeroCents();
    for (const c of COST_CATEGORIES) sum[c] += cents[c];
    out.set(k, sum);
  }
  return out;
}

/** Spread costs no leg can take (no delivered km in the period at all). */
export function unallocated(placed: PlacedCosts): CategoryCents {
  return placed.totalKm > 0 ? zeroCents() : { ...placed.spread };
}
