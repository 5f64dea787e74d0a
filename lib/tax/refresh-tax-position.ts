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
import { monthRange, ownMonthRows } from './tax-position-month.ts';
import { rollUpTaxPositionMonth, type KeptMonth } from './tax-position-rollup.ts';
import { readAllTaxPositionMonths, readTaxPositionMonthLines, readTaxPositionMonths, writeTaxPositionMonth } from './tax-position-rollups-repo.ts';

/** One month of a tenant computed from its documents (in memory, nothing written). */
export async function computeTaxPositionMonth(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<KeptMonth> {
  const { collections, payments } = await ownMonthRows(db, tenant, monthRange(month), maxTimeMS);
  return rollUpTaxPositionMonth(tenant, month, collections, payments);
}

/** Recomputes a month of a tenant from its documents and keeps it. */
export async function recomputeTaxPositionMonth(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<void> {
  await writeTaxPositionMonth(db, tenant, month, await computeTaxPositionMonth(db, tenant, month, maxTimeMS), maxTimeMS);
}

const byId = <T extends { _id: string }>(xs: readonly T[]): T[] => [...xs].sort((a, b) => (a._id < b._id ? -1 : a._id > b._id ? 1 : 0));

/** Whether a kept month (figures, lines, DIOT rows) differs from the same computed from the documents. */
export async function taxPositionMonthDiffers(db: Db, tenant: string, month: string, maxTimeMS: number): Promise<boolean> {
  const computed = await computeTaxPositionMonth(db, tenant, month, maxTimeMS);
  const [stored = null] = await readTaxPositionMonths(db, tenant, [month], maxTimeMS);
  const same =
    (stored === null || computed.month === null ? stored === computed.month : sameContent(stored, computed.month)) &&
    sameContent(byId(await readTaxPositionMonthLines(db, tenant, month, maxTimeMS)), byId(computed.entries));
  return !same;
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
