/**
 * GET /metrics end to end: requests through HTTP (a 200, a 401, a 400, an import, MCP tool calls,
 * a webhook test delivery to a receiver on loopback), then a scrape parsed by a Prometheus
 * text-format parser (prom2javascript, not ours). Each counter moves by what this
 * test sent, under the labels it expects (operationIds and closed sets, never URLs). Job queue
 * gauges read jobs this test wrote; the token guards the endpoint; METRICS_ENABLED=false removes it.
 */
import type { Test } from 'tap';
import { ObjectId } from 'mongodb';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { getMetricsFromIterator, type PromMetrics } from 'prom2javascript';
import { startHarness, KEY_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { fixture } from '../helpers/cfdi-fixtures.ts';
import { webhooksPlugin } from '../../lib/webhooks/plugin.ts';
import { oneTimeJobDocument } from '../../lib/jobs/agenda-job.ts';

export default async function metricsTests(t: Test): Promise<void> {
  const TOKEN = 'metrics-token-for-the-test-0001';
  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const h = await startHarness(t, {
    env: {
      METRICS_TOKEN: TOKEN,
      METRICS_DATABASE_CACHE_MS: '0',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      WEBHOOK_PROCESS_EVERY_MS: '100',
    },
    build: { plugins: [webhooksPlugin({ worker: true })] },
  });
  const base = await listen(h.app);

  const scrapeText = async () => {
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    if (res.status !== 200) throw new Error(`scrape: ${res.status} ${await res.text()}`);
    return { type: res.headers.get('content-type'), text: await res.text() };
  };
  // The text format allows a NaN sample (prom-client's event-loop lag gauges read NaN when two scrapes come within its
  // 10 ms sampling), which prom2javascript's grammar lacks: those lines are left out before it parses.
  const parse = (text: string) => {
    const lines = text.split('\n').filter((line) => !/\sNaN$/.test(line));
    return getMetricsFromIterator(lines[Symbol.iterator]());
  };
  const scrape = async () => parse((await scrapeText()).text);

  /** The value of the sample of `name` whose labels are exactly `labels` (for a histogram: its count); 0 when absent. */
  function sample(metrics: PromMetrics, name: string, labels: Record<string, string> = {}): number {
    const wanted = JSON.stringify(Object.entries(labels).sort());
    const found = metrics[name]?.data.find((m) => JSON.stringify(Object.entries(m.labels).sort()) === wanted);
    if (!found) return 0;
    return 'value' in found ? found.value : (found.count ?? 0);
  }

  const api = (path: string, init: RequestInit & { key?: string } = {}) =>
    fetch(`${base}${path}`, { ...init, headers: { ...(init.key ? { 'x-api-key': init.key } : {}), ...(init.headers as Record<string, string>) } });

  t.test('the service exposes the Prometheus text format, process metrics included', async (t) => {
    const { type, text } = await scrapeText();
    t.match(type, /^text\/plain; version=0\.0\.4/);
    const families = await parse(text);
    for (const name of [
      'http_request_duration_seconds',
      'freight_database_up',
      'freight_job_queue_jobs',
      'process_cpu_user_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ])
      t.ok(families[name], `${name} is exposed`);
    t.equal(families.http_request_duration_seconds?.type, 'histogram');
    t.equal(sample(families, 'freight_database_up'), 1, 'the database answers');
    t.ok(sample(families, 'freight_database_ping_seconds') > 0, 'with a ping time');
  });

  t.test('requests, imports, MCP tool calls and webhook attempts move their counters by what was sent', async (t) => {
    const before = await scrape();

    // HTTP: two liveness probes, a list without a key (401), a list with a bad limit (400).
    for (let i = 0; i < 2; i++) t.equal((await api('/health')).status, 200);
    t.equal((await api('/api/financial-docs')).status, 401);
    t.equal((await api('/api/financial-docs?limit=abc', { key: KEY_A })).status, 400);

    // Import: an invoice (created), the same again (skipped), a file that is not XML (rejected before its kind is known).
    const invoice = fixture('01-freight-invoice-retention.xml').toString('base64');
    const files = [
      { name: 'a.xml', content: invoice, encoding: 'base64' },
      { name: 'b.xml', content: invoice, encoding: 'base64' },
      { name: 'c.xml', content: 'this is not a CFDI' },
    ];
    const imported = await api('/api/imports', {
      method: 'POST',
      key: KEY_A,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ files }),
    });
    t.equal(imported.status, 200);
    t.same(
      ((await imported.json()) as { files: { status: string }[] }).files.map((f) => f.status),
      ['created', 'skipped', 'rejected'],
      'the import did what the counters are expected to show',
    );

    // MCP: a list that answers, a document that does not exist (the operation's 404: a tool error).
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const ok = (await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 5 } })) as CallToolResult;
    t.notOk(ok.isError);
    const missing = (await client.callTool({ name: 'getFinancialDoc', arguments: { id: 'no-such-document' } })) as CallToolResult;
    t.equal(missing.isError, true);

    // Webhook: a test delivery to the receiver, delivered by the worker.
    const created = await api('/api/webhooks', {
      method: 'POST',
      key: KEY_A,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url('/hook'), events: ['alert.triggered'] }),
    });
    t.equal(created.status, 201);
    const hook = (await created.json()) as { id: string; secret: string };
    receiver.secrets.set('/hook', hook.secret);
    t.equal((await api(`/api/webhooks/${hook.id}/test`, { method: 'POST', key: KEY_A })).status, 202);
    const deadline = Date.now() + 20_000;
    for (;;) {
      const list = (await (await api(`/api/webhooks/${hook.id}/deliveries`, { key: KEY_A })).json()) as { data: { status: string }[] };
      if (list.data[0]?.status === 'succeeded') break;
      if (Date.now() > deadline) throw new Error('the test delivery was not delivered');
      await new Promise((r) => setTimeout(r, 50));
    }

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
    const http = (method: string, operation: string, status: number, via = 'http') => ({ method, operation, status_code: String(status), via });
    const H = 'http_request_duration_seconds';
    t.equal(moved(H, http('GET', 'getHealth', 200)), 2, 'two probes');
    t.equal(moved(H, http('GET', 'listFinancialDocs', 401)), 1, 'the 401, under its operationId');
    t.equal(moved(H, http('GET', 'listFinancialDocs', 400)), 1, 'the 400');
    t.equal(moved(H, http('POST', 'importDocuments', 200)), 1, 'the import');
    t.equal(moved(H, http('GET', 'listFinancialDocs', 200, 'mcp')), 1, "the tool call's REST operation, via MCP");
    t.equal(moved(H, http('GET', 'getFinancialDoc', 404, 'mcp')), 1, "the failed tool call's operation, via MCP");
    t.equal(moved(H, http('POST', 'sendWebhookTest', 202)), 1);
    t.ok(moved(H, http('POST', '/mcp', 200)) >= 3, 'the MCP requests themselves (initialize, two calls…), by route: not a REST operation');
    const raw = after[H]!.data.map((m) => m.labels.operation ?? '');
    t.notOk(
      raw.some((o) => o.includes('?') || o.includes('no-such-document') || o.includes(hook.id)),
      'no label holds a URL, a query or an id',
    );

    t.equal(moved('freight_import_files_total', { kind: 'invoice', status: 'created' }), 1);
    t.equal(moved('freight_import_files_total', { kind: 'invoice', status: 'skipped' }), 1);
    t.equal(moved('freight_import_files_total', { kind: 'unknown', status: 'rejected' }), 1);
    t.equal(moved('freight_mcp_tool_calls_total', { tool: 'listFinancialDocs', outcome: 'ok' }), 1);
    t.equal(moved('freight_mcp_tool_calls_total', { tool: 'getFinancialDoc', outcome: 'error' }), 1);
    t.equal(moved('freight_mcp_tool_call_duration_seconds', { tool: 'getFinancialDoc' }), 1, 'its duration observed once');
    t.equal(moved('freight_webhook_delivery_attempts_total', { outcome: 'succeeded' }), 1);
  });

  t.test('a Swagger UI asset that does not exist is a 404 (not a 405 allowing GET), counted under its route, never an empty operation', async (t) => {
    const before = await scrape();
    for (const method of ['GET', 'HEAD']) {
      const res = await api('/docs/static/x0.js', { method });
      t.equal(res.status, 404, method);
      t.equal(res.headers.get('allow'), null, `${method}: no Allow naming the method itself`);
      if (method === 'GET') t.match(await res.json(), { error: { code: 404, reason: 'not_found' } });
    }
    const after = await scrape();
    // HEAD is not timed (fastify-metrics leaves HEAD and OPTIONS out).
    const count = (m: PromMetrics) =>
      sample(m, 'http_request_duration_seconds', { method: 'GET', operation: '/docs/static/*', status_code: '404', via: 'http' });
    t.equal(count(after) - count(before), 1, 'the GET under /docs/static/*');
    t.notOk(
      after.http_request_duration_seconds?.data.some((d) => d.labels.operation === ''),
      'no sample with an empty operation',
    );
  });

  t.test('job queue depth: due and running jobs per job name, read from the database on scrape', async (t) => {
    const now = Date.now();
    const job = (minutesFromNow: number, locked: boolean) => ({
      // Alert jobs are unique by data.jobKey (lib/alerts/jobs.ts): one of each.
      ...oneTimeJobDocument(new ObjectId(), 'alert:evaluate', { jobKey: `metrics-test-${minutesFromNow}` }, new Date(now + minutesFromNow * 60_000)),
      lockedAt: locked ? new Date(now) : null,
    });
    // Three due (past), one scheduled later (neither due nor running), one running (locked).
    await h.db.collection('alertJobs').insertMany([job(-5, false), job(-1, false), job(-30, false), job(60, false), job(-2, true)]);
    const families = await scrape();
    t.equal(sample(families, 'freight_job_queue_jobs', { job: 'alert:evaluate', state: 'due' }), 3);
    t.equal(sample(families, 'freight_job_queue_jobs', { job: 'alert:evaluate', state: 'running' }), 1);
    t.equal(sample(families, 'freight_job_queue_jobs', { job: 'webhook:deliver', state: 'due' }), 0, 'the test delivery is done');
  });

  t.test('METRICS_TOKEN: a missing or wrong bearer token is a 401 in the error shape', async (t) => {
    const none = await fetch(`${base}/metrics`);
    t.equal(none.status, 401);
    t.match(none.headers.get('www-authenticate'), /^Bearer/);
    t.match(await none.json(), { error: { code: 401, message: 'Unauthorized', reason: 'missing_api_key', details: [/METRICS_TOKEN/] } });
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    t.equal(wrong.status, 401);
    t.match(await wrong.json(), { error: { code: 401, reason: 'unknown_api_key' } });
    const apiKey = await fetch(`${base}/metrics`, { headers: { 'x-api-key': KEY_A } });
    t.equal(apiKey.status, 401, "a tenant's API key is not the metrics token");
  });

  t.test('METRICS_ENABLED=false: no /metrics, and the service works as before', async (t) => {
    const app = await h.rebuild({ env: { METRICS_ENABLED: 'false' } });
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    t.equal(res.statusCode, 404);
    t.equal(res.json().error.reason, 'not_found');
    t.equal((await app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  });
}
