/**
 * The driver's server monitor recovers after every connection is reset at once
 * (lib/db/monitor-watchdog.ts): a database that hangs, then resets all its
 * connections, is used again without a restart. Without the watchdog the
 * monitor stays wedged and every operation fails server selection forever.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { startMongoProxy } from '../helpers/mongo-proxy.ts';

export default async function monitorWatchdogTests(t: Test): Promise<void> {
  t.setTimeout(120_000);

  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const proxy = await startMongoProxy({ port: engine.port });
  t.teardown(() => proxy.close());
  const { client, db } = await connectMongo(proxy.uri, 'watchdog', { serverSelectionTimeoutMS: 2000 });
  t.teardown(() => client.close());

  t.test('a hang that ends in resets: operations succeed again without a restart', async (t) => {
    const coll = db.collection('items');
    await coll.insertOne({ n: 1 });
    const heartbeats: string[] = [];
    client.on('serverHeartbeatFailed', (e) => heartbeats.push(e.failure.message));

    proxy.mode = 'blackhole';
    const hung = [1, 2, 3].map(() =>
      coll
        .find({}, { maxTimeMS: 2500 })
        .toArray()
        .then(
          () => 'answered',
          (err: Error) => err.name,
        ),
    );
    await new Promise((r) => setTimeout(r, 3000));
    proxy.mode = 'pass';
    proxy.dropConnections();
    t.notOk((await Promise.all(hung)).includes('answered'), 'the hung operations fail');

    const started = Date.now();
    let ok = 0;
    let last = '';
    while (Date.now() - started < 45_000 && ok < 3) {
      last = await coll.countDocuments({}).then(
        (n) => `count ${n}`,
        (err: Error) => `${err.name}: ${err.message}`,
      );
      ok = last === 'count 1' ? ok + 1 : 0;
    }
    t.equal(ok, 3, `answers again after ${Date.now() - started} ms`, { last, heartbeatFailures: heartbeats });
  });
}
