/**
 * The list's spans of the open-items index (docs/rollups.md "Receivables"): when an invoice is
 * open by the financial-docs list's `openAsOf` rule, one span [from, to) per stretch. The rule
 * (`openAsOfExpr` of lib/finance/financial-docs-repo.ts, here in JS on the same stored fields) reads
 * only the records dated by T, so, as the report's entries (open-items.ts), it changes only at the
 * invoice's own instants. It is the list's own, not the reports' (which also apply lib/finance's
 * balance in JS): a span exists exactly where the list's query matches the document.
 */
import { mxMonthKey, mxMonthRange, mxDateString } from '../time/mexico-city.ts';
import { OPEN_END } from './open-items.ts';
import { centsOf, inEffectStatus, lowerBson, lteBson, paymentsCancelledAfter } from './pipeline-mirror.ts';

/** The stored fields the rule reads, and the list's sort key (date, timestamp, _id). */
export interface ListOpenSource {
  _id: unknown;
  client?: unknown;
  date?: unknown;
  timestamp?: unknown;
  iTot?: unknown;
  invoice?: { uuid?: unknown } | null;
  payments?: readonly { date?: unknown; amount?: unknown; uuid?: unknown; canceled?: unknown }[] | null;
  canceled?: readonly { date?: unknown; uuid?: unknown; target?: unknown; status?: unknown }[] | null;
}

/**
 * One stretch of an invoice's openness, stored once, in the bucket of its end: the Mexico City
 * month of `to`, or OPEN_MONTH while it is open now. A stretch holding T ends after T, so it lies
 * in T's month's bucket or a later one: "open at T" walks those buckets in the list's order (an
 * equality on `bucket` and ranges on `from`/`to` in each), and the total is two counts over every
 * stretch, by index alone: `from` ≤ T, less `to` ≤ T (a stretch that ended by T began before it).
 */
export interface OpenSpanDoc {
  /** `${tenant}|${docId}|${from}`. */
  _id: string;
  tenant: string;
  /** Mexico City day of the invoice: a marked day replaces its invoices' spans. */
  day: string;
  client: unknown;
  /** The document's sort key, as stored on it (a missing timestamp stays missing). */
  date: number;
  timestamp?: unknown;
  docId: unknown;
  from: number;
  to: number;
  /** 'YYYY-MM' of `to`, or OPEN_MONTH (after every month in string order). */
  bucket: string;
}

/** `bucket` of a span open now (to = OPEN_END), and the open items by month's month of those spans (open-item-months.ts). */
export const OPEN_MONTH = 'open';

/** Whether the list's `openAsOf=T` query matches the document (emitted by T, not cancelled by T, a balance left by T). */
export function listOpenAt(doc: ListOpenSource, t: number): boolean {
  if (typeof doc.date !== 'number' || !(doc.date <= t)) return false;
  const canceled = (doc.canceled ?? []).filter((c) => lteBson(c.date, t) && inEffectStatus(c.status));
  const own = lowerBson(doc.invoice?.uuid);
  if (canceled.some((c) => c.target === 'invoice' && lowerBson(c.uuid) === own)) return false;
  const cancelledPayments = new Set(canceled.filter((c) => c.target === 'payment').map((c) => lowerBson(c.uuid)));
  // paymentFlagHeldAtExpr: a flagged payment whose cancellation is dated after T still counted at T.
  const cancelledLater = paymentsCancelledAfter(doc.canceled ?? [], t);
  let settled = 0;
  for (const p of doc.payments ?? [])
    if (lteBson(p.date, t) && !(p.canceled === true && !cancelledLater.has(lowerBson(p.uuid))) && !cancelledPayments.has(lowerBson(p.uuid)))
      settled += centsOf(p.amount);
  return centsOf(doc.iTot) - settled > 0;
}

/** The Mexico City months 'YYYY-MM' the instants [from, to) touch. */
export function monthsOf(from: number, to: number): string[] {
  const out: string[] = [];
  let month = mxMonthKey(from);
  for (;;) {
    out.push(month);
    const end = mxMonthRange(month).endExclusive;
    if (end >= to) return out;
    month = mxMonthKey(end);
  }
}

/** The stretches [from, to) in which the list counts the document open (to = OPEN_END: open still). */
export function listOpenRanges(doc: ListOpenSource): { from: number; to: number }[] {
  if (typeof doc.date !== 'number' || !Number.isFinite(doc.date)) return [];
  const date = doc.date;
  const instants = new Set<number>([date]);
  for (const r of [...(doc.payments ?? []), ...(doc.canceled ?? [])]) if (typeof r.date === 'number' && r.date > date) instants.add(r.date);
  const out: { from: number; to: number }[] = [];
  let openFrom: number | null = null;
  for (const at of [...instants].sort((a, b) => a - b)) {
    const open = listOpenAt(doc, at);
    if (open && openFrom === null) openFrom = at;
    if (!open && openFrom !== null) {
      out.push({ from: openFrom, to: at });
      openFrom = null;
    }
  }
  if (openFrom !== null) out.push({ from: openFrom, to: OPEN_END });
  return out;
}

/** The document's span documents: one per stretch, in the bucket of its end. */
export function openSpansOf(tenant: string, doc: ListOpenSource): OpenSpanDoc[] {
  return listOpenRanges(doc).map((r) => ({
    _id: `${tenant}|${String(doc._id)}|${r.from}`,
    tenant,
    day: mxDateString(doc.date as number),
    client: doc.client,
    date: doc.date as number,
    ...(doc.timestamp === undefined ? {} : { timestamp: doc.timestamp }),
    docId: doc._id,
    from: r.from,
    to: r.to,
    bucket: r.to === OPEN_END ? OPEN_MONTH : mxMonthKey(r.to),
  }));
}
