/**
 * Keeps exactly a computed set of documents as what one scope of a collection holds (a run of a
 * tenant's days of kept entries): reads what the scope holds first, inserts the documents it did
 * not hold, replaces by `_id` only those that changed, then deletes the ones no longer computed.
 * Reading first, not after the writes, means a rebuild into an emptied collection reads back
 * nothing it wrote, and a settle of a day where one invoice changed rewrites that invoice's
 * entries only. Inserting what is new, not upserting it, spares the database a look-up by `_id`
 * per document (on the embedded engine a day's new open items cost a third of what upserts did).
 * A write racing it marks its days again (docs/rollups.md "How the days stay right"), so what this
 * deletes or overwrites from a read a moment old is recomputed by the next settle. `putChanged` is
 * the same for entries put batch by batch, each batch compared with what its `_id`s hold.
 *
 * "Changed" is decided on the stored bytes: a document is written as its canonical form (`_id`
 * first, then its own fields in order) and read back raw, so an unchanged one is the same BSON
 * and is neither decoded nor compared field by field (at 1M documents a month's tax position
 * lines are ~190,000: decoding and comparing them cost a third of a month's recompute). Equal
 * bytes are equal content; the same content in other bytes (fields in another order, which none
 * of our writers leaves) only costs a rewrite (on the embedded engine, one each time: it keeps a
 * document's field order when replaced with equal content).
 */
import { BSON, MongoBulkWriteError, type Collection, type Document, type Filter, type OptionalUnlessRequiredId, type WriteError } from 'mongodb';
import { isDuplicateKeyError } from './duplicate-key.ts';
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

/**
 * Journaled: the engine holds a write's pages until a commit, and a rebuild writes a year at a time; waiting for each
 * batch's commit keeps that bounded (on MongoDB, the usual durable write).
 */
const JOURNALED = { writeConcern: { j: true } } as const;

interface WriteOptions {
  /** Wait for each batch's journal (default true). */
  journaled?: boolean;
}

/** Inserts `batch` (unordered); answers the documents a unique index refused because their _id is already stored. */
async function insertUnlessTaken<T extends { _id: string }>(coll: Collection<T>, batch: readonly T[], opts: WriteOptions): Promise<T[]> {
  try {
    await coll.insertMany(
      batch.map((d) => canonical(d) as OptionalUnlessRequiredId<T>),
      { ordered: false, ...(opts.journaled === false ? {} : JOURNALED) },
    );
    return [];
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const errors: WriteError[] = ([] as WriteError[]).concat(err.writeErrors);
    // Only refusals by _id: anything else (or a journal that failed) is the caller's error.
    if (!errors.length || errors.some((e) => !isDuplicateKeyError(e)) || err.result.getWriteConcernError()) throw err;
    return errors.map((e) => batch[e.index] as T);
  }
}

/** Replaces (or inserts) each document by _id alone (it holds the tenant): the embedded engine finds an upsert's target by its _id index only when the filter is just _id. */
async function replaceById<T extends { _id: string }>(coll: Collection<T>, batch: readonly T[], opts: WriteOptions): Promise<void> {
  if (!batch.length) return;
  await coll.bulkWrite(
    batch.map((d) => ({ replaceOne: { filter: { _id: d._id } as Filter<T>, replacement: canonical(d), upsert: true } })),
    { ordered: false, ...(opts.journaled === false ? {} : JOURNALED) },
  );
}

/** `docs` against what is stored (raw): those stored with other bytes, those not stored, and the stored ids `docs` lacks. */
function compareStored<T extends { _id: string }>(
  coll: Collection<T>,
  docs: readonly T[],
  stored: readonly Uint8Array[],
): { fresh: T[]; changed: T[]; gone: unknown[] } {
  const computed = new Map(docs.map((d) => [d._id, d]));
  // As the driver serializes a write of this collection (undefined written as null unless the client says otherwise).
  const bson = { ignoreUndefined: coll.bsonOptions.ignoreUndefined ?? false };
  const same = new Set<string>();
  const other = new Set<string>();
  const gone: unknown[] = [];
  for (const raw of stored) {
    const id = rawId(raw);
    const next = typeof id === 'string' ? computed.get(id) : undefined;
    if (!next) gone.push(id);
    else (sameBytes(BSON.serialize(canonical(next), bson), raw) ? same : other).add(next._id);
  }
  return { fresh: docs.filter((d) => !same.has(d._id) && !other.has(d._id)), changed: docs.filter((d) => other.has(d._id)), gone };
}

/**
 * Writes what `compareStored` found: the documents not stored when read are inserted (a rebuild into an emptied
 * collection writes only these), which costs the database no look-up by _id; one that a write stored meanwhile, or
 * that another scope holds, is replaced instead, as the changed ones are.
 */
async function writeCompared<T extends { _id: string }>(coll: Collection<T>, fresh: readonly T[], changed: readonly T[], opts: WriteOptions): Promise<void> {
  for (let i = 0; i < fresh.length; i += BATCH) await replaceById(coll, await insertUnlessTaken(coll, fresh.slice(i, i + BATCH), opts), opts);
  for (let i = 0; i < changed.length; i += BATCH) await replaceById(coll, changed.slice(i, i + BATCH), opts);
}

/** A raw read: each document as the bytes the database sent (the driver's type says T; it is a Buffer). */
function readRaw<T extends Document>(coll: Collection<T>, filter: Filter<T>, maxTimeMS: number): Promise<Uint8Array[]> {
  return readAll(coll.find(filter, { maxTimeMS, batchSize: 5000, raw: true })) as unknown as Promise<Uint8Array[]>;
}

export async function replaceScoped<T extends { _id: string; tenant: string }>(
  coll: Collection<T>,
  tenant: string,
  scope: Filter<T>,
  docs: readonly T[],
  maxTimeMS: number,
): Promise<void> {
  const { fresh, changed, gone } = compareStored(coll, docs, await readRaw(coll, scope, maxTimeMS));
  await writeCompared(coll, fresh, changed, {});
  // Within the scope still: an entry another recompute moved to its own scope meanwhile (the same _id) is its now.
  for (let i = 0; i < gone.length; i += BATCH) await coll.deleteMany({ ...scope, _id: { $in: gone.slice(i, i + BATCH) }, tenant }, JOURNALED);
}

/**
 * Stores `docs` (a tenant's) as computed, writing only those not stored with the same bytes: each batch of them is
 * compared with what its `_id`s hold, so nothing else is read or deleted. For entries put batch by batch as a recompute
 * finds them (the shrinkage findings), whose stale ones the caller deletes once the run is done.
 */
export async function putChanged<T extends { _id: string; tenant: string }>(
  coll: Collection<T>,
  tenant: string,
  docs: readonly T[],
  maxTimeMS: number,
  opts: WriteOptions = {},
): Promise<void> {
  for (let i = 0; i < docs.length; i += BATCH) {
    const batch = docs.slice(i, i + BATCH);
    const { fresh, changed } = compareStored(coll, batch, await readRaw(coll, { _id: { $in: batch.map((d) => d._id) }, tenant } as Filter<T>, maxTimeMS));
    await writeCompared(coll, fresh, changed, opts);
  }
}
