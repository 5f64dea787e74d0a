/**
 * A received document as the API shows it (GET /api/received-docs): dates as ISO instants, the
 * concepts' categories under the tenant's current rules, the balance and the cancellation. Pure.
 */
import type { CancellationStatus } from '../model/financial-document.ts';
import type { ReceivedCategoryRule } from '../model/tenant-settings.ts';
import { fromCents } from '../money/cents.ts';
import { mxnCents } from '../money/currency.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { categoryOf, type ReceivedCategory } from './received-category.ts';
import type { ReceivedDocRow, ReceivedPaymentState, ReceivedSettlement, ReceivedTaxes } from './received-rows.ts';

const iso = (ms: number): string => new Date(ms).toISOString();

export interface ReceivedDocView {
  id: string;
  uuid: string;
  serie: string;
  folio: string;
  issuedAt: string;
  certifiedAt: string;
  supplier: { rfc: string; name: string };
  category: ReceivedCategory;
  currency: string;
  exchangeRate: number;
  paymentMethod: 'PUE' | 'PPD';
  cfdiVersion?: '3.3' | '4.0';
  cartaPorteVersion?: '1.0' | '2.0' | '3.0' | '3.1';
  /** The kept original XML's download, or null when none is kept. */
  xml: string | null;
  /** Its printed form (PDF) rendered from that original; null exactly when `xml` is. */
  pdf: string | null;
  amounts: { subTotal: number; discount: number; total: number; totalMxn: number };
  taxes: ReceivedTaxes;
  concepts: {
    code: string;
    category: ReceivedCategory;
    description: string;
    quantity: number;
    unit: string;
    unitPrice: number;
    amount: number;
    discount: number;
  }[];
  payments: (Omit<ReceivedSettlement, 'date' | 'exchangeRate' | 'form'> & { date: string; exchangeRate: number })[];
  balance: { total: number; paid: number; pending: number; state: ReceivedPaymentState };
  cancellation: {
    status: CancellationStatus;
    motive: string | null;
    replacementUuid: string | null;
    requestedAt: string | null;
    date: string | null;
    source: 'request' | 'acknowledgement' | 'bulk-metadata' | null;
    satStatus: string | null;
  };
  lastUpdate: string;
}

/** `originalUrl`, `printedFormUrl`: the links to a kept original and its printed form (lib/originals/original-url.ts), as an issued document's. */
export function receivedDocView(
  row: ReceivedDocRow,
  rules: readonly ReceivedCategoryRule[],
  originalUrl: (uuid: string, key: string | null | undefined) => string | null,
  printedFormUrl: (uuid: string, key: string | null | undefined) => string | null,
): ReceivedDocView {
  const c = row.cancellation;
  return {
    id: row._id,
    uuid: row.uuid,
    serie: row.serie,
    folio: row.folio,
    issuedAt: iso(row.date),
    certifiedAt: iso(row.certifiedAt),
    supplier: { rfc: row.supplier.rfc, name: row.supplier.name },
    category: row.category,
    currency: row.currency,
    exchangeRate: row.exchangeRate,
    paymentMethod: row.paymentMethod,
    ...(row.cfdiVersion ? { cfdiVersion: row.cfdiVersion } : {}),
    ...(row.cartaPorteVersion ? { cartaPorteVersion: row.cartaPorteVersion } : {}),
    xml: originalUrl(row.uuid, row.xml),
    pdf: printedFormUrl(row.uuid, row.xml),
    amounts: { subTotal: row.subTotal, discount: row.discount, total: row.total, totalMxn: fromCents(mxnCents(row.total, row.exchangeRate)) },
    taxes: row.taxes,
    concepts: row.concepts.map((k) => ({
      code: k.code,
      category: categoryOf(k.code, rules),
      description: k.description,
      quantity: k.quantity,
      unit: k.unit,
      unitPrice: k.unitPrice,
      amount: k.amount,
      discount: k.discount,
    })),
    // A payment in the invoice's own currency carries its rate when that is not MXN; otherwise the invoice's.
    // How each was paid (form) and a credit note's own taxes feed the tax position (lib/tax), not this view.
    payments: row.settlements.map(({ form: _form, taxes: _taxes, ...s }) => ({ ...s, date: iso(s.date), exchangeRate: s.exchangeRate ?? row.exchangeRate })),
    balance: { total: row.total, paid: row.paid, pending: row.balance, state: row.paymentState },
    cancellation: {
      status: row.cancellationStatus,
      motive: c?.motive ?? null,
      replacementUuid: c?.replacementUuid ?? null,
      requestedAt: c ? iso(c.requestedAt) : null,
      date: c ? iso(c.date) : null,
      source: c?.statusSource ?? null,
      satStatus: c?.satStatus ?? null,
    },
    lastUpdate: row.lastUpdate,
  };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type ReceivedDocViewCheck = Conforms<ReceivedDocView, components['schemas']['ReceivedDoc']>;
