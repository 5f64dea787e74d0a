/**
 * `$facet` reads its input once and hands it to every facet batch by batch, each facet on its own
 * thread (scripts/embedded-mongo: the engine's FacetStage, patched so a year of a large tenant's
 * invoices is not held whole in the heap). Every facet must answer exactly as its pipeline run on
 * its own, whatever the batching: here batches of 3 documents and one batch queued per facet, so
 * the facets wait on each other hundreds of times.
 */
import type { Test } from 'tap';
import type { Document } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';

export default async function facetTests(t: Test): Promise<void> {
  t.setTimeout(180_000);

  // For this file's engines only: restored for the files that run after it in this process.
  const javaOpts = process.env.EMBEDDED_MONGO_JAVA_OPTS;
  process.env.EMBEDDED_MONGO_JAVA_OPTS = '-DembeddedMongo.facet.batch=3 -DembeddedMongo.facet.queued=1';
  t.teardown(() => {
    if (javaOpts === undefined) delete process.env.EMBEDDED_MONGO_JAVA_OPTS;
    else process.env.EMBEDDED_MONGO_JAVA_OPTS = javaOpts;
  });
  const engine = await startEmbeddedMongo();
  const { client, db } = await connectMongo(engine.uri, 'facet', { serverSelectionTimeoutMS: 5000 });
  t.teardown(async () => {
    await client.close(true);
    await engine.stop();
  });

  const rows = db.collection('rows');
  await rows.insertMany(
    Array.from({ length: 500 }, (_, i) => ({
      _id: i,
      k: i % 7,
      v: i,
      tags: Array.from({ length: i % 4 }, (_, j) => `t${(i + j) % 5}`),
      zero: 0,
    })) as Document[],
  );

  const prefix = (min: number): Document[] => [{ $match: { v: { $gte: min } } }, { $project: { k: 1, v: 1, tags: 1, zero: 1 } }];
  const FACETS: Record<string, Document[]> = {
    byK: [{ $group: { _id: '$k', n: { $sum: 1 }, total: { $sum: '$v' } } }, { $sort: { _id: 1 } }],
    tags: [{ $unwind: '$tags' }, { $group: { _id: '$tags', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
    top: [{ $sort: { v: -1 } }, { $limit: 3 }],
    early: [{ $limit: 2 }],
    page: [{ $sort: { v: 1 } }, { $skip: 5 }, { $limit: 4 }],
    counted: [{ $count: 'n' }],
    filtered: [{ $match: { k: 3 } }, { $project: { _id: 0, v: 1 } }],
  };

  async function separately(min: number, facets: Record<string, Document[]>): Promise<Record<string, Document[]>> {
    const out: Record<string, Document[]> = {};
    for (const [name, stages] of Object.entries(facets)) out[name] = await rows.aggregate([...prefix(min), ...stages]).toArray();
    return out;
  }

  t.test('every facet answers as its pipeline alone, over many small batches', async (t) => {
    const [faceted] = await rows.aggregate([...prefix(10), { $facet: FACETS }]).toArray();
    const expected = await separately(10, FACETS);
    t.same(faceted, expected);
    t.equal((expected.counted![0] as { n: number }).n, 490, 'the facets saw the whole input');
    t.equal(expected.filtered!.length, 70);
  });

  t.test('an empty input gives each facet an empty input', async (t) => {
    const [faceted] = await rows.aggregate([...prefix(10_000), { $facet: FACETS }]).toArray();
    t.same(faceted, await separately(10_000, FACETS));
  });

  t.test('a facet that changes documents keeps the stock path, with the same answers', async (t) => {
    const facets = { added: [{ $addFields: { w: { $multiply: ['$v', 2] } } }, { $sort: { v: 1 } }, { $limit: 5 }], byK: FACETS.byK! };
    const [faceted] = await rows.aggregate([...prefix(0), { $facet: facets }]).toArray();
    t.same(faceted, await separately(0, facets));
  });

  t.test('a facet that fails fails the command with its error, and the engine goes on', async (t) => {
    const failing = { ok: FACETS.byK!, bad: [{ $project: { q: { $divide: ['$v', '$zero'] } } }, { $group: { _id: null, s: { $sum: '$q' } } }] };
    const alone = await rows
      .aggregate([...prefix(0), ...failing.bad])
      .toArray()
      .then(
        () => null,
        (e: Error) => e.message,
      );
    t.ok(alone, `the failing pipeline fails alone: ${alone}`);
    await t.rejects(rows.aggregate([...prefix(0), { $facet: failing }]).toArray(), { message: alone! });
    const [after] = await rows.aggregate([...prefix(10), { $facet: FACETS }]).toArray();
    t.same(after, await separately(10, FACETS), 'the next $facet answers');
  });

  t.test('a $facet over more rows than the engine heap could hold at once: answered, in bounded memory', async (t) => {
    // 400,000 unwound rows into two facets, on a 32 MB engine: the stock stage kept every row in the heap first.
    process.env.EMBEDDED_MONGO_XMX = '32m';
    const small = await startEmbeddedMongo();
    delete process.env.EMBEDDED_MONGO_XMX;
    const conn = await connectMongo(small.uri, 'facet', { serverSelectionTimeoutMS: 5000 });
    t.teardown(async () => {
      await conn.client.close(true);
      await small.stop();
    });
    const wide = conn.db.collection('wide');
    const values = Array.from({ length: 200 }, (_, i) => i);
    for (let b = 0; b < 2; b++) await wide.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: b * 1000 + i, a: values })) as Document[]);
    const [faceted] = await wide
      .aggregate([{ $unwind: '$a' }, { $facet: { n: [{ $count: 'n' }], s: [{ $group: { _id: null, s: { $sum: '$a' } } }] } }], { maxTimeMS: 120_000 })
      .toArray();
    t.same(faceted, { n: [{ n: 400_000 }], s: [{ _id: null, s: 2000 * ((199 * 200) / 2) }] });
  });
}
