/**
 * Where an export's file is written: a Writable that stores the bytes as chunks of CHUNK_BYTES in
 * `exportChunks` as they come (one insert in flight, so a writer that respects backpressure holds
 * at most about one chunk), counting the size and the SHA-256 on the way.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { Db, ObjectId } from 'mongodb';
import { insertExportChunk } from './exports-repo.ts';

/** GridFS's default chunk size: well under the 16 MiB document limit, few round trips. */
export const CHUNK_BYTES = 255 * 1024;

export interface ChunkSink extends Writable {
  /** Once finished: the file's size, SHA-256 (hex) and chunk count. */
  summary(): { size: number; sha256: string; chunks: number };
}

export function chunkSink(db: Db, tenant: string, exportId: ObjectId): ChunkSink {
  const hash = createHash('sha256');
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let size = 0;
  let n = 0;
  const flush = async (all: boolean): Promise<void> => {
    while (pendingBytes >= CHUNK_BYTES || (all && pendingBytes > 0)) {
      const joined = Buffer.concat(pending);
      const piece = joined.subarray(0, CHUNK_BYTES);
      const rest = joined.subarray(piece.length);
      pending = rest.length ? [Buffer.from(rest)] : [];
      pendingBytes = rest.length;
      await insertExportChunk(db, tenant, exportId, n++, Buffer.from(piece));
    }
  };
  const sink = new Writable({
    highWaterMark: CHUNK_BYTES,
    write(chunk: Buffer, _encoding, callback) {
      hash.update(chunk);
      size += chunk.length;
      pending.push(chunk);
      pendingBytes += chunk.length;
      flush(false).then(() => callback(), callback);
    },
    final(callback) {
      flush(true).then(() => callback(), callback);
    },
  }) as ChunkSink;
  let digest: string | null = null;
  sink.summary = () => {
    digest ??= hash.digest('hex');
    return { size, sha256: digest, chunks: n };
  };
  return sink;
}
