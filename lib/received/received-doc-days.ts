/**
 * The days a received CFDI touches, for the totals kept on write (lib/db/rollup-marks.ts,
 * docs/rollups.md): its date and every settlement's date (its own PUE, the supplier's payment
 * complements, credit notes), as Mexico City days. A write marks the days of the stored version
 * and of the new one, before and after it writes, so totals of a day the document leaves are
 * recomputed too, and a write that fails halfway leaves its days marked.
 */
import type { Db } from 'mongodb';
import { markSourcesDays } from '../db/rollup-marks.ts';
import { mxDateString } from '../time/mexico-city.ts';

/** The tax position's source of received CFDIs (lib/tax/refresh-tax-position.ts): a marked day's month is recomputed. */
export const TAX_POSITION_RECEIVED_SOURCE = 'taxPositionReceived';

/** Unit economics' source of received CFDIs and their assignments (lib/analytics/refresh-unit-economics-rollups.ts): a day of costs. */
export const UNIT_ECONOMICS_RECEIVED_SOURCE = 'receivedUnitEconomics';

/**
 * Every mark source a received-document write marks: one per kind of kept totals over received
 * CFDIs (a consumer clears only its own). A new kind of totals over them adds its source here.
 */
export const RECEIVED_DOC_MARK_SOURCES: readonly string[] = [TAX_POSITION_RECEIVED_SOURCE, UNIT_ECONOMICS_RECEIVED_SOURCE];

/**
 * The sources an assignment of received CFDIs to a vehicle or trip marks (PUT
 * /api/received-docs/{id}/assignment, POST /api/received-assignments): the kinds of totals that
 * read assignments, on the documents' issue days (where their costs are kept).
 */
export const ASSIGNMENT_MARK_SOURCES: readonly string[] = [UNIT_ECONOMICS_RECEIVED_SOURCE];

export interface DatedReceivedDocument {
  date: number;
  settlements?: readonly { date: number }[] | null;
}

export function receivedDocDays(doc: DatedReceivedDocument): string[] {
  const days = new Set<string>();
  if (Number.isFinite(doc.date)) days.add(mxDateString(doc.date));
  for (const s of doc.settlements ?? []) if (Number.isFinite(s.date)) days.add(mxDateString(s.date));
  return [...days];
}

/** Runs a write of a tenant's received documents between two marks of the days they touch (the stored versions and the new ones). */
export async function writeMarkingReceivedDays<T>(db: Db, tenant: string, docs: Iterable<DatedReceivedDocument>, write: () => Promise<T>): Promise<T> {
  const days = new Set<string>();
  for (const d of docs) for (const day of receivedDocDays(d)) days.add(day);
  await markSourcesDays(db, tenant, RECEIVED_DOC_MARK_SOURCES, days);
  const result = await write();
  await markSourcesDays(db, tenant, RECEIVED_DOC_MARK_SOURCES, days);
  return result;
}

/**
 * Runs a write of assignments of these received documents between two marks of their issue days and
 * their credit notes' days (ASSIGNMENT_MARK_SOURCES): an assignment moves a document's cost between a
 * trip, a vehicle and the spread, kept on the document's own day, and its credit notes' (negative
 * costs placed as their invoice, kept on each note's day) with it. If the write throws, the days stay marked.
 */
export async function writeMarkingAssignmentDays<T>(
  db: Db,
  tenant: string,
  docs: Iterable<{ date: number; settlements?: readonly { kind?: string; date: number }[] | null }>,
  write: () => Promise<T>,
): Promise<T> {
  const days = new Set<string>();
  for (const d of docs) {
    if (Number.isFinite(d.date)) days.add(mxDateString(d.date));
    for (const s of d.settlements ?? []) if (s.kind === 'creditNote' && Number.isFinite(s.date)) days.add(mxDateString(s.date));
  }
  await markSourcesDays(db, tenant, ASSIGNMENT_MARK_SOURCES, days);
  const result = await write();
  await markSourcesDays(db, tenant, ASSIGNMENT_MARK_SOURCES, days);
  return result;
}
