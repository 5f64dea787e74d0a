/**
 * Dispatch-to-bill efficiency: lag = invoice date − offload (delivery) date.
 *
 * Lags are exact elapsed days ((invoiceMs − offloadMs) / 86,400,000), not
 * calendar-day differences: an invoice issued in the evening of the delivery
 * day is billed 0.3 days later, not "0 = pre-billed", and one issued at
 * dispatch before the same-day delivery is correctly negative. The sign is
 * kept; lag ≤ 0 is pre-billed. Percentiles use the linear method (stats.ts).
 */
import type { TripDocument } from '../model/trip-document.ts';
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
export function tripOffloadDate(trip: Pick<TripDocument, 'shipments'>): number | null {
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
