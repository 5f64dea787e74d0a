/**
 * The days a financial document touches, for the totals kept on write (lib/db/rollup-marks.ts,
 * docs/rollups.md): its invoice date and every payment record's date, as Mexico City days. A
 * write marks the days of the stored version and of the new one, so totals of a day the
 * document leaves are recomputed too.
 */
import type { Db } from 'mongodb';
import { markDays } from '../db/rollup-marks.ts';
import { mxDateString } from '../time/mexico-city.ts';

/** The source name of financial documents in rollup marks. */
export const FINANCIAL_DOCS_SOURCE = 'financialDocs';

export interface DatedDocument {
  date: number;
  payments?: readonly { date: number }[] | null;
}

export function financialDocDays(doc: DatedDocument): string[] {
  const days = new Set<string>();
  if (Number.isFinite(doc.date)) days.add(mxDateString(doc.date));
  for (const p of doc.payments ?? []) if (Number.isFinite(p.date)) days.add(mxDateString(p.date));
  return [...days];
}

/**
 * Runs a write of a tenant's financial documents between two marks of the days they touch
 * (`docs`: the stored versions and the new ones). If the write throws, the days stay marked.
 */
export async function writeMarkingDays<T>(db: Db, tenant: string, docs: Iterable<DatedDocument>, write: () => Promise<T>): Promise<T> {
  const days = new Set<string>();
  for (const d of docs) for (const day of financialDocDays(d)) days.add(day);
  await markDays(db, tenant, FINANCIAL_DOCS_SOURCE, days);
  const result = await write();
  await markDays(db, tenant, FINANCIAL_DOCS_SOURCE, days);
  return result;
}
