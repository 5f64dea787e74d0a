import type { FinancialDocument } from '../model/financial-document.ts';

/** Stored documents may predate some fields; the pure functions expect them present. */
export function normalizeTaxDoc(raw: FinancialDocument): FinancialDocument {
  return {
    ...raw,
    clientName: raw.clientName ?? '',
    iDesc: raw.iDesc ?? 0,
    iFalt: raw.iFalt ?? 0,
    payments: raw.payments ?? [],
    canceled: raw.canceled ?? [],
    invoice: { ...raw.invoice, paymentMethod: raw.invoice?.paymentMethod ?? 'PPD', concepts: raw.invoice?.concepts ?? [], ship: raw.invoice?.ship ?? 0 },
  };
}
