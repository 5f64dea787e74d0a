/**
 * lib/db/delete-in-batches.ts: deletes exactly what the filter matches, a batch at a time, and
 * counts it; other tenants' documents stay.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { deleteInBatches } from '../../lib/db/delete-in-batches.ts';

export default async function deleteInBatchesTests(t: Test): Promise<void> {
  t.setTimeout(120_000);

  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'deletebatches');
  t.teardown(() => client.close());
  const coll = db.collection<{ _id: number; tenant: string; kind: string }>('docs');
  // 12,345 documents: tenant A holds the even ones (6,173), B the odd ones (6,172); kind 'x' every third.
  await coll.insertMany(Array.from({ length: 12_345 }, (_, i) => ({ _id: i, tenant: i % 2 === 0 ? 'A' : 'B', kind: i % 3 === 0 ? 'x' : 'y' })));

  t.test('a filter narrower than the tenant, in batches of 500', async (t) => {
    // A's documents with kind x: even multiples of 3 below 12,345, i.e. multiples of 6: 0..12,342 → 2,058.
    t.equal(await deleteInBatches(coll, { tenant: 'A', kind: 'x' }, 500), 2058);
    t.equal(await coll.countDocuments({ tenant: 'A', kind: 'x' }), 0);
    t.equal(await coll.countDocuments({ tenant: 'A' }), 6173 - 2058);
  });

  t.test("the rest of a tenant, the other tenant's left whole", async (t) => {
    t.equal(await deleteInBatches(coll, { tenant: 'A' }, 1000), 6173 - 2058);
    t.equal(await coll.countDocuments({ tenant: 'A' }), 0);
    t.equal(await coll.countDocuments({ tenant: 'B' }), 6172);
    t.equal(await deleteInBatches(coll, { tenant: 'A' }), 0, 'nothing left to delete');
  });

  t.test('documents written while it deletes are deleted too, each batch a command of its own', async (t) => {
    // B's 6,172 documents; after its first batch's delete, 7 more of B arrive (ids above the others).
    const batches: number[] = [];
    let added = false;
    const racing = Object.create(coll) as typeof coll;
    racing.deleteMany = async (filter: { _id: { $in: number[] } }, opts?: object) => {
      batches.push(filter._id.$in.length);
      const r = await coll.deleteMany(filter, opts);
      if (!added) {
        added = true;
        await coll.insertMany(Array.from({ length: 7 }, (_, i) => ({ _id: 100_000 + i, tenant: 'B', kind: 'z' })));
      }
      return r;
    };
    t.equal(await deleteInBatches(racing, { tenant: 'B' }, 2000), 6172 + 7);
    t.equal(await coll.countDocuments({ tenant: 'B' }), 0);
    t.equal(
      batches.reduce((a, b) => a + b, 0),
      6172 + 7,
      'every id deleted once',
    );
    t.ok(
      batches.every((n) => n <= 2000),
      'no batch above its size',
    );
  });
}
