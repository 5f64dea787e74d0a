/**
 * A query cursor read while the store compacts (scripts/embedded-mongo ResumableCursor): a cursor
 * walks the B-tree of the moment it opened, and once the store has compacted the chunks that
 * tree's pages lie in and their retention has passed, the next page it loads used to fail ("Chunk N
 * not found": at 1M trips, a start-up backfill reading every trip for minutes). The engine runs
 * with a small page cache, compaction every 50 ms and no retention, so the cursor's pages are gone
 * by its second batch; it must then go on from the last document it returned, in the collection
 * as it is now, as a MongoDB cursor does. A collection scan and an index walk in order, each
 * checked against the documents the collection holds after the writes (less the one document the
 * engine had read ahead of its batch).
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';

export default async function cursorCompactionTests(t: Test): Promise<void> {
  t.setTimeout(300_000);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'embedded-cursor-compaction-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const engine = await startEmbeddedMongo({
    dataDir,
    shortLived: true,
    launcherArgs: ['--cache-mb', '1', '--no-warm-up', '--commit-delay-ms', '20', '--compact-every-ms', '50', '--retention-ms', '0'],
  });
  const { client, db } = await connectMongo(engine.uri, 'compaction', { serverSelectionTimeoutMS: 5000 });
  t.teardown(async () => {
    await client.close(true);
    await engine.stop();
  });

  const N = 20_000;
  const pad = 'x'.repeat(400);
  const docs = db.collection<{ _id: string; n: number; pad: string; v: number }>('docs');
  await docs.createIndex({ n: 1 });
  for (let i = 0; i < N; i += 1000)
    await docs.insertMany(
      Array.from({ length: 1000 }, (_, k) => ({ _id: `d${String(i + k).padStart(6, '0')}`, n: i + k, pad, v: 0 })),
      { writeConcern: { j: true } },
    );

  /** Every page of the store rewritten under the open cursor: most documents removed, the others grown. */
  async function churn(round: number): Promise<void> {
    await docs.deleteMany({ n: { $mod: [4, round % 4] } }, { writeConcern: { j: true } });
    await docs.updateMany({}, { $set: { v: round, pad: pad + String(round) } }, { writeConcern: { j: true } });
    // Compaction runs every 50 ms after a commit: a few more commits, and time for it.
    for (let k = 0; k < 10; k++) {
      await db.collection('tick').insertOne({ k, round }, { writeConcern: { j: true } });
      await sleep(60);
    }
  }

  const cases: { name: string; open: () => AsyncIterable<{ _id: string; n: number }>; key: (d: { _id: string; n: number }) => number }[] = [
    { name: 'collection scan', open: () => docs.find({}, { batchSize: 500, projection: { n: 1 } }), key: (d) => d.n },
    { name: 'index walk in order', open: () => docs.find({ n: { $gte: 0 } }, { batchSize: 500, projection: { n: 1 } }).sort({ n: 1 }), key: (d) => d.n },
  ];
  for (const [round, c] of cases.entries())
    await t.test(c.name, async (t) => {
      const seen: number[] = [];
      let churned = false;
      for await (const d of c.open()) {
        seen.push(c.key(d));
        // Past the first batch: the cursor's pages are compacted away before its next getMore.
        if (seen.length === 500 && !churned) {
          churned = true;
          await churn(round);
        }
      }
      const last = seen[499] as number;
      const after = (await docs.find({ n: { $gt: last } }, { projection: { n: 1 } }).toArray()).map((d) => d.n).sort((x, y) => x - y);
      const rest = seen.slice(500);
      const kept = new Set(after);
      t.ok(churned, `${c.name}: the store was rewritten under the cursor`);
      t.ok(
        rest.every((n, i) => i === 0 || n > (rest[i - 1] as number)),
        `${c.name}: the rest in order, each once`,
      );
      t.same(
        rest.filter((n) => kept.has(n)),
        after,
        `${c.name}: every document the collection holds past the last one returned before the writes`,
      );
      // The engine reads one document ahead of the batch it answers: that one may be gone since.
      t.ok(rest.filter((n) => !kept.has(n)).length <= 1, `${c.name}: no document removed before the cursor reached it`);
    });
}
