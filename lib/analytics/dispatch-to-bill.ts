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
import { legDeliveredAt, type DeliveryFields } from '../trips/delivery-state.ts';
import { TopList, type Capped } from './report.ts';
import { finiteSorted, percentileOfSorted, roundTo } from './stats.ts';

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

export const tripLag = (r: DispatchToBillRow, lag: number): TripLag => ({
  tripId: r.tripId,
  ...(r.client === undefined ? {} : { client: r.client }),
  lagDays: roundTo(lag, 2),
  preBilled: lag <= 0,
});

/**
 * The summary of lag rows folded one at a time: keeps the raw lags (numbers,
 * for the percentiles) and counts, not the rows.
 */
export class LagSummaryAccumulator {
  private readonly raw: number[] = [];
  private unbilledCount = 0;
  private unbilledC = 0;
  private notDelivered = 0;
  private delivered = 0;

  /** Folds a row; its exact lag (days) when delivered and billed, else null. */
  add(r: DispatchToBillRow): number | null {
    if (r.offloadDate === null) {
      this.notDelivered += 1;
      return null;
    }
    this.delivered += 1;
    if (r.invoiceDate === null) {
      this.unbilledCount += 1;
      this.unbilledC += toCents(r.value);
      return null;
    }
    const lag = lagDays(r.offloadDate, r.invoiceDate);
    this.raw.push(lag);
    return lag;
  }

  summary(): DispatchToBillSummary {
    return lagSummary(this.raw, { delivered: this.delivered, unbilledCount: this.unbilledCount, unbilledC: this.unbilledC, notDelivered: this.notDelivered });
  }
}

/** What a lag summary counts besides the billed lags. */
export interface LagCounts {
  delivered: number;
  unbilledCount: number;
  unbilledC: number;
  notDelivered: number;
}

/**
 * The summary of these billed lags (days, any order: the percentiles sort them) and counts:
 * what LagSummaryAccumulator folds, and what the kept days (dispatch-to-bill-day.ts) add up.
 */
export function lagSummary(raw: readonly number[], c: LagCounts): DispatchToBillSummary {
  const n = raw.length;
  const within = (days: number): number | null => (n === 0 ? null : roundTo((raw.filter((l) => l <= days).length / n) * 100, 2));
  const sorted = finiteSorted(raw);
  const p50 = percentileOfSorted(sorted, 50);
  const p90 = percentileOfSorted(sorted, 90);
  return {
    deliveredTrips: c.delivered,
    billedTrips: n,
    medianLagDays: p50 === null ? null : roundTo(p50, 2),
    p90LagDays: p90 === null ? null : roundTo(p90, 2),
    within1DayPct: within(1),
    within3DaysPct: within(3),
    within7DaysPct: within(7),
    preBilledCount: raw.filter((l) => l <= 0).length,
    unbilledCount: c.unbilledCount,
    unbilledValue: fromCents(c.unbilledC),
    notDeliveredCount: c.notDelivered,
    ...(n === 0 ? { reason: 'no delivered trip with a linked invoice: lag statistics undefined' } : {}),
  };
}

export function dispatchToBill(rows: Iterable<DispatchToBillRow>): { lags: TripLag[]; summary: DispatchToBillSummary } {
  const acc = new LagSummaryAccumulator();
  const lags: TripLag[] = [];
  for (const r of rows) {
    const lag = acc.add(r);
    if (lag !== null) lags.push(tripLag(r, lag));
  }
  return { lags, summary: acc.summary() };
}

/**
 * Delivery instant of a trip: the last leg's delivery, or null while any leg (or
 * the trip) is in transit (lib/trips/delivery-state.ts). Compact audit legs
 * without products carry their delivery instant as `unloadDate` already.
 */
export function tripOffloadDate(trip: { shipments: readonly (Pick<TripLeg, 'unloadDate'> & Partial<Pick<DeliveryFields, 'products'>>)[] }): number | null {
  if (trip.shipments.length === 0) return null;
  let last = -Infinity;
  for (const leg of trip.shipments) {
    const at = legDeliveredAt({ unloadDate: leg.unloadDate, products: leg.products ?? [] });
    if (at === null) return null;
    last = Math.max(last, at);
  }
  return last;
}

/** Freight value of a trip: Σ legs' totalFreight (what would be invoiced, tolls included). */
export function tripFreightValue(trip: Pick<TripDocument, 'shipments'>): number {
  return fromCents(trip.shipments.reduce((s, l) => s + toCents(l.pricing.totalFreight), 0));
}

/** A trip with a leg offloaded in the period, as lib/analytics/trip-audits-repo.ts returns it. */
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

/** What one trip is for the audit: out of it, unresolved (its value in cents), or a lag row (unbilled: also listed). */
export type ClassifiedDelivery =
  | { kind: 'out' }
  | { kind: 'unresolved'; valueC: number }
  | { kind: 'row'; row: DispatchToBillRow; link: 'none' | 'cancelled' | 'valid' | null; unbilled?: UnbilledTrip };

/**
 * One trip by link state. A trip delivered after the period is left out; one
 * not delivered yet is a lag row without offload (link null); no idFinan or a
 * cancelled invoice is unbilled; an idFinan that resolves to nothing is
 * unresolved. Trip value = Σ legs' totalFreight.
 */
export function classifyDelivery(trip: DeliveryRow, period: { start: number; end: number }, now: number): ClassifiedDelivery {
  const offload = tripOffloadDate({ shipments: trip.legs });
  const valueC = trip.legs.reduce((s, l) => s + l.totalFreightC, 0);
  const value = fromCents(valueC);
  const base = { tripId: String(trip._id), client: trip.client, value };
  if (offload === null) return { kind: 'row', row: { ...base, offloadDate: null, invoiceDate: null }, link: null };
  if (offload < period.start || offload > period.end) return { kind: 'out' }; // delivered after the period
  const link = trip.inv[0];
  if (trip.idFinan && !link) return { kind: 'unresolved', valueC };
  if (!link || link.cancelled) {
    return {
      kind: 'row',
      row: { ...base, offloadDate: offload, invoiceDate: null },
      link: link ? 'cancelled' : 'none',
      unbilled: {
        tripId: base.tripId,
        client: trip.client,
        offloadDate: new Date(offload).toISOString(),
        daysSinceOffload: roundTo((now - offload) / MS_PER_DAY, 2),
        value,
        reason: link ? 'linked invoice cancelled' : 'no invoice linked',
        idFinan: trip.idFinan ?? null,
      },
    };
  }
  return { kind: 'row', row: { ...base, offloadDate: offload, invoiceDate: link.date }, link: 'valid' };
}

export const byOffloadThenTrip = (a: UnbilledTrip, b: UnbilledTrip): number =>
  a.offloadDate < b.offloadDate ? -1 : a.offloadDate > b.offloadDate ? 1 : a.tripId < b.tripId ? -1 : 1;

/** Sorts the trips by link state (classifyDelivery); unbilled oldest delivery first. */
export function classifyDeliveries(trips: Iterable<DeliveryRow>, period: { start: number; end: number }, now: number): Deliveries {
  const rows: DispatchToBillRow[] = [];
  const unbilled: UnbilledTrip[] = [];
  let noLink = 0;
  let cancelledLink = 0;
  let unresolved = 0;
  let unresolvedC = 0;
  for (const trip of trips) {
    const c = classifyDelivery(trip, period, now);
    if (c.kind === 'out') continue;
    if (c.kind === 'unresolved') {
      unresolved += 1;
      unresolvedC += c.valueC;
      continue;
    }
    rows.push(c.row);
    if (c.link === 'none') noLink += 1;
    if (c.link === 'cancelled') cancelledLink += 1;
    if (c.unbilled) unbilled.push(c.unbilled);
  }
  unbilled.sort(byOffloadThenTrip);
  return { rows, unbilled, noLink, cancelledLink, unresolved: { count: unresolved, value: fromCents(unresolvedC) } };
}

/** The summary per client (a row without client under ''), sorted by client. */
export function dispatchToBillByClient(rows: Iterable<DispatchToBillRow>): { client: string; summary: DispatchToBillSummary }[] {
  const byClient = new Map<string, LagSummaryAccumulator>();
  for (const r of rows) {
    const key = r.client ?? '';
    let acc = byClient.get(key);
    if (!acc) {
      acc = new LagSummaryAccumulator();
      byClient.set(key, acc);
    }
    acc.add(r);
  }
  return [...byClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([client, acc]) => ({ client, summary: acc.summary() }));
}

export interface DispatchToBillResult {
  summary: DispatchToBillSummary;
  byClient: { client: string; summary: DispatchToBillSummary }[];
  /** Delivered in the period without a valid invoice, oldest delivery first (the first `listLimit`, with the count). */
  unbilled: Capped<UnbilledTrip>;
  /** Pre-billed trips (lag ≤ 0), most negative first (the first `listLimit`, with the count). */
  preBilled: Capped<TripLag>;
  noLink: number;
  cancelledLink: number;
  unresolved: { count: number; value: number };
}

/**
 * The whole audit folded trip by trip (classifyDelivery, then the overall and
 * per-client summaries): the same result as classifyDeliveries +
 * dispatchToBill + dispatchToBillByClient + preBilledTrips over the same
 * trips in the same order, keeping per trip only its lag (a number), and of
 * the unbilled and pre-billed trips only the first `listLimit` the report lists.
 */
export class DispatchToBillAccumulator {
  private readonly all = new LagSummaryAccumulator();
  private readonly byClient = new Map<string, LagSummaryAccumulator>();
  private readonly unbilled: TopList<UnbilledTrip>;
  private readonly preBilled: TopList<TripLag>;
  private noLink = 0;
  private cancelledLink = 0;
  private unresolved = 0;
  private unresolvedC = 0;

  constructor(
    private readonly period: { start: number; end: number },
    private readonly now: number,
    listLimit = Infinity,
  ) {
    this.unbilled = new TopList(listLimit, byOffloadThenTrip);
    this.preBilled = new TopList(listLimit, mostNegativeFirst);
  }

  add(trip: DeliveryRow): void {
    const c = classifyDelivery(trip, this.period, this.now);
    if (c.kind === 'out') return;
    if (c.kind === 'unresolved') {
      this.unresolved += 1;
      this.unresolvedC += c.valueC;
      return;
    }
    if (c.link === 'none') this.noLink += 1;
    if (c.link === 'cancelled') this.cancelledLink += 1;
    if (c.unbilled) this.unbilled.add(c.unbilled);
    const lag = this.all.add(c.row);
    if (lag !== null && lag <= 0) this.preBilled.add(tripLag(c.row, lag));
    const key = c.row.client ?? '';
    let own = this.byClient.get(key);
    if (!own) {
      own = new LagSummaryAccumulator();
      this.byClient.set(key, own);
    }
    own.add(c.row);
  }

  result(): DispatchToBillResult {
    return {
      summary: this.all.summary(),
      byClient: [...this.byClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([client, acc]) => ({ client, summary: acc.summary() })),
      unbilled: this.unbilled.capped(),
      preBilled: this.preBilled.capped(),
      noLink: this.noLink,
      cancelledLink: this.cancelledLink,
      unresolved: { count: this.unresolved, value: fromCents(this.unresolvedC) },
    };
  }
}

export const mostNegativeFirst = (a: TripLag, b: TripLag): number => a.lagDays - b.lagDays || (a.tripId < b.tripId ? -1 : 1);

/** Pre-billed trips (lag ≤ 0), most negative first. */
export const preBilledTrips = (lags: readonly TripLag[]): TripLag[] => lags.filter((l) => l.preBilled).sort(mostNegativeFirst);
