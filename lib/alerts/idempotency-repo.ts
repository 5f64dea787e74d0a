/**
 * Idempotency-Key records (`idempotencyKeys`). `_id` = tenant + key + operation
 * (lib/alerts/idempotency.ts idempotencyRecordId), so the primary key makes
 * "first request wins" atomic on any engine; `fingerprint` is the request the
 * key is bound to (another one with the key is a 409); a TTL index on
 * `expiresAt` purges them on real MongoDB (the embedded engine never expires
 * anything, so readers also treat an expired record as absent).
 */
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { insertUnlessDuplicate } from '../db/duplicate-key.ts';

export interface IdempotencyRecord {
  _id: string;
  tenant: string;
  key: string;
  operation: string;
  /** sha256 of the canonical request. */
  fingerprint: string;
  state: 'pending' | 'done';
  /** While pending: when another request may take over (the first one died). */
  leaseUntil: Date;
  status: number | null;
  body: unknown;
  createdAt: Date;
  expiresAt: Date;
}

export const idempotencyKeys = (db: Db): Collection<IdempotencyRecord> => db.collection<IdempotencyRecord>(COLLECTIONS.idempotency);

export const idempotencyId = (tenant: string, key: string): string => `${tenant}:${key}`;

/** Claims the key; false when a record already exists. */
export function claimIdempotencyKey(db: Db, record: IdempotencyRecord): Promise<boolean> {
  return insertUnlessDuplicate(idempotencyKeys(db), record);
}

export async function getIdempotencyRecord(db: Db, id: string): Promise<IdempotencyRecord | null> {
  return idempotencyKeys(db).findOne({ _id: id });
}

/** Takes over a pending record whose lease ran out (compare-and-set on the lease). */
export async function takeOverIdempotencyKey(db: Db, id: string, previousLease: Date, newLease: Date): Promise<boolean> {
  const res = await idempotencyKeys(db).updateOne({ _id: id, state: 'pending', leaseUntil: previousLease }, { $set: { leaseUntil: newLease } });
  return res.modifiedCount === 1;
}

export async function completeIdempotencyKey(db: Db, id: string, status: number, body: unknown): Promise<void> {
  await idempotencyKeys(db).updateOne({ _id: id }, { $set: { state: 'done', status, body } }, { writeConcern: { w: 'majority' } });
}

/** Frees a pending key (the request failed), so the client can retry with it. */
export async function releaseIdempotencyKey(db: Db, id: string): Promise<void> {
  await idempotencyKeys(db).deleteOne({ _id: id, state: 'pending' });
}

/** Removes an expired record (only that version of it). */
export async function deleteExpiredIdempotencyKey(db: Db, id: string, expiresAt: Date): Promise<void> {
  await idempotencyKeys(db).deleteOne({ _id: id, expiresAt });
}
