/**
 * A sorted find without a limit, through the real driver, on the on-disk engine with a heap far
 * smaller than what it returns: an export's file read back in order `n` (lib/exports/exports-repo.ts,
 * the service's own functions and indexes). The engine must walk the compound unique index
 * `tenant, exportId, n` for the tenant and export and stream the chunks batch by batch; gathering
 * and sorting every match before the first batch (the stock path) runs a 64 MB heap out of memory
 * with 160 MB of chunks, as it did a 1.28 GB heap with a 1.4 GB file. The expected bytes are the
 * test's own: each chunk's digest, computed as it was written.
 */
import type { Test } from 'tap';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MongoServerError, ObjectId } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureExportIndexes, insertExportChunk, readExportChunks } from '../../lib/exports/exports-repo.ts';

const CHUNKS = 160;
const CHUNK_BYTES = 1 << 20;
const TENANT = 'AAA010101AAA';

export default async function orderedStreamTests(t: Test): Promise<void> {
  t.setTimeout(300_000);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-ordered-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  async function open(t: Test) {
    const engine = await startEmbeddedMongo({ dataDir, shortLived: true, maxHeap: '64m' });
    const state = { exited: false };
    void engine.exited.then(() => (state.exited = true));
    const { client, db } = await connectMongo(engine.uri, 'ordered', { serverSelectionTimeoutMS: 5000 });
    t.teardown(async () => {
      await client.close(true);
      await engine.stop();
    });
    return { state, db };
  }

  /** The file's chunks as read back: each one's digest, in the order they came. */
  async function readBack(db: Parameters<typeof readExportChunks>[0], exportId: ObjectId): Promise<string[]> {
    const digests: string[] = [];
    for await (const chunk of readExportChunks(db, TENANT, exportId)) digests.push(createHash('sha256').update(chunk).digest('hex'));
    return digests;
  }

  const exportId = new ObjectId();
  const other = new ObjectId();
  const expected: string[] = [];

  t.test('160 MB of chunks, written out of order beside another export, read back in order n in a 64 MB heap', async (t) => {
    const { state, db } = await open(t);
    await ensureExportIndexes(db);
    // Written odd n first, then even: the order read back can only come from the index, not from arrival.
    const order = [...Array(CHUNKS).keys()].sort((a, b) => (a % 2) - (b % 2) || a - b).reverse();
    const bytes = new Map<number, string>();
    for (const n of order) {
      const data = randomBytes(CHUNK_BYTES);
      bytes.set(n, createHash('sha256').update(data).digest('hex'));
      await insertExportChunk(db, TENANT, exportId, n, data);
      if (n % 40 === 0) await insertExportChunk(db, TENANT, other, n, randomBytes(1024));
    }
    for (let n = 0; n < CHUNKS; n++) expected.push(bytes.get(n)!);

    const digests = await readBack(db, exportId);
    t.equal(digests.length, CHUNKS, 'every chunk of the export, none of the other');
    t.same(digests, expected, 'in order n, each chunk whole');
    t.equal((await readBack(db, other)).length, 4, "the other export's own chunks");
    t.notOk(state.exited, 'the engine is still running');
  });

  t.test('the compound index still refuses a second chunk with the same n', async (t) => {
    const { db } = await open(t);
    const error = await insertExportChunk(db, TENANT, exportId, 7, randomBytes(16)).catch((e: unknown) => e);
    t.ok(error instanceof MongoServerError && error.code === 11000, 'E11000 duplicate key');
    t.same(await readBack(db, exportId), expected, 'after a restart, from the index kept in the store');
  });
}
