/**
 * Which parts of a financial document are cancelled before the SAT. Shared by
 * balances, tax reconciliation and revenue analytics so they agree.
 *
 * A cancellation record carries the status of a cancellation (lib/model, CancellationStatus):
 * only `accepted` and `expired` (tacit acceptance) are in effect; a `pending` request or a
 * `rejected` one cancels nothing. Records written before statuses existed have none and
 * recorded cancellations in effect: they read as `accepted`.
 */
import type { CanceledRecord, CancellationRecordStatus, CancellationStatus, FinancialDocument, PaymentRecord } from '../model/financial-document.ts';
import { receiverDeadline } from '../time/business-days.ts';

/**
 * When a status the SAT status service answered takes effect: Plazo vencido (`expired`) when the receiver's 3 business
 * days ended (CFF art. 29-A: silence until then is acceptance), an instant known exactly; any other status when it was
 * consulted, the service telling no earlier one.
 */
export function effectiveSince(status: CancellationRecordStatus, consultedAt: number, requestedAt: number): number {
  return status === 'expired' ? Math.min(consultedAt, receiverDeadline(requestedAt)) : consultedAt;
}

/** What the invoice-level rule reads: the document's current UUID and its cancellation records. */
export interface InvoiceCancellationInput {
  invoice: Pick<FinancialDocument['invoice'], 'uuid'>;
  canceled: readonly CanceledRecord[];
}

/** The statuses under which a CFDI is cancelled (the pipelines' form: CANCELLED_STATUSES in lib/db/pipeline.ts). */
export const CANCELLED_STATUSES: readonly CancellationRecordStatus[] = ['accepted', 'expired'];

/** A record's status; a record without one (written before statuses existed) is in effect. */
export const recordStatus = (c: Pick<CanceledRecord, 'status'>): CancellationRecordStatus => c.status ?? 'accepted';

/** Whether the record's CFDI is cancelled (accepted, or expired: accepted tacitly). */
export const isInEffect = (c: Pick<CanceledRecord, 'status'>): boolean => CANCELLED_STATUSES.includes(recordStatus(c));

/**
 * UUIDs compare case-insensitively and otherwise exactly, as the pipelines'
 * `$toLower` equality does (invoiceCancelledExpr in lib/db/pipeline.ts;
 * test/cfdi/cancellation-rule.ts runs both on the same documents).
 */
const sameUuid = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** The records about the invoice itself: target 'invoice' naming its current UUID. */
const ownRecords = (doc: InvoiceCancellationInput): CanceledRecord[] =>
  doc.canceled.filter((c) => c.target === 'invoice' && sameUuid(c.uuid, doc.invoice.uuid));

/**
 * The cancellation in effect of the invoice itself, if any. It must name the
 * document's current UUID: under motive 01 a document may have been re-stamped
 * and still carry the record of its replaced predecessor (whose
 * `replacementUuid` is the current UUID), and that does not cancel it.
 */
export function invoiceCancellation(doc: InvoiceCancellationInput): CanceledRecord | null {
  return ownRecords(doc).find(isInEffect) ?? null;
}

/** The record of the invoice's own cancellation whatever its status (the one in effect first), or null. */
export function invoiceCancellationRecord(doc: InvoiceCancellationInput): CanceledRecord | null {
  const own = ownRecords(doc);
  return own.find(isInEffect) ?? own.reduce<CanceledRecord | null>((last, c) => (last === null || c.date >= last.date ? c : last), null);
}

/** Where the invoice's own cancellation stands: `none` without a record about it. */
export function invoiceCancellationStatus(doc: InvoiceCancellationInput): CancellationStatus {
  const record = invoiceCancellationRecord(doc);
  return record === null ? 'none' : recordStatus(record);
}

export function isInvoiceCancelled(doc: InvoiceCancellationInput): boolean {
  return invoiceCancellation(doc) !== null;
}

/** A payment record counts unless flagged `canceled` or named by a 'payment' cancellation record in effect. */
export function isPaymentCancelled(doc: { canceled: readonly CanceledRecord[] }, payment: PaymentRecord): boolean {
  if (payment.canceled) return true;
  return doc.canceled.some((c) => c.target === 'payment' && sameUuid(c.uuid, payment.uuid) && isInEffect(c));
}

/** Valid (not cancelled) records, optionally of one kind. */
export function validPaymentRecords(
  doc: { canceled: readonly CanceledRecord[]; payments: readonly PaymentRecord[] },
  kind?: PaymentRecord['kind'],
): PaymentRecord[] {
  return doc.payments.filter((p) => (kind === undefined || p.kind === kind) && !isPaymentCancelled(doc, p));
}
