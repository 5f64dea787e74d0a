import type { Db, Document, Filter } from 'mongodb';
import { trips } from './collections.ts';
import { findSortedPage, type PageQuery } from './find-page.ts';
import type { KeysetSort } from './keyset.ts';
import type { TripDocument } from '../model/trip-document.ts';
import type { InstantRange } from '../shared/date-range.ts';

export interface TripFilter {
  client?: string;
  shipmentId?: string;
  legStatus?: number;
  /** Leg compact dates (YYYYMMDD), inclusive. */
  legDate?: { from?: number; to?: number };
  loaded?: InstantRange;
  offloaded?: InstantRange;
  /** ISO instant: trips whose `lastUpdate` is at or after it. */
  updatedSince?: string;
}

/** List orders: newest trip first (id as tie-breaker); for sync, oldest change first. */
export const TRIP_SORTS = {
  default: [{ field: 'createdAt', dir: -1 }, { field: '_id', dir: -1 }],
  sync: [{ field: 'lastUpdate', dir: 1 }, { field: '_id', dir: 1 }],
} as const satisfies Record<string, KeysetSort>;

const range = (r: { from?: number; to?: number }): Document => ({
  ...(r.from !== undefined ? { $gte: r.from } : {}),
  ...(r.to !== undefined ? { $lte: r.to } : {}),
});

function tripFilter(tenant: string, f: TripFilter): Filter<TripDocument> {
  const q: Filter<TripDocument> = { company: tenant };
  if (f.client !== undefined) q.client = f.client;
  if (f.updatedSince !== undefined) q.lastUpdate = { $gte: f.updatedSince };
  // Leg conditions go in one $elemMatch: a trip matches when one leg meets them all.
  const leg: Document = {};
  if (f.shipmentId !== undefined) leg.shipment = f.shipmentId;
  if (f.legStatus !== undefined) leg.status = f.legStatus;
  if (f.legDate) leg.date = range(f.legDate);
  if (f.loaded) leg.loadDate = range(f.loaded);
  if (f.offloaded) leg.unloadDate = range(f.offloaded);
  if (Object.keys(leg).length > 0) q.shipments = { $elemMatch: leg };
  return q;
}

export async function findTrips(
  db: Db,
  tenant: string,
  filter: TripFilter,
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; docs: TripDocument[] }> {
  return findSortedPage(trips(db), tripFilter(tenant, filter), page, maxTimeMS);
}

/** One trip of the tenant by id (null when missing or another tenant's). */
export async function findTripById(db: Db, tenant: string, id: string, maxTimeMS: number): Promise<TripDocument | null> {
  return trips(db).findOne({ company: tenant, _id: id }, { maxTimeMS });
}
