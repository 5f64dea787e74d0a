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
 * 3. The embedded engine killed (`kill -9` of its JVM) under traffic and a
 *    1,000-file import (`npm start`'s set-up: on-disk engine started by the service): the
 *    service restarts it and answers data again by itself, the same process;
 *    nothing but 200 and 503 meanwhile, /ready within its budget, /health 200.
 * 4. Ctrl-C: SIGINT to the whole process group (`npm start`: npm, the service) during
 *    the same 1,000-file import: no 500, the import stops at a batch with 503
 *    `shutting_down`, the engine is stopped last by the service (it does not
 *    die with the group), exit 0; the same files imported again complete it.
 * 5. An engine that cannot be kept up (EMBEDDED_MONGO_MAX_RESTARTS spent):
 *    one fatal line and exit 1, for a supervisor to restart the service. It runs
 *    on the service that re-imports after the Ctrl-C (started with no restarts
 *    left), not on a service of its own.
 *
 * It runs beside the other files (tap's jobs), on a loaded machine:
 * - An engine restarted on its port, and a service whose closed port is probed, listen on ports
 *   outside the kernel's ephemeral range (test/helpers/ports.ts): the other files' `listen(0)`
 *   and outgoing connections cannot take them meanwhile, and no other file binds a fixed port.
 * - Every time budget is a bound on behaviour (no hang, 503 at once, drained and exited by itself)
 *   plus the machine's lag over the same span (lagProbe: the slowest GET /health, which never
 *   touches the database, or the event-loop delay of this process or of the service, the
 *   largest): never a speed claim that holds only on an idle machine.
 */
import t, { type Test } from 'tap';
import http from 'node:http';
import net from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import path from 'node:path';
import { startEmbeddedMongo, type EmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { storeApiKey } from '../lib/auth/api-keys.ts';
import { financialDocs } from '../lib/db/collections.ts';
import { withDerivedFields } from '../lib/finance/derived-fields.ts';
import { buildApp } from '../handlers/app.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { testConfig, KEY_A, TENANT_A } from './helpers/harness.ts';
import { listen } from './helpers/mcp.ts';
import { makeFinancialDoc } from './fixtures/documents.ts';
import { startService } from './helpers/service.ts';
import { startMongoProxy } from './helpers/mongo-proxy.ts';
import { descendantRunning, enginePidUnder, isRunning, processGroup } from './helpers/processes.ts';
import { onPortsOutsideEphemeralRange } from './helpers/ports.ts';
import { corpusZip } from '../scripts/cfdi-corpus.ts';

t.setTimeout(480_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/**
 * `value` after `ms`, on a timer that does not keep the process alive: a race's deadline that lost
 * (the service exited in time) no longer holds the file open for the rest of its 30–40 s.
 */
const deadline = <T>(ms: number, value: T) => new Promise<T>((r) => setTimeout(r, ms, value).unref());
/** Between two requests of the engine tests' traffic loops around a fault (as the database-down test's loops do). */
const TRAFFIC_PAUSE_MS = 20;
/**
 * Between two requests of those loops away from the fault: while the import they run beside makes its
 * way to its first write (10–20 s on a loaded machine), and after the kill test's recovery until the
 * import answers. Their answers are checked as the others (only 200 and 503; in the Ctrl-C test 200),
 * but their number asserts nothing: at TRAFFIC_PAUSE_MS they were most of the file's requests (about
 * 0.5 CPU-s a second of the service's, the engine's and this process's) and slowed the import down.
 */
const CALM_PAUSE_MS = 250;
/**
 * The pause of a traffic loop: CALM_PAUSE_MS, or TRAFFIC_PAUSE_MS once `dense` is set (loops in a calm
 * pause then go on at once), until it is unset.
 */
function trafficPace() {
  let dense = false;
  const waiting = new Set<() => void>();
  return {
    pause(): Promise<unknown> {
      if (dense) return sleep(TRAFFIC_PAUSE_MS);
      return new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          waiting.delete(done);
          resolve();
        };
        const timer = setTimeout(done, CALM_PAUSE_MS);
        waiting.add(done);
      });
    },
    set dense(on: boolean) {
      dense = on;
      if (on) for (const wake of [...waiting]) wake();
    },
  };
}
/** Answers the loops give at TRAFFIC_PAUSE_MS before a fault is sent: two a loop, so each is at that pace when it comes. */
const DENSE_ANSWERS_BEFORE_FAULT = 12;
/** Between two probes of an import's first write. */
const POLL_MS = 50;
/** Polls `done` every 100 ms for up to `ms`: whether it came true. */
async function until(done: () => boolean, ms: number): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(100)) if (done()) return true;
  return done();
}

interface Outcome {
  at: number;
  path: string;
  status: number | string;
  ms: number;
  body: string;
}

/** Requests whose bytes have not all been handed to the kernel yet (see the SIGTERM test). */
const unsent = new Set<http.ClientRequest>();
/** Requests not yet answered or failed (see the SIGTERM test). */
const open = new Set<http.ClientRequest>();

/**
 * Whether the server on `port` has accept()ed the connection of every request in `requests` and
 * read what it sent (Linux /proc/net/tcp: a connection still in the listen queue has no inode
 * yet; `rx_queue`, the bytes received and not yet read, is 0 once read). Node's HTTP parser reads
 * and parses in one go, so the request is then one the server is answering, not an idle
 * connection that closing the server resets.
 */
function allRead(port: number, requests: Iterable<http.ClientRequest>): boolean {
  const read = new Set<number>();
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || parseInt(f[1]!.split(':')[1]!, 16) !== port || f[9] === '0' || parseInt(f[4]!.split(':')[1]!, 16) !== 0) continue;
    read.add(parseInt(f[2]!.split(':')[1]!, 16));
  }
  return [...requests].every((r) => r.socket?.localPort === undefined || read.has(r.socket.localPort));
}

/** One GET without keep-alive; a transport error comes back as its code. */
function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Omit<Outcome, 'at' | 'path'>> {
  const started = Date.now();
  return new Promise((resolve) => {
    const req = http.get(`${base}${path}`, { headers, agent: false }, (res) => {
      let body = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (body += d))
        .on('end', () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, body }));
    });
    unsent.add(req);
    open.add(req);
    req
      .on('finish', () => unsent.delete(req))
      .on('close', () => {
        unsent.delete(req);
        open.delete(req);
      });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? 'error', ms: Date.now() - started, body: '' }));
    req.setTimeout(30_000, () => req.destroy(Object.assign(new Error('client timeout'), { code: 'CLIENT_TIMEOUT' })));
  });
}

/** The machine's lag over a span (ms): the largest of its measures, and each of them for the messages. */
interface Lag {
  ms: number;
  text: string;
}

/**
 * The machine's lag over a span, as the service on `base` and this process meet it: what a loaded
 * machine (CI's 2 cores, tap's other jobs, an engine's JVM starting) adds to anything the service
 * does. The largest of:
 * - the slowest GET /health (it never touches the database): asked every 250 ms until stopped, or
 *   the samples `health()` gives. Transport errors (a closed port) are no sample;
 * - this process's event-loop delay (perf_hooks): a stall here delays every answer it times, yet a
 *   /health probe waiting out its pause meanwhile does not see it;
 * - with `service`, the service's own event-loop delay, from its GET /metrics (prom-client's
 *   nodejs_eventloop_lag_max_seconds, the largest since the previous scrape): scraped as the span
 *   starts, then every second; a scrape answered after the span counts for nothing (the service's
 *   work after it, e.g. the jobs that follow an import, is no lag the span's requests met).
 */
async function lagProbe(base: string, opts: { health?: () => number; service?: boolean } = {}): Promise<{ stop(): Promise<Lag> }> {
  const samples: number[] = [];
  let serviceLoop: number | null = null;
  let on = true;
  const scrape = async (counts = true) => {
    const r = await call(`${base}/metrics`, {}, 10_000);
    if (!on || !counts) return;
    const max = r.status === 200 ? /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? (\S+)$/m.exec(r.body)?.[1] : undefined;
    if (max !== undefined && Number.isFinite(Number(max))) serviceLoop = Math.max(serviceLoop ?? 0, Math.round(Number(max) * 1000));
  };
  // A scrape resets the service's histogram: this one's figure (since the service started) is no sample.
  if (opts.service) await scrape(false);
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  let wake = () => {};
  const stopped = new Promise<void>((resolve) => (wake = resolve));
  const pause = (ms: number) => Promise.race([sleep(ms), stopped]);
  let probing: Promise<void> = Promise.resolve();
  if (!opts.health)
    probing = (async () => {
      while (on) {
        const r = await get(base, '/health');
        if (typeof r.status === 'number') samples.push(r.ms);
        await pause(250);
      }
    })();
  if (opts.service)
    void (async () => {
      for (await pause(1000); on; await pause(1000)) await scrape();
    })();
  return {
    async stop() {
      on = false;
      wake();
      await probing;
      loop.disable();
      const health = opts.health ? opts.health() : Math.max(0, ...samples);
      const testLoop = Math.round(loop.max / 1e6);
      const ms = Math.max(health, testLoop, serviceLoop ?? 0);
      return { ms, text: `${ms} ms: /health's slowest ${health}, event-loop delay here ${testLoop}, the service's ${serviceLoop ?? 'not read'}` };
    },
  };
}

/**
 * Invoices and trips per tenant of the demo data the SIGTERM and engine tests start with: what their
 * traffic reads before the import's documents come (lists, an audit), not a size any check is about.
 * Not 60 as before: loading 60 and rebuilding their totals took 4–5 CPU-s a tenant (the engine's and
 * the loader's: the SIGTERM test's, and each service's rollup worker beside the import), 10 take ~1.
 */
const DEMO_DATA_SIZE = 10;

/** The driver's server selection timeout in the database-down test: a request waits that long for a server, then 503. */
const SERVER_SELECTION_MS = 2000;

t.test('database down and back: 503 within bounds, recovery without restart', async (t) => {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'faults-db-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  // Restarted on the same port below: one outside the ephemeral range, which no other file's listen(0) or connection can take meanwhile.
  let engine: EmbeddedMongo = await onPortsOutsideEphemeralRange(1, ([port]) => startEmbeddedMongo({ dataDir, port, shortLived: true }));
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'faults', { serverSelectionTimeoutMS: SERVER_SELECTION_MS });
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
  // The app runs in this process: its event-loop delay is this process's.
  const lag = await lagProbe(base);
  const loops = Array.from({ length: 6 }, async (_, i) => {
    while (running) {
      const p = i % 3 === 0 ? '/ready' : '/api/financial-docs?limit=5';
      const at = Date.now() - t0;
      const r = await get(base, p, { 'x-api-key': KEY_A });
      outcomes.push({ at, path: p, ...r });
      await sleep(20);
    }
  });

  // Counted answers, not fixed sleeps: a loaded machine answered 5 requests in 1.5 s (11 asked for)
  // and an idle one needs less than the 5 s the outage lasted. Up until a dozen answers are in.
  for (const until = Date.now() + 60_000; outcomes.length < 12 && Date.now() < until;) await sleep(20);
  await sleep(20);
  const stoppedAt = Date.now() - t0;
  await engine.stop();
  // Down until both kinds of request have answered, eight answers asked after the stop settled in.
  const downAnswers = () => outcomes.filter((o) => o.at > stoppedAt + 200);
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(20)) {
    const d = downAnswers();
    if (d.length >= 8 && d.some((o) => o.path === '/ready') && d.some((o) => o.path !== '/ready')) break;
  }
  const restartAt = Date.now() - t0;
  engine = await startEmbeddedMongo({ dataDir, port: engine.port, shortLived: true });
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
  const machineLag = await lag.stop();

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
  // No hang: server selection gives up after 2 s; the machine's lag on top, twice (before the
  // handler runs, and when the driver's timer fires and the 503 is written), at least 3 s of it.
  const slowestBound = SERVER_SELECTION_MS + Math.max(3000, 2 * machineLag.ms);
  t.ok(
    slowest < slowestBound,
    `no request took longer than ${slowest} ms (server selection gives up after 2 s; bound ${slowestBound} ms with twice the machine's lag, ${machineLag.text})`,
  );
  t.same(
    [...new Set(outcomes.map((o) => o.status))].filter((s) => s !== 200 && s !== 503),
    [],
    'only 200 and 503 at any time',
    { errorLogs: errorLogs.slice(0, 5) },
  );
  t.same(
    errorLogs.map((l) => JSON.parse(l).msg),
    [],
    'an outage is not an error of the service: nothing logged at error level',
  );
  const after = outcomes.filter((o) => o.at > restartAt);
  const histogram = after.reduce<Record<string, number>>((h, o) => ({ ...h, [`${o.path} ${o.status}`]: (h[`${o.path} ${o.status}`] ?? 0) + 1 }), {});
  t.ok(recoveredAt > 0, `recovered ${recoveredAt - restartAt} ms after the engine came back, same service instance`, {
    histogram,
    lastAnswers: after.slice(-4).map((o) => ({ path: o.path, status: o.status, ms: o.ms, body: o.body.slice(0, 200) })),
  });
  t.comment(`down ${restartAt - stoppedAt} ms; ${outcomes.length} requests; recovery after ${recoveredAt - restartAt} ms`);
});

t.test('SIGTERM under load: in-flight requests finish, the process exits 0', async (t) => {
  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'shutdown');
  t.teardown(() => client.close(true));
  await ensureIndexes(db);
  // Small demo data, as the engine tests' (DEMO_DATA_SIZE): the proxy's delay keeps requests in flight, not the data's size.
  // Only the tenant whose key the test calls with: the other's documents and rollup rebuild would be read by nothing.
  await loadDemoData(db, { invoices: DEMO_DATA_SIZE, trips: DEMO_DATA_SIZE, tenants: [DEMO_TENANTS[0]!.rfc] });
  const proxy = await startMongoProxy({ port: engine.port });
  t.teardown(() => proxy.close());
  // Its port is probed once closed (refused): one outside the ephemeral range, which no other file's listen(0) can take meanwhile.
  const service = await onPortsOutsideEphemeralRange(1, ([port]) =>
    startService({
      mongodbUri: proxy.uri,
      mongodbDb: 'shutdown',
      env: { PORT: String(port), RATE_LIMIT_MAX: '1000000', RATE_LIMIT_IP_MAX: '1000000', REPORT_RATE_LIMIT_MAX: '1000000', ALERT_WORKER: 'true' },
    }),
  );
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
  // The machine's lag under this traffic, up to the signal (the closed service answers no probe). Not
  // the service's /metrics: a scrape as the span ends would hold the signal back behind the slow
  // database, and the requests in flight at the signal are to be the traffic's.
  const lag = await lagProbe(service.base);
  const loops = Array.from({ length: 12 }, async (_, i) => {
    while (issuing) {
      const p = paths[i % paths.length]!;
      const r = await get(service.base, p, { 'x-api-key': KEY });
      results.push({ at: 0, path: p, ...r });
    }
  });
  await sleep(1500);
  issuing = false; // the requests now in flight are the ones that must finish
  const machineLag = await lag.stop();
  // A request started in this very tick has not connected yet: it is not in flight at the
  // server, and a connection that arrives after SIGTERM is rightly refused or reset. Signal
  // once every issued request has been written out (each then waits ≥ 240 ms on the slow
  // database, so all of them are still in flight) and the server has accepted its connection and
  // read it: a request still in the accept queue, or not yet read, is reset by the close (3
  // ECONNRESET in one CI run with a fixed 20 ms pause; at a load average of 21, 5 of 12
  // connections were still queued). Waited for as a state, not a pause, whatever the load.
  while (unsent.size > 0) await sleep(5);
  const servicePort = Number(new URL(service.base).port);
  for (const until = Date.now() + 30_000; !allRead(servicePort, open) && Date.now() < until;) await sleep(5);
  const signalledAt = Date.now();
  service.child.kill('SIGTERM');
  // The listener closes once the close hooks that come first (MCP streams ended) have run: a
  // connection attempt is refused within 3 s of the signal plus the machine's lag. Nothing else can
  // listen on the closed port (outside the ephemeral range) to accept it.
  const refuseBound = 3000 + machineLag.ms;
  const tryConnect = () =>
    new Promise<string>((resolve) => {
      const s = net.connect(Number(new URL(service.base).port), '127.0.0.1');
      s.on('connect', () => {
        s.destroy();
        resolve('accepted');
      });
      s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
  let refused = 'accepted';
  for (const until = signalledAt + refuseBound; refused === 'accepted' && Date.now() < until;) {
    await sleep(50);
    refused = await tryConnect();
  }
  const refusedMs = Date.now() - signalledAt;
  await Promise.all(loops);
  // Drained and exited by itself within 10 s plus the machine's lag (scripts/start.ts forces an exit 1 at 30 s).
  const exitBound = 10_000 + machineLag.ms;
  const how = await Promise.race([service.exited, deadline(30_000 + machineLag.ms, 'still running after 30 s and the lag')]);
  const exitMs = Date.now() - signalledAt;

  const failed = results.filter((r) => r.status !== 200);
  t.ok(results.length >= 12, `${results.length} requests made under load, the last 12 in flight at SIGTERM`);
  t.same(
    failed.map((r) => `${r.path} → ${r.status} ${r.body.slice(0, 100)}`),
    [],
    'no request failed, in-flight ones included',
  );
  t.equal(refused, 'ECONNREFUSED', `new connections are refused once shutting down (${refusedMs} ms after the signal, bound ${refuseBound} ms)`);
  t.equal(how, 0, 'the process exits with code 0');
  t.ok(exitMs < exitBound, `and promptly (${exitMs} ms after SIGTERM; bound 10 s + the machine's lag, ${machineLag.text})`);
  t.equal(await Promise.race([sseEnded, deadline(2000, 'still open')]), 'ended', 'the MCP stream was closed');
  t.notMatch(service.output(), /"level":(50|60)/, 'nothing logged at error level during the shutdown');
});

// --------------------------------------------------------------------------- the embedded engine, as `npm start` runs it

const TGO = DEMO_TENANTS[0]!;
/** The budget /ready answers within (READY_TIMEOUT_MS default, docs/configuration.md). */
const READY_BUDGET_MS = 1000;
/** How soon data must answer again after the engine is killed (docs/reliability.md): restart delay 0.5 s + the engine's start. */
const RECOVERY_BOUND_MS = 15_000;
/**
 * The import both the engine kill and the Ctrl-C interrupt. What they need is an import in flight
 * when the fault comes: the fault is sent once the first write of its first 250-file batch
 * (IMPORT_BATCH_FILES) shows, and three more batches are still to parse and write. Not the
 * issue's 4,000 files, nor the 2,000 of the last round: each test imports the same files again
 * afterwards, and more files to parse and write assert nothing more here (an import's size is
 * test/imports*' subject).
 */
const IMPORT_FILES = 1000;
const importZip = await corpusZip(IMPORT_FILES);

/**
 * The service on its own embedded engine in a fresh DATA_DIR (no MONGODB_URI), small demo data.
 * The engine (restarted on its port by the service's supervisor) and the service (its closed port
 * met by the clients after a Ctrl-C) listen on ports outside the ephemeral range (EMBEDDED_MONGO_PORT, PORT).
 */
async function startOnEmbedded(t: Test, opts: { launcher?: 'node' | 'npm'; env?: Record<string, string>; dataDir?: string } = {}) {
  const dataDir = opts.dataDir ?? (await mkdtemp(path.join(os.tmpdir(), 'faults-embedded-')));
  if (!opts.dataDir) t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const { service, enginePort } = await onPortsOutsideEphemeralRange(2, async ([port, enginePort]) => ({
    enginePort: enginePort!,
    service: await startService({
      mongodbDb: 'freight',
      launcher: opts.launcher,
      timeoutMs: 120_000,
      env: {
        DATA_DIR: dataDir,
        PORT: String(port),
        EMBEDDED_MONGO_PORT: String(enginePort),
        DEMO_INVOICES: String(DEMO_DATA_SIZE),
        DEMO_TRIPS: String(DEMO_DATA_SIZE),
        LOG_LEVEL: 'info',
        RATE_LIMIT_MAX: '1000000',
        RATE_LIMIT_IP_MAX: '1000000',
        REPORT_RATE_LIMIT_MAX: '1000000',
        ...opts.env,
      },
    }),
  }));
  t.teardown(() => service.stop(5000));
  const servicePid = service.child.pid!;
  const engine = enginePidUnder(servicePid);
  if (!engine) throw new Error(`no embedded engine under the service:\n${service.output()}`);
  return { service, dataDir, engine, enginePort };
}

interface Answer {
  status: number | string;
  ms: number;
  body: string;
}

/** One request on a keep-alive connection (as real clients send them); transport errors come back as their code. */
async function call(url: string, init: RequestInit = {}, timeoutMs = 60_000): Promise<Answer> {
  const started = Date.now();
  try {
    const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const body = await res.text();
    return { status: res.status, ms: Date.now() - started, body };
  } catch (err) {
    const e = err as { cause?: { code?: string }; name?: string };
    return { status: e.cause?.code ?? e.name ?? 'error', ms: Date.now() - started, body: '' };
  }
}

/** An import's answer may take minutes where the on-disk store's commits wait on a busy disk (one took over 60 s at a load of 18). */
const IMPORT_TIMEOUT_MS = 300_000;
const importFiles = (base: string) =>
  call(`${base}/api/imports`, { method: 'POST', headers: { 'x-api-key': TGO.apiKey, 'content-type': 'application/zip' }, body: importZip }, IMPORT_TIMEOUT_MS);

/** Resolves once a document written by an import started at `since` is visible: the import is in flight. */
async function importUnderWay(base: string, since: string, imported: Promise<Answer>): Promise<void> {
  // An import that answers before its first write shows would be waited for in vain: its answer says why.
  let answer: Answer | null = null;
  void imported.then((a) => (answer = a));
  // Generous: at a load average of 19 on 2 cores the first batch took over 60 s.
  for (const until = Date.now() + 180_000; Date.now() < until;) {
    const a = answer as Answer | null; // taken before the probe: answered, and still nothing written after it
    const res = await call(`${base}/api/financial-docs?limit=1&updatedSince=${encodeURIComponent(since)}`, { headers: { 'x-api-key': TGO.apiKey } });
    if (res.status === 200 && (JSON.parse(res.body) as { data: unknown[] }).data.length > 0) return;
    if (a) throw new Error(`the import answered ${a.status} before any write of it was seen: ${a.body.slice(0, 300)}`);
    await sleep(POLL_MS);
  }
  throw new Error('the import wrote nothing within 180 s');
}

const reasonOf = (a: Answer): string | undefined => {
  try {
    return (JSON.parse(a.body) as { error?: { reason?: string } }).error?.reason;
  } catch {
    return undefined;
  }
};

t.test('kill -9 of the embedded engine: restarted, data answers again without a restart of the service', async (t) => {
  const { service, engine, enginePort, dataDir } = await startOnEmbedded(t);
  const { base } = service;
  const servicePid = service.child.pid!;
  t.equal(processGroup(engine) === processGroup(servicePid), false, 'the engine runs in a process group of its own');
  t.equal(readFileSync(path.join(dataDir, 'embedded-mongo.port'), 'utf8'), String(enginePort), 'the engine listens on EMBEDDED_MONGO_PORT');

  const outcomes: (Answer & { at: number; path: string })[] = [];
  let running = true;
  const t0 = Date.now();
  const paths = ['/api/financial-docs?limit=5', '/ready', '/health', '/api/shipments?limit=5'];
  // Steady traffic as in the Ctrl-C test, not a flood: the outage (the 0.5 s restart delay and the new
  // engine's start) still meets tens of /ready probes, and 2,000–8,000 answers took the machine from
  // the import and the restart the test waits for. At that pace from just before the kill until data
  // answers again; calm before and after (CALM_PAUSE_MS).
  const pace = trafficPace();
  const loops = Array.from({ length: 6 }, async (_, i) => {
    while (running) {
      const p = paths[i % paths.length]!;
      const at = Date.now() - t0;
      outcomes.push({ at, path: p, ...(await call(`${base}${p}`, { headers: { 'x-api-key': TGO.apiKey } })) });
      await pace.pause();
    }
  });
  const since = new Date().toISOString();
  const firstImport = importFiles(base);
  await importUnderWay(base, since, firstImport);
  pace.dense = true;
  const denseFrom = outcomes.length;
  await until(() => outcomes.length >= denseFrom + DENSE_ANSWERS_BEFORE_FAULT, 30_000);

  // The machine's lag from the kill on: the /health answers among the traffic's, this process's
  // event loop and the service's (the new engine's JVM start, the import's batches).
  const lag = await lagProbe(base, {
    health: () => Math.max(0, ...outcomes.filter((o) => o.path === '/health' && o.at >= killedAt).map((o) => o.ms)),
    service: true,
  });
  const killedAt = Date.now() - t0;
  process.kill(engine, 'SIGKILL');
  // Recovered: a new engine runs and a data request made after the kill answered 200.
  let recoveredAt = -1;
  let newEngine: number | null = null;
  // A pause between probes: each also walks /proc, and back to back they took a core from the restart they wait for.
  for (const until = Date.now() + 60_000; Date.now() < until; await sleep(POLL_MS)) {
    const probe = await call(`${base}/api/financial-docs?limit=1`, { headers: { 'x-api-key': TGO.apiKey } });
    newEngine = enginePidUnder(servicePid);
    if (probe.status === 200 && newEngine && newEngine !== engine) {
      recoveredAt = Date.now() - t0;
      break;
    }
  }
  pace.dense = false;
  const interrupted = await firstImport;
  running = false;
  await Promise.all(loops);

  // The machine's own lag over the same span (a loaded CI runner, the new engine's JVM start): the budgets below may add it, no more.
  const machineLag = await lag.stop();
  t.ok(recoveredAt > 0, 'data answers again');
  const recoveryMs = recoveredAt - killedAt;
  const recoveryBound = RECOVERY_BOUND_MS + machineLag.ms;
  t.ok(recoveryMs < recoveryBound, `within ${recoveryMs} ms of the kill (bound ${RECOVERY_BOUND_MS} ms + the machine's lag, ${machineLag.text})`);
  t.equal(service.child.exitCode, null, 'the same service process, still running (not restarted)');
  t.ok(newEngine !== null && newEngine !== engine && isRunning(newEngine), `a new engine (pid ${newEngine}, was ${engine})`);
  t.notOk(isRunning(engine), 'the killed engine is gone');

  t.not(interrupted.status, 500, `the import in flight did not answer 500 (${interrupted.status} ${reasonOf(interrupted) ?? ''})`);
  t.ok(
    interrupted.status === 200 || (interrupted.status === 503 && reasonOf(interrupted) === 'database_unavailable'),
    'it answered 200 or 503 database_unavailable',
    { body: interrupted.body.slice(0, 300) },
  );
  const statuses = [...new Set(outcomes.map((o) => o.status))].sort();
  t.same(
    statuses.filter((s) => s !== 200 && s !== 503),
    [],
    `only 200 and 503 meanwhile (${statuses.join(', ')})`,
    {
      others: outcomes.filter((o) => o.status !== 200 && o.status !== 503).slice(0, 5),
    },
  );
  t.ok(
    outcomes.filter((o) => o.path !== '/health').every((o) => o.status === 200 || reasonOf(o) === 'database_unavailable'),
    'every 503 is database_unavailable',
  );
  const ready = outcomes.filter((o) => o.path === '/ready' && o.at >= killedAt);
  const slowestReady = Math.max(...ready.map((o) => o.ms));
  // /ready meets that lag twice: before its handler runs, and when its budget's timer fires and it answers.
  const readyBound = READY_BUDGET_MS + Math.max(1000, 2 * machineLag.ms);
  t.ok(
    ready.length > 0 && slowestReady <= readyBound,
    `/ready answered within ${slowestReady} ms (budget ${READY_BUDGET_MS} ms + twice the machine's lag, at least 1 s; the lag ${machineLag.text}; ${ready.length} probes)`,
    // When it fails: the slowest /ready answers and what /health met around them (ms since the test's start).
    {
      killedAt,
      recoveredAt,
      slowestReady: [...ready]
        .sort((a, b) => b.ms - a.ms)
        .slice(0, 3)
        .map((o) => ({ at: o.at, ms: o.ms, status: o.status, body: o.body.slice(0, 160) })),
      health: outcomes.filter((o) => o.path === '/health' && o.at >= killedAt).map((o) => [o.at, o.ms]),
    },
  );
  t.ok(
    ready.some((o) => o.status === 503),
    '/ready said 503 while the engine was down',
  );
  t.same([...new Set(outcomes.filter((o) => o.path === '/health').map((o) => o.status))], [200], '/health stayed 200: the service is alive and recovering');

  const log = service.output();
  t.match(log, /embedded database engine exited unexpectedly; restarting it/, 'the death is logged');
  t.match(
    log.split('\n').find((l) => l.includes('embedded database engine restarted')),
    `"port":${enginePort},`,
    'and the restart, on the same port',
  );
  const outageLines = log.split('\n').filter((l) => /database unavailable, polling goes on/.test(l));
  t.ok(outageLines.length <= 2, `the job workers logged the outage ${outageLines.length} time(s), not once per poll`);

  const again = await importFiles(base);
  t.equal(again.status, 200, 'the same files imported again after the recovery');
  const summary = (JSON.parse(again.body) as { summary: { files: number; rejected: number } }).summary;
  t.match(summary, { files: IMPORT_FILES, rejected: 0 }, 'every file imported or skipped: the store is whole');
  t.comment(
    `kill -9 → data again after ${recoveryMs} ms; /ready slowest ${slowestReady} ms, 503 ${ready.filter((o) => o.status === 503).length} times; ${outcomes.length} requests; interrupted import: ${interrupted.status} ${reasonOf(interrupted) ?? ''}; again: ${JSON.stringify(summary)}`,
  );
});

t.test('Ctrl-C (SIGINT to the process group) during an import: no 500, drained, engine stopped last, exit 0', async (t) => {
  const { service, engine, dataDir } = await startOnEmbedded(t, { launcher: 'npm' });
  const { base } = service;
  const group = service.group!;
  const servicePid = descendantRunning(service.child.pid!, 'scripts/start.ts');
  t.equal(processGroup(service.child.pid!), group, 'npm leads the group');
  t.ok(servicePid !== null && processGroup(servicePid) === group, 'the service runs in the group, under npm');
  t.not(processGroup(engine), group, 'the engine is out of the group');

  const answers: (Answer & { path: string })[] = [];
  let issuing = true;
  const gets = ['/api/financial-docs?limit=20', '/api/shipments?limit=20', '/api/analytics/cash-inflow-forecast', '/ready'];
  // Steady traffic, not a flood (it took the machine from the import it waits for); calm
  // (CALM_PAUSE_MS) until the import's first write shows, at TRAFFIC_PAUSE_MS when the signal comes.
  const pace = trafficPace();
  const loops = Array.from({ length: 6 }, async (_, i) => {
    while (issuing) {
      const p = gets[i % gets.length]!;
      answers.push({ path: p, ...(await call(`${base}${p}`, { headers: { 'x-api-key': TGO.apiKey } })) });
      await pace.pause();
    }
  });
  // The machine's lag, until the service closes its port.
  const lag = await lagProbe(base, { service: true });
  const since = new Date().toISOString();
  const imported = importFiles(base);
  await importUnderWay(base, since, imported);
  pace.dense = true;
  const denseFrom = answers.length;
  await until(() => answers.length >= denseFrom + DENSE_ANSWERS_BEFORE_FAULT, 30_000);
  const signalledAt = Date.now();
  process.kill(-group, 'SIGINT');
  const interrupted = await imported;
  issuing = false;
  await Promise.all(loops);
  const how = await Promise.race([service.exited, deadline(40_000, 'still running after 40 s')]);
  // npm itself, without a terminal, dies of the signal at once: the service (its child, in the group) is what drains.
  const gone = await until(() => servicePid !== null && !isRunning(servicePid), 40_000);
  const exitMs = Date.now() - signalledAt;
  const machineLag = await lag.stop();

  const http = answers.filter((a) => typeof a.status === 'number');
  t.same(
    http.filter((a) => a.status === 500).map((a) => `${a.path} ${a.body.slice(0, 200)}`),
    [],
    `no 500 among ${http.length} answers`,
  );
  t.not(interrupted.status, 500, 'the import did not answer 500');
  t.ok(
    interrupted.status === 200 || (interrupted.status === 503 && reasonOf(interrupted) === 'shutting_down'),
    `the import answered ${interrupted.status} ${reasonOf(interrupted) ?? ''} (200, or 503 shutting_down at a batch)`,
    { body: interrupted.body.slice(0, 300) },
  );
  t.same(
    [...new Set(http.map((a) => a.status))].filter((s) => s !== 200),
    [],
    'every other answer given was 200 (later requests found the port closed)',
  );
  t.ok(how === 0 || how === 'SIGINT', `npm ended (${how})`);
  t.ok(gone, 'the service process exits');
  t.match(service.output(), /"exitCode":0,"msg":"exiting"/, 'the service exits 0 (its last line: npm reports the signal, not the code)');
  t.ok(exitMs < 15_000 + machineLag.ms, `${exitMs} ms after the signal (bound 15 s + the machine's lag, ${machineLag.text})`);
  t.notOk(isRunning(engine), 'the engine is stopped, not orphaned');

  const log = service.output();
  t.notMatch(log, /engine exited unexpectedly/, 'the engine did not die with the group: the service stopped it');
  const order = ['shutting down: draining requests', 'requests and workers drained', 'embedded database engine stopped'].map((m) => log.indexOf(m));
  t.ok(order.every((i) => i >= 0) && order[0]! < order[1]! && order[1]! < order[2]!, 'drain first, engine last', { order });
  t.notMatch(log, /"level":(50|60)/, 'nothing logged at error level');

  // The data stayed whole: the same service on the same store takes the same files again. It is
  // started with no engine restart left, for the next test.
  const restarted = await startOnEmbedded(t, { dataDir, env: { EMBEDDED_MONGO_MAX_RESTARTS: '0' } });
  const again = await importFiles(restarted.service.base);
  t.equal(again.status, 200, 'the same files again after a restart');
  // Parsed without throwing: the next test runs on this service whatever this answer was.
  const againSummary = again.status === 200 ? (JSON.parse(again.body) as { summary: object }).summary : again.body.slice(0, 300);
  t.match(againSummary, { files: IMPORT_FILES, rejected: 0 }, 'nothing rejected: every file whole');
  t.comment(
    `SIGINT to the group → npm ${how}, service gone after ${exitMs} ms; import ${interrupted.status} ${reasonOf(interrupted) ?? ''}; ${http.length} other answers; again: ${JSON.stringify(againSummary)}`,
  );

  // A service of its own would cost an engine, a service process and the demo load: the one that
  // re-imported serves (its engine up, its restarts set to 0).
  await t.test('an engine that cannot be kept up: one fatal line, exit 1 (for a supervisor to restart the service)', async (t) => {
    const { service, engine: restartedEngine } = restarted;
    t.equal(service.child.exitCode, null, 'the service runs, on its engine');
    const lag = await lagProbe(service.base, { service: true });
    await sleep(500); // a couple of samples before the kill
    const killedAt = Date.now();
    process.kill(restartedEngine, 'SIGKILL');
    const how = await Promise.race([service.exited, deadline(30_000, 'still running after 30 s')]);
    const exitMs = Date.now() - killedAt;
    const machineLag = await lag.stop();
    t.equal(how, 1, 'the service exits 1');
    t.ok(exitMs < 15_000 + machineLag.ms, `${exitMs} ms after the kill (bound 15 s + the machine's lag, ${machineLag.text})`);
    const fatal = service
      .output()
      .split('\n')
      .filter((l) => l.includes('"level":60'));
    t.equal(fatal.length, 1, 'one fatal line');
    t.match(fatal[0], /embedded database engine could not be restarted .*the service exits so that its supervisor restarts it/);
  });
});
