/**
 * Two API instances, one database, one real Redis (issue 12, section 2): with
 * RATE_LIMIT_MAX=N they answer together exactly N non-429 responses per key and
 * window. Redis stopped mid-test: each instance counts on its own
 * (docs/configuration.md, "Production") and nothing fails; Redis back: the shared count resumes without
 * a restart.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { startService } from '../helpers/service.ts';
import { startRedis } from '../helpers/redis.ts';

export default async function rateLimitTests(t: Test): Promise<void> {
  t.setTimeout(180_000);
  const N = 12;
  const TENANT = 'TGO850101AB1';

  const redis = await startRedis();
  t.teardown(() => redis.stop());
  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'multi');
  t.teardown(() => client.close());
  await ensureIndexes(db);

  const env = { LOG_LEVEL: 'info', REDIS_URL: redis.url, RATE_LIMIT_MAX: String(N), RATE_LIMIT_WINDOW_MS: '120000', ALERT_WORKER: 'false' };
  const [a, b] = await Promise.all([
    startService({ mongodbUri: engine.uri, mongodbDb: 'multi', env }),
    startService({ mongodbUri: engine.uri, mongodbDb: 'multi', env }),
  ]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));

  const freshKey = async (label: string) => (await createApiKey(db, TENANT, label)).key;
  const call = (base: string, key: string) =>
    fetch(`${base}/api/shipments?limit=1`, { headers: { 'x-api-key': key } }).then(async (r) => ({
      status: r.status,
      remaining: r.headers.get('x-ratelimit-remaining'),
      body: await r.text(),
    }));

  /** 3N requests alternating between the instances; the statuses seen. */
  async function burst(key: string) {
    const statuses: number[] = [];
    for (let i = 0; i < 3 * N; i++) statuses.push((await call(i % 2 === 0 ? a.base : b.base, key)).status);
    return statuses;
  }

  t.test('shared budget: exactly N non-429 answers across both instances', async (t) => {
    const statuses = await burst(await freshKey('shared'));
    t.equal(statuses.filter((s) => s !== 429).length, N, `${N} answered`);
    t.same([...new Set(statuses.filter((s) => s !== 429))], [200], 'and they are 200s');
    t.same(statuses.slice(N), Array(2 * N).fill(429), 'then 429 on both instances');
  });

  t.test('Redis down: each instance counts on its own, nothing fails', async (t) => {
    await redis.kill();
    const key = await freshKey('degraded');
    const statuses = await burst(key);
    t.notOk(
      statuses.some((s) => s >= 500),
      'no 5xx while Redis is down',
    );
    t.equal(statuses.filter((s) => s === 200).length, 2 * N, `each instance allows its own ${N}: ${2 * N} in all (documented degradation, never unlimited)`);
    t.match(a.output() + b.output(), /Redis unavailable, counting per instance/, 'the outage is logged');
  });

  t.test('Redis back: shared counting resumes without a restart', async (t) => {
    await redis.restart();
    // ioredis reconnects within its retry delay (≤ 2 s); wait until both instances count in Redis.
    const until = Date.now() + 30_000;
    let shared = false;
    while (!shared && Date.now() < until) {
      const probe = await freshKey('probe');
      await call(a.base, probe);
      shared = (await call(b.base, probe)).remaining === String(N - 2);
      if (!shared) await new Promise((r) => setTimeout(r, 250));
    }
    t.ok(shared, 'both instances count in Redis again');
    const statuses = await burst(await freshKey('after'));
    t.equal(statuses.filter((s) => s !== 429).length, N, `${N} answered in all again`);
    t.match(a.output() + b.output(), /Redis is back, counting shared again/);
  });
}
