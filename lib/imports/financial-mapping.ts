/**
 * Pure mapping of imported CFDI into the stored FinancialDocument shape (the
 * one the demo generator writes, lib/model/financial-document.ts).
 *
 * An invoice's stored document depends on several files that may arrive in
 * any order: the invoice (I), its payment complements (P), credit notes (E,
 * relation 01), cancellation requests and acknowledgements, and the SAT status
 * service's answers recorded through the API. Each is kept as a *fact*
 * (lib/db/import-facts-repo.ts); the document is rebuilt from all facts about
 * the invoice (`buildFinancialDocument`), so the result is the same whatever
 * the order, and importing a file twice changes nothing.
 */
import type { CanceledRecord, CancellationRecordStatus, ConceptKind, FinancialDocument, InvoiceConcept, PaymentRecord, TaxLine } from '../model/financial-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { mxnCents, rateOf } from '../money/currency.ts';
import { documentBalance } from '../finance/balance.ts';
import { isInEffect } from '../finance/cancellation.ts';
import { FOREIGN_RFC, PUBLIC_RFC } from '../tax/rfc.ts';
import { businessDaysDeadline } from '../time/business-days.ts';
import type { AcknowledgedFolio, CancellationMotive, Cfdi, CfdiConcept, RequestedFolio } from './cfdi.ts';
import { reject } from './rejection.ts';

/** Status codes written on imported documents (the tenant's label table gets '9' when missing). */
export const IMPORT_STATUS = { invoiced: 4, paid: 6, cancelled: 9 } as const;

export const financialDocId = (tenant: string, uuid: string): string => `${tenant}-CFDI-${uuid}`;

export type InvoiceBase = Omit<FinancialDocument, 'payments' | 'canceled' | 'status' | 'lastUpdate'>;

export interface InvoiceFact {
  kind: 'invoice';
  uuid: string;
  certifiedAt: number;
  base: InvoiceBase;
}

export interface PaymentFact {
  kind: 'payment';
  uuid: string;
  /** One entry per DoctoRelacionado, in file order. */
  records: { invoiceUuid: string; seq: number; date: number; amount: number; balanceBefore: number; balanceAfter: number; exchangeRate?: number }[];
}

export interface CreditNoteFact {
  kind: 'creditNote';
  uuid: string;
  invoiceUuid: string;
  date: number;
  amount: number;
}

/** The SAT's acknowledgement about one CFDI. */
export interface CancellationFact {
  kind: 'cancellation';
  /** The CFDI the cancellation is of. */
  uuid: string;
  /** The acknowledgement's Fecha. */
  date: number;
  /** Only this service's earlier acknowledgement form repeats the request's motive. */
  motive: CancellationMotive | null;
  replacementUuid: string | null;
  /** EstatusUUID. Absent on facts stored before it was kept: they were recorded as cancellations in effect. */
  code?: AcknowledgedFolio['code'];
}

/** A taxpayer's cancellation request about one CFDI: motive and replacement, no effect by itself. */
export interface CancellationRequestFact {
  kind: 'cancellationRequest';
  uuid: string;
  /** The request's Fecha. */
  date: number;
  motive: CancellationMotive;
  replacementUuid: string | null;
}

/** The SAT status service's answer about an invoice (PUT /api/financial-docs/{id}/cancellation). */
export interface CancellationStatusFact {
  kind: 'cancellationStatus';
  uuid: string;
  estado: SatEstado;
  estatusCancelacion: SatEstatusCancelacion;
  /** When the SAT answered: the status takes effect then. */
  date: number;
}

export type SatEstado = 'Vigente' | 'Cancelado';
export type SatEstatusCancelacion = 'En proceso' | 'Solicitud rechazada' | 'Cancelado sin aceptación' | 'Cancelado con aceptación' | 'Plazo vencido';

/** What each status-service answer means (the valid Estado ↔ EstatusCancelacion pairs). */
export const SAT_ANSWERS: Readonly<Record<SatEstatusCancelacion, { estado: SatEstado; status: CancellationRecordStatus }>> = {
  'En proceso': { estado: 'Vigente', status: 'pending' },
  'Solicitud rechazada': { estado: 'Vigente', status: 'rejected' },
  'Cancelado sin aceptación': { estado: 'Cancelado', status: 'accepted' },
  'Cancelado con aceptación': { estado: 'Cancelado', status: 'accepted' },
  'Plazo vencido': { estado: 'Cancelado', status: 'expired' },
};

/** Facts about a CFDI's cancellation, whatever their kind. */
export type CancellationInfoFact = CancellationFact | CancellationRequestFact | CancellationStatusFact;

export type FinancialFact = InvoiceFact | PaymentFact | CreditNoteFact | CancellationInfoFact;

const FUEL_CODES = new Set(['15101505', '15101514', '15101515']);

/** What a concept bills (drives which tax base it belongs to; see lib/tax/reconcile.ts). */
export function conceptKind(c: Pick<CfdiConcept, 'code' | 'description' | 'objetoImp'>): ConceptKind {
  const d = c.description.toLowerCase();
  if (c.objetoImp === '01' && (FUEL_CODES.has(c.code) || /faltante|merma/.test(d))) return 'shortage';
  if (c.objetoImp === '01' && /indemniz/.test(d)) return 'indemnity';
  if (c.code.startsWith('781018')) return 'freight';
  if (c.code === '95111603' || /caseta|peaje/.test(d)) return 'toll';
  if (c.code === '78141500' || /estad[ií]a/.test(d)) return 'demurrage';
  if (/maniobra/.test(d)) return 'handling';
  return 'other';
}

const sumC = (xs: number[]): number => xs.reduce((s, x) => s + toCents(x), 0);
const ivaAtRate = (lines: readonly TaxLine[]): TaxLine[] => lines.filter((l) => l.tax === 'IVA' && l.factor === 'Tasa');

/** A concept with every tax it declares; vat/retention (and their rates) are its IVA, as the summary fields read them. */
function mapConcept(c: CfdiConcept): InvoiceConcept {
  const vat = ivaAtRate(c.transfers);
  const ret = ivaAtRate(c.retentions);
  return {
    code: c.code,
    kind: conceptKind(c),
    desc: c.description,
    quantity: c.quantity,
    unitPrice: c.unitPrice,
    amount: c.amount,
    discount: c.discount,
    objetoImp: c.objetoImp,
    vatRate: vat[0]?.rate ?? 0,
    vat: fromCents(sumC(vat.map((l) => l.amount))),
    retentionRate: ret[0]?.rate ?? 0,
    retention: fromCents(sumC(ret.map((l) => l.amount))),
    taxes: { transfers: c.transfers.map((l) => ({ ...l })), retentions: c.retentions.map((l) => ({ ...l })) },
  };
}

/** An invoice (type I) as the invoice fact: the stored document without payments, cancellations or status. */
export function invoiceFact(tenant: string, cfdi: Cfdi): InvoiceFact {
  const concepts = cfdi.concepts.map(mapConcept);
  const id = financialDocId(tenant, cfdi.uuid);
  const vatC = sumC(concepts.map((c) => c.vat));
  const retC = sumC(concepts.map((c) => c.retention));
  const subC = toCents(cfdi.subTotal);
  const totC = toCents(cfdi.total);
  const freight = concepts.filter((c) => c.kind === 'freight');
  // Tariff per litre: the unit price of the first freight line billed by the litre.
  const litreFreight = concepts.find((c, i) => c.kind === 'freight' && cfdi.concepts[i]!.unit === 'LTR');
  const num = cfdi.serie && cfdi.folio ? `${cfdi.serie}-${cfdi.folio}` : cfdi.folio || cfdi.uuid.slice(0, 8);
  const base: InvoiceBase = {
    _id: id,
    id,
    company: tenant,
    client: cfdi.receiver.rfc,
    clientName: cfdi.receiver.name,
    date: cfdi.date,
    timestamp: cfdi.date,
    currency: cfdi.currency,
    ...(cfdi.currency === 'MXN' ? {} : { exchangeRate: cfdi.exchangeRate }),
    ...(cfdi.taxTotals ? { taxTotals: { transferred: cfdi.taxTotals.transferred, retained: cfdi.taxTotals.retained } } : {}),
    iSub: fromCents(subC),
    iTot: fromCents(totC),
    iTax1: fromCents(vatC),
    iTax2: fromCents(retC),
    iDesc: fromCents(toCents(cfdi.discount)),
    iFalt: fromCents(sumC(concepts.filter((c) => c.kind === 'shortage').map((c) => c.amount))),
    tarif1: litreFreight?.unitPrice ?? 0,
    statusAuth: true,
    ref1: '',
    ref2: cfdi.cartaPorte?.idCcp ?? '',
    invoice: {
      id: `${tenant}-INV-${cfdi.uuid}`,
      num,
      serie: cfdi.serie,
      uuid: cfdi.uuid,
      date: cfdi.date,
      satCertDate: new Date(cfdi.certifiedAt).toISOString(),
      paymentMethod: cfdi.paymentMethod ?? 'PUE',
      iSub: fromCents(subC),
      iTot: fromCents(totC),
      iTax1: fromCents(vatC),
      iTax2: fromCents(retC),
      ship: fromCents(sumC(freight.map((c) => c.amount))),
      toll: fromCents(sumC(concepts.filter((c) => c.kind === 'toll').map((c) => c.amount))),
      source: 'import',
      user: 'import',
      pdf: `cfdi/${tenant}/${cfdi.uuid}.pdf`,
      xml: `cfdi/${tenant}/${cfdi.uuid}.xml`,
      concepts,
    },
  };
  return { kind: 'invoice', uuid: cfdi.uuid, certifiedAt: cfdi.certifiedAt, base };
}

/**
 * A payment complement (type P): one record per paid document. Amounts are in the document's
 * currency (ImpPagado in MonedaDR, which the SAT requires to be the paid invoice's Moneda); a
 * document in another currency also gets the MXN rate of the payment date.
 */
export function paymentFact(cfdi: Cfdi): PaymentFact {
  const records: PaymentFact['records'] = [];
  for (const p of cfdi.payments) {
    for (const d of p.docs) {
      records.push({
        invoiceUuid: d.invoiceUuid,
        seq: records.length + 1,
        date: p.date,
        amount: d.paid,
        balanceBefore: d.balanceBefore,
        balanceAfter: d.balanceAfter,
        ...(d.currency === 'MXN' ? {} : { exchangeRate: d.exchangeRate }),
      });
    }
  }
  return { kind: 'payment', uuid: cfdi.uuid, records };
}

/** A credit note (type E) related with TipoRelacion 01 to exactly one invoice: its Total reduces that invoice's balance. */
export function creditNoteFact(cfdi: Cfdi): CreditNoteFact {
  const rel = cfdi.related.filter((r) => r.relation === '01');
  const uuids = rel.flatMap((r) => r.uuids);
  if (uuids.length === 0) return reject('credit note (E) without CfdiRelacionados TipoRelacion 01: which invoice it credits is unknown');
  if (uuids.length > 1) return reject(`credit note (E) relates ${uuids.length} invoices; it cannot be apportioned, issue one per invoice`);
  return { kind: 'creditNote', uuid: cfdi.uuid, invoiceUuid: uuids[0]!, date: cfdi.date, amount: cfdi.total };
}

/** The SAT's acknowledgement: one fact per UUID (the codes that refuse a cancellation were refused when read). */
export function cancellationFacts(folios: readonly AcknowledgedFolio[], date: number): CancellationFact[] {
  return folios.map((f) => ({ kind: 'cancellation', uuid: f.uuid, date, motive: f.motive, replacementUuid: f.replacementUuid, code: f.code }));
}

/** A taxpayer's request: one fact per UUID. */
export function cancellationRequestFacts(folios: readonly RequestedFolio[], date: number): CancellationRequestFact[] {
  return folios.map((f) => ({ kind: 'cancellationRequest', uuid: f.uuid, date, motive: f.motive, replacementUuid: f.replacementUuid }));
}

/** Invoices whose stored document a fact changes (cancellations: resolved by the caller). */
export function invoicesOf(fact: FinancialFact): string[] {
  switch (fact.kind) {
    case 'invoice':
      return [fact.uuid];
    case 'payment':
      return [...new Set(fact.records.map((r) => r.invoiceUuid))];
    case 'creditNote':
      return [fact.invoiceUuid];
    case 'cancellation':
    case 'cancellationRequest':
    case 'cancellationStatus':
      return [];
  }
}

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
}

/** Groups cancellation facts by the UUID they are about. */
export function cancellationFactsByUuid(facts: readonly CancellationInfoFact[]): Map<string, CancellationFacts> {
  const by = new Map<string, CancellationFacts>();
  for (const f of facts) {
    const entry = by.get(f.uuid) ?? {};
    if (f.kind === 'cancellationRequest') entry.request = f;
    else if (f.kind === 'cancellation') entry.acknowledgement = f;
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
  const { request, acknowledgement: ack, answer } = facts;
  if (!request && !ack && !answer) return null;
  const requestedAt = request?.date ?? ack?.date ?? answer!.date;
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
    move = { status: SAT_ANSWERS[answer.estatusCancelacion].status, date: answer.date, source: 'status-service', sat: answer.estatusCancelacion };
  }
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
  type Draft = { kind: PaymentRecord['kind']; uuid: string; seq: number; date: number; amount: number; before?: number; after?: number; exchangeRate?: number };
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
        kind: 'payment', uuid: p.uuid, seq: r.seq, date: r.date, amount: r.amount, before: r.balanceBefore, after: r.balanceAfter,
        ...(r.exchangeRate === undefined ? {} : { exchangeRate: r.exchangeRate }),
      });
    }
  }
  for (const n of creditNotes) if (n.invoiceUuid === invoice.uuid) drafts.push({ kind: 'creditNote', uuid: n.uuid, seq: 1, date: n.date, amount: n.amount });
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
  doc.lastUpdate = new Date(last).toISOString();
  return doc;
}

