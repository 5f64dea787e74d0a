/**
 * lib/db/read-all.ts: a query answering 200,000 small documents is read whole. The driver's own
 * `toArray()` fails on it (the 300k seed's rollup rebuild died of it: RangeError, Maximum call
 * stack size exceeded), which this file checks first so that it shows the case is reached.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { readAll } from '../../lib/db/read-all.ts';

export default async function readAllTests(t: Test): Promise<void> {
  t.setTimeout(180_000);

  const N = 200_000;
  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'readall');
  t.teardown(() => client.close());
  const coll = db.collection<{ _id: string; day: string }>('ids');
  for (let i = 0; i < N; i += 20_000)
    await coll.insertMany(
      Array.from({ length: 20_000 }, (_, j) => ({
        _id: `id-${String(i + j).padStart(6, '0')}`,
        day: `2026-01-${String(((i + j) % 28) + 1).padStart(2, '0')}`,
      })),
    );

  t.test("the driver's toArray cannot hold the batch", async (t) => {
    await t.rejects(coll.find({}, { projection: { _id: 1 } }).toArray(), RangeError);
  });

  t.test('readAll returns every document once, in the cursor order', async (t) => {
    const got = await readAll(coll.find({}, { projection: { _id: 1 }, sort: { _id: 1 } }));
    t.equal(got.length, N);
    t.equal(got[0]!._id, 'id-000000');
    t.equal(got[N - 1]!._id, 'id-199999');
    t.equal(new Set(got.map((d) => d._id)).size, N, 'no document twice');
    t.ok(
      got.every((d, i) => d._id === `id-${String(i).padStart(6, '0')}`),
      'in order',
    );
  });

  t.test('a filtered query and an empty one', async (t) => {
    t.equal((await readAll(coll.find({ day: '2026-01-01' }, { projection: { _id: 1 } }))).length, Math.ceil(N / 28));
    t.same(await readAll(coll.find({ day: 'none' })), []);
  });
}
