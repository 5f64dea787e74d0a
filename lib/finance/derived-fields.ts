/**
 * The fields a stored financial document carries besides its own (the computed
 * pattern): each is a pure function of the document, written with it, so a list
 * filter on it is an index look-up. The responses compute the same values from
 * the same functions (balance.ts, cancellation.ts), so a filter and the answer it returns agree.
 */
import type { CancellationStatus, FinancialDocument, PaymentStatus, StoredFinancialDocument } from '../model/financial-document.ts';
import { documentBalance, paymentStatus, type BalanceInput } from './balance.ts';
import { invoiceCancellationStatus } from './cancellation.ts';

/** The payment state of a document: what `derivedPaymentStatus` stores and the list filters on. */
export function documentPaymentStatus(doc: BalanceInput): PaymentStatus {
  return paymentStatus(documentBalance(doc));
}

/** The derived fields of a document (what the start-up backfill writes on documents stored without them). */
export function derivedFieldsOf(doc: BalanceInput): { derivedPaymentStatus: PaymentStatus; derivedCancellationStatus: CancellationStatus } {
  return { derivedPaymentStatus: documentPaymentStatus(doc), derivedCancellationStatus: invoiceCancellationStatus(doc) };
}

/**
 * The document as written: its fields, then the derived ones, recomputed (a
 * stored document passed back in gets fresh values, never stale ones).
 */
export function withDerivedFields(doc: FinancialDocument): StoredFinancialDocument {
  return { ...doc, ...derivedFieldsOf(doc) };
}
