/**
 * Several processes on one database (issue 12, section 2): two API instances
 * with ALERT_WORKER=false take the schedule requests, two `npm run worker`
 * processes run the jobs, and one worker is killed (SIGKILL) mid-run. Every
 * job runs to exactly one alert record, every record's event reaches the
 * subscribed endpoint with one delivery record per endpoint and event (signed,
 * deduplicable by its event id), and nothing is lost with the dead worker.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';
import { alertJobs, alertRecords } from '../../lib/alerts/alert-jobs-repo.ts';
import { webhookDeliveries } from '../../lib/webhooks/webhooks-repo.ts';
import { startService, spawnScript } from '../helpers/service.ts';
import { startReceiver } from '../helpers/receiver.ts';

export default async function workersTests(t: Test): Promise<void> {
  t.setTimeout(240_000);
  const JOBS = 1000;
  const KEY = DEMO_TENANTS[0]!.apiKey;
  const ENCRYPTION_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'workers');
  t.teardown(() => client.close());
  await ensureIndexes(db);
  await loadDemoData(db, { invoices: 150, trips: 40 });
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());

  const shared = {
    MONGODB_URI: engine.uri,
    MONGODB_DB: 'workers',
    WEBHOOK_ENCRYPTION_KEY: ENCRYPTION_KEY,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_ALLOWED_PORTS: '*',
  };
  const apiEnv = { ...shared, ALERT_WORKER: 'false', RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', REPORT_RATE_LIMIT_MAX: '100000' };
  const [a, b] = await Promise.all([
    startService({ mongodbUri: engine.uri, mongodbDb: 'workers', env: apiEnv }),
    startService({ mongodbUri: engine.uri, mongodbDb: 'workers', env: apiEnv }),
  ]);
  t.teardown(() => Promise.all([a.stop(), b.stop()]));

  /** `npm run worker` as a process of its own. */
  function startWorker(name: string) {
    const child = spawnScript('scripts/worker.ts', {
      LOG_LEVEL: 'warn',
      ...shared,
      ALERT_PROCESS_EVERY_MS: '100',
      ALERT_CONCURRENCY: '10',
      ALERT_LOCK_LIFETIME_MS: '5000',
      WEBHOOK_PROCESS_EVERY_MS: '200',
      WEBHOOK_CONCURRENCY: '10',
      WEBHOOK_LOCK_LIFETIME_MS: '5000',
    });
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    return { name, child, output: () => out, exited };
  }

  const post = (base: string, path: string, body: unknown) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then(
      async (r) => ({ status: r.status, json: (await r.json()) as Record<string, unknown> }),
    );
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  t.test(`${JOBS} jobs through two API instances and two workers, one killed mid-run`, async (t) => {
    const hook = await post(a.base, '/api/webhooks', {
      url: receiver.url('/hook'),
      events: ['alert.triggered', 'alert.cleared'],
      description: 'multi-instance',
    });
    t.equal(hook.status, 201, 'endpoint created through instance A');
    receiver.secrets.set('/hook', String(hook.json.secret));

    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const userIds = Array.from({ length: JOBS / 4 }, (_, k) => `user-${i}-${k}`);
      const res = await post(i % 2 === 0 ? a.base : b.base, '/api/alerts/schedule', {
        userIds,
        ruleId: 'overdue-invoices',
        cycleKey: '2026-11',
        nameAlert: `batch ${i}`,
      });
      t.equal(res.status, 200, `batch ${i} scheduled through instance ${i % 2 === 0 ? 'A' : 'B'}`);
      ids.push(...(res.json.jobs as { jobId: string }[]).map((j) => j.jobId));
    }
    t.equal(new Set(ids).size, JOBS, `${JOBS} distinct jobs`);
    await sleep(1500);
    t.equal(await alertRecords(db).countDocuments({}), 0, 'the API instances run no job (ALERT_WORKER=false)');

    const w1 = startWorker('w1');
    const w2 = startWorker('w2');
    t.teardown(() => {
      for (const w of [w1, w2]) if (w.child.exitCode === null) w.child.kill('SIGKILL');
    });
    const until = Date.now() + 150_000;
    while ((await alertRecords(db).countDocuments({})) < JOBS / 4 && Date.now() < until) await sleep(100);
    w1.child.kill('SIGKILL');
    await w1.exited;
    const atKill = await alertRecords(db).countDocuments({});
    t.ok(atKill < JOBS, `worker w1 killed with ${atKill} of ${JOBS} records written`);

    const delivered = () => new Set(receiver.received.filter((r) => r.verified && r.answered === 200).map((r) => r.eventId)).size;
    while (((await alertRecords(db).countDocuments({})) < JOBS || delivered() < JOBS) && Date.now() < until) await sleep(250);

    const jobs = await alertJobs(db)
      .find({}, { projection: { lockedAt: 1, nextRunAt: 1, failCount: 1 } })
      .toArray();
    const states = {
      locked: jobs.filter((j) => j.lockedAt != null).length,
      due: jobs.filter((j) => j.nextRunAt != null).length,
      failedOnce: jobs.filter((j) => (j.failCount ?? 0) > 0).length,
    };
    t.equal(await alertRecords(db).countDocuments({ _id: { $in: ids } }), JOBS, 'every job produced its one record (record id = job id)', {
      states,
      w2: w2.output().slice(-2000),
    });
    t.equal(jobs.filter((j) => j.lockedAt == null && j.nextRunAt == null).length, JOBS, 'all jobs completed, none left locked or due');

    const deliveries = await webhookDeliveries(db)
      .find({ webhookId: String(hook.json.id) })
      .toArray();
    t.equal(deliveries.length, JOBS, 'one delivery record per endpoint and event');
    t.equal(deliveries.filter((d) => d.status === 'succeeded').length, JOBS, 'all succeeded');
    t.equal(delivered(), JOBS, 'the receiver got every event, signed');
    t.notOk(
      receiver.received.some((r) => !r.verified),
      'every request verified',
    );
    const resent = receiver.received.length - delivered();
    t.ok(resent <= 10, `${resent} re-sends of an event (only attempts in flight in the killed worker may repeat; the event id lets the receiver drop them)`);
    t.comment(`w2 output tail: ${w2.output().slice(-500)}`);
  });
}
