/**
 * Writes and reads of the on-disk engine while its background commits serialise the store
 * (scripts/embedded-mongo: StoreCommits.commitInBackground lets operations go on while MVStore
 * writes the captured version on its own thread).
 *
 * Regression: H2's ObjectDataType, the key type of every collection's document map, caches the
 * type of the last value it handled in a plain field that its write (on MVStore's serialisation
 * thread) changes and its comparison of two ObjectIds (on a connection's thread) reads twice. With
 * ObjectId and string _ids mixed in a collection, an insert, update or find that compared two
 * ObjectIds while a commit was writing string keys failed with "Unknown error: Can not compare
 * [2.3.232/0]" (seen once in test/embedded/indexes.ts). The engine now opens those maps with
 * StoreObjectType (a thread-safe ObjectDataType). A race, so this test makes it likely, not
 * certain: commits every few milliseconds, mixed _ids, several connections; before the fix it
 * failed within seconds on most runs.
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ObjectId, type Document } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';

export default async function commitRaceTests(t: Test): Promise<void> {
  t.setTimeout(300_000);

  t.test('ObjectId and string _ids under concurrent writes while background commits serialise the store', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-commit-race-'));
    t.teardown(() => rm(dataDir, { recursive: true, force: true }));
    const engine = await startEmbeddedMongo({ dataDir, launcherArgs: ['--commit-delay-ms', '5'] });
    const { client, db } = await connectMongo(engine.uri, 'race', { serverSelectionTimeoutMS: 5000, driver: { maxPoolSize: 6 } });
    t.teardown(async () => {
      await client.close(true);
      await engine.stop();
    });
    const c = db.collection('docs');
    await c.createIndexes([{ key: { company: 1, amount: 1 }, name: 'tenant_amount' }]);

    let n = 0;
    const doc = (): Document => {
      const i = n++;
      return {
        _id: i % 2 ? new ObjectId() : `doc-${String(i).padStart(7, '0')}`,
        company: i % 3 ? 'A' : 'B',
        amount: i % 5 === 0 ? { cents: i } : i % 50,
        pad: 'x'.repeat(200),
      };
    };

    const errors: string[] = [];
    const until = Date.now() + Number(process.env.EMBEDDED_RACE_SECONDS ?? 8) * 1000;
    const worker = async (kind: number): Promise<number> => {
      let ops = 0;
      while (Date.now() < until && errors.length === 0) {
        try {
          if (kind === 0) await c.insertMany(Array.from({ length: 200 }, doc));
          else if (kind === 1) await c.updateMany({ company: 'A', amount: { $gte: 10, $lt: 20 } }, { $inc: { n: 1 } });
          else if (kind === 2) await c.updateOne({ company: 'A', amount: { $type: 'object' } }, { $set: { amount: 12 } });
          else await c.find({ company: 'B', amount: { $lt: 30 } }).toArray();
          ops++;
        } catch (err) {
          errors.push(`${['insertMany', 'updateMany', 'updateOne', 'find'][kind]}: ${(err as Error).message}`);
        }
      }
      return ops;
    };
    const ops = await Promise.all([0, 0, 1, 2, 3].map(worker));
    t.same(errors, [], 'no operation fails');
    t.ok(
      ops.every((k) => k > 0),
      `every kind of operation ran (${ops.join(', ')})`,
    );
    t.equal(await c.countDocuments({}), n, 'every inserted document is there');
    const validate = await db.command({ validate: 'docs' });
    t.equal(validate.valid, true, `indexes agree with the documents ${JSON.stringify(validate.errors ?? [])}`);
  });
}
