/**
 * The days of the trips linked to financial documents (a trip's `idFinan` names its invoice), for
 * the kinds of totals over trips that read a trip's linked invoice: dispatch-to-bill (billed or
 * not, the lag) and shrinkage (the invoice's cancellation and shortage concepts). A document
 * write marks them as a write of those trips would (tripDays), so a cancellation, a new date or
 * an invoice arriving after the trip that names it reaches that trip's days, and only its
 * (docs/rollups.md "How the days stay right").
 */
import type { Db } from 'mongodb';
import { trips } from '../db/collections.ts';
import { DISPATCH_TO_BILL_TRIPS_SOURCE, SHRINKAGE_TRIPS_SOURCE, tripDays } from './trip-days.ts';

/** The trip sources a document write marks for its linked trips. */
export const LINKED_TRIP_SOURCES: readonly string[] = [DISPATCH_TO_BILL_TRIPS_SOURCE, SHRINKAGE_TRIPS_SOURCE];

/** Document ids looked up per query (index tenant_idfinan). */
const IDS_PER_QUERY = 500;
const MAX_TIME_MS = 60_000;

/** The days (tripDays) of the tenant's trips linked to these documents. */
export async function linkedTripDays(db: Db, tenant: string, documentIds: Iterable<string>): Promise<Set<string>> {
  const ids = [...new Set(documentIds)];
  const days = new Set<string>();
  for (let i = 0; i < ids.length; i += IDS_PER_QUERY) {
    const linked = trips(db).find(
      { company: tenant, idFinan: { $in: ids.slice(i, i + IDS_PER_QUERY) } },
      { projection: { _id: 0, 'shipments.date': 1, 'shipments.loadDate': 1, 'shipments.unloadDate': 1 }, maxTimeMS: MAX_TIME_MS },
    );
    for await (const trip of linked) for (const day of tripDays(trip)) days.add(day);
  }
  return days;
}
