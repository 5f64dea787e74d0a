/**
 * The cash inflow forecast's kept day (docs/rollups.md "Receivables"): per tenant and Mexico City
 * day, what the forecast learns from its period besides the open items:
 *  - `revenue`: the invoices emitted that day, summed as revenueByClient groups them (client,
 *    cancelled or not, exchange rate) in integer cents of their own currency, so a period adds its
 *    days' groups and converts each once, exactly as the document query does. Cancelled as of any
 *    instant: an invoice whose cancellation takes effect at some instant is kept apart with
 *    `until`, that instant (revenueByClient judges it cancelled at its `asOf` from then on), so an
 *    answer as of a day before its cancellation still counts it as revenue; one cancelled at every
 *    instant (a record in effect without a date) is `cancelled`;
 *  - `paid`: the payment complements of PPD invoices dated that day (streamPaymentHistory's
 *    rule; a PUE invoice's receipt at its own date is no complement and says nothing of how late
 *    its client pays), counted
 *    per client and lag (payment day − invoice day): a delay is the lag − the client's credit
 *    days, so medians under any credit terms come out exact. Valid as of any instant from the
 *    payment on: a complement (or its invoice) whose cancellation took effect later is counted
 *    with `until`, the instant from which it no longer counts, so an answer as of a day before
 *    that still counts it (streamPaymentHistory judges validity at its `to` the same way); one
 *    cancelled by its own instant never counts and is left out.
 * Nothing kept depends on the tenant's settings (credit days apply when read).
 */
import type { FinancialDocument, PaymentRecord, CanceledRecord } from '../model/financial-document.ts';
import { daysBetweenDates, mxDateString } from '../time/mexico-city.ts';
import { inEffectStatus, lowerBson } from './pipeline-mirror.ts';
import type { RevenueGroup } from './receivables-repo.ts';

/** Bump when what a day or an open item holds, or how it is computed, changes: the store is rebuilt. */
export const RECEIVABLES_ROLLUP_VERSION = 9;

export interface PaidCount {
  client: string;
  /** Payment day − invoice day (Mexico City calendar days). */
  lag: number;
  n: number;
  /** The instant (epoch ms) from which these payments no longer count (their or their invoice's cancellation took effect); absent: they still count now. */
  until?: number;
}

export interface ReceivablesDay {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  /** 'YYYY-MM-DD', Mexico City. */
  day: string;
  revenue: RevenueGroup[];
  paid: PaidCount[];
}

export type ReceivablesDaySource = Pick<FinancialDocument, 'client' | 'date' | 'iSub' | 'iDesc' | 'iFalt' | 'iTot' | 'exchangeRate'> & {
  invoice: Pick<FinancialDocument['invoice'], 'uuid' | 'paymentMethod'>;
  payments?: readonly PaymentRecord[] | null;
  canceled?: readonly CanceledRecord[] | null;
};

export const receivablesDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

/** centsExpr of lib/db/pipeline.ts in JS: the same double arithmetic, missing → 0. */
const centsExprOf = (x: unknown): number => Math.floor((typeof x === 'number' ? x : 0) * 100 + 0.5);

const byKey = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The first instant at which `$lte: [date, T]` of an aggregation holds (lteBson): a missing or null
 * date at any T, a number from itself on, anything else never.
 */
const lteFrom = (date: unknown): number => (date === undefined || date === null ? -Infinity : typeof date === 'number' ? date : Infinity);

/**
 * The first instant at which the invoice is cancelled (invoiceCancelledExpr(T) holds: a record of
 * target 'invoice' in effect naming the current UUID, dated by T); Infinity: at no instant,
 * −Infinity: at every one (a record without a date). It stays cancelled from then on.
 */
export function invoiceCancelledFrom(doc: Pick<ReceivablesDaySource, 'invoice' | 'canceled'>): number {
  const invoiceUuid = lowerBson(doc.invoice.uuid);
  let from = Infinity;
  for (const c of doc.canceled ?? [])
    if (c.target === 'invoice' && inEffectStatus(c.status) && lowerBson(c.uuid) === invoiceUuid) from = Math.min(from, lteFrom(c.date));
  return from;
}

/**
 * The first instant from which a payment complement of this document no longer counts, as
 * streamPaymentHistory judges it at its `to` (Infinity: it counts whatever the instant):
 *  - its invoice is cancelled at T (invoiceCancelledFrom);
 *  - the payment is cancelled at T: a payment cancellation record in effect naming it dated by T,
 *    or its `canceled` flag held at T (paymentFlagHeldAtExpr(T): no record in effect naming it
 *    dated after T; a flag that no record names holds from the start).
 * Each condition only grows true with T, so the payment counts at T exactly when T < this instant.
 */
export function paymentCountsUntil(doc: Pick<ReceivablesDaySource, 'invoice' | 'canceled'>, p: Pick<PaymentRecord, 'uuid' | 'canceled'>): number {
  const records = doc.canceled ?? [];
  let until = invoiceCancelledFrom(doc);
  const uuid = lowerBson(p.uuid);
  const own = records.filter((c) => c.target === 'payment' && inEffectStatus(c.status) && lowerBson(c.uuid) === uuid).map((c) => lteFrom(c.date));
  // A record dated by T cancels it from the earliest on; the flag holds once no record is dated after T (the latest).
  for (const from of own) until = Math.min(until, from);
  if (p.canceled === true) until = Math.min(until, own.length ? Math.max(...own) : -Infinity);
  return until;
}

/**
 * A day kept from the documents emitted on it (`emitted`) and those with a payment record dated
 * on it (`paidOn`); null when neither holds anything. Rows in a fixed order, so a day computed
 * twice is the same document.
 */
export function rollUpReceivablesDay(
  tenant: string,
  day: string,
  range: { start: number; end: number },
  emitted: readonly ReceivablesDaySource[],
  paidOn: readonly ReceivablesDaySource[],
): ReceivablesDay | null {
  const revenue = new Map<string, RevenueGroup>();
  for (const d of emitted) {
    // Cancelled at every instant, or from `until` on (still revenue as of an earlier instant), or never.
    const from = invoiceCancelledFrom(d);
    const cancelled = from === -Infinity;
    const until = Number.isFinite(from) ? from : undefined;
    const rate = d.exchangeRate ?? 1;
    const k = `${d.client}|${cancelled}|${rate}|${until ?? ''}`;
    const g = revenue.get(k) ?? { client: d.client, cancelled, rate, ...(until === undefined ? {} : { until }), documents: 0, revenueC: 0, totalC: 0 };
    g.documents += 1;
    g.revenueC += centsExprOf(d.iSub) - centsExprOf(d.iDesc) - centsExprOf(d.iFalt);
    g.totalC += centsExprOf(d.iTot);
    revenue.set(k, g);
  }
  const paid = new Map<string, PaidCount>();
  for (const d of paidOn) {
    if (d.invoice.paymentMethod === 'PUE' || !Number.isFinite(d.date)) continue;
    const invoiceDay = mxDateString(d.date);
    for (const p of d.payments ?? []) {
      if (p.kind !== 'payment' || !(p.date >= range.start && p.date <= range.end)) continue;
      const until = paymentCountsUntil(d, p);
      // Cancelled by its own instant: it never counted as of any day that reads it.
      if (until <= p.date) continue;
      const lag = daysBetweenDates(invoiceDay, mxDateString(p.date));
      const k = `${d.client}|${lag}|${until === Infinity ? '' : until}`;
      const c = paid.get(k) ?? { client: d.client, lag, n: 0, ...(until === Infinity ? {} : { until }) };
      c.n += 1;
      paid.set(k, c);
    }
  }
  if (!revenue.size && !paid.size) return null;
  return {
    _id: receivablesDayId(tenant, day),
    tenant,
    day,
    revenue: [...revenue.entries()].sort(([a], [b]) => byKey(a, b)).map(([, g]) => g),
    paid: [...paid.entries()].sort(([a], [b]) => byKey(a, b)).map(([, c]) => c),
  };
}
