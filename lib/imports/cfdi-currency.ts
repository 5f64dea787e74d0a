/**
 * A CFDI's prices in MXN, for what keeps no currency of its own (trips: their leg pricing
 * is MXN). The financial document keeps the CFDI's own currency and rate instead
 * (lib/money/currency.ts). Amounts are converted at the CFDI's TipoCambio and rounded to
 * cents; unit prices to 6 decimals (the CFDI's own precision).
 */
import { fromCents } from '../money/cents.ts';
import { mxnCents } from '../money/currency.ts';
import type { Cfdi } from './cfdi.ts';

export function cfdiInMxn(cfdi: Cfdi): Cfdi {
  const rate = cfdi.exchangeRate;
  if (rate === 1) return cfdi;
  const mxn = (x: number): number => fromCents(mxnCents(x, rate));
  return {
    ...cfdi,
    subTotal: mxn(cfdi.subTotal),
    discount: mxn(cfdi.discount),
    total: mxn(cfdi.total),
    concepts: cfdi.concepts.map((c) => ({
      ...c,
      unitPrice: Math.round(c.unitPrice * rate * 1e6) / 1e6,
      amount: mxn(c.amount),
      discount: mxn(c.discount),
      transfers: c.transfers.map((t) => ({ ...t, base: mxn(t.base), amount: mxn(t.amount) })),
      retentions: c.retentions.map((t) => ({ ...t, base: mxn(t.base), amount: mxn(t.amount) })),
    })),
  };
}
