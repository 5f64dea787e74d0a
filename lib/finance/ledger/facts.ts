/**
 * The ledger's facts (lib/finance/ledger): what each imported file, or the SAT status service's
 * answer recorded through the API, says about an invoice. lib/imports maps CFDI to these
 * (lib/imports/financial-mapping.ts); the ledger stores them (facts-repo.ts) and rebuilds each
 * invoice's financial document from all of them (documents.ts, record-facts.ts).
 */
import type { CanceledRecord, CancellationRecordStatus, FinancialDocument } from '../../model/financial-document.ts';

/** SAT cancellation motive: 01 (replaced), 02 (errors), 03 (did not happen), 04 (global invoice). */
export type CancellationMotive = NonNullable<CanceledRecord['motive']>;
/** EstatusUUID of an acknowledged UUID: 201 request received, 202 already cancelled. */
export type AcknowledgementCode = '201' | '202';

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
  /** Pagos@Version of the complement (absent on facts recorded before it was kept). */
  pagosVersion?: '1.0' | '2.0';
  /** One entry per DoctoRelacionado, in file order. */
  records: { invoiceUuid: string; seq: number; date: number; amount: number; balanceBefore: number; balanceAfter: number; exchangeRate?: number }[];
}

export interface CreditNoteFact {
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
   * gives back of the taxes, LIVA art. 7). Absent on facts recorded before they were kept.
   */
  taxes?: CreditNoteTaxes;
}

/** A credit note's own taxes. */
export interface CreditNoteTaxes {
  vat: number;
  vatRetained: number;
  isrRetained: number;
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
  code?: AcknowledgementCode;
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

/**
 * A line of the SAT's bulk-download metadata (Descarga Masiva) about a CFDI with Estatus 0: the
 * SAT lists it as cancelled since FechaCancelacion. It does not say the motive nor whether the
 * receiver accepted (lib/imports/sat-metadata.ts reads it; docs/domain.md).
 */
export interface CancellationMetadataFact {
  kind: 'cancellationMetadata';
  uuid: string;
  /** FechaCancelacion: the cancellation is in effect since then. */
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
export type CancellationInfoFact = CancellationFact | CancellationRequestFact | CancellationStatusFact | CancellationMetadataFact;

export type FinancialFact = InvoiceFact | PaymentFact | CreditNoteFact | CancellationInfoFact;

/** The labels of the status codes imported documents carry (added to the tenant's label table when missing). */
export const IMPORT_STATUS_LABELS: Readonly<Record<string, string>> = { '4': 'Facturado', '6': 'Pagado', '9': 'Cancelado' };

/** What a fact is about: a financial fact's kind, or a transfer CFDI (no fact: its trip is the whole result). */
export type FactKind = FinancialFact['kind'] | 'transfer';

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
    case 'cancellationMetadata':
      return [];
  }
}

/**
 * An acknowledgement that leaves the stored one of its UUID in place: a 201 (request received) once one put the
 * cancellation in effect (202 already cancelled, or one stored before EstatusUUID was kept). The SAT answers 202 to
 * any request after the cancellation, so the 201 is the older news, whichever file arrives last.
 */
export function keepsStoredAcknowledgement(
  stored: { kind: string; code?: AcknowledgementCode } | null | undefined,
  incoming: { kind: string; code?: AcknowledgementCode } | null,
): boolean {
  return stored?.kind === 'cancellation' && incoming?.kind === 'cancellation' && stored.code !== '201' && incoming.code === '201';
}

/** Why a file was skipped when its acknowledgement left the stored one in place. */
export const KEPT_ACKNOWLEDGEMENT_REASON =
  'the SAT acknowledged this UUID as cancelled already (EstatusUUID 202); an acknowledgement of the request (201) does not undo that';
