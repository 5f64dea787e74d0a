/**
 * Pure mapping of imported CFDI into the stored FinancialDocument shape (the
 * one the demo generator writes, lib/model/financial-document.ts).
 *
 * An invoice's stored document depends on several files that may arrive in
 * any order: the invoice (I), its payment complements (P), credit notes (E,
 * relation 01) and cancellation acknowledgements. Each file is kept as a
 * *fact* (lib/db/import-facts-repo.ts); the document is rebuilt from all facts
 * about the invoice (`buildFinancialDocument`), so the result is the same
 * whatever the order, and importing a file twice changes nothing.
 */
import type { CanceledRecord, ConceptKind, FinancialDocument, InvoiceConcept, PaymentRecord } from '../model/financial-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { documentBalance } from '../finance/balance.ts';
import type { Cfdi, CfdiConcept, CancellationFolio } from './cfdi.ts';
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
  records: { invoiceUuid: string; seq: number; date: number; amount: number; balanceBefore: number; balanceAfter: number }[];
}

export interface CreditNoteFact {
  kind: 'creditNote';
  uuid: string;
  invoiceUuid: string;
  date: number;
  amount: number;
}

export interface CancellationFact {
  kind: 'cancellation';
  /** The cancelled CFDI. */
  uuid: string;
  date: number;
  motive: CancellationFolio['motive'];
  replacementUuid: string | null;
}

export type FinancialFact = InvoiceFact | PaymentFact | CreditNoteFact | CancellationFact;

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

function mapConcept(c: CfdiConcept): InvoiceConcept {
  const vat = c.transfers[0];
  const ret = c.retentions[0];
  return {
    code: c.code,
    kind: conceptKind(c),
    desc: c.description,
    quantity: c.quantity,
    unitPrice: c.unitPrice,
    amount: c.amount,
    discount: c.discount,
    objetoImp: c.objetoImp,
    vatRate: vat?.rate ?? 0,
    vat: vat?.amount ?? 0,
    retentionRate: ret?.rate ?? 0,
    retention: ret?.amount ?? 0,
  };
}

const sumC = (xs: number[]): number => xs.reduce((s, x) => s + toCents(x), 0);

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

/** A payment complement (type P): one record per paid document. Amounts are in the document's currency (ImpPagado). */
export function paymentFact(cfdi: Cfdi): PaymentFact {
  const records: PaymentFact['records'] = [];
  for (const p of cfdi.payments) {
    for (const d of p.docs) {
      if (d.currency !== 'MXN') reject(`DoctoRelacionado ${d.invoiceUuid}: MonedaDR ${d.currency}; only MXN invoices are imported`);
      records.push({ invoiceUuid: d.invoiceUuid, seq: records.length + 1, date: p.date, amount: d.paid, balanceBefore: d.balanceBefore, balanceAfter: d.balanceAfter });
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

export function cancellationFacts(folios: CancellationFolio[], date: number): CancellationFact[] {
  return folios.map((f) => {
    if (f.status !== null && f.status !== '201' && f.status !== '202') {
      reject(`SAT did not accept the cancellation of ${f.uuid} (EstatusUUID ${f.status})`);
    }
    return { kind: 'cancellation', uuid: f.uuid, date, motive: f.motive, replacementUuid: f.replacementUuid };
  });
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
      return [];
  }
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
  cancellations: readonly CancellationFact[],
): FinancialDocument {
  const tenantPrefix = invoice.base.company;
  const cancelBy = new Map(cancellations.map((c) => [c.uuid, c]));
  type Draft = { kind: PaymentRecord['kind']; uuid: string; seq: number; date: number; amount: number; before?: number; after?: number };
  const drafts: Draft[] = [];
  // PUE: paid in one exhibition when issued, so no complement ever comes (SAT issues none for
  // PUE). Its receipt is a payment record at the invoice date, as the demo data has, so balances,
  // lists and forecasts treat it as paid.
  // A cancelled invoice was never collectable: no receipt.
  if (invoice.base.invoice.paymentMethod === 'PUE' && !cancelBy.has(invoice.uuid)) {
    const total = invoice.base.iTot;
    drafts.push({ kind: 'payment', uuid: invoice.uuid, seq: 0, date: invoice.base.date, amount: total, before: total, after: 0 });
  }
  for (const p of payments) {
    for (const r of p.records) {
      if (r.invoiceUuid !== invoice.uuid) continue;
      drafts.push({ kind: 'payment', uuid: p.uuid, seq: r.seq, date: r.date, amount: r.amount, before: r.balanceBefore, after: r.balanceAfter });
    }
  }
  for (const n of creditNotes) if (n.invoiceUuid === invoice.uuid) drafts.push({ kind: 'creditNote', uuid: n.uuid, seq: 1, date: n.date, amount: n.amount });
  drafts.sort((a, b) => a.date - b.date || a.uuid.localeCompare(b.uuid) || a.seq - b.seq);

  // Payment complements declare their balances; credit notes continue the chain of valid records.
  let balanceC = toCents(invoice.base.iTot);
  const records: PaymentRecord[] = drafts.map((d) => {
    const canceled = cancelBy.has(d.uuid);
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
    };
  });

  const canceled: CanceledRecord[] = [];
  const own = cancelBy.get(invoice.uuid);
  if (own) canceled.push(cancelRecord(tenantPrefix, 'invoice', own));
  for (const uuid of new Set(drafts.map((d) => d.uuid))) {
    const c = cancelBy.get(uuid);
    if (c) canceled.push(cancelRecord(tenantPrefix, 'payment', c));
  }
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

const cancelRecord = (tenant: string, target: CanceledRecord['target'], c: CancellationFact): CanceledRecord => ({
  id: `${tenant}-CAN-${c.uuid}`,
  target,
  uuid: c.uuid,
  date: c.date,
  motive: c.motive,
  replacementUuid: c.replacementUuid,
});
