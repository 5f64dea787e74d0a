/**
 * A deleteMany larger than the engine's heap (scripts/embedded-mongo BsonStoreCollection
 * deleteDocuments): the engine's own path decoded every match into one list before removing any,
 * so a rebuild that forgot what a kind kept of a 1M/1M tenant (650,000 shrinkage findings, or a
 * few hundred fleet days of ~1 MB each) ran the 1 GB heap out and the engine exited. Here the
 * matches are 96 MB of documents on an engine with a 64 MB heap: the delete must answer with
 * their count, leave the others, and the engine must go on answering. Memory decides, not time:
 * the engine's path fails however fast the machine is.
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';

export default async function deleteManyTests(t: Test): Promise<void> {
  t.setTimeout(300_000);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-delete-many-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const engine = await startEmbeddedMongo({ dataDir, shortLived: true, maxHeap: '64m', launcherArgs: ['--cache-mb', '4', '--no-warm-up'] });
  const { client, db } = await connectMongo(engine.uri, 'deletes', { serverSelectionTimeoutMS: 5000 });
  t.teardown(async () => {
    await client.close(true);
    await engine.stop();
  });

  // 480 documents of 200 KB for tenant A (96 MB), 20 for tenant B; an index besides _id, as the kept forms have.
  const big = 'x'.repeat(200_000);
  const days = db.collection<{ _id: string; tenant: string; day: number; pad: string }>('days');
  await days.createIndex({ tenant: 1, day: 1 });
  for (let i = 0; i < 500; i += 20)
    await days.insertMany(Array.from({ length: 20 }, (_, j) => ({ _id: `d${i + j}`, tenant: i + j < 480 ? 'A' : 'B', day: i + j, pad: big })));

  t.test('deleting more than the heap holds answers with the count; the rest stays', async (t) => {
    const res = await days.deleteMany({ tenant: 'A' }, { writeConcern: { j: true } });
    t.equal(res.deletedCount, 480);
    t.equal(await days.countDocuments({ tenant: 'A' }), 0);
    t.same((await days.find({}, { projection: { _id: 1 } }).toArray()).map((d) => d._id).sort(), Array.from({ length: 20 }, (_, j) => `d${480 + j}`).sort());
    t.equal(await days.countDocuments({ tenant: 'B', day: { $gte: 480 } }), 20, 'the index answers the rest');
  });

  t.test('a deleteMany that scans the collection (no index for its filter)', async (t) => {
    t.equal((await days.deleteMany({ day: { $gte: 495 } })).deletedCount, 5);
    t.equal(await days.countDocuments({}), 15);
  });

  t.test('a deleteMany by _id and a deleteOne as before', async (t) => {
    t.equal((await days.deleteMany({ _id: { $in: ['d480', 'd481', 'nope'] }, tenant: 'B' })).deletedCount, 2);
    t.equal((await days.deleteMany({ _id: { $in: ['d482'] }, tenant: 'A' })).deletedCount, 0, 'the rest of the filter still applies');
    t.equal((await days.deleteOne({ tenant: 'B' })).deletedCount, 1);
    t.equal(await days.countDocuments({}), 12);
  });
}
