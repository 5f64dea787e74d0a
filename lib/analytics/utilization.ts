/**
 * Fleet utilization and productivity per vehicle or driver over a period of
 * Mexico City calendar days [from, to] (inclusive).
 *
 * An active day is a calendar day on which the unit was working a leg: every
 * day from the loading day to the offloading day (a two-day haul is two active
 * days), or the leg's compact date when the instants are missing.
 */
import type { TripDocument, TripLeg } from '../model/trip-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { daysInRange, isMxDateString, mxCalendarDaysBetween, ymdIntToMxDayStart } from '../time/mexico-city.ts';
import { legDeliveredAt } from '../trips/delivery-state.ts';
import { legActiveDays, safeYmd } from '../trips/leg-active-days.ts';

export { legActiveDays };
import { ratio, roundTo, type Ratio } from './stats.ts';
import type { LitresBasis } from './unit-economics.ts';

export interface Period {
  /** Inclusive 'YYYY-MM-DD' bounds (Mexico City). */
  from: string;
  to: string;
}

/**
 * A leg as utilization reads it: its days, km, billed freight and Σ product litres.
 * `unloadDate` is the delivery instant, null while the leg is in transit
 * (lib/trips/delivery-state.ts); `offloaded` counts only for a delivered leg.
 */
export interface UtilizationLeg extends Pick<TripLeg, 'date' | 'loadDate' | 'unloadDate' | 'distanceKm'> {
  billedFreight: number;
  loaded: number;
  offloaded: number;
}

/** A trip as utilization reads it (the compact row lib/analytics/trip-audits-repo.ts returns). */
export interface UtilizationTrip {
  driverId: string;
  driverName: string;
  vehicleId: string;
  plate: string;
  legs: UtilizationLeg[];
}

/** The compact form of a stored trip. */
export function utilizationTrip(trip: Pick<TripDocument, 'driver' | 'vehicle' | 'shipments'>): UtilizationTrip {
  const litres = (leg: TripLeg, which: 'loaded' | 'offloaded'): number => leg.products.reduce((s, p) => s + (p[which] ?? 0), 0);
  return {
    driverId: trip.driver.id,
    driverName: trip.driver.name,
    vehicleId: trip.vehicle.id,
    plate: trip.vehicle.plate,
    legs: trip.shipments.map((l) => ({
      date: l.date,
      loadDate: l.loadDate,
      unloadDate: legDeliveredAt(l),
      distanceKm: l.distanceKm,
      billedFreight: l.pricing.billedFreight,
      loaded: litres(l, 'loaded'),
      offloaded: litres(l, 'offloaded'),
    })),
  };
}

export interface UtilizationRatio {
  activeDays: number;
  daysInPeriod: number;
  /** activeDays ÷ daysInPeriod (4 decimals); null for an empty period. */
  utilization: Ratio;
}

/** Distinct active days inside the period ÷ days in the period. */
export function utilization(activeDays: Iterable<string>, period: Period): UtilizationRatio {
  const inside = new Set<string>();
  for (const d of activeDays) if (d >= period.from && d <= period.to) inside.add(d);
  return utilizationOfCount(inside.size, period);
}

/** The same from the count of distinct active days inside the period. */
export function utilizationOfCount(activeDays: number, period: Period): UtilizationRatio {
  if (!isMxDateString(period.from) || !isMxDateString(period.to)) throw new RangeError(`invalid period ${period.from}..${period.to}`);
  const days = daysInRange(period.from, period.to);
  return { activeDays, daysInPeriod: days, utilization: ratio(activeDays, days, { denominatorLabel: 'days in period', decimals: 4 }) };
}

export interface UtilizationRow extends UtilizationRatio {
  key: string;
  /** Vehicle plate or driver name, for display. */
  label: string;
  trips: number;
  legs: number;
  /** Legs counted that are not delivered yet: with the `offloaded` basis their litres are not in `litres` (unknown). */
  legsInTransit: number;
  litres: number;
  litresBasis: LitresBasis;
  km: number;
  /** Σ billedFreight of the legs (tolls excluded, as in unit economics). */
  revenue: number;
  revenuePerKm: Ratio;
}

/** A unit's sums over the period, before rounding (what the trips or the kept days give). */
export interface UnitSums {
  label: string;
  trips: number;
  legs: number;
  inTransit: number;
  /** Distinct active days in the period. */
  activeDays: number;
  litres: number;
  km: number;
  revenueC: number;
}

/** One row per unit, sorted by key, rounded as answered. */
export function utilizationRows(groups: Iterable<[string, UnitSums]>, period: Period, litresBasis: LitresBasis): UtilizationRow[] {
  return [...groups]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, a]) => {
      const revenue = fromCents(a.revenueC);
      const km = roundTo(a.km, 3);
      return {
        key,
        label: a.label,
        trips: a.trips,
        legs: a.legs,
        legsInTransit: a.inTransit,
        ...utilizationOfCount(a.activeDays, period),
        litres: roundTo(a.litres, 3),
        litresBasis,
        km,
        revenue,
        revenuePerKm: ratio(revenue, km, { denominatorLabel: 'km', decimals: 2 }),
      };
    });
}

/**
 * Per vehicle (vehicle.id) or driver (driver.id), folded trip by trip (a
 * cursor's rows, never held): a leg belongs to the period when any of its
 * active days falls inside it; a trip counts when one of its legs does. Keeps
 * per unit its sums and its set of active days. A unit's label (plate or
 * driver name) is the one on its trips active on its latest active day in the
 * period, the greatest when they differ (whatever order the trips come in).
 */
export class FleetUtilizationAccumulator {
  private readonly groups = new Map<string, Omit<UnitSums, 'activeDays'> & { days: Set<string>; labelDay: string }>();

  constructor(
    private readonly by: 'vehicle' | 'driver',
    private readonly period: Period,
    private readonly litresBasis: LitresBasis = 'loaded',
  ) {}

  add(trip: UtilizationTrip): void {
    const { by, period, litresBasis } = this;
    const key = by === 'vehicle' ? trip.vehicleId : trip.driverId;
    const label = by === 'vehicle' ? trip.plate : trip.driverName;
    let counted = false;
    for (const leg of trip.legs) {
      const days = legActiveDays(leg).filter((d) => d >= period.from && d <= period.to);
      if (days.length === 0) continue;
      let acc = this.groups.get(key);
      if (!acc) {
        acc = { label, labelDay: '', trips: 0, legs: 0, inTransit: 0, days: new Set(), litres: 0, km: 0, revenueC: 0 };
        this.groups.set(key, acc);
      }
      if (!counted) {
        acc.trips += 1;
        counted = true;
      }
      acc.legs += 1;
      for (const d of days) acc.days.add(d);
      const lastDay = days[days.length - 1] as string;
      if (lastDay > acc.labelDay || (lastDay === acc.labelDay && label > acc.label)) {
        acc.label = label;
        acc.labelDay = lastDay;
      }
      const delivered = leg.unloadDate !== null;
      if (!delivered) acc.inTransit += 1;
      // Offloaded litres of a leg in transit are unknown, not 0: left out and counted in legsInTransit.
      if (litresBasis === 'loaded') acc.litres += leg.loaded;
      else if (delivered) acc.litres += leg.offloaded;
      acc.km += leg.distanceKm;
      acc.revenueC += toCents(leg.billedFreight);
    }
  }

  /** One row per unit, sorted by key. */
  result(): UtilizationRow[] {
    return utilizationRows(
      [...this.groups].map(([key, g]): [string, UnitSums] => [key, { ...g, activeDays: g.days.size }]),
      this.period,
      this.litresBasis,
    );
  }
}

/** FleetUtilizationAccumulator over a list of trips. */
export function fleetUtilization(
  trips: Iterable<UtilizationTrip>,
  by: 'vehicle' | 'driver',
  period: Period,
  litresBasis: LitresBasis = 'loaded',
): UtilizationRow[] {
  const acc = new FleetUtilizationAccumulator(by, period, litresBasis);
  for (const trip of trips) acc.add(trip);
  return acc.result();
}

/** Latest activity instant per vehicle: max over legs of unloadDate, loadDate, or the leg's day start. */
export function lastActivityByVehicle(trips: readonly UtilizationTrip[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const trip of trips) {
    for (const leg of trip.legs) {
      let t = leg.unloadDate ?? leg.loadDate;
      if (t === null) {
        if (safeYmd(leg.date) === null) continue;
        t = ymdIntToMxDayStart(leg.date);
      }
      const prev = out.get(trip.vehicleId);
      if (prev === undefined || t > prev) out.set(trip.vehicleId, t);
    }
  }
  return out;
}

export interface IdleStatus {
  vehicle: string;
  lastActivity: number | null;
  /** Calendar days from the last activity day to asOf's day; null when never active. */
  daysSinceLastActivity: number | null;
  idle: boolean;
}

/**
 * Idle = no activity in the N calendar days ending on asOf's day (asOf − N + 1
 * … asOf), i.e. daysSinceLastActivity ≥ N. A vehicle never seen is idle.
 * `vehicles` lists the fleet so units with no trip at all are reported too.
 */
export function idleVehicles(vehicles: readonly string[], lastActivity: ReadonlyMap<string, number>, asOf: number, idleDays: number): IdleStatus[] {
  const ids = [...new Set([...vehicles, ...lastActivity.keys()])].sort();
  return ids.map((vehicle) => {
    const last = lastActivity.get(vehicle);
    if (last === undefined) return { vehicle, lastActivity: null, daysSinceLastActivity: null, idle: true };
    const since = mxCalendarDaysBetween(last, asOf);
    return { vehicle, lastActivity: last, daysSinceLastActivity: since, idle: since >= idleDays };
  });
}

/** Per vehicle, the latest unload instant, load instant and leg date (YYYYMMDD) over its legs, as grouped in the database. */
export interface VehicleActivity {
  vehicle: string;
  plate: string;
  lastUnload: number | null;
  lastLoad: number | null;
  lastLegDate: number | null;
}

/**
 * Last activity of a vehicle as of asOf. Per leg unload ≥ load, so the later
 * of the latest unload and the latest load is the latest instant of any leg;
 * an instant after asOf (a scheduled leg) counts as asOf. With no instant at
 * all, the start of the latest leg date; null with nothing.
 */
export function lastActivityOf(a: Pick<VehicleActivity, 'lastUnload' | 'lastLoad' | 'lastLegDate'>, asOf: number): number | null {
  const instants = [a.lastUnload, a.lastLoad].filter((x): x is number => x !== null);
  if (instants.length > 0) return Math.min(Math.max(...instants), asOf);
  return a.lastLegDate === null ? null : ymdIntToMxDayStart(a.lastLegDate);
}

export interface IdleVehicleOut {
  vehicle: string;
  plate: string;
  lastActivity: string | null;
  daysSinceLastActivity: number | null;
}

/** The idle units of the fleet (every vehicle with activity rows), longest idle first. */
export function idleFleet(
  activity: readonly VehicleActivity[],
  asOf: number,
  idleDays: number,
): { fleetSize: number; idleCount: number; data: IdleVehicleOut[] } {
  const last = new Map<string, number>();
  const plates = new Map<string, string>();
  for (const a of activity) {
    plates.set(a.vehicle, a.plate);
    const t = lastActivityOf(a, asOf);
    if (t !== null) last.set(a.vehicle, t);
  }
  const statuses = idleVehicles([...plates.keys()], last, asOf, idleDays);
  const idle = statuses
    .filter((s) => s.idle)
    .sort((a, b) => (b.daysSinceLastActivity ?? Infinity) - (a.daysSinceLastActivity ?? Infinity) || (a.vehicle < b.vehicle ? -1 : 1))
    .map((s) => ({
      vehicle: s.vehicle,
      plate: plates.get(s.vehicle) ?? '',
      lastActivity: s.lastActivity === null ? null : new Date(s.lastActivity).toISOString(),
      daysSinceLastActivity: s.daysSinceLastActivity,
    }));
  return { fleetSize: statuses.length, idleCount: idle.length, data: idle };
}

export interface UtilizationTotals {
  units: number;
  trips: number;
  legs: number;
  legsInTransit: number;
  activeUnitDays: number;
  unitDaysInPeriod: number;
  utilization: Ratio;
  litres: number;
  km: number;
  revenue: number;
  revenuePerKm: Ratio;
}

/** Totals over the rows: active unit-days ÷ (units × days in the period); revenue summed in cents. */
export function utilizationTotals(rows: readonly UtilizationRow[], daysInPeriod: number): UtilizationTotals {
  let trips = 0;
  let legs = 0;
  let inTransit = 0;
  let active = 0;
  let litres = 0;
  let km = 0;
  let revenueC = 0;
  for (const r of rows) {
    trips += r.trips;
    legs += r.legs;
    inTransit += r.legsInTransit;
    active += r.activeDays;
    litres += r.litres;
    km += r.km;
    revenueC += toCents(r.revenue);
  }
  const unitDays = rows.length * daysInPeriod;
  const revenue = fromCents(revenueC);
  const kmR = roundTo(km, 3);
  return {
    units: rows.length,
    trips,
    legs,
    legsInTransit: inTransit,
    activeUnitDays: active,
    unitDaysInPeriod: unitDays,
    utilization: ratio(active, unitDays, { denominatorLabel: 'active units in the period', decimals: 4 }),
    litres: roundTo(litres, 3),
    km: kmR,
    revenue,
    revenuePerKm: ratio(revenue, kmR, { denominatorLabel: 'km', decimals: 2 }),
  };
}
