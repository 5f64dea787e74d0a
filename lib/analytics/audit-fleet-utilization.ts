/**
 * GET /api/analytics/fleet-utilization (docs/domain.md "Fleet utilization and
 * productivity"): per vehicle or driver over the period — trips, legs, active
 * days ÷ days in the period, litres hauled, km, revenue (leg billedFreight,
 * tolls excluded) and revenue per km (lib/analytics/utilization.ts) — plus
 * the idle vehicles: units of the fleet (a leg in the last 365 days before
 * asOf) with no activity in the tenant's idleVehicleDays ending at asOf.
 * The trips stream from the cursor into FleetUtilizationAccumulator.
 */
import type { ServiceContext } from '../context.ts';
import { streamTripsTouchingDays, vehicleLastActivity } from './trip-audits-repo.ts';
import { fleetUtilizationRollups, readFreshFleetPeriod, readFreshFleetWindow } from './fleet-utilization-rollup-kind.ts';
import { fleetActivityOf, foldFleetPeriod } from './fleet-period-fold.ts';
import { EVERY_CLIENT } from './fleet-month-rollup.ts';
import { getTracedSettings, type SettingSource } from '../settings/settings-source.ts';
import { resolvePeriod } from '../shared/period.ts';
import { mxAddDays, mxDateString, mxYmdInt } from '../time/mexico-city.ts';
import { asOfOut, foldRows, periodOut, type AsOfOut, type PeriodOut } from './report.ts';
import type { LitresBasis } from './unit-economics.ts';
import {
  FleetUtilizationAccumulator,
  idleFleet,
  utilizationRows,
  utilizationTotals,
  type IdleVehicleOut,
  type UtilizationRow,
  type UtilizationTotals,
  type VehicleActivity,
} from './utilization.ts';

/** Vehicles with a leg in this many days before asOf make up the fleet for the idle check. */
export const FLEET_LOOKBACK_DAYS = 365;
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
  /** Rows per page and at most as many idle vehicles (REST and MCP: default 100); absent, all of them (an export's table). */
  limit?: number;
  /** 1-based page of rows (with `limit`). */
  page?: number;
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
  totals: UtilizationTotals;
  rows: UtilizationRow[];
  idleVehicles: { fleetSize: number; idleCount: number; data: IdleVehicleOut[] };
}

/**
 * Reads the days kept on write (docs/rollups.md) when the store holds them; `fromDocuments`
 * reads every trip of the period instead (the reference the kept days are checked against).
 */
export async function auditFleetUtilization(
  ctx: ServiceContext,
  tenant: string,
  input: FleetUtilizationInput,
  opts: { fromDocuments?: boolean } = {},
): Promise<FleetUtilization> {
  const now = ctx.now();
  const period = resolvePeriod(now, input.startDate, input.endDate);
  const asOf = period.asOf;
  const timeout = ctx.config.queryTimeoutMs;
  const scope = {
    ...(input.client ? { client: input.client } : {}),
    ...(input.vehicle ? { vehicle: input.vehicle } : {}),
    ...(input.driver ? { driver: input.driver } : {}),
  };
  const asOfDay = mxDateString(asOf);
  const fleetFrom = mxAddDays(asOfDay, -FLEET_LOOKBACK_DAYS);
  const windowEndsToday = asOfDay >= mxDateString(now.getTime());
  const range = { from: period.startDate, to: period.endDate };
  const kept = !opts.fromDocuments && (await fleetUtilizationRollups.ready(ctx.db));

  const fromKept = async (): Promise<[UtilizationRow[], VehicleActivity[]]> => {
    // One after the other: the two settle the same marked days (the period is mostly in the window).
    const sums = await readFreshFleetPeriod(
      ctx.db,
      tenant,
      { fromDay: period.startDate, toDay: period.endDate, client: input.client || EVERY_CLIENT },
      timeout,
    );
    const window = await readFreshFleetWindow(ctx.db, tenant, fleetFrom, asOfDay, timeout);
    const units = foldFleetPeriod(sums, input.groupBy, range, scope);
    const rows = utilizationRows(
      [...units].map(([key, u]) => [key, { ...u, litres: input.litresBasis === 'loaded' ? u.loaded : u.offloaded }]),
      range,
      input.litresBasis,
    );
    return [rows, fleetActivityOf(window, input.vehicle, windowEndsToday)];
  };
  const fromDocuments = (): Promise<[UtilizationRow[], VehicleActivity[]]> =>
    Promise.all([
      foldRows(
        streamTripsTouchingDays(ctx.db, tenant, { ...scope, fromDay: period.startDate, toDay: period.endDate }, timeout),
        new FleetUtilizationAccumulator(input.groupBy, range, input.litresBasis),
      ),
      vehicleLastActivity(
        ctx.db,
        tenant,
        {
          ...(input.vehicle ? { vehicle: input.vehicle } : {}),
          fromYmd: ymdNum(fleetFrom),
          toYmd: mxYmdInt(asOf),
          windowEndsToday,
        },
        timeout,
      ),
    ]);
  const [{ settings, sourceOf }, [rows, activity]] = await Promise.all([getTracedSettings(ctx.db, tenant), kept ? fromKept() : fromDocuments()]);

  const idle = idleFleet(activity, asOf, settings.idleVehicleDays);
  // Totals of every row; the rows and idle vehicles answered are a page (a fleet of thousands stays a bounded answer).
  const limit = input.limit;
  const skip = limit === undefined ? 0 : ((input.page ?? 1) - 1) * limit;

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
      activeDay:
        'A Mexico City calendar day from a leg’s loading day to its offloading day (both included, at most 31 per leg), or the leg date when the instants are missing. A leg counts when one of its active days falls in the period.',
      revenue: 'Σ leg billedFreight (tolls, in totalFreight, excluded).',
    },
    totals: utilizationTotals(rows, period.days),
    rows: limit === undefined ? rows : rows.slice(skip, skip + limit),
    idleVehicles: limit === undefined ? idle : { ...idle, data: idle.data.slice(0, limit) },
  };
}
