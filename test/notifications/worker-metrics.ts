/**
 * `npm run worker`'s GET /metrics (WORKER_METRICS_PORT): the worker runs as a process of its own
 * beside an API-only service (no workers in it). An export the service queues is built by the
 * worker, whose `export.ready` event it delivers to a receiver on loopback; a scrape of the worker
 * parsed by a Prometheus text-format parser (prom2javascript, not ours) then shows the export run
 * and the delivery attempt under their outcomes, the job queues read from the database (alert jobs
 * this test wrote as running), the database's health and the process's metrics; METRICS_TOKEN
 * guards it as on the service.
 */
import type { Test } from 'tap';
import { ObjectId } from 'mongodb';
import { getMetricsFromIterator, type PromMetrics } from 'prom2javascript';
import { startHarness, KEY_A, TEST_WEBHOOK_KEY } from '../helpers/harness.ts';
import { spawnScript } from '../helpers/service.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { exportsPlugin } from '../../lib/exports/plugin.ts';
import { webhooksPlugin } from '../../lib/webhooks/plugin.ts';
import { oneTimeJobDocument } from '../../lib/jobs/agenda-job.ts';

export default async function workerMetricsTests(t: Test): Promise<void> {
  t.setTimeout(240_000);
  const TOKEN = 'worker-metrics-token-for-the-test';
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const h = await startHarness(t, {
    env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*' },
    build: { plugins: [exportsPlugin({ worker: false }), webhooksPlugin({ worker: false })] },
  });
  const api = (method: 'GET' | 'POST', url: string, payload?: object) =>
    h.app.inject({ method, url, headers: { 'x-api-key': KEY_A }, ...(payload ? { payload } : {}) });

  // Two alert jobs locked by another worker a moment ago: running, and left alone by this one.
  const alertJobs = h.db.collection('alertJobs');
  for (let i = 0; i < 2; i++)
    await alertJobs.insertOne({
      ...oneTimeJobDocument(new ObjectId(), 'alert:evaluate', { tenant: 'NOBODY', jobKey: `worker-metrics-${i}` }, new Date()),
      lockedAt: new Date(),
      lastModifiedBy: 'another-worker',
    });

  const worker = spawnScript('scripts/worker.ts', {
    LOG_LEVEL: 'info',
    MONGODB_URI: h.engine.uri,
    MONGODB_DB: h.db.databaseName,
    WORKER_METRICS_PORT: '0',
    METRICS_TOKEN: TOKEN,
    METRICS_DATABASE_CACHE_MS: '0',
    WEBHOOK_ENCRYPTION_KEY: TEST_WEBHOOK_KEY,
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_ALLOWED_PORTS: '*',
    WEBHOOK_PROCESS_EVERY_MS: '100',
    EXPORT_PROCESS_EVERY_MS: '100',
    ALERT_LOCK_LIFETIME_MS: '600000',
    DOCUMENT_BASE_URL: 'https://files.example.test',
  });
  let out = '';
  worker.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  worker.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise((resolve) => worker.once('exit', resolve));
  t.teardown(async () => {
    if (worker.exitCode === null) worker.kill('SIGTERM');
    await exited;
  });

  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 180_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (worker.exitCode !== null) throw new Error(`the worker exited (${worker.exitCode}): ${out.slice(-2000)}`);
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${out.slice(-2000)}`);
      await sleep(100);
    }
  }

  // The port it chose, from its start-up log line.
  const port = await waitFor('the worker to start', () => {
    const line = out.split('\n').find((l) => l.includes('"metricsPort"'));
    return line ? (JSON.parse(line) as { metricsPort: number }).metricsPort : null;
  });
  const base = `http://127.0.0.1:${port}`;
  const parse = (text: string) => getMetricsFromIterator(text.split('\n')[Symbol.iterator]());
  async function scrape(): Promise<PromMetrics> {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    if (res.status !== 200) throw new Error(`scrape: ${res.status} ${await res.text()}`);
    t.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
    return parse(await res.text());
  }
  /** The value of the sample of `name` whose labels are exactly `labels`; 0 when absent. */
  function sample(metrics: PromMetrics, name: string, labels: Record<string, string> = {}): number {
    const wanted = JSON.stringify(Object.entries(labels).sort());
    const found = metrics[name]?.data.find((m) => JSON.stringify(Object.entries(m.labels).sort()) === wanted);
    return found && 'value' in found ? found.value : 0;
  }

  t.test('the worker serves the job, import, webhook and export metrics, the database and the process', async (t) => {
    const families = await scrape();
    for (const name of [
      'freight_job_queue_jobs',
      'freight_export_runs_total',
      'freight_webhook_delivery_attempts_total',
      'freight_import_files_total',
      'freight_database_up',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ])
      t.ok(families[name], `${name} is exposed`);
    t.equal(sample(families, 'freight_database_up'), 1, 'the database answers');
    t.equal(sample(families, 'freight_job_queue_jobs', { job: 'alert:evaluate', state: 'running' }), 2, 'the two locked alert jobs');
    t.equal(sample(families, 'freight_job_queue_jobs', { job: 'export', state: 'due' }), 0);
    t.equal(sample(families, 'freight_export_runs_total', { outcome: 'ready' }), 0, 'no export yet');
  });

  t.test("an export the service queued, built by the worker, and its webhook: the worker's counters move by one", async (t) => {
    const hook = await api('POST', '/api/webhooks', { url: receiver.url('/hook'), events: ['export.ready'], description: 'worker metrics' });
    t.equal(hook.statusCode, 201, hook.body);
    receiver.secrets.set('/hook', hook.json<{ secret: string }>().secret);
    const created = await api('POST', '/api/exports/datasets/alerts?format=csv');
    t.equal(created.statusCode, 202, created.body);
    const id = created.json<{ id: string }>().id;
    await waitFor('the export to be ready', async () => (await api('GET', `/api/exports/${id}`)).json<{ status: string }>().status === 'ready');
    await waitFor('the export.ready delivery', () => receiver.received.some((r) => r.eventType === 'export.ready' && r.body.includes(id)));
    const delivered = receiver.received.filter((r) => r.eventType === 'export.ready');
    t.equal(delivered.length, 1);
    t.ok(delivered[0]!.verified, 'signed with the endpoint secret');
    // The worker counts the attempt once the receiver has answered: wait for the counter, then check every value.
    const families = await waitFor('the attempt counted', async () => {
      const m = await scrape();
      return sample(m, 'freight_webhook_delivery_attempts_total', { outcome: 'succeeded' }) >= 1 ? m : null;
    });
    t.equal(sample(families, 'freight_export_runs_total', { outcome: 'ready' }), 1, 'one export run, ready');
    t.equal(sample(families, 'freight_export_runs_total', { outcome: 'failed' }), 0);
    t.equal(sample(families, 'freight_webhook_delivery_attempts_total', { outcome: 'succeeded' }), 1, 'one delivery attempt, succeeded');
    t.equal(sample(families, 'freight_job_queue_jobs', { job: 'webhook:deliver', state: 'due' }), 0, 'the delivery is done');
  });

  t.test('METRICS_TOKEN guards it; other paths and methods are refused in the error shape', async (t) => {
    const none = await fetch(`${base}/metrics`);
    t.equal(none.status, 401);
    t.equal(none.headers.get('www-authenticate'), 'Bearer realm="metrics"');
    t.match(await none.json(), { error: { code: 401, reason: 'missing_api_key' } });
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: 'Bearer not-the-token-at-all' } });
    t.match(await wrong.json(), { error: { code: 401, reason: 'unknown_api_key' } });
    t.match(await (await fetch(`${base}/elsewhere`)).json(), { error: { code: 404, reason: 'not_found' } });
    const post = await fetch(`${base}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` } });
    t.equal(post.status, 405);
    t.equal(post.headers.get('allow'), 'GET, HEAD');
  });
}
