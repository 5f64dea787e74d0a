/**
 * A financial document as stored in the `financialDocs` collection: one issued
 * CFDI invoice together with its payments and cancellation records. Field names
 * follow the carrier's legacy back office (section 2.3 of the interface), so the
 * `detail=full` form can return the stored document unchanged.
 *
 * Money is in MXN pesos with two decimals; instants are epoch milliseconds.
 *
 * What is stored is a `StoredFinancialDocument`: these fields plus the ones the
 * service derives from them on every write (computed pattern), which are never
 * returned to clients.
 */

/** SAT "ObjetoImp": 01 not subject to tax (shortage, indemnity), 02 subject. */
export type ObjetoImp = '01' | '02' | '03';

/** What a concept line bills; drives which tax base it belongs to. */
export type ConceptKind = 'freight' | 'shortage' | 'indemnity' | 'demurrage' | 'handling' | 'toll' | 'other';

export interface InvoiceConcept {
  /** SAT product/service key, e.g. 78101802 road freight. */
  code: string;
  kind: ConceptKind;
  desc: string;
  quantity: number;
  unitPrice: number;
  /** Importe: quantity × unit price, before discount. */
  amount: number;
  discount: number;
  objetoImp: ObjetoImp;
  /** Transferred VAT rate (0.16, 0.08 or 0 when not subject). */
  vatRate: number;
  /** Transferred VAT declared on the concept. */
  vat: number;
  /** Retained VAT rate (0.04 on freight for company clients, else 0). */
  retentionRate: number;
  /** Retained VAT declared on the concept. */
  retention: number;
}

export interface InvoiceSubdocument {
  /** Internal invoice id. */
  id: string;
  /** Folio (serie + number), internal numbering. */
  num: string;
  serie: string;
  /** Fiscal UUID from the SAT stamp (TimbreFiscalDigital). */
  uuid: string;
  /** Emission instant, epoch ms. */
  date: number;
  /** FechaTimbrado: SAT certification instant, ISO 8601. */
  satCertDate: string;
  /** PUE paid in one exhibition, PPD deferred / in instalments. */
  paymentMethod: 'PUE' | 'PPD';
  iSub: number;
  iTot: number;
  /** Transferred VAT. */
  iTax1: number;
  /** Retained VAT (4%). */
  iTax2: number;
  /** Freight amount billed (sum of freight concepts). */
  ship: number;
  toll: number;
  source: string;
  user: string;
  /** Storage keys of the PDF and XML renditions, resolved against DOCUMENT_BASE_URL. */
  pdf: string;
  xml: string;
  concepts: InvoiceConcept[];
}

export interface PaymentRecord {
  id: string;
  /** `payment` = CFDI type P complement; `creditNote` = CFDI type E (relation 01). */
  kind: 'payment' | 'creditNote';
  uuid: string;
  /** Payment instant, epoch ms. */
  date: number;
  amount: number;
  /** ImpSaldoAnt / ImpSaldoInsoluto for payment complements. */
  balanceBefore: number;
  balanceAfter: number;
  /** A cancelled payment record does not reduce the balance. */
  canceled: boolean;
}

export interface CanceledRecord {
  id: string;
  /** What was cancelled: the invoice itself or one of its payment records. */
  target: 'invoice' | 'payment';
  /** UUID of the cancelled CFDI. */
  uuid: string;
  /** Cancellation instant, epoch ms. */
  date: number;
  /** SAT motive 01 (replaced), 02 (errors), 03 (did not happen), 04 (global invoice). */
  motive: '01' | '02' | '03' | '04';
  /** Replacement CFDI UUID, only with motive 01. */
  replacementUuid: string | null;
}

export interface FinancialDocument {
  _id: string;
  id: string;
  /** Tenant RFC (issuer). */
  company: string;
  /** Client RFC (receiver). */
  client: string;
  clientName: string;
  /** Fiscal emission instant, epoch ms (the list is sorted on it). */
  date: number;
  /** Record timestamp, epoch ms (sort tie-breaker after date). */
  timestamp: number;
  lastUpdate: string;
  /** CFDI Moneda (ISO 4217) when stored; absent on the legacy shape, whose amounts are MXN. */
  currency?: string;
  iSub: number;
  iTot: number;
  /** Transferred VAT 16%. */
  iTax1: number;
  /** VAT retention 4%. */
  iTax2: number;
  /** Discount. */
  iDesc: number;
  /** Shortage (faltante/merma) deduction: a not-subject concept. */
  iFalt: number;
  /** Tariff per litre applied to the freight. */
  tarif1: number;
  /** Internal workflow status code (4 Facturado, 6 Pagado, ...). */
  status: number;
  statusAuth: boolean;
  /** Relation reference (ref1_relacion). */
  ref1: string;
  /** Cedula reference (ref2_cedula). */
  ref2: string;
  invoice: InvoiceSubdocument;
  payments: PaymentRecord[];
  canceled: CanceledRecord[];
}

/**
 * Payment state of an invoice: 'paid' (nothing pending), 'partial' (something paid
 * or credited, something pending), 'unpaid', or 'cancelled' (neither paid nor owed).
 * The rule is `paymentStatus()` in lib/finance/balance.ts.
 */
export type PaymentStatus = 'paid' | 'partial' | 'unpaid' | 'cancelled';

/**
 * A financial document as the `financialDocs` collection holds it. Every writer
 * builds it with `withDerivedFields()` (lib/finance/derived-fields.ts); documents
 * written before a field existed get it from the start-up backfill
 * (lib/db/derived-fields-backfill.ts). Repositories project these fields out of
 * whatever they return to clients.
 */
export interface StoredFinancialDocument extends FinancialDocument {
  /**
   * The document's payment state when it was written, so the list's `paymentStatus`
   * and `cancelled` filters are an index look-up (`tenant_payment_status_date`)
   * instead of a balance computed for every document of the tenant (issue 9).
   */
  derivedPaymentStatus: PaymentStatus;
}
