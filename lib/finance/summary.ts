import type { CancellationStatus, FinancialDocument } from '../model/financial-document.ts';
import { fromCents } from '../money/cents.ts';
import { MXN, rateOf } from '../money/currency.ts';
import { documentTaxTotalsC } from '../tax/tax-lines.ts';
import { receiverDeadline } from '../time/business-days.ts';
import { documentBalance } from './balance.ts';
import { invoiceCancellationRecord, recordStatus } from './cancellation.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

/** The summary form of a financial document (interface section 2.2). */
export interface FinancialSummary {
  id: string;
  currency: string;
  exchangeRate: number;
  company: string;
  client: string;
  status: { code: number; label: string };
  dates: { lastUpdate: string; date: number; timestamp: number; invoiceDate: string; satCertDate: string | null };
  references: { ref1_relacion: string; ref2_cedula: string };
  amounts: {
    subtotal: number;
    vat16: number;
    vatRetention4: number;
    discount: number;
    shrinkageDeduction: number;
    total: number;
    isrRetained: number;
    iepsTransferred: number;
    iepsRetained: number;
    transferredTaxes: number;
    retainedTaxes: number;
    vatBases: { rate16: number; rate8: number; rate0: number; exempt: number; otherRates: number };
  };
  balance: { total: number; paid: number; pending: number; overpaid: number; isFullyPaid: boolean; paymentsCount: number };
  invoice: {
    folio: string;
    uuid: string;
    pdf: string | null;
    xml: string | null;
    cfdiVersion?: '3.3' | '4.0';
    cartaPorteVersion?: '1.0' | '2.0' | '3.0' | '3.1';
  };
  cancellations: {
    hasCancellations: boolean;
    count: number;
    invoiceCancelled: boolean;
    status: CancellationStatus;
    requestedAt: string | null;
    receiverDeadline: string | null;
  };
}

export interface SummaryContext {
  statusLabel: (code: number) => string;
  /** The link to a document's kept original XML (lib/originals/original-url.ts), or null when none is kept. */
  originalUrl: (uuid: string, key: string | null | undefined) => string | null;
  /** The link to its printed form, rendered from that original (null exactly when `originalUrl` is). */
  printedFormUrl: (uuid: string, key: string | null | undefined) => string | null;
  /** The tenant's currency, for documents that do not store theirs. */
  currency: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The invoice's own cancellation: its status, when it was requested and, while pending, the receiver's deadline. */
function cancellationOf(doc: FinancialDocument): Pick<FinancialSummary['cancellations'], 'status' | 'requestedAt' | 'receiverDeadline'> {
  const record = invoiceCancellationRecord(doc);
  if (record === null) return { status: 'none', requestedAt: null, receiverDeadline: null };
  const status = recordStatus(record);
  const requestedAt = record.requestedAt ?? record.date;
  return { status, requestedAt: iso(requestedAt), receiverDeadline: status === 'pending' ? iso(receiverDeadline(requestedAt)) : null };
}

export function financialSummary(doc: FinancialDocument, ctx: SummaryContext): FinancialSummary {
  const balance = documentBalance(doc);
  const taxes = documentTaxTotalsC(doc);
  const currency = doc.currency ?? ctx.currency;
  return {
    id: doc.id,
    currency,
    exchangeRate: currency === MXN ? 1 : rateOf(doc),
    company: doc.company,
    client: doc.client,
    status: { code: doc.status, label: ctx.statusLabel(doc.status) },
    dates: {
      lastUpdate: doc.lastUpdate,
      date: doc.date,
      timestamp: doc.timestamp,
      invoiceDate: iso(doc.invoice?.date ?? doc.date),
      satCertDate: doc.invoice?.satCertDate ?? null,
    },
    references: { ref1_relacion: doc.ref1, ref2_cedula: doc.ref2 },
    amounts: {
      subtotal: doc.iSub,
      vat16: doc.iTax1,
      vatRetention4: doc.iTax2,
      discount: doc.iDesc,
      shrinkageDeduction: doc.iFalt,
      total: doc.iTot,
      isrRetained: fromCents(taxes.isrRetained),
      iepsTransferred: fromCents(taxes.iepsTransferred),
      iepsRetained: fromCents(taxes.iepsRetained),
      transferredTaxes: fromCents(taxes.transferred),
      retainedTaxes: fromCents(taxes.retained),
      vatBases: {
        rate16: fromCents(taxes.vatBases.rate16),
        rate8: fromCents(taxes.vatBases.rate8),
        rate0: fromCents(taxes.vatBases.rate0),
        exempt: fromCents(taxes.vatBases.exempt),
        otherRates: fromCents(taxes.vatBases.otherRates),
      },
    },
    balance: {
      total: balance.total,
      // Money collected (payment complements). Credit notes settle the balance without collecting.
      paid: balance.paid,
      pending: balance.pending,
      overpaid: balance.overpaid,
      isFullyPaid: balance.isFullyPaid,
      // Section 2.3 calls both complements and credit notes "payments".
      paymentsCount: balance.paymentsCount + balance.creditNotesCount,
    },
    invoice: {
      folio: doc.invoice.num,
      uuid: doc.invoice.uuid,
      pdf: ctx.printedFormUrl(doc.invoice.uuid, doc.invoice.xml),
      xml: ctx.originalUrl(doc.invoice.uuid, doc.invoice.xml),
      ...(doc.invoice.cfdiVersion ? { cfdiVersion: doc.invoice.cfdiVersion } : {}),
      ...(doc.invoice.cartaPorteVersion ? { cartaPorteVersion: doc.invoice.cartaPorteVersion } : {}),
    },
    cancellations: {
      hasCancellations: doc.canceled.length > 0,
      count: doc.canceled.length,
      invoiceCancelled: balance.isCancelled,
      ...cancellationOf(doc),
    },
  };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type FinancialSummaryCheck = Conforms<FinancialSummary, components['schemas']['FinancialSummary']>;
