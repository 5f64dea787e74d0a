/**
 * Outstanding balance of an invoice (docs/domain.md "Payments, credit notes and
 * balances"): Total − Σ valid payments − Σ valid credit notes, never below 0.
 * Balances are on the CFDI Total, which is already net of the 4% retention.
 */
import type { FinancialDocument, PaymentStatus } from '../model/financial-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { isInvoiceCancelled, validPaymentRecords, type InvoiceCancellationInput } from './cancellation.ts';

export interface DocumentBalance {
  /** Invoice Total (top-level `iTot`). */
  total: number;
  /** Σ valid payment complements (type P): money actually collected. */
  paid: number;
  /** Σ valid credit notes (type E, relation 01): reduce the balance, not collections. */
  creditNotes: number;
  /** max(0, total − paid − creditNotes); 0 for a cancelled invoice (nothing is collectable). */
  pending: number;
  /** Amount paid + credited beyond the total (0 normally); surfaced rather than hidden by the clamp. */
  overpaid: number;
  /** Not cancelled and pending is 0. */
  isFullyPaid: boolean;
  /** Valid records of kind 'payment' only; credit notes are counted in `creditNotesCount`. */
  paymentsCount: number;
  creditNotesCount: number;
  isCancelled: boolean;
}

/** What a balance reads: the Total, the payment records and the cancellation records. */
export type BalanceInput = InvoiceCancellationInput & Pick<FinancialDocument, 'iTot' | 'payments'>;

export function documentBalance(doc: BalanceInput): DocumentBalance {
  const isCancelled = isInvoiceCancelled(doc);
  const payments = validPaymentRecords(doc, 'payment');
  const credits = validPaymentRecords(doc, 'creditNote');
  const totalC = toCents(doc.iTot);
  const paidC = payments.reduce((s, p) => s + toCents(p.amount), 0);
  const creditC = credits.reduce((s, p) => s + toCents(p.amount), 0);
  const remainingC = totalC - paidC - creditC;
  const pendingC = isCancelled ? 0 : Math.max(0, remainingC);
  return {
    total: fromCents(totalC),
    paid: fromCents(paidC),
    creditNotes: fromCents(creditC),
    pending: fromCents(pendingC),
    overpaid: fromCents(Math.max(0, -remainingC)),
    isFullyPaid: !isCancelled && pendingC === 0,
    paymentsCount: payments.length,
    creditNotesCount: credits.length,
    isCancelled,
  };
}

export type { PaymentStatus };

/**
 * 'paid' when nothing is pending; 'partial' when something was paid or
 * credited; else 'unpaid'. A cancelled invoice is 'cancelled' — it is neither
 * paid nor owed, and calling it 'unpaid' would put it in collection lists.
 */
export function paymentStatus(balance: Pick<DocumentBalance, 'isCancelled' | 'isFullyPaid' | 'paid' | 'creditNotes'>): PaymentStatus {
  if (balance.isCancelled) return 'cancelled';
  if (balance.isFullyPaid) return 'paid';
  if (toCents(balance.paid) + toCents(balance.creditNotes) > 0) return 'partial';
  return 'unpaid';
}
