/**
 * Pure mapping of imported CFDI into the ledger's facts (lib/finance/ledger/facts.ts): an
 * invoice, a payment complement, a credit note, a cancellation request or acknowledgement each
 * become a fact; the ledger stores them and rebuilds each invoice's stored document
 * (lib/model/financial-document.ts, the shape the demo generator writes) from all facts about it
 * (lib/finance/ledger/documents.ts `buildFinancialDocument`).
 */
import type { ConceptKind, InvoiceConcept, TaxLine } from '../model/financial-document.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { groupedCents, retentionGroup, transferGroup } from '../tax/tax-lines.ts';
import type { AcknowledgedFolio, Cfdi, CfdiConcept, RequestedFolio } from './cfdi.ts';
import { reject } from './rejection.ts';
import { originalKey } from '../originals/original-record.ts';
import {
  financialDocId,
  type CancellationFact,
  type CancellationRequestFact,
  type CreditNoteFact,
  type CreditNoteTaxes,
  type InvoiceBase,
  type InvoiceFact,
  type PaymentFact,
} from '../finance/ledger/facts.ts';

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

/**
 * An invoice (type I) as the invoice fact: the stored document without payments, cancellations or status.
 * `sha256`: of the file whose bytes lib/originals keeps (its `invoice.xml` names it); absent, the legacy storage key.
 */
export function invoiceFact(tenant: string, cfdi: Cfdi, sha256?: string): InvoiceFact {
  const concepts = cfdi.concepts.map(mapConcept);
  const id = financialDocId(tenant, cfdi.uuid);
  // The document's IVA as its Comprobante/Impuestos states it: per group the rounded sum of the concepts' lines (a
  // concept's own vat/retention are its lines rounded, and lines of 6 decimals rounded first can miss it by cents).
  const vatC = groupedCents(ivaAtRate(cfdi.concepts.flatMap((c) => c.transfers)), transferGroup, 'amount');
  const retC = groupedCents(ivaAtRate(cfdi.concepts.flatMap((c) => c.retentions)), retentionGroup, 'amount');
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
    ...(cfdi.localTaxes ? { localTaxes: { transferred: cfdi.localTaxes.transferred, retained: cfdi.localTaxes.retained } } : {}),
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
      cfdiVersion: cfdi.version,
      ...(cfdi.cartaPorte ? { cartaPorteVersion: cfdi.cartaPorte.version } : {}),
      iSub: fromCents(subC),
      iTot: fromCents(totC),
      iTax1: fromCents(vatC),
      iTax2: fromCents(retC),
      ship: fromCents(sumC(freight.map((c) => c.amount))),
      toll: fromCents(sumC(concepts.filter((c) => c.kind === 'toll').map((c) => c.amount))),
      source: 'import',
      user: 'import',
      pdf: `cfdi/${tenant}/${cfdi.uuid}.pdf`,
      xml: sha256 ? originalKey(cfdi.uuid) : `cfdi/${tenant}/${cfdi.uuid}.xml`,
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
  return { kind: 'payment', uuid: cfdi.uuid, ...(cfdi.pagosVersion ? { pagosVersion: cfdi.pagosVersion } : {}), records };
}

/** A credit note (type E) related with TipoRelacion 01 to exactly one invoice: its Total reduces that invoice's balance. */
export function creditNoteFact(cfdi: Cfdi): CreditNoteFact {
  const rel = cfdi.related.filter((r) => r.relation === '01');
  // One invoice named twice (in two CfdiRelacionados 01, or twice in one) is still one invoice (UUIDs are read upper-cased).
  const uuids = [...new Set(rel.flatMap((r) => r.uuids))];
  if (uuids.length === 0) return reject('credit note (E) without CfdiRelacionados TipoRelacion 01: which invoice it credits is unknown');
  if (uuids.length > 1) return reject(`credit note (E) relates ${uuids.length} invoices; it cannot be apportioned, issue one per invoice`);
  return creditNoteOf(cfdi, uuids[0]!);
}

/** A credit note's fact, issued or received alike: its Total in its own currency, with its rate and its own taxes. */
export const creditNoteOf = (cfdi: Cfdi, invoiceUuid: string): CreditNoteFact => ({
  kind: 'creditNote',
  uuid: cfdi.uuid,
  invoiceUuid,
  date: cfdi.date,
  amount: cfdi.total,
  currency: cfdi.currency,
  exchangeRate: cfdi.exchangeRate,
  taxes: creditNoteTaxes(cfdi.concepts),
});

/**
 * The note's IVA transferred, IVA and ISR retained as its Comprobante/Impuestos states them: per group (transfers by
 * tax, factor and rate; retentions by tax) the rounded sum of its concepts' lines' Importe.
 */
function creditNoteTaxes(concepts: readonly CfdiConcept[]): CreditNoteTaxes {
  const transfers = concepts.flatMap((c) => c.transfers);
  const retentions = concepts.flatMap((c) => c.retentions);
  const of = (lines: readonly TaxLine[], tax: TaxLine['tax'], groupOf: (l: TaxLine) => string): number =>
    fromCents(
      groupedCents(
        lines.filter((l) => l.tax === tax),
        groupOf,
        'amount',
      ),
    );
  return {
    vat: of(transfers, 'IVA', transferGroup),
    vatRetained: of(retentions, 'IVA', retentionGroup),
    isrRetained: of(retentions, 'ISR', retentionGroup),
  };
}

/** The SAT's acknowledgement: one fact per UUID (the codes that refuse a cancellation were refused when read). */
export function cancellationFacts(folios: readonly AcknowledgedFolio[], date: number): CancellationFact[] {
  return folios.map((f) => ({ kind: 'cancellation', uuid: f.uuid, date, motive: f.motive, replacementUuid: f.replacementUuid, code: f.code }));
}

/** A taxpayer's request: one fact per UUID. */
export function cancellationRequestFacts(folios: readonly RequestedFolio[], date: number): CancellationRequestFact[] {
  return folios.map((f) => ({ kind: 'cancellationRequest', uuid: f.uuid, date, motive: f.motive, replacementUuid: f.replacementUuid }));
}
