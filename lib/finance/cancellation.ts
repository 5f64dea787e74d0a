/**
 * Which parts of a financial document are cancelled before the SAT. Shared by
 * balances, tax reconciliation and revenue analytics so they agree.
 */
import type { CanceledRecord, FinancialDocument, PaymentRecord } from '../model/financial-document.ts';

/** What the invoice-level rule reads: the document's current UUID and its cancellation records. */
export interface InvoiceCancellationInput {
  invoice: Pick<FinancialDocument['invoice'], 'uuid'>;
  canceled: readonly CanceledRecord[];
}

/**
 * UUIDs compare case-insensitively and otherwise exactly, as the pipelines'
 * `$toLower` equality does (invoiceCancelledExpr in lib/db/pipeline.ts;
 * test/cancellation-rule.test.ts runs both on the same documents).
 */
const sameUuid = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/**
 * The cancellation record of the invoice itself, if any. It must name the
 * document's current UUID: under motive 01 a document may have been re-stamped
 * and still carry the record of its replaced predecessor (whose
 * `replacementUuid` is the current UUID), and that does not cancel it.
 */
export function invoiceCancellation(doc: InvoiceCancellationInput): CanceledRecord | null {
  return doc.canceled.find((c) => c.target === 'invoice' && sameUuid(c.uuid, doc.invoice.uuid)) ?? null;
}

export function isInvoiceCancelled(doc: InvoiceCancellationInput): boolean {
  return invoiceCancellation(doc) !== null;
}

/** A payment record counts unless flagged `canceled` or named by a 'payment' cancellation record. */
export function isPaymentCancelled(doc: { canceled: readonly CanceledRecord[] }, payment: PaymentRecord): boolean {
  if (payment.canceled) return true;
  return doc.canceled.some((c) => c.target === 'payment' && sameUuid(c.uuid, payment.uuid));
}

/** Valid (not cancelled) records, optionally of one kind. */
export function validPaymentRecords(
  doc: { canceled: readonly CanceledRecord[]; payments: readonly PaymentRecord[] },
  kind?: PaymentRecord['kind'],
): PaymentRecord[] {
  return doc.payments.filter((p) => (kind === undefined || p.kind === kind) && !isPaymentCancelled(doc, p));
}
