/**
 * Discounts and accessorials (docs/domain.md "Discounts, demurrage and shrinkage
 * recovery"): discount rate = Σ Descuento ÷ Σ gross freight (freight concept
 * amounts before discount), demurrage (estadías) and handling (maniobras)
 * billed, per client and per client-month, from sums already in integer cents.
 */
import { fromCents } from '../money/cents.ts';
import { byString } from './report.ts';
import { ratio, type Ratio } from './stats.ts';

/** Concept sums of a set of non-cancelled invoices, in integer cents (lib/analytics/billing-concepts-repo.ts). */
export interface ConceptTotals {
  documents: number;
  documentsWithDiscount: number;
  documentsWithDemurrage: number;
  discountC: number;
  grossFreightC: number;
  freightDiscountC: number;
  demurrageC: number;
  demurrageLines: number;
  handlingC: number;
  handlingLines: number;
  shortageC: number;
  shortageLines: number;
  shortageLitres: number;
}

export interface DiscountRow {
  documents: number;
  documentsWithDiscount: number;
  grossFreight: number;
  discounts: number;
  freightDiscounts: number;
  /** discounts ÷ grossFreight × 100 (4 decimals). */
  discountRatePct: Ratio;
}

export interface AccessorialRow {
  documents: number;
  documentsWithDemurrage: number;
  demurrage: number;
  demurrageLines: number;
  handling: number;
  handlingLines: number;
}

export const EMPTY_CONCEPT_TOTALS: Readonly<ConceptTotals> = {
  documents: 0,
  documentsWithDiscount: 0,
  documentsWithDemurrage: 0,
  grossFreightC: 0,
  freightDiscountC: 0,
  discountC: 0,
  demurrageC: 0,
  demurrageLines: 0,
  handlingC: 0,
  handlingLines: 0,
  shortageC: 0,
  shortageLines: 0,
  shortageLitres: 0,
};

/** a + b, field by field (b's extra fields, such as client and month, ignored). */
export function addConceptTotals(a: Readonly<ConceptTotals>, b: Readonly<ConceptTotals>): ConceptTotals {
  const sum = { ...a };
  for (const k of Object.keys(EMPTY_CONCEPT_TOTALS) as (keyof ConceptTotals)[]) sum[k] += b[k];
  return sum;
}

export const discountRow = (a: ConceptTotals): DiscountRow => ({
  documents: a.documents,
  documentsWithDiscount: a.documentsWithDiscount,
  grossFreight: fromCents(a.grossFreightC),
  discounts: fromCents(a.discountC),
  freightDiscounts: fromCents(a.freightDiscountC),
  discountRatePct: ratio(a.discountC * 100, a.grossFreightC, { denominatorLabel: 'gross freight', decimals: 4 }),
});

export const accessorialRow = (a: ConceptTotals): AccessorialRow => ({
  documents: a.documents,
  documentsWithDemurrage: a.documentsWithDemurrage,
  demurrage: fromCents(a.demurrageC),
  demurrageLines: a.demurrageLines,
  handling: fromCents(a.handlingC),
  handlingLines: a.handlingLines,
});

export interface DiscountsAndDemurrage {
  discounts: { totals: DiscountRow; byClient: (DiscountRow & { client: string })[]; byClientMonth: (DiscountRow & { client: string; month: string })[] };
  demurrage: { totals: AccessorialRow; byClient: (AccessorialRow & { client: string })[] };
}

/** Totals, per client (sorted) and per client-month (sorted) from the client-month sums. */
export function discountsAndDemurrage(rows: readonly (ConceptTotals & { client: string; month: string })[]): DiscountsAndDemurrage {
  let total: ConceptTotals = { ...EMPTY_CONCEPT_TOTALS };
  const perClient = new Map<string, ConceptTotals>();
  for (const r of rows) {
    total = addConceptTotals(total, r);
    perClient.set(r.client, addConceptTotals(perClient.get(r.client) ?? EMPTY_CONCEPT_TOTALS, r));
  }
  const clients = [...perClient.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    discounts: {
      totals: discountRow(total),
      byClient: clients.map(([client, a]) => ({ client, ...discountRow(a) })),
      byClientMonth: [...rows]
        .sort(byString((r: { client: string; month: string }) => `${r.client}|${r.month}`))
        .map((r) => ({ client: r.client, month: r.month, ...discountRow(r) })),
    },
    demurrage: {
      totals: accessorialRow(total),
      byClient: clients.map(([client, a]) => ({ client, ...accessorialRow(a) })),
    },
  };
}
