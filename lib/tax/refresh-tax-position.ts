/**
 * How the tax position's months are kept (docs/rollups.md, "Tax position and DIOT"): a month
 * computed from its documents (the issued documents collected in it, the received CFDIs settled
 * in it), kept, and compared with what is kept. The lifecycle around them (the marks of both
 * sources, drain, rebuild, verify) is tax-position-rollup-kind.ts.
 */
import type { Db } from 'mongodb';
import { financialDocHistoryDays } from '../finance/financial-docs-repo.ts';
import { receivedDocDays } from '../received/received-doc-days.ts';
import { streamReceivedDocDays } from '../received/received-repo.ts';
import { sameContent } from '../shared/same-content.ts';
import { monthRange, ownMonthsRows } from './tax-position-month.ts';
import { rollUpTaxPositionMonth, type KeptMonth } from './tax-position-rollup.ts';
import { readAllTaxPositionMonths, readTaxPositionLinesOfMonths, readTaxPositionMonths, writeTaxPositionMonths } from './tax-position-rollups-repo.ts';

/** Months of a tenant (sorted, any gaps) computed from their documents, each from its own month's (in memory, nothing written). */
export async function computeTaxPositionMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<Map<string, KeptMonth>> {
  const rows = await ownMonthsRows(db, tenant, months.map(monthRange), maxTimeMS);
  return new Map(
    months.map((month) => {
      const r = rows.get(month);
      return [month, rollUpTaxPositionMonth(tenant, month, r?.collections ?? [], r?.payments ?? [])] as const;
    }),
  );
}

/** Recomputes months of a tenant (one, or a rebuild's run) from their documents and keeps them. */
export async function recomputeTaxPositionMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<void> {
  await writeTaxPositionMonths(db, tenant, await computeTaxPositionMonths(db, tenant, months, maxTimeMS), maxTimeMS);
}

const byId = <T extends { _id: string }>(xs: readonly T[]): T[] => [...xs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));

/** The months whose kept form (figures, lines, DIOT rows) differs from the same computed from the documents. */
export async function differingTaxPositionMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<string[]> {
  if (!months.length) return [];
  const computed = await computeTaxPositionMonths(db, tenant, months, maxTimeMS);
  const stored = new Map((await readTaxPositionMonths(db, tenant, months, maxTimeMS)).map((k) => [k.month, k]));
  const lines = await readTaxPositionLinesOfMonths(db, tenant, months, maxTimeMS);
  return months.filter((month) => {
    const c = computed.get(month) as KeptMonth;
    const s = stored.get(month) ?? null;
    const same =
      (s === null || c.month === null ? s === c.month : sameContent(s, c.month)) && sameContent(byId(lines.filter((e) => e.month === month)), byId(c.entries));
    return !same;
  });
}

/** The months a tenant's kept form holds. */
export async function keptTaxPositionMonths(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  return (await readAllTaxPositionMonths(db, tenant, maxTimeMS)).map((k) => k.month);
}

/** The first day of every month a tenant's documents touch: of its financial documents, and of its received CFDIs. */
export async function documentMonthDays(db: Db, tenant: string): Promise<{ issued: Set<string>; received: Set<string> }> {
  const issued = new Set<string>();
  // A read a rebuild of every kind shares.
  for (const day of (await financialDocHistoryDays(db, tenant)).touched) issued.add(`${day.slice(0, 7)}-01`);
  const received = new Set<string>();
  for await (const d of streamReceivedDocDays(db, tenant)) for (const day of receivedDocDays(d)) received.add(`${day.slice(0, 7)}-01`);
  return { issued, received };
}
