/**
 * Faults, under traffic:
 *
 * 1. The database goes away and comes back: the embedded engine (on disk, so
 *    it keeps its data) is stopped while clients keep calling; /ready and
 *    the data operations answer 503 in the error shape within a bounded time
 *    (no hang); the engine restarts on the same port and the same service
 *    instance answers 200 again by itself, without a restart.
 * 2. Graceful shutdown: the service (scripts/start.ts, alert worker on) is
 *    sent SIGTERM while requests are in flight (its database made slow by a
 *    proxy so they are); every in-flight request completes with 200, new
 *    connections are refused, an open MCP stream is closed, and the process
 *    exits 0 promptly.
 */
import t from 'tap';
import http from 'node:http';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../lib/db/embedded.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/db/indexes.ts';
import { storeApiKey } from '../../lib/auth/api-keys.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { buildApp } from '../../lib/app.ts';
import { loadDemoData, DEMO_TENANTS } from '../../lib/demo/load.ts';
import { testConfig, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { listen } from '../helpers/mcp.ts';
import { makeFinancialDoc } from '../fixtures/documents.ts';
import { startService } from '../helpers/service.ts';
import { startMongoProxy } from '../helpers/mongo-proxy.ts';

t.setTimeout(180_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Outcome {
  at: number;
  path: string;
  status: number | string;
  ms: number;
  body: string;
}

/** Requests whose bytes have not all been handed to the kernel yet (see the SIGTERM test). */
const unsent = new Set<http.ClientRequest>();

/** One GET without keep-alive; a transport error comes back as its code. */
function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Omit<Outcome, 'at' | 'path'>> {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = http.get(`${base}${path}`, { headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, body }));
    });
    unsent.add(req);
    req.on('finish', () => unsent.delete(req)).on('close', () => unsent.delete(req));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? 'error', ms: Date.now() - started, body: '' }));
    req.setTimeout(30_000, () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
  });
}

t.test('database down and back: 503 within bounds, recovery without restart', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'faults-db-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  let engine: EmbeddedMongo = await startEmbeddedMongo({ dataDir });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'faults', { serverSelectionTimeoutMS: 2000 });
  t.teardown(() => client.close(true));
  await ensureIndexes(db);
  await storeApiKey(db, { key: KEY_A, tenant: TENANT_A, label: 'faults' });
  await financialDocs(db).insertMany([makeFinancialDoc({ tenant: TENANT_A }), makeFinancialDoc({ tenant: TENANT_A })].map(withDerivedFields));
  // Error-level log lines are kept: an unexpected 500 says what it was.
  const errorLogs: string[] = [];
  const app = await buildApp({ config: testConfig(), db, logger: { level: 'error', stream: { write: (line: string) => errorLogs.push(line) } } });
  t.teardown(() => app.close());
  const base = await listen(app);

  const outcomes: Outcome[] = [];
  let running = true;
  const t0 = Date.now();
  const loops = Array.from({ length: 6 }, async (_, i) => {
    while (running) {
      const p = i % 3 === 0 ? '/ready' : '/api/financial-docs?limit=5';
      const at = Date.now() - t0;
      const r = await get(base, p, { 'x-api-key': KEY_A });
      outcomes.push({ at, path: p, ...r });
      await sleep(20);
    }
  });

  await sleep(1500);
  const stoppedAt = Date.now() - t0;
  await engine.stop();
  await sleep(5000);
  const restartAt = Date.now() - t0;
  engine = await startEmbeddedMongo({ dataDir, port: engine.port });
  // Recovered: the answers completed in the last 2 s (by completion time: under a loaded CI
  // machine a request can take longer than the window) are all 200, /ready among them.
  let recoveredAt = -1;
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(100)) {
    const now = Date.now() - t0;
    const recent = outcomes.filter((o) => o.at > restartAt && o.at + o.ms > now - 2000);
    if (recent.length >= 3 && recent.every((o) => o.status === 200) && recent.some((o) => o.path === '/ready')) {
      recoveredAt = Date.now() - t0;
      break;
    }
  }
  running = false;
  await Promise.all(loops);

  const up = outcomes.filter((o) => o.at + o.ms < stoppedAt);
  const down = outcomes.filter((o) => o.at > stoppedAt + 200 && o.at + o.ms < restartAt);
  t.ok(up.length > 10 && up.every((o) => o.status === 200), `before: ${up.length} requests, all 200`);
  t.ok(down.length > 5, `${down.length} requests while the database was down`);
  t.same([...new Set(down.map((o) => o.status))].sort(), [503], 'while down: every answer is 503 (no 500, no hang, no dropped connection)');
  t.ok(down.some((o) => o.path === '/ready') && down.some((o) => o.path !== '/ready'), 'both /ready and data operations were asked');
  for (const o of down.slice(0, 3)) {
    const e = JSON.parse(o.body).error;
    t.equal(e.code, 503, `${o.path}: error shape`);
  }
  const slowest = Math.max(...outcomes.map((o) => o.ms));
  t.ok(slowest < 5000, `no request took longer than ${slowest} ms (server selection gives up after 2 s)`);
  t.same([...new Set(outcomes.map((o) => o.status))].filter((s) => s !== 200 && s !== 503), [], 'only 200 and 503 at any time', { errorLogs: errorLogs.slice(0, 5) });
  t.same(errorLogs.map((l) => JSON.parse(l).msg), [], 'an outage is not an error of the service: nothing logged at error level');
  const after = outcomes.filter((o) => o.at > restartAt);
  const histogram = after.reduce<Record<string, number>>((h, o) => ({ ...h, [`${o.path} ${o.status}`]: (h[`${o.path} ${o.status}`] ?? 0) + 1 }), {});
  t.ok(recoveredAt > 0, `recovered ${recoveredAt - restartAt} ms after the engine came back, same service instance`, {
    histogram,
    lastAnswers: after.slice(-4).map((o) => ({ path: o.path, status: o.status, ms: o.ms, body: o.body.slice(0, 200) })),
  });
  t.comment(`down ${restartAt - stoppedAt} ms; ${outcomes.length} requests; recovery after ${recoveredAt - restartAt} ms`);
});

t.test('SIGTERM under load: in-flight requests finish, the process exits 0', async (t) => {
  const engine = await startEmbeddedMongo({});
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'shutdown');
  t.teardown(() => client.close(true));
  await ensureIndexes(db);
  await loadDemoData(db, { invoices: 200, trips: 200 });
  const proxy = await startMongoProxy({ port: engine.port });
  t.teardown(() => proxy.close());
  const service = await startService({ mongodbUri: proxy.uri, mongodbDb: 'shutdown', env: { RATE_LIMIT_MAX: '1000000', RATE_LIMIT_IP_MAX: '1000000', ALERT_WORKER: 'true' } });
  t.teardown(() => service.stop(2000));
  const KEY = DEMO_TENANTS[0]!.apiKey;

  // Work for the alert worker, and an open MCP stream.
  const scheduled = await fetch(`${service.base}/api/alerts/schedule`, {
    method: 'POST',
    headers: { 'x-api-key': KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ userIds: ['sd-1', 'sd-2', 'sd-3'], ruleId: 'overdue-invoices', cycleKey: '2026-10', nameAlert: 'shutdown' }),
  });
  t.equal(scheduled.status, 200, 'alert jobs scheduled (due now)');
  const sse = await fetch(`${service.base}/sse`, { headers: { 'x-api-key': KEY, accept: 'text/event-stream' } });
  t.equal(sse.status, 200, 'an MCP SSE stream is open');
  const sseEnded = (async () => {
    const reader = sse.body!.getReader();
    try {
      for (;;) if ((await reader.read()).done) return 'ended';
    } catch {
      return 'ended';
    }
  })();

  // Slow database: every reply 120 ms late, so requests are in flight when the signal comes.
  proxy.mode = 'delay';
  proxy.delayMs = 120;
  const paths = ['/api/financial-docs?limit=20', '/api/shipments?limit=20', '/api/analytics/cash-inflow-forecast', '/api/alerts/jobs'];
  const results: Outcome[] = [];
  let issuing = true;
  const loops = Array.from({ length: 12 }, async (_, i) => {
    while (issuing) {
      const p = paths[i % paths.length]!;
      const r = await get(service.base, p, { 'x-api-key': KEY });
      results.push({ at: 0, path: p, ...r });
    }
  });
  await sleep(1500);
  issuing = false; // the requests now in flight are the ones that must finish
  // A request started in this very tick has not connected yet: it is not in flight at the
  // server, and a connection that arrives after SIGTERM is rightly refused or reset. Signal
  // once every issued request has been written out (each then waits ≥ 240 ms on the slow
  // database, so all of them are still in flight), plus a moment for the server to accept and
  // read it: 150 ms, since on a loaded machine (CI on 2 cores) 20 ms was not always enough and a
  // request still in the accept queue was reset by the close (3 ECONNRESET in one run).
  while (unsent.size > 0) await sleep(5);
  await sleep(150);
  const signalledAt = Date.now();
  service.child.kill('SIGTERM');
  await sleep(100);
  const refused = await new Promise<string>((resolve) => {
    const s = net.connect(Number(new URL(service.base).port), '127.0.0.1');
    s.on('connect', () => {
      s.destroy();
      resolve('accepted');
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
  });
  await Promise.all(loops);
  const how = await Promise.race([service.exited, sleep(15_000).then(() => 'still running after 15 s')]);
  const exitMs = Date.now() - signalledAt;

  const failed = results.filter((r) => r.status !== 200);
  t.ok(results.length >= 12, `${results.length} requests made under load, the last 12 in flight at SIGTERM`);
  t.same(failed.map((r) => `${r.path} → ${r.status} ${r.body.slice(0, 100)}`), [], 'no request failed, in-flight ones included');
  t.equal(refused, 'ECONNREFUSED', 'new connections are refused once shutting down');
  t.equal(how, 0, 'the process exits with code 0');
  t.ok(exitMs < 10_000, `and promptly (${exitMs} ms after SIGTERM)`);
  t.equal(await Promise.race([sseEnded, sleep(2000).then(() => 'still open')]), 'ended', 'the MCP stream was closed');
  t.notMatch(service.output(), /"level":(50|60)/, 'nothing logged at error level during the shutdown');
});
