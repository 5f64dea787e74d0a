/**
 * GET /api/analytics/unit-economics (docs/domain.md "Unit economics"): freight
 * revenue per km and per litre hauled, overall and per client, vehicle and
 * route (the route catalogue), over the legs delivered in the period (a leg in
 * transit has no offloaded litres yet and is left out). Sums are
 * grouped in MongoDB (revenue in integer cents); ratios come from the pure
 * unitEconomics (null + reason when km or litres are 0, never NaN).
 */
import { clientList, type ReportOptions } from '../shared/client-list.ts';
import type { ServiceContext } from '../context.ts';
import { unitEconomicsGroups } from './trip-audits-repo.ts';
import { resolvePeriod, type AnalyticsPeriod } from '../shared/period.ts';
import { periodOut, type Capped, type PeriodOut } from './report.ts';
import {
  byRevenue,
  type UnitEconomicsGroups,
  costFigures,
  EMPTY_UNIT_GROUP,
  meanLegKm,
  unitRow,
  type CostFigures,
  type KmOnVehicle,
  type LitresBasis,
  type UnitGroupRow,
  type UnitRow,
} from './unit-economics.ts';
import { periodCosts, placePeriodCosts } from './period-costs.ts';
import {
  COST_CATEGORIES,
  groupCost,
  unallocated,
  type CostCategory,
  type CostGroup,
  tripCentsBy,
  type CategoryCents,
  type PlacedCosts,
  type TripKeys,
} from './trip-costs.ts';
import { costPoolsOf, periodGroups, periodUnitsOf, periodVehicles } from './unit-economics-day.ts';
import { readFreshUnitEconomics, readFreshUnitEconomicsTables, unitEconomicsRollups } from './unit-economics-rollup-kind.ts';
import { fromCents } from '../money/cents.ts';

export interface UnitEconomicsInput {
  litresBasis: LitresBasis;
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
  vehicle?: string;
}

export type CostedRow = UnitRow & CostFigures;

/** One cost category in the period: what landed on the legs of the answer's scope, assigned and spread. */
export interface CategoryCost {
  category: CostCategory;
  amount: number;
  assigned: number;
  spread: number;
  /** The tenant's documents of the category counted in the period (whatever the filters). */
  documents: number;
  /** Spread costs no leg could take (no leg delivered in the period at all). */
  unallocated: number;
}

export interface RouteCatalogDetails extends CostedRow {
  routeKey: string;
  origin: { id: string; name: string; city: string; state: string };
  destination: { id: string; name: string; city: string; state: string };
  /** Mean distance of a leg on the route (km, 1 decimal). */
  distanceKm: number;
}

export interface FreightUnitEconomics {
  tenant: string;
  computedAt: string;
  period: PeriodOut;
  filters: { client: string | null; vehicle: string | null };
  parameters: { litresBasis: LitresBasis; revenue: string; km: string; legSelection: string; costs: string; margin: string; ordering: string };
  totals: CostedRow;
  costs: { categories: CategoryCost[]; assigned: number; spread: number; unallocated: number };
  byClient: Capped<CostedRow & { client: string }>;
  byVehicle: Capped<CostedRow & { vehicle: string; plate: string; config: string }>;
  byDriver: Capped<CostedRow & { driver: string; name: string }>;
  routes: Capped<RouteCatalogDetails>;
}

/** The period's groups and placed costs from the trips and received documents themselves (the reference). */
async function fromDocuments(ctx: ServiceContext, tenant: string, period: AnalyticsPeriod, filter: Filter): Promise<[UnitEconomicsGroups, PlacedCosts]> {
  const g = await unitEconomicsGroups(ctx.db, tenant, { start: period.start, end: period.end, ...filter }, ctx.config.queryTimeoutMs);
  return [g, await periodCosts(ctx, tenant, period)];
}

/**
 * The same from the totals kept on write (docs/rollups.md "Unit economics"): the period's whole
 * months and the days of its partial ones, settled first; only the trips costs are assigned to
 * are read, by id, for their groups.
 */
async function fromKept(ctx: ServiceContext, tenant: string, period: AnalyticsPeriod, filter: Filter): Promise<[UnitEconomicsGroups, PlacedCosts]> {
  const { startDate, endDate } = period;
  const timeout = ctx.config.queryTimeoutMs;
  // Without a filter the months' tables serve (their groups, their km by vehicle), and the report's vehicles are every
  // vehicle of the period: no walk of the combinations. A filter keeps some combinations: those are read.
  const whole = filter.client === undefined && filter.vehicle === undefined;
  const { months, days } = whole
    ? await readFreshUnitEconomicsTables(ctx.db, tenant, startDate, endDate, timeout)
    : await readFreshUnitEconomics(ctx.db, tenant, startDate, endDate, timeout);
  const parts = [...months, ...days];
  const units = periodUnitsOf(parts, endDate);
  const groups = periodGroups(units, filter);
  const vehicles = whole ? groups.byVehicle.map((v) => ({ vehicle: v.vehicle, km: v.km })) : periodVehicles(units);
  // Plates named in the concepts are matched against every plate of the period's parts, not the vehicles' labels.
  const pools = costPoolsOf(parts);
  return [groups, await placePeriodCosts(ctx, tenant, period, vehicles, pools)];
}

type Filter = { client?: string; vehicle?: string };

/**
 * Reads the days kept on write when the store holds them; `fromDocuments` reads the trips and
 * received documents of the period instead (the reference the kept days are checked against).
 */
export async function getFreightUnitEconomics(
  ctx: ServiceContext,
  tenant: string,
  input: UnitEconomicsInput,
  opts: ReportOptions = {},
): Promise<FreightUnitEconomics> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const basis = input.litresBasis;
  const filter: Filter = { ...(input.client ? { client: input.client } : {}), ...(input.vehicle ? { vehicle: input.vehicle } : {}) };
  const kept = !opts.fromDocuments && (await unitEconomicsRollups.ready(ctx.db));
  const [g, placed] = await (kept ? fromKept : fromDocuments)(ctx, tenant, period, filter);
  // Per key its km on each vehicle (a key and vehicle once per row).
  const byKey = (rows: readonly KmOnVehicle[]): Map<string, [string, number][]> => {
    const m = new Map<string, [string, number][]>();
    for (const r of rows) {
      const list = m.get(r.key);
      if (list) list.push([r.vehicle, r.km]);
      else m.set(r.key, [[r.vehicle, r.km]]);
    }
    return m;
  };
  const inScope = (x: TripKeys): boolean => (!input.client || x.client === input.client) && (!input.vehicle || x.vehicle === input.vehicle);
  const costed = (r: UnitGroupRow, row: UnitRow, kmByVehicle: CostGroup['kmByVehicle'], tripC: CostGroup['tripC']): CostedRow => {
    const c = groupCost(placed, { km: r.km, kmByVehicle, legTollC: r.tollC, tripC });
    return { ...row, ...costFigures(row, r.tollC, c.totalC) };
  };
  const tripsBy = (key: (x: TripKeys) => string): Map<string, CategoryCents> => tripCentsBy(placed, (x) => (inScope(x) ? key(x) : null));
  // Ranked by revenue and capped first: only the rows listed are costed.
  const listed = <R extends UnitGroupRow>(
    rows: readonly R[],
    key: (r: R) => string,
    everyClient = false,
  ): Capped<{ r: R; key: string; row: UnitRow; revenue: number }> =>
    clientList(
      rows
        .map((r) => {
          const row = unitRow(r, basis);
          return { r, key: key(r), row, revenue: row.revenue };
        })
        .sort(byRevenue((x) => x.key)),
      input.limit,
      { everyClient },
    );
  const withData = <A, B>(c: Capped<A>, f: (a: A) => B): Capped<B> => ({ ...c, data: c.data.map(f) });
  const none: [string, number][] = [];
  const clientRows = listed(g.byClient, (r) => r.client, opts.everyClient);
  const driverRows = listed(g.byDriver, (r) => r.driver);
  const routeRows = listed(g.byRoute, (r) => `${r.originId}→${r.destinationId}`);
  // The km on vehicles of the clients, drivers and routes listed only.
  const keysOf = (c: Capped<{ key: string }>): Set<string> => new Set(c.data.map((x) => x.key));
  const km = g.kmOnVehicles({ client: keysOf(clientRows), driver: keysOf(driverRows), route: keysOf(routeRows) });
  const [byClientVehicle, byDriverVehicle, byRouteVehicle] = [byKey(km.client), byKey(km.driver), byKey(km.route)];
  const tripCByClient = tripsBy((x) => x.client);
  const clients = withData(clientRows, ({ r, key, row }) => ({ client: key, ...costed(r, row, byClientVehicle.get(key) ?? none, tripCByClient.get(key)) }));
  const tripCByVehicle = tripsBy((x) => x.vehicle);
  const vehicles = withData(
    listed(g.byVehicle, (r) => r.vehicle),
    ({ r, row }) => ({
      vehicle: r.vehicle,
      plate: r.plate,
      config: r.config,
      ...costed(r, row, [[r.vehicle, r.km]], tripCByVehicle.get(r.vehicle)),
    }),
  );
  const tripCByDriver = tripsBy((x) => x.driver);
  const drivers = withData(driverRows, ({ r, key, row }) => ({
    driver: key,
    name: r.name,
    ...costed(r, row, byDriverVehicle.get(key) ?? none, tripCByDriver.get(key)),
  }));
  const tripCByRoute = tripsBy((x) => x.routeKey);
  const routes = withData(routeRows, ({ r, key, row }): RouteCatalogDetails => ({
    routeKey: key,
    origin: { id: r.originId, name: r.originName, city: r.originCity, state: r.originState },
    destination: { id: r.destinationId, name: r.destinationName, city: r.destinationCity, state: r.destinationState },
    distanceKm: meanLegKm(r),
    ...costed(r, row, byRouteVehicle.get(key) ?? none, tripCByRoute.get(key)),
  }));
  const total = g.total ?? EMPTY_UNIT_GROUP;
  const totalKmByVehicle = g.byVehicle.map((r): [string, number] => [r.vehicle, r.km]);
  const totalCost = groupCost(placed, { km: total.km, kmByVehicle: totalKmByVehicle, legTollC: total.tollC, tripC: tripsBy(() => '').get('') });
  const totalRow = unitRow(total, basis);
  const left = unallocated(placed);
  const categories: CategoryCost[] = COST_CATEGORIES.map((category) => ({
    category,
    amount: fromCents(totalCost.assigned[category] + totalCost.spread[category]),
    assigned: fromCents(totalCost.assigned[category]),
    spread: fromCents(totalCost.spread[category]),
    documents: placed.documents[category],
    unallocated: fromCents(left[category]),
  }));
  const sumOf = (f: (c: CostCategory) => number): number => fromCents(COST_CATEGORIES.reduce((s, c) => s + f(c), 0));

  return {
    tenant,
    computedAt: now.toISOString(),
    period: periodOut(period),
    filters: { client: input.client ?? null, vehicle: input.vehicle ?? null },
    parameters: {
      litresBasis: basis,
      revenue: 'Σ leg billedFreight (the freight itself; tolls in totalFreight are pass-through and excluded), MXN before VAT.',
      km: 'Σ leg distanceKm.',
      legSelection:
        'Legs delivered in the period (offloaded volumes recorded, Mexico City days); a leg in transit is not counted. Litres = Σ product litres of the leg on the chosen basis.',
      costs:
        "Received CFDIs issued in the period, not cancelled, of the cost categories, at subtotal − discount in MXN (VAT excluded), less the suppliers' credit notes on them issued in the period (their own subtotal − discount, placed as their invoice), plus the legs' tolls. A document goes to its trip or vehicle when the carrier assigned it or a concept names a plate a vehicle carried on its trips delivered in the period (and that trip or vehicle has km delivered in the period); the rest is spread over every delivered leg of the tenant by km.",
      margin: "Revenue + the legs' tolls recharged to the client − cost.",
      ordering: 'Lists by revenue, largest first; `limit` caps each list (total gives the full count).',
    },
    totals: { ...totalRow, ...costFigures(totalRow, total.tollC, totalCost.totalC) },
    costs: {
      categories,
      assigned: sumOf((c) => totalCost.assigned[c]),
      spread: sumOf((c) => totalCost.spread[c]),
      unallocated: sumOf((c) => left[c]),
    },
    byClient: clients,
    byVehicle: vehicles,
    byDriver: drivers,
    routes,
  };
}
