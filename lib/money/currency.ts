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
