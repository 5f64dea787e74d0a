/**
 * The currency rule: a document keeps the amounts of its CFDI in the CFDI's currency
 * (`currency`, Moneda) with the rate it states (`exchangeRate`, TipoCambio: MXN per unit);
 * every report is in MXN, each amount converted at that rate and rounded to cents. MXN
 * documents (and those written before the rate was stored) have no rate: 1.
 * The pipelines' form is mxnCentsExpr in lib/db/pipeline.ts.
 */
import { fromCents, toCents } from './cents.ts';

export const MXN = 'MXN';

/** MXN per unit of the document's currency (1 for MXN and for documents without a rate). */
export const rateOf = (doc: { exchangeRate?: number | null }): number => doc.exchangeRate ?? 1;

/** An amount of the document's currency in integer MXN cents: round(amount × rate), half away from zero. */
export function mxnCents(amount: number, rate: number): number {
  return rate === 1 ? toCents(amount) : toCents(amount * rate);
}

/** Integer cents of the document's currency → integer MXN cents (round(cents × rate)). */
export function centsToMxnCents(cents: number, rate: number): number {
  return rate === 1 ? cents : toCents(fromCents(cents) * rate);
}

/** An amount of the document's currency in MXN pesos (two decimals). */
export const toMxn = (amount: number, rate: number): number => fromCents(mxnCents(amount, rate));

/**
 * A credit note's Total in the currency of the invoice it credits (relation 01). The SAT states
 * no equivalence for that relation, so a note in another currency counts for what it is worth in
 * MXN (its Total at its own TipoCambio), taken in the invoice's currency at the invoice's
 * TipoCambio: in MXN the invoice's balance falls by the note's value. Rounded to cents. A note in
 * the invoice's currency, or one recorded before its currency was kept, counts as stated.
 */
/**
 * A credit note's record's `exchangeRate` (MXN per unit of the invoice's currency), where the note says it: a note in the
 * invoice's own foreign currency at its TipoCambio (what its taxes are worth in MXN on its date). None otherwise (MXN, a
 * note in another currency converted at the invoice's rate, or one recorded before its rate was kept): the invoice's.
 */
export function creditNoteRate(note: { currency?: string; exchangeRate?: number }, invoice: { currency?: string }): { exchangeRate?: number } {
  const currency = invoice.currency ?? MXN;
  const own = note.currency === currency && currency !== MXN && note.exchangeRate !== undefined && note.exchangeRate > 0;
  return own ? { exchangeRate: note.exchangeRate } : {};
}

export function creditInInvoiceCurrency(
  note: { amount: number; currency?: string; exchangeRate?: number },
  invoice: { currency?: string; exchangeRate?: number | null },
): number {
  if (note.currency === undefined || note.currency === (invoice.currency ?? MXN)) return note.amount;
  return fromCents(toCents((note.amount * (note.exchangeRate ?? 1)) / rateOf(invoice)));
}
