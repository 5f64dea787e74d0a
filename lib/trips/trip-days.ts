/**
 * The days a trip touches, for the totals kept on write (lib/db/rollup-marks.ts,
 * docs/rollups.md): each leg's active days (lib/trips/leg-active-days.ts, read with the raw
 * unload instant, so a superset of what any reader counts), its compact date, its loading and
 * unloading days. A write marks the days of the stored version and of the new one, so totals of
 * a day the trip leaves are recomputed too.
 */
import type { Db } from 'mongodb';
import { markSourcesDays } from '../db/rollup-marks.ts';
import type { TripLeg } from '../model/trip-document.ts';
import { mxDateString } from '../time/mexico-city.ts';
import { legActiveDays, safeYmd } from './leg-active-days.ts';

/** The source fleet utilization's kept days read (lib/analytics/refresh-fleet-rollups.ts). */
export const FLEET_UTILIZATION_SOURCE = 'tripsFleetUtilization';

/** The source unit economics' kept days read for their legs (lib/analytics/refresh-unit-economics-rollups.ts): a delivery day. */
export const UNIT_ECONOMICS_TRIPS_SOURCE = 'tripsUnitEconomics';

/**
 * Dispatch-to-bill's source (lib/analytics/refresh-dispatch-to-bill-rollups.ts): the days a trip's legs were
 * unloaded on; an invoice write marks the days of the trips it is linked to here too.
 */
export const DISPATCH_TO_BILL_TRIPS_SOURCE = 'tripsDispatchToBill';
/** The source shrinkage recovery's kept days read (lib/analytics/refresh-discounts-shrinkage-rollups.ts): a trip's delivery day is among its unloading days. */
export const SHRINKAGE_TRIPS_SOURCE = 'tripsShrinkage';

/**
 * Every mark source a trip write marks: one per kind of kept totals over trips, because a
 * consumer clears the marks it has settled and must not clear another consumer's. A new kind of
 * totals over trips adds its source here.
 */
export const TRIP_MARK_SOURCES: readonly string[] = [
  FLEET_UTILIZATION_SOURCE,
  DISPATCH_TO_BILL_TRIPS_SOURCE,
  UNIT_ECONOMICS_TRIPS_SOURCE,
  SHRINKAGE_TRIPS_SOURCE,
];

export interface DatedTrip {
  shipments?: readonly Pick<TripLeg, 'date' | 'loadDate' | 'unloadDate'>[] | null;
}

const instant = (x: unknown): x is number => typeof x === 'number' && Number.isFinite(x);

export function tripDays(trip: DatedTrip): string[] {
  const days = new Set<string>();
  for (const leg of trip.shipments ?? []) {
    const loadDate = instant(leg.loadDate) ? leg.loadDate : null;
    const unloadDate = instant(leg.unloadDate) ? leg.unloadDate : null;
    for (const d of legActiveDays({ date: leg.date, loadDate, unloadDate })) days.add(d);
    const legDay = typeof leg.date === 'number' ? safeYmd(leg.date) : null;
    if (legDay !== null) days.add(legDay);
    if (loadDate !== null) days.add(mxDateString(loadDate));
    if (unloadDate !== null) days.add(mxDateString(unloadDate));
  }
  return [...days];
}

/**
 * Runs a write of a tenant's trips between two marks of the days they touch (`trips`: the
 * stored versions and the new ones). If the write throws, the days stay marked.
 */
export async function writeMarkingTripDays<T>(db: Db, tenant: string, trips: Iterable<DatedTrip>, write: () => Promise<T>): Promise<T> {
  const days = new Set<string>();
  for (const t of trips) for (const day of tripDays(t)) days.add(day);
  await markSourcesDays(db, tenant, TRIP_MARK_SOURCES, days);
  const result = await write();
  await markSourcesDays(db, tenant, TRIP_MARK_SOURCES, days);
  return result;
}
