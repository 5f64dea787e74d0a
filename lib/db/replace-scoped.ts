/**
 * Keeps exactly a computed set of documents as what one scope of a collection holds (a run of a
 * tenant's days of kept entries): reads what the scope holds first, upserts by `_id` only the
 * documents that changed, then deletes the ones no longer computed. Reading first, not after the
 * writes, means a rebuild into an emptied collection reads back nothing it wrote, and a settle of
 * a day where one invoice changed rewrites that invoice's entries only. A write racing it marks
 * its days again (docs/rollups.md "How the days stay right"), so what this deletes or overwrites
 * from a read a moment old is recomputed by the next settle.
 *
 * "Changed" is decided on the stored bytes: a document is written as its canonical form (`_id`
 * first, then its own fields in order) and read back raw, so an unchanged one is the same BSON
 * and is neither decoded nor compared field by field (at 1M documents a month's tax position
 * lines are ~190,000: decoding and comparing them cost a third of a month's recompute). Equal
 * bytes are equal content; the same content in other bytes (fields in another order, which none
 * of our writers leaves) only costs a rewrite (on the embedded engine, one each time: it keeps a
 * document's field order when replaced with equal content).
 */
import { BSON, type Collection, type Filter } from 'mongodb';
import { readAll } from './read-all.ts';

/** Documents written, or ids deleted, per command. */
const BATCH = 1000;

/** The form a document is written and compared in: `_id` first, as the database keeps it. */
function canonical<T extends { _id: string }>(d: T): T {
  const { _id, ...fields } = d;
  return { _id, ...fields } as T;
}

const utf8 = new TextDecoder();

/**
 * The `_id` of a raw document: the database stores it first, so it is read from the first
 * element without decoding the rest (any other layout is decoded whole).
 */
export function rawId(raw: Uint8Array): unknown {
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  // int32 size, then the first element: type 0x02 (string), name "_id\0", int32 length (with its NUL), bytes, NUL.
  if (raw.length > 13 && raw[4] === 0x02 && raw[5] === 0x5f && raw[6] === 0x69 && raw[7] === 0x64 && raw[8] === 0) {
    const len = view.getInt32(9, true);
    if (len >= 1 && 13 + len <= raw.length) return utf8.decode(raw.subarray(13, 13 + len - 1));
  }
  return BSON.deserialize(raw)._id;
}

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && Buffer.compare(a, b) === 0;

export async function replaceScoped<T extends { _id: string; tenant: string }>(
  coll: Collection<T>,
  tenant: string,
  scope: Filter<T>,
  docs: readonly T[],
  maxTimeMS: number,
): Promise<void> {
  const computed = new Map(docs.map((d) => [d._id, d]));
  const unchanged = new Set<string>();
  const gone: unknown[] = [];
  // As the driver serializes a write of this collection (undefined written as null unless the client says otherwise).
  const bson = { ignoreUndefined: coll.bsonOptions.ignoreUndefined ?? false };
  // `raw`: each document as the bytes the database sent (the driver's type says T; it is a Buffer).
  const stored = (await readAll(coll.find(scope, { maxTimeMS, batchSize: 5000, raw: true }))) as unknown as Uint8Array[];
  for (const raw of stored) {
    const id = rawId(raw);
    const next = typeof id === 'string' ? computed.get(id) : undefined;
    if (!next) gone.push(id);
    else if (sameBytes(BSON.serialize(canonical(next), bson), raw)) unchanged.add(next._id);
  }
  const changed = docs.filter((d) => !unchanged.has(d._id));
  // Journaled: the engine holds a write's pages until a commit, and a rebuild writes a year at a time; waiting for each
  // batch's commit keeps that bounded (on MongoDB, the usual durable write).
  const writeConcern = { writeConcern: { j: true } };
  // By _id alone (it holds the tenant): the embedded engine finds an upsert's target by its _id index only when the filter is just _id.
  for (let i = 0; i < changed.length; i += BATCH)
    await coll.bulkWrite(
      changed.slice(i, i + BATCH).map((d) => ({
        replaceOne: { filter: { _id: d._id } as Filter<T>, replacement: canonical(d), upsert: true },
      })),
      { ordered: false, ...writeConcern },
    );
  // Within the scope still: an entry another recompute moved to its own scope meanwhile (the same _id) is its now.
  for (let i = 0; i < gone.length; i += BATCH) await coll.deleteMany({ ...scope, _id: { $in: gone.slice(i, i + BATCH) }, tenant }, writeConcern);
}
