/**
 * A kept document that may outgrow MongoDB's 16 MiB document limit, stored as a small head and
 * its parts' bytes in chunk documents of the same collection (docs/rollups.md, "A month in
 * chunks"). Copy-on-write, so a reader never sees a half-written document and a crash
 * loses nothing the head names:
 * - a write inserts its parts' chunks under a fresh stamp, then swaps the head
 *   (findOneAndReplace: exactly one writer displaces each stamp), then deletes the chunks of
 *   the stamp it displaced and those a crashed writer left (stamps no head names, older than
 *   ORPHAN_AFTER_MS);
 * - a reader reads the head, then the chunks of its stamp and of the parts it needs only, and
 *   starts again when a write meanwhile removed them.
 * A chunk's `_id` is the head's followed by `|`: no other document of the collection may have
 * an `_id` beginning so. Chunks carry the head's tenant, so forgetting a tenant's documents
 * forgets them too.
 */
import { Binary, ObjectId, type Collection, type Document } from 'mongodb';

/** Bytes of a part per chunk: a chunk document stays far under the limit, and a month at 1M/1M is 3–4 chunks. */
export const CHUNK_BYTES = 4 * 1024 * 1024;
/** A chunk whose stamp no head names is a crashed write's once it is this old (a write takes seconds). */
export const ORPHAN_AFTER_MS = 60 * 60 * 1000;
const READ_ATTEMPTS = 3;

/** What the head keeps besides the caller's fields: its chunks' stamp and count per part. */
export interface ChunkedHeadFields {
  stamp: string;
  chunks: Record<string, number>;
}

/** A collection holding chunked heads and their chunks (its other documents have string ids too). */
export type ChunkedCollection = Collection<{ _id: string; tenant: string; stamp?: string }>;

interface ChunkDoc {
  _id: string;
  tenant: string;
  stamp: string;
  at: Date;
  bytes: Binary;
}

const chunkId = (headId: string, stamp: string, part: string, n: number): string => `${headId}|${stamp}|${part}|${n}`;
/** Every chunk of a head, whatever its stamp: an `_id` range (`}` follows `|`). */
const chunksOf = (tenant: string, headId: string): Document => ({ tenant, _id: { $gte: `${headId}|`, $lt: `${headId}}` } });

/** A part: named fields of bytes or text (a packed array, JSON), of any size together. */
export type ChunkedPart = Record<string, Uint8Array | string>;

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A part as one run of bytes: the length of a header (uint32, little-endian), the header (JSON:
 * each field's name, kind and byte length, in order), then the fields' bytes. Not BSON: the
 * driver's BSON serializer works in a buffer of 17 MiB, and a part may be larger.
 */
export function encodePart(part: ChunkedPart): Uint8Array {
  const fields = Object.entries(part).map(([name, v]) => [name, typeof v === 'string' ? 's' : 'b', typeof v === 'string' ? utf8.encode(v) : v] as const);
  const header = utf8.encode(JSON.stringify(fields.map(([name, kind, bytes]) => [name, kind, bytes.length])));
  const out = new Uint8Array(4 + header.length + fields.reduce((n, [, , b]) => n + b.length, 0));
  new DataView(out.buffer).setUint32(0, header.length, true);
  out.set(header, 4);
  let at = 4 + header.length;
  for (const [, , bytes] of fields) {
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

/** The part `encodePart` encoded (its byte fields as views of `bytes`). Throws on bytes it did not write. */
export function decodePart(bytes: Uint8Array): ChunkedPart {
  const bad = (why: string): Error => new Error(`a chunked part of ${bytes.length} bytes is malformed: ${why}`);
  if (bytes.length < 4) throw bad('no header length');
  const headerLength = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(0, true);
  if (4 + headerLength > bytes.length) throw bad('header beyond the bytes');
  const header = JSON.parse(fromUtf8.decode(bytes.subarray(4, 4 + headerLength))) as unknown;
  if (!Array.isArray(header)) throw bad('header not a list');
  const out: ChunkedPart = {};
  let at = 4 + headerLength;
  for (const f of header as unknown[]) {
    if (!Array.isArray(f) || typeof f[0] !== 'string' || (f[1] !== 's' && f[1] !== 'b') || !Number.isInteger(f[2]) || f[2] < 0) throw bad('a field entry');
    const end = at + (f[2] as number);
    if (end > bytes.length) throw bad(`field ${f[0]} beyond the bytes`);
    const v = bytes.subarray(at, end);
    out[f[0]] = f[1] === 's' ? fromUtf8.decode(v) : v;
    at = end;
  }
  if (at !== bytes.length) throw bad('bytes after the last field');
  return out;
}

/** Splits bytes into pieces of at most `size` (one empty piece for none). */
export function splitBytes(bytes: Uint8Array, size: number): Uint8Array[] {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`chunk size ${size} is not a positive integer`);
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, Math.min(at + size, bytes.length)));
  return out.length ? out : [new Uint8Array(0)];
}

/**
 * Keeps `head` (its `_id` and `tenant` included) with `parts`, each of any size,
 * replacing what the head kept before. Returns once the head names the new chunks.
 */
export async function writeChunked<H extends { _id: string; tenant: string }>(
  coll: ChunkedCollection,
  head: H,
  parts: Record<string, ChunkedPart>,
  opts: { chunkBytes?: number; now?: () => number } = {},
): Promise<void> {
  if ('stamp' in head || 'chunks' in head) throw new TypeError('a chunked head keeps its own stamp and chunks');
  const now = opts.now ?? Date.now;
  const stamp = new ObjectId().toHexString();
  const at = new Date(now());
  const chunks: Record<string, number> = {};
  const docs: ChunkDoc[] = [];
  for (const [part, value] of Object.entries(parts)) {
    const pieces = splitBytes(encodePart(value), opts.chunkBytes ?? CHUNK_BYTES);
    chunks[part] = pieces.length;
    pieces.forEach((bytes, n) => docs.push({ _id: chunkId(head._id, stamp, part, n), tenant: head.tenant, stamp, at, bytes: new Binary(bytes) }));
  }
  // The driver splits the batch into messages of its own size limit.
  await coll.insertMany(docs, { ordered: true, writeConcern: { j: true } });
  const fields: ChunkedHeadFields = { stamp, chunks };
  const before = await coll.findOneAndReplace(
    { _id: head._id, tenant: head.tenant },
    { ...head, ...fields },
    {
      upsert: true,
      returnDocument: 'before',
      projection: { stamp: 1 },
      writeConcern: { j: true },
    },
  );
  const displaced = typeof before?.stamp === 'string' ? [before.stamp] : [];
  await coll.deleteMany(
    {
      ...chunksOf(head.tenant, head._id),
      $or: [{ stamp: { $in: displaced } }, { stamp: { $ne: stamp }, at: { $lt: new Date(now() - ORPHAN_AFTER_MS) } }],
    },
    { writeConcern: { j: true } },
  );
}

/**
 * A head and the parts named (each as written), or null when no head is kept. Throws when a
 * part was not written with the head, or when its chunks went missing in every attempt.
 */
export async function readChunked<H extends { _id: string; tenant: string }>(
  coll: ChunkedCollection,
  tenant: string,
  headId: string,
  parts: readonly string[],
  maxTimeMS: number,
): Promise<{ head: H & ChunkedHeadFields; parts: Record<string, ChunkedPart> } | null> {
  for (let attempt = 1; ; attempt++) {
    const head = (await coll.findOne({ _id: headId, tenant }, { maxTimeMS })) as unknown as (H & ChunkedHeadFields) | null;
    if (!head) return null;
    const ids: string[] = [];
    for (const part of parts) {
      const count = head.chunks?.[part];
      if (!Number.isInteger(count)) throw new Error(`${coll.collectionName} ${headId}: no part ${part} kept`);
      for (let n = 0; n < (count as number); n++) ids.push(chunkId(headId, head.stamp, part, n));
    }
    const found = new Map<string, ChunkDoc>();
    if (ids.length)
      for await (const c of coll.find({ _id: { $in: ids }, tenant }, { maxTimeMS, projection: { bytes: 1 } })) found.set(c._id, c as unknown as ChunkDoc);
    if (found.size === ids.length) {
      const out: Record<string, ChunkedPart> = {};
      for (const part of parts) {
        const pieces = Array.from({ length: head.chunks[part] as number }, (_, n) => {
          const b = (found.get(chunkId(headId, head.stamp, part, n)) as ChunkDoc).bytes;
          return b.buffer.subarray(0, b.position);
        });
        out[part] = decodePart(pieces.length === 1 ? (pieces[0] as Uint8Array) : Buffer.concat(pieces));
      }
      return { head, parts: out };
    }
    // A write replaced the head and deleted this stamp's chunks since the head was read.
    if (attempt >= READ_ATTEMPTS) throw new Error(`${coll.collectionName} ${headId}: chunks of stamp ${head.stamp} missing after ${attempt} reads`);
  }
}

/** Forgets a head and every chunk of it (the head first: a reader then finds nothing, not a head without chunks). */
export async function deleteChunked(coll: ChunkedCollection, tenant: string, headId: string): Promise<void> {
  await coll.deleteOne({ _id: headId, tenant }, { writeConcern: { j: true } });
  await coll.deleteMany(chunksOf(tenant, headId), { writeConcern: { j: true } });
}
