/**
 * A safe resume point for incremental sync (`updatedSince`), as change-data-capture systems give
 * one. A writer stamps `lastUpdate` when it starts and commits later (an import batch commits
 * seconds after its stamp); a reader that kept the largest `lastUpdate` it saw would skip every
 * record committed after its read with an earlier stamp (another writer's later stamp was
 * already visible). So each writer of `lastUpdate` registers itself here before it takes its
 * stamp (`withSyncStamp`), and a list tells its reader where to resume (`syncFrom`): before the
 * oldest write still in flight, and before the instant the reader looked.
 *
 * Proof. Let W be a write (stamp s, registered with `since` ≤ s, its entry durable before s is
 * taken) that a list read does not see, and r0 the instant taken before the list read the
 * registry, itself before it read any page. Either W was registered when the registry was read:
 * then syncFrom ≤ since ≤ s; or W registered after that read: then s was taken after its entry
 * became visible, after the read, after r0, so s > r0 ≥ syncFrom. (W cannot have been removed
 * before the registry read: it is removed only once committed, and a write committed before the
 * pages were read is seen.) Either way W's records carry `lastUpdate` ≥ syncFrom, so a client
 * that resumes from syncFrom sees them. Instances' clocks differ: `SYNC_CLOCK_MARGIN_MS` is
 * taken off for that (a write stamped on a clock up to that far behind the reader's stays
 * covered). A record changed near the boundary may come twice: clients upsert by id.
 *
 * Area-free: an entry names a tenant and an instant, not what is written.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import type { IndexSpecs } from './indexes.ts';

export const SYNC_WRITES_IN_FLIGHT = 'syncWritesInFlight';

/**
 * How far apart the instances' clocks may be: `syncFrom` is this much earlier than the registry
 * alone would say. A constant, not a setting: hosts kept by NTP are milliseconds apart, and a
 * larger margin costs only records read twice.
 */
export const SYNC_CLOCK_MARGIN_MS = 2000;

/**
 * How long an entry counts without being renewed: the writer renews it every quarter of this
 * while its write runs, however long that is (an import batch, a month of delivery tickets);
 * an entry of a writer that died stops holding `syncFrom` back after this (and is purged on
 * real MongoDB by the TTL index). Ten minutes: far above any pause of a live writer's renewal,
 * and the most a crash makes clients read again.
 */
export const SYNC_WRITE_LEASE_MS = 10 * 60_000;

interface WriteInFlight {
  _id: string;
  tenant: string;
  /** On the writer's clock, at or before the stamp the write puts on what it writes. */
  since: Date;
  /** On the writer's clock: the entry stops counting after it unless renewed. */
  expiresAt: Date;
}

export const WRITES_IN_FLIGHT_INDEXES: IndexSpecs = {
  [SYNC_WRITES_IN_FLIGHT]: [
    // syncFrom: the tenant's oldest unexpired entry (equality, sort, range).
    { key: { tenant: 1, since: 1, expiresAt: 1 }, name: 'tenant_since' },
    // Purges the entries of writers that died (the embedded engine never expires anything; syncFrom ignores them).
    { key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 },
  ],
};

const entries = (db: Db): Collection<WriteInFlight> => db.collection<WriteInFlight>(SYNC_WRITES_IN_FLIGHT);

/**
 * Runs `write` with the stamp it must put on the records it changes (`lastUpdate`): registers the
 * write first, then takes the stamp (so stamp ≥ since), and removes the entry once `write` is done
 * or failed (a removal that fails is left to expire). The entry is renewed while `write` runs.
 * Everything `write` stamps must be stamped at or after `stamp` on the same clock.
 */
export async function withSyncStamp<T>(db: Db, tenant: string, now: () => number, write: (stamp: number) => Promise<T>): Promise<T> {
  const _id = randomUUID();
  const since = now();
  await entries(db).insertOne({ _id, tenant, since: new Date(since), expiresAt: new Date(since + SYNC_WRITE_LEASE_MS) });
  const renewal = setInterval(() => {
    entries(db)
      .updateOne({ _id }, { $set: { expiresAt: new Date(now() + SYNC_WRITE_LEASE_MS) } })
      .catch(() => undefined); // the next renewal tries again
  }, SYNC_WRITE_LEASE_MS / 4);
  renewal.unref();
  try {
    return await write(Math.max(since, now()));
  } finally {
    clearInterval(renewal);
    await entries(db)
      .deleteOne({ _id })
      .catch(() => undefined); // left in place, it stops counting after SYNC_WRITE_LEASE_MS
  }
}

/**
 * Where a client of `updatedSince` resumes after a read that starts now (epoch ms): before the
 * tenant's oldest write in flight and before now, less `marginMs`. Call it before reading the
 * first page: every write the pages miss is then stamped at or after it (see the proof above).
 */
export async function syncFrom(db: Db, tenant: string, now: () => number, marginMs: number = SYNC_CLOCK_MARGIN_MS, maxTimeMS?: number): Promise<number> {
  const r0 = now();
  const oldest = await entries(db)
    .find({ tenant, expiresAt: { $gt: new Date(r0) } }, { projection: { since: 1 }, sort: { since: 1 }, limit: 1, ...(maxTimeMS ? { maxTimeMS } : {}) })
    .next();
  return Math.min(r0, oldest ? oldest.since.getTime() : r0) - marginMs;
}
