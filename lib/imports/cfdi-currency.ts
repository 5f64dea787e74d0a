/**
 * A CFDI's prices in MXN, for what keeps no currency of its own (trips: their leg pricing
 * is MXN). The financial document keeps the CFDI's own currency and rate instead
 * (lib/money/currency.ts). Amounts are converted at the CFDI's TipoCambio and rounded to
 * cents; unit prices to 6 decimals (the CFDI's own precision).
 */
import { fromCents } from '../money/cents.ts';
import { MXN, mxnCents } from '../money/currency.ts';
import type { CartaPorteGoods, Cfdi } from './cfdi.ts';

export function cfdiInMxn(cfdi: Cfdi): Cfdi {
  const rate = cfdi.exchangeRate;
  const mxn = (x: number): number => fromCents(mxnCents(x, rate));
  const cartaPorte = cfdi.cartaPorte && {
    ...cfdi.cartaPorte,
    goods: cfdi.cartaPorte.goods.map((g) => ({ ...g, value: goodsValueInMxn(g, cfdi.currency, rate), currency: MXN })),
  };
  if (rate === 1) return cartaPorte ? { ...cfdi, cartaPorte } : cfdi;
  return {
    ...cfdi,
    ...(cartaPorte ? { cartaPorte } : {}),
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

/**
 * Goods' ValorMercancia in MXN: valued in MXN, as stated; in the CFDI's Moneda (or without a
 * Moneda of their own), at its TipoCambio. Goods valued in a third currency, whose rate the CFDI
 * does not state, count 0 (docs/domain.md, "Money and currency").
 */
function goodsValueInMxn(goods: CartaPorteGoods, currency: string, rate: number): number {
  const own = goods.currency ?? currency;
  if (own === MXN) return goods.value;
  return own === currency ? fromCents(mxnCents(goods.value, rate)) : 0;
}
