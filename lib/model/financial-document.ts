/**
 * A financial document as stored in the `financialDocs` collection: one issued
 * CFDI invoice together with its payments and cancellation records. Field names
 * follow the carrier's legacy back office (section 2.3 of the interface), so the
 * `detail=full` form can return the stored document unchanged.
 *
 * Money is in the document's currency (`currency`, the CFDI Moneda; MXN when
 * absent) with two decimals, as the CFDI states it; `exchangeRate` (TipoCambio)
 * converts it to MXN for every report (lib/money/currency.ts). Instants are
 * epoch milliseconds.
 *
 * What is stored is a `StoredFinancialDocument`: these fields plus the ones the
 * service derives from them on every write (computed pattern), which are never
 * returned to clients.
 */

/**
 * SAT "ObjetoImp" (c_ObjetoImp): 01 not subject to tax (shortage, indemnity), 02 subject,
 * 03 subject without itemised tax, 04 subject but causes none, 05–08 the 2024 additions
 * (IVA credit PODEBI, not subject to IVA, IVA/IEPS combinations). Which base a concept
 * belongs to is decided by the tax lines it declares (lib/tax/tax-lines.ts).
 */
export type ObjetoImp = '01' | '02' | '03' | '04' | '05' | '06' | '07' | '08';

/** A CFDI tax: ISR (SAT code 001), IVA (002), IEPS (003). */
export type TaxName = 'ISR' | 'IVA' | 'IEPS';
export type TaxFactor = 'Tasa' | 'Cuota' | 'Exento';

/**
 * One transferred or retained tax of a concept (cfdi:Traslado / cfdi:Retencion), as the CFDI
 * states it, in the document's currency. An `Exento` transfer has a base and no rate or amount.
 */
export interface TaxLine {
  tax: TaxName;
  factor: TaxFactor;
  /** TasaOCuota (0.160000, 0.0125, …; a Cuota is per unit of the base); null for Exento. */
  rate: number | null;
  base: number;
  /** Importe; 0 for Exento. */
  amount: number;
}

/** Every tax a concept declares: transfers (trasladados) and retentions (retenidos). */
export interface ConceptTaxes {
  transfers: TaxLine[];
  retentions: TaxLine[];
}

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
  /** Rate of the IVA transferred at a Tasa (0.16, 0.08, 0); 0 when none is (not subject, exempt). */
  vatRate: number;
  /** Σ IVA transferred on the concept (every IVA Tasa transfer). */
  vat: number;
  /** Rate of the IVA retained (0.04 on road freight, 0.106667 two thirds of 16%, …); 0 when none. */
  retentionRate: number;
  /** Σ IVA retained on the concept. */
  retention: number;
  /**
   * Every tax of the line (IVA, ISR, IEPS; Tasa, Cuota, Exento) as the CFDI declares it.
   * Absent on documents written before it existed: their only taxes are the IVA of
   * `vatRate`/`vat` and `retentionRate`/`retention` (conceptTaxes() in lib/tax/tax-lines.ts reads both).
   */
  taxes?: ConceptTaxes;
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
  /** Comprobante@Version of an imported CFDI (3.3 before 2023-04-01, else 4.0); absent on documents not imported from XML. */
  cfdiVersion?: '3.3' | '4.0';
  /** CartaPorte@Version when the invoice carries a Carta Porte complement (1.0, 2.0, 3.0, 3.1). */
  cartaPorteVersion?: '1.0' | '2.0' | '3.0' | '3.1';
  iSub: number;
  iTot: number;
  /** Σ IVA transferred (as the top-level iTax1). */
  iTax1: number;
  /** Σ IVA retained (as the top-level iTax2). */
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
  /** Pagos@Version of a payment complement (1.0 on CFDI 3.3, 2.0 on 4.0); absent for credit notes, PUE receipts and older records. */
  pagosVersion?: '1.0' | '2.0';
  /**
   * MXN per unit of the invoice's currency on the payment date (TipoCambioP ÷ EquivalenciaDR of
   * the complement), for documents in another currency; absent: the invoice's own rate.
   */
  exchangeRate?: number;
  /**
   * A credit note's own taxes (Σ its concepts' IVA transferred, IVA and ISR retained), in the invoice's currency as
   * `amount` is: what it gives back of the taxes (LIVA art. 7). Absent for payments and for notes imported before
   * they were kept (then the invoice's taxes in proportion stand in).
   */
  taxes?: { vat: number; vatRetained: number; isrRetained: number };
}

/**
 * Where the invoice's cancellation stands before the SAT (Facturapi's `cancellation_status`):
 * `none` no request; `pending` requested, not in effect (the receiver has 3 business days to
 * answer); `accepted` cancelled (without acceptance, or accepted by the receiver); `rejected`
 * the receiver refused, the invoice stays valid; `expired` cancelled by tacit acceptance (the
 * receiver did not answer in 3 business days: the SAT's "Plazo vencido"). Only `accepted` and
 * `expired` take an invoice out of revenue, balances and taxes (lib/finance/cancellation.ts).
 */
export type CancellationStatus = 'none' | 'pending' | 'accepted' | 'rejected' | 'expired';
export type CancellationRecordStatus = Exclude<CancellationStatus, 'none'>;
/** What moved a record to its status: the taxpayer's request, the SAT's acknowledgement, the SAT status service, or the SAT's bulk-download metadata. */
export type CancellationSource = 'request' | 'acknowledgement' | 'status-service' | 'bulk-metadata';

export interface CanceledRecord {
  id: string;
  /** What the cancellation is of: the invoice itself or one of its payment records. */
  target: 'invoice' | 'payment';
  /** UUID of the CFDI the cancellation is of. */
  uuid: string;
  /** When the record's status took effect, epoch ms (for `accepted`/`expired`: the cancellation instant). */
  date: number;
  /**
   * SAT motive 01 (replaced), 02 (errors), 03 (did not happen), 04 (global invoice); null when
   * only the SAT's acknowledgement is known (it does not repeat the motive of the request).
   */
  motive: '01' | '02' | '03' | '04' | null;
  /** Replacement CFDI UUID, only with motive 01. */
  replacementUuid: string | null;
  /** Absent on records written before statuses existed, which record cancellations in effect: `accepted`. */
  status?: CancellationRecordStatus;
  /** When the cancellation was requested (the request's or else the acknowledgement's Fecha), epoch ms. */
  requestedAt?: number;
  /** What set `status`. */
  statusSource?: CancellationSource;
  /** The SAT's own words for it: EstatusUUID of the acknowledgement (201, 202) or EstatusCancelacion of the status service. */
  satStatus?: string | null;
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
  /** TipoCambio: MXN per unit of `currency`; absent = 1 (MXN). Reports convert every amount with it. */
  exchangeRate?: number;
  iSub: number;
  iTot: number;
  /** Σ IVA transferred at any rate (16%, border 8%, 0%): what `amounts.vat16` reports. */
  iTax1: number;
  /** Σ IVA retained at any rate (4% on freight, two thirds of 16% …): what `amounts.vatRetention4` reports. */
  iTax2: number;
  /**
   * The CFDI's own document totals (Comprobante/Impuestos: TotalImpuestosTrasladados and
   * TotalImpuestosRetenidos, every tax); absent on documents written before it existed and on
   * CFDIs without that node (their concepts' taxes are the totals).
   */
  taxTotals?: { transferred: number; retained: number };
  /**
   * The local taxes complement's totals (implocal: state taxes outside Comprobante/Impuestos, which
   * the Total adds and takes off); absent without that complement and on documents imported before
   * it was read.
   */
  localTaxes?: { transferred: number; retained: number };
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
 * (lib/finance/derived-fields-backfill.ts). Repositories project these fields out of
 * whatever they return to clients.
 */
export interface StoredFinancialDocument extends FinancialDocument {
  /**
   * The document's payment state when it was written, so the list's `paymentStatus`
   * and `cancelled` filters are an index look-up (`tenant_payment_status_date`)
   * instead of a balance computed for every document of the tenant (issue 9).
   */
  derivedPaymentStatus: PaymentStatus;
  /** The invoice's cancellation status when it was written (`cancellationStatus=` filter, `tenant_cancellation_status_date`). */
  derivedCancellationStatus: CancellationStatus;
}
