/**
 * The open-items index of the as-of reports (docs/rollups.md "Receivables"): one entry per
 * invoice that was ever open, holding when it was open and for how much. A balance as of an
 * instant T reads only the records dated by T (streamOpenInvoices in receivables-repo.ts), so it
 * changes only at the instants of the invoice's own records: its date, its payments' and its
 * cancellation records' dates. Between two such instants it is constant; an entry keeps the
 * spans [from, to) in which the invoice was open with the outstanding amount of each, computed
 * by the same rule the document query and lib/finance apply at the span's first instant.
 */
import type { CanceledRecord, FinancialDocument, PaymentRecord } from '../model/financial-document.ts';
import { isInEffect } from '../finance/cancellation.ts';
import { mxDateString } from '../time/mexico-city.ts';
import { openInvoiceOf } from './forecast.ts';
import { centsOf, lowerBson, lteBson, paymentsCancelledAfter } from './pipeline-mirror.ts';

/** `to` of an entry still open now: beyond any instant a report asks for (the largest Date). */
export const OPEN_END = 8_640_000_000_000_000;

/** What an entry is computed from: the fields streamOpenInvoices reads. */
export type OpenItemSource = Pick<FinancialDocument, '_id' | 'id' | 'client' | 'clientName' | 'date' | 'iTot' | 'currency' | 'exchangeRate'> & {
  invoice: Pick<FinancialDocument['invoice'], 'uuid'>;
  payments?: readonly PaymentRecord[] | null;
  canceled?: readonly CanceledRecord[] | null;
};

export interface OpenSpan {
  /** First instant (epoch ms) of the span, inclusive. */
  from: number;
  /** First instant it no longer holds; null: open still. */
  to: number | null;
  /** Outstanding balance in MXN, as openInvoiceOf answers it. */
  outstanding: number;
}

export interface OpenItem {
  /** `${tenant}|${document _id}`. */
  _id: string;
  tenant: string;
  /** Mexico City day of the invoice: a marked day recomputes its invoices' entries. */
  day: string;
  id: string;
  uuid: string;
  client: string;
  clientName: string;
  /** Invoice instant, epoch ms. */
  date: number;
  currency: string | null;
  exchangeRate: number | null;
  /** Last instant open + 1; OPEN_END while open now. */
  to: number;
  spans: OpenSpan[];
}

export const openItemId = (tenant: string, docId: string): string => `${tenant}|${docId}`;

/**
 * The outstanding MXN balance of an invoice as of instant T, or null when it is not open then:
 * exactly streamOpenInvoices' filters (its cheap first test over every record included) and
 * then openInvoiceOf, as the reports apply them.
 */
export function outstandingAsOf(doc: OpenItemSource, t: number): number | null {
  if (!(doc.date <= t)) return null;
  const payments = doc.payments ?? [];
  const canceled = doc.canceled ?? [];
  let sum = 0;
  let maxDate: number | null = null;
  for (const p of payments) {
    if (typeof p.amount === 'number') sum += p.amount;
    if (typeof p.date === 'number' && (maxDate === null || p.date > maxDate)) maxDate = p.date;
  }
  const cheap = sum < doc.iTot - 0.005 || canceled.length > 0 || (maxDate !== null && maxDate > t) || payments.some((p) => p.canceled === true);
  if (!cheap) return null;
  // The records dated by T, each payment's flag as it stood at T (paymentFlagHeldAtExpr): cancelled after T, it counted.
  const cancelledLater = paymentsCancelledAfter(canceled, t);
  const row = {
    ...doc,
    canceled: canceled.filter((c) => lteBson(c.date, t)),
    payments: payments
      .filter((p) => lteBson(p.date, t))
      .map((p) => (p.canceled === true && cancelledLater.has(lowerBson(p.uuid)) ? { ...p, canceled: false } : p)),
  };
  // The pipeline's own test in centsExpr (then lib/finance's in toCents, below): both must hold.
  const cx = new Set(row.canceled.filter((c) => c.target === 'payment' && isInEffect(c)).map((c) => c.uuid.toLowerCase()));
  const settledC = row.payments.filter((p) => p.canceled !== true && !cx.has(p.uuid.toLowerCase())).reduce((s, p) => s + centsOf(p.amount), 0);
  if (!(centsOf(doc.iTot) - settledC > 0)) return null;
  const open = openInvoiceOf(row);
  return open ? open.outstanding : null;
}

/** The entry of an invoice, or null when it was never open (settled or cancelled from its first instant). */
export function openItemOf(tenant: string, doc: OpenItemSource): OpenItem | null {
  if (typeof doc.date !== 'number' || !Number.isFinite(doc.date)) return null;
  const instants = new Set<number>([doc.date]);
  for (const r of [...(doc.payments ?? []), ...(doc.canceled ?? [])]) if (typeof r.date === 'number' && r.date > doc.date) instants.add(r.date);
  const events = [...instants].sort((a, b) => a - b);
  const spans: OpenSpan[] = [];
  for (const from of events) {
    const outstanding = outstandingAsOf(doc, from);
    const last = spans[spans.length - 1];
    if (last && last.to === null && outstanding !== null && last.outstanding === outstanding) continue; // the same state goes on
    if (last && last.to === null) last.to = from;
    if (outstanding !== null) spans.push({ from, to: null, outstanding });
  }
  const last = spans[spans.length - 1];
  if (!last) return null;
  const to = last.to ?? OPEN_END;
  return {
    _id: openItemId(tenant, String(doc._id)),
    tenant,
    day: mxDateString(doc.date),
    id: doc.id,
    uuid: doc.invoice.uuid,
    client: doc.client,
    clientName: doc.clientName,
    date: doc.date,
    currency: doc.currency ?? null,
    exchangeRate: doc.exchangeRate ?? null,
    to,
    spans,
  };
}

/** An entry's outstanding balance as of instant T, or null when it was not open then. */
export function itemOutstandingAt(item: Pick<OpenItem, 'spans'>, t: number): number | null {
  for (const s of item.spans) if (s.from <= t && (s.to === null || t < s.to)) return s.outstanding;
  return null;
}
