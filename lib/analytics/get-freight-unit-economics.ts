/**
 * GET /api/analytics/unit-economics (docs/domain.md "Unit economics"): freight
 * revenue per km and per litre hauled, overall and per client, vehicle and
 * route (the route catalogue), over the legs delivered in the period (a leg in
 * transit has no offloaded litres yet and is left out). Sums are
 * grouped in MongoDB (revenue in integer cents); ratios come from the pure
 * unitEconomics (null + reason when km or litres are 0, never NaN).
 */
import type { ServiceContext } from '../context.ts';
import { unitEconomicsGroups } from './trip-audits-repo.ts';
import { resolvePeriod } from '../shared/period.ts';
import { capped, periodOut, type Capped, type PeriodOut } from './report.ts';
import { byRevenue, EMPTY_UNIT_GROUP, meanLegKm, unitRow, type LitresBasis, type UnitRow } from './unit-economics.ts';

export interface UnitEconomicsInput {
  litresBasis: LitresBasis;
  limit: number;
  startDate?: string;
  endDate?: string;
  client?: string;
  vehicle?: string;
}

export interface RouteCatalogDetails extends UnitRow {
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
  parameters: { litresBasis: LitresBasis; revenue: string; km: string; legSelection: string; ordering: string };
  totals: UnitRow;
  byClient: Capped<UnitRow & { client: string }>;
  byVehicle: Capped<UnitRow & { vehicle: string; plate: string; config: string }>;
  routes: Capped<RouteCatalogDetails>;
}

export async function getFreightUnitEconomics(ctx: ServiceContext, tenant: string, input: UnitEconomicsInput): Promise<FreightUnitEconomics> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const basis = input.litresBasis;
  const g = await unitEconomicsGroups(
    ctx.db,
    tenant,
    { start: period.start, end: period.end, ...(input.client ? { client: input.client } : {}), ...(input.vehicle ? { vehicle: input.vehicle } : {}) },
    ctx.config.queryTimeoutMs,
  );
  const clients = g.byClient.map((r) => ({ client: r.client, ...unitRow(r, basis) })).sort(byRevenue((x) => x.client));
  const vehicles = g.byVehicle.map((r) => ({ vehicle: r.vehicle, plate: r.plate, config: r.config, ...unitRow(r, basis) })).sort(byRevenue((x) => x.vehicle));
  const routes: RouteCatalogDetails[] = g.byRoute
    .map((r) => ({
      routeKey: `${r.originId}→${r.destinationId}`,
      origin: { id: r.originId, name: r.originName, city: r.originCity, state: r.originState },
      destination: { id: r.destinationId, name: r.destinationName, city: r.destinationCity, state: r.destinationState },
      distanceKm: meanLegKm(r),
      ...unitRow(r, basis),
    }))
    .sort(byRevenue((x) => x.routeKey));

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
      ordering: 'Lists by revenue, largest first; `limit` caps each list (total gives the full count).',
    },
    totals: unitRow(g.total ?? EMPTY_UNIT_GROUP, basis),
    byClient: capped(clients, input.limit),
    byVehicle: capped(vehicles, input.limit),
    routes: capped(routes, input.limit),
  };
}
