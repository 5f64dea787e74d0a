/**
 * GET /api/analytics/fleet-utilization (domain.md "Fleet utilization and
 * productivity"): per vehicle or driver over the period — trips, legs, active
 * days ÷ days in the period, litres hauled, km, revenue (leg billedFreight,
 * tolls excluded) and revenue per km (lib/analytics/utilization.ts) — plus
 * the idle vehicles: units of the fleet (a leg in the last 365 days before
 * asOf) with no activity in the tenant's idleVehicleDays ending at asOf.
 */
import type { ServiceContext } from '../context.ts';
import { findUtilizationTrips, vehicleLastActivity } from '../db/fleet-repo.ts';
import { getTracedSettings, type SettingSource } from '../db/settings-source.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { resolvePeriod } from '../shared/period.ts';
import { mxAddDays, mxDateString, mxYmdInt, ymdIntToMxDayStart } from '../time/mexico-city.ts';
import { asOfOut, periodOut, type AsOfOut, type PeriodOut } from './report.ts';
import { ratio, roundTo, type Ratio } from './stats.ts';
import type { LitresBasis } from './unit-economics.ts';
import { fleetUtilization, idleVehicles, type UtilizationRow } from './utilization.ts';

/** Vehicles with a leg in this many days before asOf make up the fleet for the idle check. */
export const FLEET_LOOKBACK_DAYS = 365;
/** Longest span one leg is credited (utilization.ts): legs loaded this long before the period can still reach it. */
const LEG_SPAN_SLACK_DAYS = 31;

/** 'YYYY-MM-DD' → YYYYMMDD. */
const ymdNum = (date: string): number => Number(date.replace(/-/g, ''));

export interface FleetUtilizationInput {
  groupBy: 'vehicle' | 'driver';
  litresBasis: LitresBasis;
  startDate?: string;
  endDate?: string;
  client?: string;
  vehicle?: string;
  driver?: string;
}

export interface FleetUtilization {
  tenant: string;
  computedAt: string;
  period: PeriodOut;
  asOf: AsOfOut;
  filters: { client: string | null; vehicle: string | null; driver: string | null };
  groupBy: 'vehicle' | 'driver';
  parameters: {
    litresBasis: LitresBasis;
    idleVehicleDays: number;
    idleVehicleDaysSource: SettingSource;
    fleetLookbackDays: number;
    activeDay: string;
    revenue: string;
  };
  totals: {
    units: number;
    trips: number;
    legs: number;
    activeUnitDays: number;
    unitDaysInPeriod: number;
    utilization: Ratio;
    litres: number;
    km: number;
    revenue: number;
    revenuePerKm: Ratio;
  };
  rows: UtilizationRow[];
  idleVehicles: {
    fleetSize: number;
    idleCount: number;
    data: { vehicle: string; plate: string; lastActivity: string | null; daysSinceLastActivity: number | null }[];
  };
}

export async function auditFleetUtilization(ctx: ServiceContext, tenant: string, input: FleetUtilizationInput): Promise<FleetUtilization> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const asOf = period.asOf;
  const timeout = ctx.config.queryTimeoutMs;
  const scope = { ...(input.client ? { client: input.client } : {}), ...(input.vehicle ? { vehicle: input.vehicle } : {}), ...(input.driver ? { driver: input.driver } : {}) };
  const asOfDay = mxDateString(asOf);
  const [{ settings, sourceOf }, trips, activity] = await Promise.all([
    getTracedSettings(ctx.db, tenant),
    findUtilizationTrips(ctx.db, tenant, { ...scope, fromYmd: ymdNum(mxAddDays(period.startDate, -LEG_SPAN_SLACK_DAYS)), toYmd: mxYmdInt(period.end) }, timeout),
    vehicleLastActivity(ctx.db, tenant, { ...(input.vehicle ? { vehicle: input.vehicle } : {}), fromYmd: ymdNum(mxAddDays(asOfDay, -FLEET_LOOKBACK_DAYS)), toYmd: mxYmdInt(asOf), windowEndsToday: asOfDay >= mxDateString(now.getTime()) }, timeout),
  ]);

  // fleetUtilization reads leg dates, km, billedFreight and product litres: what the compact trips carry.
  const rows = fleetUtilization(trips as unknown as Parameters<typeof fleetUtilization>[0], input.groupBy, { from: period.startDate, to: period.endDate }, input.litresBasis);
  let trips_ = 0;
  let legs = 0;
  let active = 0;
  let litres = 0;
  let km = 0;
  let revenueC = 0;
  for (const r of rows) {
    trips_ += r.trips;
    legs += r.legs;
    active += r.activeDays;
    litres += r.litres;
    km += r.km;
    revenueC += toCents(r.revenue);
  }
  const unitDays = rows.length * period.days;
  const revenue = fromCents(revenueC);
  const kmR = roundTo(km, 3);

  const last = new Map<string, number>();
  const plates = new Map<string, string>();
  for (const a of activity) {
    plates.set(a.vehicle, a.plate);
    const t = a.lastInstant !== null ? Math.min(a.lastInstant, asOf) : a.lastDayWithoutInstant !== null ? ymdIntToMxDayStart(a.lastDayWithoutInstant) : null;
    if (t !== null) last.set(a.vehicle, t);
  }
  const statuses = idleVehicles([...plates.keys()], last, asOf, settings.idleVehicleDays);
  const idle = statuses
    .filter((s) => s.idle)
    .sort((a, b) => (b.daysSinceLastActivity ?? Infinity) - (a.daysSinceLastActivity ?? Infinity) || (a.vehicle < b.vehicle ? -1 : 1))
    .map((s) => ({
      vehicle: s.vehicle,
      plate: plates.get(s.vehicle) ?? '',
      lastActivity: s.lastActivity === null ? null : new Date(s.lastActivity).toISOString(),
      daysSinceLastActivity: s.daysSinceLastActivity,
    }));

  return {
    tenant,
    computedAt: now.toISOString(),
    period: periodOut(period),
    asOf: asOfOut(asOf),
    filters: { client: input.client ?? null, vehicle: input.vehicle ?? null, driver: input.driver ?? null },
    groupBy: input.groupBy,
    parameters: {
      litresBasis: input.litresBasis,
      idleVehicleDays: settings.idleVehicleDays,
      idleVehicleDaysSource: sourceOf('idleVehicleDays'),
      fleetLookbackDays: FLEET_LOOKBACK_DAYS,
      activeDay: 'A Mexico City calendar day from a leg’s loading day to its offloading day (both included, at most 31 per leg), or the leg date when the instants are missing. A leg counts when one of its active days falls in the period.',
      revenue: 'Σ leg billedFreight (tolls, in totalFreight, excluded).',
    },
    totals: {
      units: rows.length,
      trips: trips_,
      legs,
      activeUnitDays: active,
      unitDaysInPeriod: unitDays,
      utilization: ratio(active, unitDays, { denominatorLabel: 'active units in the period', decimals: 4 }),
      litres: roundTo(litres, 3),
      km: kmR,
      revenue,
      revenuePerKm: ratio(revenue, kmR, { denominatorLabel: 'km', decimals: 2 }),
    },
    rows,
    idleVehicles: { fleetSize: statuses.length, idleCount: idle.length, data: idle },
  };
}
