/**
 * Durable writes of the on-disk engine (issue 33): a write acknowledged with `j: true` or
 * `w: "majority"` is in the store file when the answer comes, so a `kill -9` of the JVM right
 * after it loses nothing. The engine runs with a commit period of 60 s, so nothing but the
 * durable write path can have committed what survives: a plain `w: 1` write, killed the same
 * way, is lost (which shows the kill lands before any periodic commit).
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MongoClient, type Db } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';

export default async function durabilityTests(t: Test): Promise<void> {
  t.setTimeout(180_000);

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-durability-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  const NO_PERIODIC_COMMIT = ['--commit-delay-ms', '60000', '--no-warm-up'];

  async function withEngine<T>(fn: (db: Db, engine: EmbeddedMongo) => Promise<T>): Promise<T> {
    const engine = await startEmbeddedMongo({ dataDir, shortLived: true, launcherArgs: NO_PERIODIC_COMMIT });
    const client = new MongoClient(engine.uri, { serverSelectionTimeoutMS: 5000, directConnection: true, retryWrites: false });
    try {
      return await fn(client.db('durability'), engine);
    } finally {
      engine.kill();
      await engine.exited;
      await client.close(true).catch(() => {});
    }
  }

  t.test('each kind of write with j:true or w:majority survives a kill -9 right after its answer', async (t) => {
    await withEngine(async (db) => {
      await db.collection<{ _id: string; n: number }>('c').insertMany(
        Array.from({ length: 5 }, (_, i) => ({ _id: `seed-${i}`, n: 0 })),
        { writeConcern: { w: 'majority' } },
      );
    });
    await withEngine(async (db) => {
      const c = db.collection<{ _id: string; n: number }>('c');
      const j = { writeConcern: { w: 1, journal: true } };
      await c.insertOne({ _id: 'inserted', n: 1 }, j);
      await c.updateOne({ _id: 'seed-0' }, { $set: { n: 10 } }, j);
      await c.deleteOne({ _id: 'seed-1' }, j);
      await c.findOneAndUpdate({ _id: 'seed-2' }, { $set: { n: 20 } }, j);
      await c.bulkWrite([{ insertOne: { document: { _id: 'bulk', n: 2 } } }, { updateOne: { filter: { _id: 'seed-3' }, update: { $set: { n: 30 } } } }], {
        writeConcern: { w: 'majority' },
      });
      // Group commit: concurrent durable writers all answered, none waits for the 60 s period.
      await Promise.all(Array.from({ length: 50 }, (_, i) => c.insertOne({ _id: `concurrent-${i}`, n: i }, j)));
    });
    await withEngine(async (db) => {
      const docs = await db.collection('c').find().sort({ _id: 1 }).toArray();
      const byId = new Map(docs.map((d) => [String(d._id), d.n as number]));
      t.equal(byId.get('inserted'), 1, 'insertOne');
      t.equal(byId.get('seed-0'), 10, 'updateOne');
      t.notOk(byId.has('seed-1'), 'deleteOne');
      t.equal(byId.get('seed-2'), 20, 'findOneAndUpdate');
      t.equal(byId.get('bulk'), 2, 'bulkWrite insert');
      t.equal(byId.get('seed-3'), 30, 'bulkWrite update');
      t.equal(docs.filter((d) => String(d._id).startsWith('concurrent-')).length, 50, '50 concurrent inserts');
    });
  });

  t.test('a w:1 write is not waited for (it is lost by a kill before the period ends)', async (t) => {
    await withEngine(async (db) => {
      await db.collection<{ _id: string }>('plain').insertOne({ _id: 'plain' }, { writeConcern: { w: 1 } });
    });
    await withEngine(async (db) => {
      t.equal(await db.collection('plain').countDocuments({}), 0, 'lost: only durable writes wait for a commit');
    });
  });
}
