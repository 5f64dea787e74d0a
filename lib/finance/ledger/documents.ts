/**
 * Facts → document (the ledger, lib/finance/ledger): an invoice's stored document depends on
 * several files that may arrive in any order: the invoice (I), its payment complements (P),
 * credit notes (E, relation 01), cancellation requests and acknowledgements, and the SAT status
 * service's answers recorded through the API. Each is kept as a *fact* (facts-repo.ts); the
 * document is rebuilt from all facts about the invoice (`buildFinancialDocument`), so the result
 * is the same whatever the order, and importing a file twice changes nothing. Pure.
 */
import type { CanceledRecord, CancellationRecordStatus, FinancialDocument, PaymentRecord } from '../../model/financial-document.ts';
import { fromCents, toCents } from '../../money/cents.ts';
import { creditInInvoiceCurrency, creditNoteRate, mxnCents, rateOf } from '../../money/currency.ts';
import { documentBalance } from '../balance.ts';
import { effectiveSince, isInEffect } from '../cancellation.ts';
import { FOREIGN_RFC, PUBLIC_RFC } from '../../tax/rfc.ts';
import { businessDaysDeadline } from '../../time/business-days.ts';
import {
  IMPORT_STATUS,
  SAT_ANSWERS,
  type CancellationFact,
  type CancellationInfoFact,
  type CancellationMetadataFact,
  type CancellationRequestFact,
  type CancellationStatusFact,
  type CreditNoteFact,
  type InvoiceBase,
  type InvoiceFact,
  type PaymentFact,
} from './facts.ts';

/**
 * Whether the cancellation of this invoice waits for the receiver's acceptance (RMF regla
 * 2.7.1.35, 2022 onward; CFF art. 29-A): not when its total is up to 1,000 MXN, when it was
 * issued to the generic public or foreign RFC, or when the request comes within the business
 * day after its certification; otherwise it does. (The rule's other cases — payroll, transfers,
 * credit notes, withholding certificates, financial institutions — are not invoices this import
 * reads.)
 */
export function needsReceiverAcceptance(invoice: InvoiceBase, requestedAt: number): boolean {
  if (mxnCents(invoice.iTot, rateOf(invoice)) <= 100_000) return false;
  if (invoice.client === PUBLIC_RFC || invoice.client === FOREIGN_RFC) return false;
  const certified = Date.parse(invoice.invoice.satCertDate);
  return !(Number.isFinite(certified) && requestedAt < businessDaysDeadline(certified, 1));
}

/** Facts about one CFDI's cancellation, by kind. */
export interface CancellationFacts {
  request?: CancellationRequestFact;
  acknowledgement?: CancellationFact;
  answer?: CancellationStatusFact;
  metadata?: CancellationMetadataFact;
}

/** Groups cancellation facts by the UUID they are about. */
export function cancellationFactsByUuid(facts: readonly CancellationInfoFact[]): Map<string, CancellationFacts> {
  const by = new Map<string, CancellationFacts>();
  for (const f of facts) {
    const entry = by.get(f.uuid) ?? {};
    if (f.kind === 'cancellationRequest') entry.request = f;
    else if (f.kind === 'cancellation') entry.acknowledgement = f;
    else if (f.kind === 'cancellationMetadata') entry.metadata = f;
    else entry.answer = f;
    by.set(f.uuid, entry);
  }
  return by;
}

/**
 * The cancellation record of one CFDI from the facts about it: motive and replacement from the
 * request (or the acknowledgement that repeats them); the status from the latest SAT answer —
 * the status service's, or the acknowledgement's (202 accepted; 201 accepted unless an invoice
 * needs its receiver's acceptance, then pending) — or, with only the request, pending.
 * `invoice` is the invoice the record is about (null for a payment complement or credit note:
 * they need no acceptance here).
 */
export function cancellationRecordOf(
  tenant: string,
  target: CanceledRecord['target'],
  uuid: string,
  facts: CancellationFacts,
  invoice: InvoiceBase | null,
): CanceledRecord | null {
  const { request, acknowledgement: ack, answer, metadata } = facts;
  if (!request && !ack && !answer && !metadata) return null;
  const requestedAt = request?.date ?? ack?.date ?? answer?.date ?? metadata!.date;
  type Move = { status: CancellationRecordStatus; date: number; source: NonNullable<CanceledRecord['statusSource']>; sat: string | null };
  let move: Move = { status: 'pending', date: requestedAt, source: 'request', sat: null };
  if (ack) {
    const status: CancellationRecordStatus =
      ack.code === undefined || ack.code === '202' || invoice === null || !needsReceiverAcceptance(invoice, ack.date) ? 'accepted' : 'pending';
    move = { status, date: ack.date, source: 'acknowledgement', sat: ack.code ?? null };
  }
  // The status service speaks last unless an acknowledgement is newer than its answer; a
  // cancellation the acknowledgement put in effect is final (the PUT refuses such an answer too).
  if (answer && (!ack || answer.date >= ack.date) && !(isInEffect(move) && !isInEffect(SAT_ANSWERS[answer.estatusCancelacion]))) {
    const status = SAT_ANSWERS[answer.estatusCancelacion].status;
    move = { status, date: effectiveSince(status, answer.date, requestedAt), source: 'status-service', sat: answer.estatusCancelacion };
  }
  // The SAT's metadata lists the CFDI as cancelled (Estatus 0): in effect since FechaCancelacion,
  // whatever was recorded before, unless a record already says so (and says more: accepted or expired).
  if (metadata && !isInEffect(move)) move = { status: 'accepted', date: metadata.date, source: 'bulk-metadata', sat: 'Estatus 0 (cancelado)' };
  return {
    id: `${tenant}-CAN-${uuid}`,
    target,
    uuid,
    date: move.date,
    motive: request?.motive ?? ack?.motive ?? null,
    replacementUuid: request ? request.replacementUuid : (ack?.replacementUuid ?? null),
    status: move.status,
    requestedAt,
    statusSource: move.source,
    satStatus: move.sat,
  };
}

/**
 * The stored document of one invoice from every fact about it: payments and
 * credit notes in date order, cancellations of the invoice and of its
 * payment records, status and lastUpdate derived from them. Deterministic: the
 * same facts always give the same document.
 */
export function buildFinancialDocument(
  invoice: InvoiceFact,
  payments: readonly PaymentFact[],
  creditNotes: readonly CreditNoteFact[],
  cancellations: readonly CancellationInfoFact[],
): FinancialDocument {
  const tenantPrefix = invoice.base.company;
  const factsBy = cancellationFactsByUuid(cancellations);
  const recordOf = (target: CanceledRecord['target'], uuid: string): CanceledRecord | null => {
    const facts = factsBy.get(uuid);
    return facts ? cancellationRecordOf(tenantPrefix, target, uuid, facts, target === 'invoice' ? invoice.base : null) : null;
  };
  const own = recordOf('invoice', invoice.uuid);
  type Draft = {
    kind: PaymentRecord['kind'];
    uuid: string;
    seq: number;
    date: number;
    amount: number;
    before?: number;
    after?: number;
    exchangeRate?: number;
    pagosVersion?: '1.0' | '2.0';
    taxes?: PaymentRecord['taxes'];
  };
  const drafts: Draft[] = [];
  // PUE: paid in one exhibition when issued, so no complement ever comes (SAT issues none for
  // PUE). Its receipt is a payment record at the invoice date, as the demo data has, so balances,
  // lists and forecasts treat it as paid.
  // A cancelled invoice was never collectable: no receipt (a pending or rejected request keeps it).
  if (invoice.base.invoice.paymentMethod === 'PUE' && !(own && isInEffect(own))) {
    const total = invoice.base.iTot;
    drafts.push({ kind: 'payment', uuid: invoice.uuid, seq: 0, date: invoice.base.date, amount: total, before: total, after: 0 });
  }
  for (const p of payments) {
    for (const r of p.records) {
      if (r.invoiceUuid !== invoice.uuid) continue;
      drafts.push({
        kind: 'payment',
        uuid: p.uuid,
        seq: r.seq,
        date: r.date,
        amount: r.amount,
        before: r.balanceBefore,
        after: r.balanceAfter,
        ...(r.exchangeRate === undefined ? {} : { exchangeRate: r.exchangeRate }),
        ...(p.pagosVersion === undefined ? {} : { pagosVersion: p.pagosVersion }),
      });
    }
  }
  for (const n of creditNotes)
    if (n.invoiceUuid === invoice.uuid)
      drafts.push({
        kind: 'creditNote',
        uuid: n.uuid,
        seq: 1,
        date: n.date,
        amount: creditInInvoiceCurrency(n, invoice.base),
        // Its own TipoCambio: what it gives back of the taxes is worth that in MXN (the tax position's art. 7 lines).
        ...creditNoteRate(n, invoice.base),
        // Its own taxes, converted as its Total is.
        ...(n.taxes === undefined
          ? {}
          : {
              taxes: {
                vat: creditInInvoiceCurrency({ ...n, amount: n.taxes.vat }, invoice.base),
                vatRetained: creditInInvoiceCurrency({ ...n, amount: n.taxes.vatRetained }, invoice.base),
                isrRetained: creditInInvoiceCurrency({ ...n, amount: n.taxes.isrRetained }, invoice.base),
              },
            }),
      });
  drafts.sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid) || a.seq - b.seq);

  // Payment complements declare their balances; credit notes continue the chain of valid records.
  let balanceC = toCents(invoice.base.iTot);
  const paymentCancellations = new Map<string, CanceledRecord>();
  for (const uuid of new Set(drafts.map((d) => d.uuid))) {
    const c = uuid === invoice.uuid ? null : recordOf('payment', uuid);
    if (c) paymentCancellations.set(uuid, c);
  }
  const records: PaymentRecord[] = drafts.map((d) => {
    const cx = paymentCancellations.get(d.uuid);
    const canceled = cx !== undefined && isInEffect(cx);
    const beforeC = d.before !== undefined ? toCents(d.before) : balanceC;
    const afterC = d.after !== undefined ? toCents(d.after) : Math.max(0, beforeC - toCents(d.amount));
    if (!canceled) balanceC = afterC;
    return {
      id: `${tenantPrefix}-${d.kind === 'creditNote' ? 'NC' : d.seq === 0 ? 'PUE' : 'PAG'}-${d.uuid}-${d.seq}`,
      kind: d.kind,
      uuid: d.uuid,
      date: d.date,
      amount: d.amount,
      balanceBefore: fromCents(beforeC),
      balanceAfter: fromCents(afterC),
      canceled,
      ...(d.exchangeRate === undefined ? {} : { exchangeRate: d.exchangeRate }),
      ...(d.pagosVersion === undefined ? {} : { pagosVersion: d.pagosVersion }),
      ...(d.taxes === undefined ? {} : { taxes: d.taxes }),
    };
  });

  const canceled: CanceledRecord[] = [];
  if (own) canceled.push(own);
  canceled.push(...paymentCancellations.values());
  canceled.sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid));

  const doc: FinancialDocument = { ...invoice.base, status: IMPORT_STATUS.invoiced, lastUpdate: '', payments: records, canceled };
  const balance = documentBalance(doc);
  doc.status = balance.isCancelled ? IMPORT_STATUS.cancelled : balance.isFullyPaid ? IMPORT_STATUS.paid : IMPORT_STATUS.invoiced;
  let last = Math.max(invoice.base.date, invoice.certifiedAt);
  for (const r of records) last = Math.max(last, r.date);
  for (const c of canceled) last = Math.max(last, c.date);
  // A record may be dated before the fact that set it (Plazo vencido: when the 3 business days ended, answered later).
  for (const f of cancellations) last = Math.max(last, f.date);
  doc.lastUpdate = new Date(last).toISOString();
  return doc;
}
