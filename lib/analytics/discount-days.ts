/**
 * The discounts' and accessorials' days kept on write (docs/rollups.md "Discounts and
 * shrinkage"): per tenant and Mexico City day of the invoice date, the concept groups of the
 * day's non-cancelled invoices exactly as the audit's query groups them (client, exchange rate;
 * and kind, SAT-key family for the lines), in integer cents of the documents' currency. A
 * period adds its days' groups per client, month and rate, then converts and folds them once
 * (foldConceptGroups), as the query over the documents does: the same cents.
 */
import type { ConceptKind } from '../model/financial-document.ts';
import { foldConceptGroups, type ClientMonthConceptRow, type ConceptDocGroup, type ConceptLineGroup } from './billing-concepts-repo.ts';

export type DayDocGroup = Omit<ConceptDocGroup, 'key'>;
export type DayLineGroup = Omit<ConceptLineGroup, 'key'>;

export interface KeptDiscountDay {
  /** `${tenant}|${day}`. */
  _id: string;
  tenant: string;
  day: string;
  docs: DayDocGroup[];
  lines: DayLineGroup[];
}

export const discountDayId = (tenant: string, day: string): string => `${tenant}|${day}`;

const order = (...keys: (string | number)[][]): number => {
  for (const [a, b] of keys) if (a !== b) return (a as string | number) < (b as string | number) ? -1 : 1;
  return 0;
};

/** The kept days (a day without a non-cancelled invoice holds nothing: absent) from the groups by day. */
export function rollUpDiscountDays(tenant: string, groups: { docs: readonly ConceptDocGroup[]; lines: readonly ConceptLineGroup[] }): KeptDiscountDay[] {
  const days = new Map<string, KeptDiscountDay>();
  const dayOf = (day: string): KeptDiscountDay => {
    let d = days.get(day);
    if (!d) days.set(day, (d = { _id: discountDayId(tenant, day), tenant, day, docs: [], lines: [] }));
    return d;
  };
  for (const { key, ...g } of groups.docs) dayOf(key).docs.push(g);
  for (const { key, ...g } of groups.lines) dayOf(key).lines.push(g);
  for (const d of days.values()) {
    d.docs.sort((a, b) => order([a.client, b.client], [a.rate, b.rate]));
    d.lines.sort((a, b) => order([a.client, b.client], [a.rate, b.rate], [a.kind, b.kind], [a.family, b.family]));
  }
  return [...days.values()].sort((a, b) => order([a.day, b.day]));
}

/** The client-month rows of a period from its kept days (one client when `client` is given). */
export function foldDiscountDays(days: Iterable<Pick<KeptDiscountDay, 'day' | 'docs' | 'lines'>>, client?: string): ClientMonthConceptRow[] {
  const docs = new Map<string, ConceptDocGroup>();
  const lines = new Map<string, ConceptLineGroup>();
  for (const day of days) {
    const key = day.day.slice(0, 7);
    for (const g of day.docs) {
      if (client !== undefined && g.client !== client) continue;
      const k = JSON.stringify([g.client, key, g.rate]);
      const sum = docs.get(k);
      if (!sum) docs.set(k, { ...g, key });
      else {
        sum.documents += g.documents;
        sum.discountC += g.discountC;
        sum.documentsWithDiscount += g.documentsWithDiscount;
        sum.documentsWithDemurrage += g.documentsWithDemurrage;
      }
    }
    for (const g of day.lines) {
      if (client !== undefined && g.client !== client) continue;
      const k = JSON.stringify([g.client, key, g.rate, g.kind satisfies ConceptKind, g.family]);
      const sum = lines.get(k);
      if (!sum) lines.set(k, { ...g, key });
      else {
        sum.amountC += g.amountC;
        sum.discountC += g.discountC;
        sum.quantity += g.quantity;
        sum.lines += g.lines;
      }
    }
  }
  return foldConceptGroups([...docs.values()], [...lines.values()]);
}
