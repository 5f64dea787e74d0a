/**
 * Writes `offloadMonths` (lib/trips/offload-months.ts) on trips stored without it: written before
 * the field existed. Every writer of this service sets it, so this repairs a store once; it runs
 * when the service opens the database (lib/prepare-database.ts), before it listens, and records
 * that it finished in `rollupState` (`tripOffloadMonths`): later starts read one document. A store
 * opened empty is recorded at once. A run stopped midway (a crash) leaves no record: the next
 * start reads the trips again and repairs those still without the field.
 *
 * Safe beside writers: each repair `$set`s only the field, and only while the trip still lacks it
 * and has not been rewritten since it was read (`lastUpdate`), so a concurrent whole-trip write is
 * never overwritten with months computed from the older legs.
 */
import type { AnyBulkWriteOperation, Db, Filter } from 'mongodb';
import { trips } from '../db/collections.ts';
import { readRollupState, writeRollupState } from '../db/rollup-state.ts';
import type { StoredTripDocument } from '../model/trip-document.ts';
import { offloadMonthsOf } from './offload-months.ts';
import { tenantsWithTrips } from './trips-repo.ts';

/** The record of a finished backfill in `rollupState`, and its version (a new derived trip field would be version 2). */
export const OFFLOAD_MONTHS_STATE = 'tripOffloadMonths';
const OFFLOAD_MONTHS_VERSION = 1;

const BATCH_SIZE = 1000;

export interface OffloadMonthsBackfillOptions {
  /** Per tenant as it goes: trips read and repaired so far. */
  onProgress?: (p: { tenant: string; read: number; repaired: number }) => void;
}

type RepairRow = Pick<StoredTripDocument, '_id' | 'lastUpdate' | 'shipments'> & { offloadMonths?: unknown };

/** Trips of a tenant still without the field (`null` also matches a missing field; the model says every trip has it). */
const WITHOUT_MONTHS = { offloadMonths: null } as unknown as Filter<StoredTripDocument>;

async function repairTenant(db: Db, tenant: string, opts: OffloadMonthsBackfillOptions): Promise<number> {
  const coll = trips(db);
  let read = 0;
  let repaired = 0;
  let ops: AnyBulkWriteOperation<StoredTripDocument>[] = [];
  const flush = async (): Promise<void> => {
    if (!ops.length) return;
    repaired += (await coll.bulkWrite(ops, { ordered: false })).modifiedCount;
    ops = [];
    opts.onProgress?.({ tenant, read, repaired });
  };
  // Every trip of the tenant: a missing field has no index range both engines read (an empty array indexes as null too).
  const cursor = coll.find<RepairRow>(
    { company: tenant },
    { projection: { _id: 1, lastUpdate: 1, 'shipments.unloadDate': 1, offloadMonths: 1 }, batchSize: BATCH_SIZE },
  );
  for await (const trip of cursor) {
    read += 1;
    if (Array.isArray(trip.offloadMonths)) continue;
    ops.push({
      updateOne: {
        filter: { _id: trip._id, company: tenant, ...WITHOUT_MONTHS, lastUpdate: trip.lastUpdate ?? null } as Filter<StoredTripDocument>,
        update: { $set: { offloadMonths: offloadMonthsOf(trip) } },
      },
    });
    if (ops.length >= BATCH_SIZE) await flush();
  }
  await flush();
  return repaired;
}

/**
 * Repairs every tenant's trips without `offloadMonths`, unless a finished run is recorded; answers
 * the tenants that had some, with how many.
 */
export async function backfillOffloadMonths(db: Db, opts: OffloadMonthsBackfillOptions = {}): Promise<{ tenant: string; repaired: number }[]> {
  if ((await readRollupState(db, OFFLOAD_MONTHS_STATE))?.version === OFFLOAD_MONTHS_VERSION) return [];
  const out: { tenant: string; repaired: number }[] = [];
  for (const tenant of await tenantsWithTrips(db)) {
    const repaired = await repairTenant(db, tenant, opts);
    if (repaired) out.push({ tenant, repaired });
  }
  await writeRollupState(db, OFFLOAD_MONTHS_STATE, OFFLOAD_MONTHS_VERSION);
  return out;
}
