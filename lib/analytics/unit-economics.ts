/**
 * Freight unit economics: revenue per km and per litre hauled. The litres
 * basis is an explicit parameter and is echoed in the result, because loaded
 * and offloaded litres differ by the shrinkage. Default 'loaded': the volume
 * the truck actually hauled (and what a volume tariff is usually applied to).
 * Zero km or litres give null with a reason, never NaN/Infinity.
 */
import type { TripLeg } from '../model/trip-document.ts';
import type { DeliveredProduct } from '../trips/shrinkage.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { ratio, roundTo, type Ratio } from './stats.ts';

export type LitresBasis = 'loaded' | 'offloaded';

export interface UnitInputs {
  /** Freight revenue (MXN). */
  revenue: number;
  km: number;
  loadedLitres: number;
  offloadedLitres: number;
}

export interface UnitEconomics {
  revenue: number;
  km: number;
  litres: number;
  litresBasis: LitresBasis;
  /** MXN per km, 2 decimals. */
  revenuePerKm: Ratio;
  /** MXN per litre, 4 decimals (freight per litre is typically below 1 MXN). */
  revenuePerLitre: Ratio;
}

export function unitEconomics(inputs: UnitInputs, litresBasis: LitresBasis = 'loaded'): UnitEconomics {
  const litres = litresBasis === 'loaded' ? inputs.loadedLitres : inputs.offloadedLitres;
  return {
    revenue: inputs.revenue,
    km: inputs.km,
    litres,
    litresBasis,
    revenuePerKm: ratio(inputs.revenue, inputs.km, { denominatorLabel: 'km', decimals: 2 }),
    revenuePerLitre: ratio(inputs.revenue, litres, { denominatorLabel: `${litresBasis} litres`, decimals: 4 }),
  };
}

/**
 * Inputs of one delivered leg (the audit reads legs delivered in the period: a leg
 * in transit has no offloaded litres yet). Revenue is `billedFreight` (the freight
 * itself); tolls in `totalFreight` are pass-through costs and would inflate per-km revenue.
 */
export function legUnitInputs(
  leg: Pick<TripLeg, 'distanceKm' | 'pricing'> & { products: readonly Pick<DeliveredProduct, 'loaded' | 'offloaded'>[] },
): UnitInputs {
  let loaded = 0;
  let offloaded = 0;
  for (const p of leg.products) {
    loaded += p.loaded;
    offloaded += p.offloaded;
  }
  return { revenue: leg.pricing.billedFreight, km: leg.distanceKm, loadedLitres: loaded, offloadedLitres: offloaded };
}

/** Sum inputs (revenue in cents; km and litres to 3 decimals). */
export function sumUnitInputs(rows: readonly UnitInputs[]): UnitInputs {
  let revenueC = 0;
  let km = 0;
  let loaded = 0;
  let offloaded = 0;
  for (const r of rows) {
    revenueC += toCents(r.revenue);
    km += r.km;
    loaded += r.loadedLitres;
    offloaded += r.offloadedLitres;
  }
  return { revenue: fromCents(revenueC), km: roundTo(km, 3), loadedLitres: roundTo(loaded, 3), offloadedLitres: roundTo(offloaded, 3) };
}

/** Group rows by key (client, route "OR→DE", vehicle…) and compute unit economics per group, sorted by key. */
export function unitEconomicsBy(
  rows: readonly (UnitInputs & { key: string })[],
  litresBasis: LitresBasis = 'loaded',
): (UnitEconomics & { key: string; rows: number })[] {
  const groups = new Map<string, UnitInputs[]>();
  for (const r of rows) {
    const g = groups.get(r.key);
    if (g) g.push(r);
    else groups.set(r.key, [r]);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, g]) => ({ key, rows: g.length, ...unitEconomics(sumUnitInputs(g), litresBasis) }));
}

/** km or litres from integer thousandths (how the report sums them: exact in any order). */
export const fromMilli = (m: number): number => m / 1000;

/** Sums of a group of legs as grouped in the database (revenue in integer cents). */
export interface UnitGroupRow {
  trips: number;
  legs: number;
  km: number;
  revenueC: number;
  loaded: number;
  offloaded: number;
  /** Σ the legs' tolls (integer cents). */
  tollC: number;
}

export const EMPTY_UNIT_GROUP: Readonly<UnitGroupRow> = { trips: 0, legs: 0, km: 0, revenueC: 0, loaded: 0, offloaded: 0, tollC: 0 };

export interface UnitRow {
  trips: number;
  legs: number;
  revenue: number;
  km: number;
  litres: number;
  loadedLitres: number;
  offloadedLitres: number;
  revenuePerKm: Ratio;
  revenuePerLitre: Ratio;
}

/** One report row from group sums: km and litres to 3 decimals, then the ratios. */
export function unitRow(g: UnitGroupRow, basis: LitresBasis): UnitRow {
  const loaded = roundTo(g.loaded, 3);
  const offloaded = roundTo(g.offloaded, 3);
  const u = unitEconomics({ revenue: fromCents(g.revenueC), km: roundTo(g.km, 3), loadedLitres: loaded, offloadedLitres: offloaded }, basis);
  return {
    trips: g.trips,
    legs: g.legs,
    revenue: u.revenue,
    km: u.km,
    litres: u.litres,
    loadedLitres: loaded,
    offloadedLitres: offloaded,
    revenuePerKm: u.revenuePerKm,
    revenuePerLitre: u.revenuePerLitre,
  };
}

/** Largest revenue first, then the key. */
export const byRevenue =
  <T extends { revenue: number }>(key: (x: T) => string) =>
  (a: T, b: T): number =>
    b.revenue - a.revenue || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);

/** Mean distance of a leg on a route (km, 1 decimal); 0 without legs. */
export const meanLegKm = (g: Pick<UnitGroupRow, 'km' | 'legs'>): number => (g.legs === 0 ? 0 : roundTo(g.km / g.legs, 1));

/** A row's costs and margin (docs/domain.md, "Costs and margin"). */
export interface CostFigures {
  /** Σ costs placed on the group's legs (MXN before VAT). */
  cost: number;
  costPerKm: Ratio;
  costPerLitre: Ratio;
  costPerTrip: Ratio;
  /** Revenue + the legs' tolls recharged to the client − cost. */
  margin: number;
  marginPerKm: Ratio;
}

/**
 * Cost and margin of a report row: the margin takes the legs' tolls as income too (they are
 * billed to the client in totalFreight, and counted among the costs), so a recharged toll nets out.
 */
export function costFigures(row: Pick<UnitRow, 'revenue' | 'km' | 'litres' | 'trips'>, legTollC: number, costC: number): CostFigures {
  const cost = fromCents(costC);
  const marginC = toCents(row.revenue) + legTollC - costC;
  const margin = fromCents(marginC);
  return {
    cost,
    costPerKm: ratio(cost, row.km, { denominatorLabel: 'km', decimals: 2 }),
    costPerLitre: ratio(cost, row.litres, { denominatorLabel: 'litres', decimals: 4 }),
    costPerTrip: ratio(cost, row.trips, { denominatorLabel: 'trips', decimals: 2 }),
    margin,
    marginPerKm: ratio(margin, row.km, { denominatorLabel: 'km', decimals: 2 }),
  };
}

/** A group's km on one vehicle (what a vehicle's assigned costs are shared by). */
export interface KmOnVehicle {
  key: string;
  vehicle: string;
  km: number;
}

/** The groupings whose km on each vehicle share the vehicles' costs: per client, route and driver. */
export type KmGrouping = 'client' | 'route' | 'driver';

export interface UnitEconomicsGroups {
  total: UnitGroupRow | null;
  byClient: (UnitGroupRow & { client: string })[];
  byVehicle: (UnitGroupRow & { vehicle: string; plate: string; config: string })[];
  byDriver: (UnitGroupRow & { driver: string; name: string })[];
  /**
   * The km of these clients, routes ("OR→DE") and drivers on each vehicle (a key and vehicle once): asked for
   * the rows a report lists only (a year at 1M holds hundreds of thousands of route × vehicle pairs).
   */
  kmOnVehicles(keys: Readonly<Record<KmGrouping, ReadonlySet<string>>>): Record<KmGrouping, KmOnVehicle[]>;
  byRoute: (UnitGroupRow & {
    originId: string;
    originName: string;
    originCity: string;
    originState: string;
    destinationId: string;
    destinationName: string;
    destinationCity: string;
    destinationState: string;
  })[];
}
