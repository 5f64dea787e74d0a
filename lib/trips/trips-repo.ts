import { isDeepStrictEqual } from 'node:util';
import type { Db, Document, Filter } from 'mongodb';
import { trips } from '../db/collections.ts';
import { findSortedPage } from '../db/find-page.ts';
import type { KeysetSort, PageQuery } from '../shared/keyset.ts';
import { TRIP_DERIVED_FIELDS_OUT, type StoredTripDocument, type TripDocument } from '../model/trip-document.ts';
import type { InstantRange } from '../shared/date-range.ts';
import { wholeMonthOf, withOffloadMonths } from './offload-months.ts';

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
  default: [
    { field: 'createdAt', dir: -1 },
    { field: '_id', dir: -1 },
  ],
  sync: [
    { field: 'lastUpdate', dir: 1 },
    { field: '_id', dir: 1 },
  ],
} as const satisfies Record<string, KeysetSort>;

const range = (r: { from?: number; to?: number }): Document => ({
  ...(r.from !== undefined ? { $gte: r.from } : {}),
  ...(r.to !== undefined ? { $lte: r.to } : {}),
});

function tripFilter(tenant: string, f: TripFilter): Filter<StoredTripDocument> {
  const q: Filter<StoredTripDocument> = { company: tenant };
  if (f.client !== undefined) q.client = f.client;
  if (f.updatedSince !== undefined) q.lastUpdate = { $gte: f.updatedSince };
  // Leg conditions go in one $elemMatch: a trip matches when one leg meets them all.
  const leg: Document = {};
  if (f.shipmentId !== undefined) leg.shipment = f.shipmentId;
  if (f.legStatus !== undefined) leg.status = f.legStatus;
  if (f.legDate) leg.date = range(f.legDate);
  if (f.loaded) leg.loadDate = range(f.loaded);
  // A whole month alone is the trip's own field (one index equality: the list's order and count from the entries).
  const month = f.offloaded && Object.keys(leg).length === 0 ? wholeMonthOf(f.offloaded) : null;
  if (month !== null) q.offloadMonths = month;
  else if (f.offloaded) leg.unloadDate = range(f.offloaded);
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
  return findSortedPage(trips(db), tripFilter(tenant, filter), page, maxTimeMS, TRIP_DERIVED_FIELDS_OUT);
}

/** One trip of the tenant by id (null when missing or another tenant's). */
export async function findTripById(db: Db, tenant: string, id: string, maxTimeMS: number): Promise<TripDocument | null> {
  return trips(db).findOne<TripDocument>({ company: tenant, _id: id }, { maxTimeMS, projection: TRIP_DERIVED_FIELDS_OUT });
}

/** The tenant's trips with these ids (missing ones and other tenants' are left out). */
export async function findTripsByIds(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<TripDocument[]> {
  if (ids.length === 0) return [];
  return trips(db)
    .find<TripDocument>({ company: tenant, _id: { $in: [...ids] } }, { maxTimeMS, projection: TRIP_DERIVED_FIELDS_OUT })
    .toArray();
}

/** A trip to write in place of the one read, whose `lastUpdate` it was read with. */
export interface TripReplacement {
  trip: TripDocument;
  /** `lastUpdate` of the stored trip when it was read (undefined: it had none). */
  readLastUpdate: string | undefined;
}

/**
 * Replaces each trip only if it is still the version read (same `lastUpdate`; every write
 * moves it): a concurrent write (an import, another delivery) is never overwritten with
 * content computed from an older version. Returns the ids written; the caller reads the
 * others again and retries. One unordered bulk write; when not all matched, the trips are
 * read back to tell which writes landed (the stored trip is then the one written).
 */
export async function replaceTripsIfUnchanged(db: Db, tenant: string, items: readonly TripReplacement[], maxTimeMS: number): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const coll = trips(db);
  const result = await coll.bulkWrite(
    items.map(({ trip, readLastUpdate }) => ({
      replaceOne: {
        filter: { _id: trip._id, company: tenant, lastUpdate: readLastUpdate ?? null } as Filter<StoredTripDocument>,
        replacement: withOffloadMonths(trip),
      },
    })),
    { ordered: false },
  );
  if (result.matchedCount === items.length) return new Set(items.map((i) => i.trip._id));
  const stored = new Map(
    (
      await findTripsByIds(
        db,
        tenant,
        items.map((i) => i.trip._id),
        maxTimeMS,
      )
    ).map((t) => [t._id, t]),
  );
  return new Set(items.filter((i) => isDeepStrictEqual(stored.get(i.trip._id), i.trip)).map((i) => i.trip._id));
}

/**
 * Inserts each trip unless one with its id exists already (then it is left as it is, for the
 * caller to read and merge). Returns the ids inserted.
 */
export async function insertTripsIfAbsent(db: Db, tenant: string, docs: readonly TripDocument[]): Promise<Set<string>> {
  if (docs.length === 0) return new Set();
  const result = await trips(db).bulkWrite(
    docs
      .map(withOffloadMonths)
      .map(({ _id, company: _company, ...rest }) => ({ updateOne: { filter: { _id, company: tenant }, update: { $setOnInsert: rest }, upsert: true } })),
    { ordered: false },
  );
  return new Set(Object.values(result.upsertedIds).map(String));
}

/** Which of these ids are the tenant's trips (ids only travel). */
export async function existingTripIds(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await trips(db)
    .find({ company: tenant, _id: { $in: [...new Set(ids)] } }, { maxTimeMS, projection: { _id: 1 } })
    .toArray();
  return new Set(rows.map((r) => r._id));
}

/** Which of these vehicle ids are on a trip of the tenant (index tenant_vehicle). */
export async function existingVehicleIds(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const found: unknown[] = await trips(db).distinct('vehicle.id', { company: tenant, 'vehicle.id': { $in: [...new Set(ids)] } }, { maxTimeMS });
  return new Set(found.filter((v): v is string => typeof v === 'string'));
}

/** Every tenant with a trip, one indexed probe per tenant (tenant_created; no `distinct` over the collection). */
export async function tenantsWithTrips(db: Db): Promise<string[]> {
  const tenants: string[] = [];
  for (;;) {
    const next = await trips(db)
      // The first probe bounded too ($gte ''): the embedded engine walks an index for a range, but
      // sorted an empty filter's whole collection for its first document (5.7 s at 20k/20k).
      .find({ company: tenants.length ? { $gt: tenants[tenants.length - 1] as string } : { $gte: '' } }, { projection: { _id: 0, company: 1 } })
      .sort({ company: 1, createdAt: -1, _id: -1 })
      .limit(1)
      .next();
    if (!next) return tenants;
    tenants.push(next.company);
  }
}
