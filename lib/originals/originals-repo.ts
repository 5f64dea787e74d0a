/**
 * The store of original XML files, `cfdiOriginals`: one document per tenant and sha256 of the
 * bytes (`_id`), written with the facts of each import batch as unordered bulk upserts that only
 * insert — importing the same bytes again neither doubles nor rewrites them.
 */
import { Binary, type Collection, type Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { originalId, type OriginalFile, type OriginalKind, type OriginalRecord } from './original-record.ts';

export const cfdiOriginals = (db: Db): Collection<OriginalRecord> => db.collection<OriginalRecord>(COLLECTIONS.cfdiOriginals);

/** Keeps each file's bytes once (insert if absent, the stored one untouched otherwise). */
export async function keepOriginals(db: Db, tenant: string, files: readonly OriginalFile[], now: Date): Promise<void> {
  if (!files.length) return;
  await cfdiOriginals(db).bulkWrite(
    files.map((f) => {
      const record: OriginalRecord = {
        _id: originalId(tenant, f.sha256),
        tenant,
        sha256: f.sha256,
        kind: f.kind,
        uuids: [...new Set(f.uuids.map((u) => u.toUpperCase()))],
        bytes: new Binary(f.bytes),
        size: f.bytes.length,
        name: f.name,
        importedAt: now,
      };
      const { _id, ...fields } = record;
      return { updateOne: { filter: { _id }, update: { $setOnInsert: fields }, upsert: true } };
    }),
    { ordered: false },
  );
}

/** The latest kept file of this kind about a UUID, or null. */
export async function findOriginal(db: Db, tenant: string, uuid: string, kind: OriginalKind, maxTimeMS: number): Promise<OriginalRecord | null> {
  return cfdiOriginals(db).findOne({ tenant, uuids: uuid.toUpperCase(), kind }, { sort: { importedAt: -1 }, maxTimeMS });
}
