/**
 * The embedded engine serves each connection on its own thread, as mongod does
 * (scripts/embedded-mongo ConnectionThreadsServer). The stock server runs every
 * command on one of a few shared I/O loops: a long aggregation held up every
 * connection on its loop, the driver's heartbeat included, and a long audit
 * ended in "database unavailable" for all tenants. An ordering check, not a
 * timing budget: every other connection's command must be answered while the
 * long one is still running.
 */
import type { Test } from 'tap';
import { MongoClient } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';

export default async function connectionsTests(t: Test): Promise<void> {
  t.setTimeout(180_000);

  const engine = await startEmbeddedMongo({});
  t.teardown(() => engine.stop());
  const clients: MongoClient[] = [];
  t.teardown(() => Promise.all(clients.map((c) => c.close(true))));
  const connect = async () => {
    const c = new MongoClient(engine.uri, { maxPoolSize: 1, directConnection: true });
    clients.push(c);
    await c.db('x').command({ ping: 1 });
    return c;
  };

  const slowClient = await connect();
  const docs = slowClient.db('x').collection('d');
  for (let i = 0; i < 10; i++) await docs.insertMany(Array.from({ length: 20_000 }, (_, j) => ({ n: i * 20_000 + j, s: `v${j % 977}`, arr: [1, 2, 3, j] })));
  // One connection per I/O loop and more (the stock server had 2 per core, assigned round robin).
  const others = await Promise.all(Array.from({ length: 12 }, connect));

  t.test('a long aggregation on one connection does not hold up the others', async (t) => {
    let slowDone = false;
    const slow = docs
      .aggregate([{ $unwind: '$arr' }, { $group: { _id: '$s', total: { $sum: '$arr' }, ns: { $addToSet: '$n' } } }, { $sort: { _id: 1 } }])
      .toArray()
      .then((rows) => {
        slowDone = true;
        return rows.length;
      });
    await new Promise((r) => setTimeout(r, 200)); // let it start
    const answeredWhileRunning = await Promise.all(others.map(async (c) => (await c.db('x').command({ ping: 1 }), !slowDone)));
    t.equal(await slow, 977, 'the long aggregation completes with its answer');
    t.same(
      answeredWhileRunning,
      others.map(() => true),
      'every other connection was answered before it finished',
    );
  });

  t.test('connections that close free their threads; new ones are served', async (t) => {
    await Promise.all(others.splice(0).map((c) => c.close(true)));
    const fresh = await Promise.all(Array.from({ length: 4 }, connect));
    for (const c of fresh) t.same(await c.db('x').command({ ping: 1 }), { ok: 1 });
    t.equal(await docs.countDocuments({}), 200_000);
  });
}
