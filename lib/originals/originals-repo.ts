/**
 * The store of original XML files, `cfdiOriginals`: one document per tenant and sha256 of the
 * bytes (`_id`), written with each import batch as unordered bulk upserts — importing the same
 * bytes again neither doubles nor rewrites them (only their latest import instant moves).
 */
import { Binary, type Collection, type Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { originalId, type OriginalFile, type OriginalKind, type OriginalRecord } from './original-record.ts';

export const cfdiOriginals = (db: Db): Collection<OriginalRecord> => db.collection<OriginalRecord>(COLLECTIONS.cfdiOriginals);

/** Keeps each file's bytes once (inserted if absent, else only `importedAt` moves to `now`). */
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
      const { _id, importedAt, ...fields } = record;
      // The bytes are never rewritten; `importedAt` moves to the latest import, so a UUID imported
      // with other bytes and then with these again serves these (as its facts do: the last import wins).
      return { updateOne: { filter: { _id }, update: { $setOnInsert: fields, $max: { importedAt } }, upsert: true } };
    }),
    { ordered: false },
  );
}

/** The latest kept file of this kind about a UUID, or null. */
export async function findOriginal(db: Db, tenant: string, uuid: string, kind: OriginalKind, maxTimeMS: number): Promise<OriginalRecord | null> {
  return cfdiOriginals(db).findOne({ tenant, uuids: uuid.toUpperCase(), kind }, { sort: { importedAt: -1 }, maxTimeMS });
}
