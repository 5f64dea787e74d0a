/**
 * Cash-basis taxes (docs/domain.md "Tax reconciliation", basis=cash): the VAT and
 * retention a document contributes to a period by what was collected in it.
 */
import type { FinancialDocument, PaymentRecord } from '../model/financial-document.ts';
import { fromCents, round2, toCents } from '../money/cents.ts';
import { invoiceCancellation, isPaymentCancelled } from '../finance/cancellation.ts';
import { rateOf } from '../money/currency.ts';

export interface CashBasisShare {
  docId: string;
  uuid: string;
  paymentMethod: 'PUE' | 'PPD';
  total: number;
  /** Σ valid payment complements considered (credit notes and cancelled records excluded). */
  paidInPeriod: number;
  paymentsCount: number;
  /** The part of paidInPeriod that counts: capped cumulatively at the Total; 0 when cancelled or the total is 0. */
  counted: number;
  /** paidInPeriod / total, capped to 1 (6 decimals); 0 when total ≤ 0 or the invoice is cancelled. */
  share: number;
  /**
   * The counted part of what was paid before the period (capped at the Total, as `counted`): the running total the
   * period's taxes are taken from.
   */
  countedBefore: number;
  /**
   * round2(iTax1 × (before + counted) ÷ total) − round2(iTax1 × before ÷ total): the part of the running total, so the
   * periods of a fully paid invoice add up to its VAT exactly, however its payments split it (one payment in the
   * period and none before: round2(iTax1 × counted ÷ total)).
   */
  vat: number;
  /** The same of iTax2. */
  retention: number;
  /**
   * MXN per unit of the document's currency for this share: the rate of the payments counted
   * (weighted by the part of each that counts, in order: what is paid beyond the Total carries no
   * weight; a payment without its own rate at the invoice's), the invoice's for PUE.
   */
  exchangeRate: number;
  reason?: string;
}

/**
 * VAT and retention attributable to payments, by the SAT proportional rule for
 * PPD invoices (Pagos 2.0: the taxes of each payment are the invoice's taxes in
 * proportion ImpPagado / Total). Balances are on the Total, already net of
 * retention, so the proportion is paid / Total. Only valid records of kind
 * 'payment' count: a credit note is a separate CFDI (type E) that adjusts VAT
 * on its own, not a collection.
 */
export function cashBasisShare(doc: FinancialDocument, paymentsInPeriod: readonly PaymentRecord[]): CashBasisShare {
  const valid = paymentsInPeriod.filter((p) => p.kind === 'payment' && !isPaymentCancelled(doc, p));
  const paidC = valid.reduce((s, p) => s + toCents(p.amount), 0);
  return shareOf(doc, paidC, valid.length, 0, paymentsRate(doc, valid, 0));
}

/**
 * The MXN rate of these payments (6 decimals), weighted by the part of each that counts: taken in order (date, then
 * UUID) after `priorC` already paid, a payment counts up to what is left of the Total, so what is paid beyond it (an
 * overpayment, a duplicated complement) weighs nothing (1,120 USD paid at 17.00, then again at 20.00: 17.00, not
 * 18.50). The invoice's own rate without payments, for MXN, or when nothing counts.
 */
function paymentsRate(doc: FinancialDocument, payments: readonly PaymentRecord[], priorC: number): number {
  const own = rateOf(doc);
  if (!payments.some((p) => p.exchangeRate !== undefined)) return own;
  const totalC = toCents(doc.iTot);
  const ordered = [...payments].sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid));
  let runningC = Math.max(0, priorC);
  let amount = 0;
  let weighted = 0;
  for (const p of ordered) {
    const paidC = Math.max(0, toCents(p.amount));
    const countedC = Math.max(0, Math.min(totalC, runningC + paidC) - Math.min(totalC, runningC));
    runningC += paidC;
    amount += countedC;
    weighted += countedC * (p.exchangeRate ?? own);
  }
  return amount > 0 ? Math.round((weighted / amount) * 1e6) / 1e6 : own;
}

function shareOf(doc: FinancialDocument, paidC: number, count: number, priorPaidC: number, exchangeRate: number): CashBasisShare {
  const totalC = toCents(doc.iTot);
  const base = {
    docId: doc.id,
    uuid: doc.invoice.uuid,
    paymentMethod: doc.invoice.paymentMethod,
    total: fromCents(totalC),
    paidInPeriod: fromCents(paidC),
    paymentsCount: count,
    exchangeRate,
  };
  const none = { counted: 0, countedBefore: 0, share: 0, vat: 0, retention: 0 };
  if (invoiceCancellation(doc) !== null) return { ...base, ...none, reason: 'invoice cancelled: carries no tax' };
  if (totalC <= 0) return { ...base, ...none, reason: 'invoice total is 0: no proportion can be taken' };
  // Only the part of this period's payments that fits under the Total counts (overpayment carries no tax).
  const beforeC = Math.max(0, Math.min(totalC, priorPaidC));
  const afterC = Math.max(beforeC, Math.min(totalC, priorPaidC + paidC));
  const countedC = afterC - beforeC;
  const ratio = countedC / totalC;
  // Each period's taxes are the difference of the running totals' (not each period's own share rounded by itself,
  // which loses or gains a cent: 11,200.00 paid in thirds gave 533.33 VAT three times, 1,599.99 in all).
  const part = (tax: number): number => round2(round2((tax * afterC) / totalC) - round2((tax * beforeC) / totalC));
  return {
    ...base,
    counted: fromCents(countedC),
    countedBefore: fromCents(beforeC),
    share: Math.round(ratio * 1e6) / 1e6,
    vat: part(doc.iTax1),
    retention: part(doc.iTax2),
  };
}

/**
 * Cash-basis taxes of a document for a period [start, endExclusive):
 * PUE invoices are paid in one exhibition at emission, so all their taxes fall
 * in the month of the invoice date; PPD invoices count their valid payment
 * complements dated in the period, capped cumulatively at the Total.
 */
export function cashBasisForPeriod(doc: FinancialDocument, period: { start: number; endExclusive: number }): CashBasisShare {
  const inPeriod = (t: number): boolean => t >= period.start && t < period.endExclusive;
  if (doc.invoice.paymentMethod === 'PUE') {
    const paid = inPeriod(doc.date) ? toCents(doc.iTot) : 0;
    return shareOf(doc, paid, paid === 0 ? 0 : 1, 0, rateOf(doc));
  }
  const valid = doc.payments.filter((p) => p.kind === 'payment' && !isPaymentCancelled(doc, p));
  const priorC = valid.filter((p) => p.date < period.start).reduce((s, p) => s + toCents(p.amount), 0);
  const within = valid.filter((p) => inPeriod(p.date));
  const paidC = within.reduce((s, p) => s + toCents(p.amount), 0);
  return shareOf(doc, paidC, within.length, priorC, paymentsRate(doc, within, priorC));
}
