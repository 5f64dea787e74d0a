/**
 * The index mechanism of lib/db: areas' specs joined in order, a collection declared by two areas
 * refused, retired indexes dropped at start.
 */
import type { Test } from 'tap';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { joinIndexSpecs } from '../../lib/db/indexes.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';

export default async function indexSpecsTests(t: Test): Promise<void> {
  const a = { one: [{ key: { tenant: 1 }, name: 'tenant' }], two: [] };
  const b = { three: [{ key: { tenant: 1, at: -1 }, name: 'tenant_at' }] };

  t.test('specs are joined in argument order, each collection with its own indexes', async (t) => {
    const joined = joinIndexSpecs(b, a);
    t.same(Object.keys(joined), ['three', 'one', 'two']);
    t.same(joined.one, [{ key: { tenant: 1 }, name: 'tenant' }]);
    t.same(joined.three, [{ key: { tenant: 1, at: -1 }, name: 'tenant_at' }]);
  });

  t.test('a collection declared twice is refused, not silently replaced', async (t) => {
    t.throws(() => joinIndexSpecs(a, { one: [{ key: { other: 1 }, name: 'other' }] }), { message: 'the indexes of one are declared twice' });
  });

  t.test('a store created before keeps no retired index: start-up drops them after creating their replacements', async (t) => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'retired-'));
    const engine = await startEmbeddedMongo({ dataDir });
    const { client, db } = await connectMongo(engine.uri, 'retired', { serverSelectionTimeoutMS: 5000 });
    t.teardown(async () => {
      await client.close(true);
      await engine.stop();
      await rm(dataDir, { recursive: true, force: true });
    });
    // As an older version created them.
    await db.collection('trips').createIndexes([
      { key: { company: 1, 'shipments.date': 1 }, name: 'tenant_leg_date' },
      { key: { company: 1, 'shipments.unloadDate': 1 }, name: 'tenant_leg_unload' },
    ]);
    await ensureIndexes(db);
    const names = async () => (await db.collection('trips').listIndexes().toArray()).map((i) => String(i.name));
    const after = await names();
    t.notOk(after.includes('tenant_leg_date'), 'tenant_leg_date dropped');
    t.notOk(after.includes('tenant_leg_unload'), 'tenant_leg_unload dropped');
    t.ok(after.includes('tenant_leg_unload_created') && after.includes('tenant_leg_date_created'), 'their replacements are there');
    await ensureIndexes(db);
    t.same(await names(), after, 'idempotent: a second start changes nothing');
  });
}
