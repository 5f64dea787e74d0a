/**
 * The rows of received CFDIs (lib/received): the facts each imported file states (collection
 * `receivedFacts`) and the document rebuilt from all facts about one received invoice
 * (collection `receivedDocs`). Kept apart from the issued side (financialDocs, importFacts):
 * nothing that reads revenue ever reads these (docs/domain.md, "Received CFDIs").
 */
import type { CancellationRecordStatus, CancellationStatus, TaxLine } from '../model/financial-document.ts';
import type { ReceivedCategory } from '../model/tenant-settings.ts';
import type { CancellationFact, CancellationMetadataFact, CancellationRequestFact, CreditNoteTaxes } from '../finance/ledger/facts.ts';

export const receivedDocId = (tenant: string, uuid: string): string => `${tenant}-RCFDI-${uuid}`;

export interface ReceivedConceptFact {
  code: string;
  description: string;
  quantity: number;
  unit: string;
  unitPrice: number;
  amount: number;
  discount: number;
  transfers: TaxLine[];
  retentions: TaxLine[];
}

/** A received invoice (type I): the supplier (Emisor) billed the tenant (Receptor). */
export interface ReceivedInvoiceFact {
  kind: 'invoice';
  uuid: string;
  certifiedAt: number;
  supplier: { rfc: string; name: string };
  serie: string;
  folio: string;
  date: number;
  currency: string;
  /** MXN per unit of `currency` (1 for MXN). */
  exchangeRate: number;
  paymentMethod: 'PUE' | 'PPD';
  /** FormaPago (01 cash…); absent in facts stored before it was read. */
  paymentForm?: string | null;
  /** Receptor@UsoCFDI (S01: without tax effects); absent in facts stored before it was read. */
  use?: string | null;
  /** Comprobante@Version (absent on facts recorded before it was kept). */
  cfdiVersion?: '3.3' | '4.0';
  /** CartaPorte@Version when the invoice carries a Carta Porte complement. */
  cartaPorteVersion?: '1.0' | '2.0' | '3.0' | '3.1';
  subTotal: number;
  discount: number;
  total: number;
  concepts: ReceivedConceptFact[];
  /** The kept original XML's key (lib/originals/original-record.ts); absent before originals were kept. */
  xml?: string;
}

/** A supplier's Pagos 2.0 complement with the tenant as Receptor: the tenant paid these invoices. */
export interface ReceivedPaymentFact {
  kind: 'payment';
  uuid: string;
  records: {
    invoiceUuid: string;
    seq: number;
    date: number;
    amount: number;
    balanceBefore: number;
    balanceAfter: number;
    exchangeRate?: number;
    /** FormaDePagoP (01 cash…). */
    form?: string | null;
  }[];
  /** Pagos@Version of the complement (absent on facts recorded before it was kept). */
  pagosVersion?: '1.0' | '2.0';
}

/** A supplier's credit note (type E, relation 01) to the tenant: it reduces what the tenant owes on one invoice. */
export interface ReceivedCreditNoteFact {
  kind: 'creditNote';
  uuid: string;
  invoiceUuid: string;
  date: number;
  /** Its Total, in its own currency. */
  amount: number;
  /** Its Moneda and TipoCambio (absent on facts recorded before they were kept: the invoice's currency). */
  currency?: string;
  exchangeRate?: number;
  /**
   * The taxes it states itself, in its own currency: Σ its concepts' IVA transferred, IVA and ISR retained (what it
   * gives back of the creditable VAT, LIVA art. 7). Absent on facts recorded before they were kept.
   */
  taxes?: CreditNoteTaxes;
}

/** A cancellation of a received CFDI: the supplier's request, the SAT's acknowledgement, or a line of the SAT's bulk-download metadata. */
export type ReceivedCancelFact = CancellationFact | CancellationRequestFact | CancellationMetadataFact;
export type ReceivedFact = ReceivedInvoiceFact | ReceivedPaymentFact | ReceivedCreditNoteFact | ReceivedCancelFact;
export type ReceivedFactKind = ReceivedFact['kind'];

/** One stored fact: `issuer` is the supplier's RFC (an acknowledgement's RfcEmisor), so a cancellation applies only to that supplier's CFDI. */
export interface ReceivedFactRecord {
  _id: string;
  tenant: string;
  uuid: string;
  kind: ReceivedFactKind;
  issuer: string;
  sha256: string;
  /** The received invoices this fact changes (cancellations: none, resolved by UUID when documents are rebuilt). */
  invoices: string[];
  fact: ReceivedFact;
  importedAt: Date;
}

export type ReceivedPaymentState = 'paid' | 'partial' | 'unpaid' | 'cancelled';

/** VAT transferred at one rate (16%, 8%, 0%): the base and the tax. */
export interface VatAtRate {
  rate: number;
  base: number;
  amount: number;
}

export interface ReceivedTaxes {
  vatTransferred: VatAtRate[];
  /** Base of the exempt VAT transfers (TipoFactor Exento). */
  vatExemptBase: number;
  vatRetained: number;
  isrRetained: number;
  iepsTransferred: number;
  iepsRetained: number;
  transferred: number;
  retained: number;
}

/** A concept as stored; its category is read from the tenant's current rules when shown. */
export interface ReceivedConcept {
  code: string;
  description: string;
  quantity: number;
  unit: string;
  unitPrice: number;
  amount: number;
  discount: number;
  transfers: TaxLine[];
  retentions: TaxLine[];
}

/** What settled the invoice: its own PUE (paid when issued), a supplier's payment complement, or a credit note. */
export interface ReceivedSettlement {
  kind: 'pue' | 'payment' | 'creditNote';
  uuid: string;
  seq: number;
  date: number;
  amount: number;
  balanceBefore: number;
  balanceAfter: number;
  exchangeRate?: number;
  /** How it was paid (c_FormaPago: the invoice's FormaPago for PUE, the complement's FormaDePagoP); null when unknown. */
  form?: string | null;
  /** Pagos@Version of a payment complement. */
  pagosVersion?: '1.0' | '2.0';
  /**
   * A credit note's own taxes, in the invoice's currency as `amount` is: what it gives back of the creditable VAT (LIVA
   * art. 7, the tax position). Absent for payments and for notes whose fact was recorded before they were kept (the
   * invoice's taxes in proportion stand in). Not shown by the received-docs view.
   */
  taxes?: CreditNoteTaxes;
  /** Cancelled before the SAT (its own cancellation in effect): it settles nothing. */
  cancelled: boolean;
}

export interface ReceivedCancellation {
  status: CancellationRecordStatus;
  motive: string | null;
  replacementUuid: string | null;
  requestedAt: number;
  date: number;
  statusSource: 'request' | 'acknowledgement' | 'bulk-metadata';
  satStatus: string | null;
}

/** A received invoice as stored (`receivedDocs`), rebuilt from its facts. Dates in epoch ms. */
export interface ReceivedDocRow {
  _id: string;
  tenant: string;
  uuid: string;
  serie: string;
  folio: string;
  date: number;
  certifiedAt: number;
  supplier: { rfc: string; name: string };
  currency: string;
  exchangeRate: number;
  paymentMethod: 'PUE' | 'PPD';
  /** FormaPago of the invoice (01 cash…); null when unknown. */
  paymentForm: string | null;
  /** Receptor@UsoCFDI (S01: without tax effects); null when unknown. */
  use: string | null;
  cfdiVersion?: '3.3' | '4.0';
  cartaPorteVersion?: '1.0' | '2.0' | '3.0' | '3.1';
  /** The kept original XML's key (lib/originals/original-record.ts); absent when none is kept. */
  xml?: string;
  /** Product code of the largest concept: the document's category follows it. */
  mainCode: string;
  category: ReceivedCategory;
  subTotal: number;
  discount: number;
  total: number;
  taxes: ReceivedTaxes;
  concepts: ReceivedConcept[];
  settlements: ReceivedSettlement[];
  paid: number;
  balance: number;
  paymentState: ReceivedPaymentState;
  cancellation: ReceivedCancellation | null;
  cancellationStatus: CancellationStatus;
  lastUpdate: string;
}
