/**
 * Dispatch-to-bill efficiency: lag = invoice date − offload (delivery) date.
 *
 * Lags are exact elapsed days ((invoiceMs − offloadMs) / 86,400,000), not
 * calendar-day differences: an invoice issued in the evening of the delivery
 * day is billed 0.3 days later, not "0 = pre-billed", and one issued at
 * dispatch before the same-day delivery is correctly negative. The sign is
 * kept; lag ≤ 0 is pre-billed. Percentiles use the linear method (stats.ts).
 */
import type { TripDocument, TripLeg } from '../model/trip-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { MS_PER_DAY } from '../time/mexico-city.ts';
import { percentile, roundTo } from './stats.ts';

export interface DispatchToBillRow {
  tripId: string;
  client?: string;
  /** Delivery instant (epoch ms); null when the trip is not delivered yet. */
  offloadDate: number | null;
  /** Linked (non-cancelled) invoice instant; null when not billed. */
  invoiceDate: number | null;
  /** Freight value of the trip, for unbilled-revenue leakage. */
  value: number;
}

export interface TripLag {
  tripId: string;
  client?: string;
  /** Elapsed days, 2 decimals, sign kept. */
  lagDays: number;
  preBilled: boolean;
}

export interface DispatchToBillSummary {
  deliveredTrips: number;
  billedTrips: number;
  medianLagDays: number | null;
  p90LagDays: number | null;
  /** Percent of billed delivered trips with lag ≤ 1 / 3 / 7 days (pre-billed included); null with none billed. */
  within1DayPct: number | null;
  within3DaysPct: number | null;
  within7DaysPct: number | null;
  preBilledCount: number;
  /** Delivered, no invoice: revenue leakage. */
  unbilledCount: number;
  unbilledValue: number;
  /** Not delivered yet (billed or not): outside the lag statistics. */
  notDeliveredCount: number;
  reason?: string;
}

export function lagDays(offloadMs: number, invoiceMs: number): number {
  return (invoiceMs - offloadMs) / MS_PER_DAY;
}

export function dispatchToBill(rows: readonly DispatchToBillRow[]): { lags: TripLag[]; summary: DispatchToBillSummary } {
  const lags: TripLag[] = [];
  const raw: number[] = [];
  let unbilledCount = 0;
  let unbilledC = 0;
  let notDelivered = 0;
  let delivered = 0;
  for (const r of rows) {
    if (r.offloadDate === null) {
      notDelivered += 1;
      continue;
    }
    delivered += 1;
    if (r.invoiceDate === null) {
      unbilledCount += 1;
      unbilledC += toCents(r.value);
      continue;
    }
    const lag = lagDays(r.offloadDate, r.invoiceDate);
    raw.push(lag);
    lags.push({ tripId: r.tripId, ...(r.client === undefined ? {} : { client: r.client }), lagDays: roundTo(lag, 2), preBilled: lag <= 0 });
  }
  const n = raw.length;
  const within = (days: number): number | null => (n === 0 ? null : roundTo((raw.filter((l) => l <= days).length / n) * 100, 2));
  const p50 = percentile(raw, 50);
  const p90 = percentile(raw, 90);
  const summary: DispatchToBillSummary = {
    deliveredTrips: delivered,
    billedTrips: n,
    medianLagDays: p50 === null ? null : roundTo(p50, 2),
    p90LagDays: p90 === null ? null : roundTo(p90, 2),
    within1DayPct: within(1),
    within3DaysPct: within(3),
    within7DaysPct: within(7),
    preBilledCount: raw.filter((l) => l <= 0).length,
    unbilledCount,
    unbilledValue: fromCents(unbilledC),
    notDeliveredCount: notDelivered,
    ...(n === 0 ? { reason: 'no delivered trip with a linked invoice: lag statistics undefined' } : {}),
  };
  return { lags, summary };
}

/** Delivery instant of a trip: the last leg's unloadDate, or null while any leg (or the trip) has none. */
export function tripOffloadDate(trip: { shipments: readonly Pick<TripLeg, 'unloadDate'>[] }): number | null {
  if (trip.shipments.length === 0) return null;
  let last = -Infinity;
  for (const leg of trip.shipments) {
    if (leg.unloadDate === null) return null;
    last = Math.max(last, leg.unloadDate);
  }
  return last;
}

/** Freight value of a trip: Σ legs' totalFreight (what would be invoiced, tolls included). */
export function tripFreightValue(trip: Pick<TripDocument, 'shipments'>): number {
  return fromCents(trip.shipments.reduce((s, l) => s + toCents(l.pricing.totalFreight), 0));
}

/** A trip with a leg offloaded in the period, as lib/db/trip-audits-repo.ts returns it. */
export interface DeliveryRow {
  _id: string;
  client: string;
  idFinan: string | null;
  legs: { unloadDate: number | null; totalFreightC: number }[];
  /** The document idFinan names, only when it belongs to the tenant (0 or 1 element). */
  inv: { date: number; cancelled: boolean }[];
}

export interface UnbilledTrip {
  tripId: string;
  client: string;
  offloadDate: string;
  daysSinceOffload: number;
  value: number;
  reason: 'no invoice linked' | 'linked invoice cancelled';
  idFinan: string | null;
}

export interface Deliveries {
  /** Lag rows: delivered in the period (billed or not) and not yet delivered. */
  rows: DispatchToBillRow[];
  /** Delivered in the period without a valid invoice, oldest delivery first. */
  unbilled: UnbilledTrip[];
  noLink: number;
  cancelledLink: number;
  /** idFinan names a document this tenant does not have: kept out of lags and leakage. */
  unresolved: { count: number; value: number };
}

/**
 * Sorts the trips by link state. A trip delivered after the period is left
 * out; one not delivered yet is a lag row without offload; no idFinan or a
 * cancelled invoice is unbilled; an idFinan that resolves to nothing is
 * unresolved. Trip value = Σ legs' totalFreight.
 */
export function classifyDeliveries(trips: readonly DeliveryRow[], period: { start: number; end: number }, now: number): Deliveries {
  const rows: DispatchToBillRow[] = [];
  const unbilled: UnbilledTrip[] = [];
  let noLink = 0;
  let cancelledLink = 0;
  let unresolved = 0;
  let unresolvedC = 0;
  for (const trip of trips) {
    const offload = tripOffloadDate({ shipments: trip.legs });
    const valueC = trip.legs.reduce((s, l) => s + l.totalFreightC, 0);
    const value = fromCents(valueC);
    const base = { tripId: String(trip._id), client: trip.client, value };
    if (offload === null) {
      rows.push({ ...base, offloadDate: null, invoiceDate: null });
      continue;
    }
    if (offload < period.start || offload > period.end) continue; // delivered after the period
    const link = trip.inv[0];
    if (trip.idFinan && !link) {
      unresolved += 1;
      unresolvedC += valueC;
      continue;
    }
    if (!link || link.cancelled) {
      if (link) cancelledLink += 1;
      else noLink += 1;
      rows.push({ ...base, offloadDate: offload, invoiceDate: null });
      unbilled.push({
        tripId: base.tripId,
        client: trip.client,
        offloadDate: new Date(offload).toISOString(),
        daysSinceOffload: roundTo((now - offload) / MS_PER_DAY, 2),
        value,
        reason: link ? 'linked invoice cancelled' : 'no invoice linked',
        idFinan: trip.idFinan ?? null,
      });
      continue;
    }
    rows.push({ ...base, offloadDate: offload, invoiceDate: link.date });
  }
  unbilled.sort((a, b) => (a.offloadDate < b.offloadDate ? -1 : a.offloadDate > b.offloadDate ? 1 : a.tripId < b.tripId ? -1 : 1));
  return { rows, unbilled, noLink, cancelledLink, unresolved: { count: unresolved, value: fromCents(unresolvedC) } };
}

/** The summary per client (a row without client under ''), sorted by client. */
export function dispatchToBillByClient(rows: readonly DispatchToBillRow[]): { client: string; summary: DispatchToBillSummary }[] {
  const byClient = new Map<string, DispatchToBillRow[]>();
  for (const r of rows) {
    const list = byClient.get(r.client ?? '');
    if (list) list.push(r);
    else byClient.set(r.client ?? '', [r]);
  }
  return [...byClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([client, list]) => ({ client, summary: dispatchToBill(list).summary }));
}

/** Pre-billed trips (lag ≤ 0), most negative first. */
export const preBilledTrips = (lags: readonly TripLag[]): TripLag[] =>
  lags.filter((l) => l.preBilled).sort((a, b) => a.lagDays - b.lagDays || (a.tripId < b.tripId ? -1 : 1));
