/**
 * The days a financial document touches, for the totals kept on write (lib/db/rollup-marks.ts,
 * docs/rollups.md): its invoice date and every payment record's date, as Mexico City days. A
 * write marks the days of the stored version and of the new one, so totals of a day the
 * document leaves are recomputed too; and the days of the trips linked to the documents, for
 * the totals over trips that read a trip's invoice (lib/trips/linked-trip-days.ts).
 */
import type { Db } from 'mongodb';
import { markSourcesDays } from '../db/rollup-marks.ts';
import { LINKED_TRIP_SOURCES, linkedTripDays } from '../trips/linked-trip-days.ts';
import { mxDateString } from '../time/mexico-city.ts';

/** The source name of financial documents in rollup marks (the tax days read it). */
export const FINANCIAL_DOCS_SOURCE = 'financialDocs';

/** The source of the receivables' kept days and open items (lib/analytics/refresh-receivables-rollups.ts). */
export const RECEIVABLES_SOURCE = 'receivables';

/** The tax position's source (lib/tax/refresh-tax-position.ts): a marked day's month is recomputed. */
export const TAX_POSITION_DOCS_SOURCE = 'taxPositionDocs';

/** The discounts audit's source (lib/analytics/refresh-discounts-shrinkage-rollups.ts): a marked day's discounts are recomputed. */
export const DISCOUNT_DAYS_SOURCE = 'discountDays';

/**
 * Sources an older version marked (a store may hold some when upgraded): a marked day's documents
 * are read and the days of every trip linked to one marked in the kind's trip source, as the
 * writer now does for the documents it writes (LINKED_TRIP_SOURCES). Settled, never written.
 */
export const LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE = 'discountsShrinkageDocs';
export const LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE = 'dispatchToBillDocs';

/**
 * Every mark source a financial-document write marks: one per kind of kept totals, because a
 * consumer clears the marks it has settled and must not clear another consumer's. A new kind of
 * totals over financial documents adds its source here.
 */
export const FINANCIAL_DOC_MARK_SOURCES: readonly string[] = [FINANCIAL_DOCS_SOURCE, RECEIVABLES_SOURCE, TAX_POSITION_DOCS_SOURCE, DISCOUNT_DAYS_SOURCE];

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
 * (`docs`: the stored versions and the new ones) and of the days of the trips linked to them
 * (a link is the trip's: a document write moves none, a trip write marks its own days). If the
 * write throws, the days stay marked.
 */
export async function writeMarkingDays<T>(db: Db, tenant: string, docs: Iterable<DatedDocument & { _id: string }>, write: () => Promise<T>): Promise<T> {
  const days = new Set<string>();
  const ids = new Set<string>();
  for (const d of docs) {
    ids.add(d._id);
    for (const day of financialDocDays(d)) days.add(day);
  }
  const tripDays = await linkedTripDays(db, tenant, ids);
  const mark = async (): Promise<void> => {
    await markSourcesDays(db, tenant, FINANCIAL_DOC_MARK_SOURCES, days);
    await markSourcesDays(db, tenant, LINKED_TRIP_SOURCES, tripDays);
  };
  await mark();
  const result = await write();
  await mark();
  return result;
}
