/**
 * Limits, security headers and logs, against the service as production runs
 * it (scripts/start.ts in a child process, LOG_LEVEL=trace so every log line
 * is captured), its database behind a fault-injecting proxy:
 *
 *   body size → 413, header size → 431, slow request → 408, page depth → 400,
 *   query time (maxTimeMS on every data query; MaxTimeMSExpired) → 503,
 *   a database that hangs → 503 at the request deadline, malformed URLs → 400;
 *   all in the error shape with the security headers, no server banner, no
 *   stack trace; and no API key (valid, revoked or bogus) ever in the logs.
 */
import t, { type Test } from 'tap';
import net from 'node:net';
import http from 'node:http';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { createApiKey, revokeApiKey } from '../lib/auth/api-keys.ts';
import { startService } from './helpers/service.ts';
import { startMongoProxy } from './helpers/mongo-proxy.ts';
import { errorProblem } from './helpers/error-reason.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

t.setTimeout(180_000);

// Generous enough that a loaded CI machine answers ordinary requests well within it.
const REQUEST_TIMEOUT_MS = 3000;
const QUERY_TIMEOUT_MS = 2500;
const BODY_LIMIT = 8192;
// A tool's body over MCP may be as large as its REST operation takes: the largest of these (lib/mcp/session-host.ts).
const IMPORT_BODY_LIMIT = 16_384;
const DELIVERIES_BODY_LIMIT = 12_288;

const engine = await startEmbeddedMongo({ shortLived: true });
t.teardown(() => engine.stop());
const { client, db } = await connectMongo(engine.uri, 'limits');
t.teardown(() => client.close());
await ensureIndexes(db);
await loadDemoData(db, { invoices: 120, trips: 120 });
const KEY = DEMO_TENANTS[0]!.apiKey;
const revoked = await createApiKey(db, DEMO_TENANTS[0]!.rfc, 'revoked in the test');
await revokeApiKey(db, revoked.record._id);
const BOGUS_KEY = 'sk_live_9f8e7d6c5b4a39281706_not_a_key';

const proxy = await startMongoProxy({ port: engine.port });
t.teardown(() => proxy.close());
const service = await startService({
  mongodbUri: proxy.uri,
  mongodbDb: 'limits',
  env: {
    LOG_LEVEL: 'trace',
    BODY_LIMIT_BYTES: String(BODY_LIMIT),
    IMPORT_BODY_LIMIT_BYTES: String(IMPORT_BODY_LIMIT),
    DELIVERIES_BODY_LIMIT_BYTES: String(DELIVERIES_BODY_LIMIT),
    REQUEST_TIMEOUT_MS: String(REQUEST_TIMEOUT_MS),
    QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
    RATE_LIMIT_MAX: '100000',
    RATE_LIMIT_IP_MAX: '100000',
    REPORT_RATE_LIMIT_MAX: '100000',
    ALERT_WORKER: 'false',
    MONGODB_SERVER_SELECTION_TIMEOUT_MS: '2000',
  },
});
t.teardown(() => service.stop());
// pino writes its lines asynchronously and the banner with console.log: on a loaded machine the
// banner (which startService waits for) can reach the pipe before fastify's last start-up line.
for (const until = Date.now() + 10_000; !service.output().includes('"msg":"Server listening at') && Date.now() < until;) {
  await new Promise((r) => setTimeout(r, 50));
}
const startupLog = service.output();
const { base } = service;
const port = Number(new URL(base).port);

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A request through node:http (no client-side limits or header normalisation). */
function request(method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      let text = '';
      res
        .setEncoding('utf8')
        .on('data', (d: string) => (text += d))
        .on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    if (body !== undefined) req.end(body);
    else req.end();
  });
}

/** Writes raw bytes on a socket and reads the whole answer (the server closes it). */
function rawExchange(write: (s: net.Socket) => void, timeoutMs = 15_000): Promise<{ text: string; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, '127.0.0.1', () => write(socket));
    let text = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer within ${timeoutMs} ms: ${text}`));
    }, timeoutMs);
    socket.setEncoding('utf8').on('data', (d: string) => (text += d));
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ text, ms: Date.now() - started });
    });
    socket.on('error', () => {});
  });
}

function parseRaw(text: string): Raw {
  const [head = '', ...rest] = text.split('\r\n\r\n');
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: http.IncomingHttpHeaders = {};
  for (const l of lines) {
    const i = l.indexOf(':');
    if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') };
}

/** The error shape, the security headers, no banner, no stack. */
function assertErrorAnswer(t: Test, res: Raw, status: number, label: string, reason: string): void {
  t.equal(res.status, status, `${label}: ${status}`);
  let body: { error?: { code?: number; message?: string; details?: unknown[]; reason?: string } } = {};
  try {
    body = JSON.parse(res.body);
  } catch {
    t.fail(`${label}: body is not JSON: ${res.body.slice(0, 200)}`);
  }
  t.equal(body.error?.code, status, `${label}: error shape with code ${status}`);
  t.type(body.error?.message, 'string');
  t.ok(Array.isArray(body.error?.details) && body.error.details.length > 0, `${label}: details`);
  t.equal(body.error?.reason, reason, `${label}: reason ${reason}`);
  t.equal(errorProblem(status, body), null, `${label}: reason fits the status, fields follow details`);
  t.equal(res.headers['x-content-type-options'], 'nosniff', `${label}: nosniff`);
  t.equal(res.headers['cache-control'], 'no-store', `${label}: no-store`);
  t.notOk(res.headers.server, `${label}: no server banner`);
  t.notOk(res.headers['x-powered-by'], `${label}: no x-powered-by`);
  t.notMatch(res.body, /\n\s+at |node_modules|\.ts:\d+/, `${label}: no stack trace`);
}

t.test('start-up logs nothing at warning level or above', async (t) => {
  const lines = startupLog.split('\n').filter((l) => l.startsWith('{'));
  t.ok(lines.length > 0, `${lines.length} log lines at start-up (LOG_LEVEL=trace)`);
  // glue used to warn about the version 1 lists' response media type at every start (issue 24 §6).
  t.same(
    lines.filter((l) => (JSON.parse(l) as { level: number }).level >= 40),
    [],
    'no warning',
  );
  t.notMatch(startupLog, /ContentTypeParser/, 'no content-type parser warning');
});

t.test('body size: over BODY_LIMIT_BYTES is 413', async (t) => {
  const big = JSON.stringify({ userIds: ['u'], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: 'x'.repeat(BODY_LIMIT) });
  assertErrorAnswer(
    t,
    await request('POST', '/api/alerts/schedule', { 'x-api-key': KEY, 'content-type': 'application/json' }, big),
    413,
    'REST body',
    'payload_too_large',
  );
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(IMPORT_BODY_LIMIT) } });
  const mcp = await request('POST', '/mcp', { 'x-api-key': KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, huge);
  t.equal(mcp.status, 413, 'MCP body over the largest a tool takes: 413');
  t.match(JSON.parse(mcp.body).error, { code: 413, reason: 'payload_too_large' });
  // Within it, a tool takes what its operation takes over REST: an import's 10 KiB of files (over BODY_LIMIT_BYTES) is
  // imported (the text is no CFDI: rejected by name), and an alert schedule's is its operation's 413, as a tool error.
  const client = new Client({ name: 'limits', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { 'x-api-key': KEY } } }));
  t.teardown(() => client.close());
  const imported = (await client.callTool({
    name: 'importDocuments',
    arguments: { body: { files: [{ name: 'notas.xml', content: 'x'.repeat(10_000) }] } },
  })) as { isError?: boolean; structuredContent?: { files?: { name: string; status: string }[] } };
  t.notOk(imported.isError, 'a 10 KiB import over MCP is taken');
  t.match(imported.structuredContent?.files, [{ name: 'notas.xml', status: 'rejected' }]);
  const scheduled = (await client.callTool({ name: 'scheduleAlerts', arguments: { body: JSON.parse(big) } })) as {
    isError?: boolean;
    structuredContent?: unknown;
  };
  t.equal(scheduled.isError, true, "an alert schedule's body over BODY_LIMIT_BYTES is a tool error");
  t.match(scheduled.structuredContent, { error: { code: 413, reason: 'payload_too_large' } });
  // A lying content-length does not get past the limit either.
  const chunked = await rawExchange((s) => {
    s.write(
      `POST /api/alerts/schedule HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n`,
    );
    // 1 KiB chunks, a few ms apart, until the server answers (writing on would only race its close).
    let answered = false;
    s.once('data', () => (answered = true));
    let i = 0;
    const next = () => {
      if (answered || s.destroyed) return;
      if (i++ < 40) {
        s.write(`400\r\n${'x'.repeat(0x400)}\r\n`);
        setTimeout(next, 5);
      } else s.end('0\r\n\r\n');
    };
    next();
  });
  t.equal(parseRaw(chunked.text).status, 413, 'a chunked body over the limit: 413');
});

t.test('header size: over 16 KiB is 431', async (t) => {
  const res = parseRaw(
    (await rawExchange((s) => s.write(`GET /api/financial-docs HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\nx-padding: ${'a'.repeat(20_000)}\r\n\r\n`))).text,
  );
  assertErrorAnswer(t, res, 431, 'big header', 'headers_too_large');
});

t.test('request timeout: a request not received within REQUEST_TIMEOUT_MS is 408', async (t) => {
  // Both at once (two connections, each with its own deadline): one wait for the timeout, not two.
  const [body, headers] = await Promise.all([
    rawExchange((s) =>
      s.write(`POST /api/alerts/schedule HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"userIds"`),
    ),
    rawExchange((s) => s.write(`GET /api/financial-docs HTTP/1.1\r\nhost: x\r\nx-api-key: ${KEY}\r\n`)),
  ]);
  assertErrorAnswer(t, parseRaw(body.text), 408, 'slow body', 'request_timeout');
  t.ok(body.ms >= REQUEST_TIMEOUT_MS - 100 && body.ms < REQUEST_TIMEOUT_MS + 2500, `answered after ${body.ms} ms (limit ${REQUEST_TIMEOUT_MS} ms)`);
  assertErrorAnswer(t, parseRaw(headers.text), 408, 'slow headers', 'request_timeout');
  t.ok(headers.ms < REQUEST_TIMEOUT_MS + 2500, `answered after ${headers.ms} ms`);
});

t.test('malformed URLs and other refusals are in the error shape too', async (t) => {
  assertErrorAnswer(
    t,
    await request('DELETE', `/api/alerts/jobs/${'a'.repeat(300)}`, { 'x-api-key': KEY }),
    400,
    'over-long path parameter',
    'invalid_request',
  );
  assertErrorAnswer(t, await request('DELETE', '/api/alerts/jobs/%E0%A4%A', { 'x-api-key': KEY }), 400, 'bad percent-encoding', 'invalid_request');
  assertErrorAnswer(t, await request('GET', '/api/nothing-here', { 'x-api-key': KEY }), 404, 'unknown route', 'not_found');
  const wrong = await request('PATCH', '/api/financial-docs', { 'x-api-key': KEY });
  assertErrorAnswer(t, wrong, 405, 'wrong method', 'method_not_allowed');
  t.equal(wrong.headers.allow, 'GET, HEAD', 'allow lists the methods');
  assertErrorAnswer(t, await request('GET', '/api/financial-docs', { 'x-api-key': BOGUS_KEY }), 401, 'bogus key', 'unknown_api_key');
  assertErrorAnswer(t, await request('GET', '/api/financial-docs', { authorization: `Bearer ${revoked.key}` }), 401, 'revoked key', 'unknown_api_key');
  assertErrorAnswer(
    t,
    await request('POST', '/api/alerts/schedule', { 'x-api-key': KEY, 'content-type': 'text/plain' }, 'hello'),
    415,
    'text body',
    'unsupported_media_type',
  );
  assertErrorAnswer(
    t,
    await request('POST', '/api/alerts/schedule', { 'x-api-key': KEY, 'content-type': 'application/json' }, '{"userIds": ['),
    400,
    'malformed JSON',
    'invalid_body',
  );
  const bad = parseRaw((await rawExchange((s) => s.write('GET / HTTP/1.1\r\nho st: x\r\n\r\n'))).text);
  assertErrorAnswer(t, bad, 400, 'malformed HTTP', 'invalid_request');
  const health = await request('GET', '/health');
  t.equal(health.status, 200);
  t.equal(health.headers['x-content-type-options'], 'nosniff', '/health: nosniff');
  t.notOk(health.headers.server, '/health: no server banner');
});

t.test('page depth: a page beyond 500 is 400', async (t) => {
  for (const path of ['/api/financial-docs', '/api/shipments', '/api/alerts/jobs', '/api/alerts']) {
    const res = await request('GET', `${path}?limit=100&page=501`, { 'x-api-key': KEY });
    assertErrorAnswer(t, res, 400, path, 'invalid_parameter');
    t.match(res.body, /page must be (an integer )?(<= 500|between 1 and 500)/);
    t.equal((await request('GET', `${path}?limit=100&page=500`, { 'x-api-key': KEY })).status, 200, `${path}: the deepest allowed page is fine`);
  }
});

t.test('query time: every data query carries maxTimeMS; MaxTimeMSExpired is 503', async (t) => {
  proxy.commands.length = 0;
  const paths = [
    '/api/financial-docs?paymentStatus=partial',
    '/api/financial-docs',
    '/api/shipments',
    '/api/tax-summary',
    '/api/analytics/cash-inflow-forecast',
    '/api/analytics/discounts-and-shrinkage',
    '/api/analytics/fleet-utilization',
    '/api/analytics/dispatch-to-bill',
    '/api/analytics/unit-economics',
    '/api/alerts/jobs',
    '/api/alerts',
  ];
  for (const path of paths) t.equal((await request('GET', path, { 'x-api-key': KEY })).status, 200, path);
  const data = new Set(['financialDocs', 'trips', 'alertJobs', 'alerts']);
  const reads = proxy.commands.filter((c) => ['find', 'aggregate', 'count'].includes(c.name) && data.has(String(c.collection)));
  t.ok(reads.length >= paths.length, `${reads.length} queries on data collections`);
  const unbounded = reads.filter((c) => c.doc.maxTimeMS !== QUERY_TIMEOUT_MS);
  t.same(
    unbounded.map((c) => `${c.name} ${String(c.collection)}`),
    [],
    `every data query is bounded by maxTimeMS=${QUERY_TIMEOUT_MS}`,
  );

  proxy.intercept = (c) =>
    ['find', 'aggregate'].includes(c.name) && c.collection === 'financialDocs'
      ? { ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' }
      : null;
  try {
    const res = await request('GET', '/api/financial-docs', { 'x-api-key': KEY });
    assertErrorAnswer(t, res, 503, 'query over its time limit', 'deadline_exceeded');
    t.ok(Number(res.headers['retry-after']) > 0, 'retry-after');
  } finally {
    proxy.intercept = null;
  }
});

t.test('a failing database query is a 500 without internals', async (t) => {
  proxy.intercept = (c) =>
    c.name === 'find' && c.collection === 'trips' ? { ok: 0, code: 8000, codeName: 'AtlasError', errmsg: 'injected failure /secret/path' } : null;
  try {
    const res = await request('GET', '/api/shipments', { 'x-api-key': KEY });
    assertErrorAnswer(t, res, 500, 'unexpected database error', 'internal_error');
    t.notMatch(res.body, /injected|secret|AtlasError/, 'the internal message stays in the logs');
    t.match(JSON.parse(res.body).error.details[0], /request id/, 'the request id to report');
  } finally {
    proxy.intercept = null;
  }
});

t.test('API keys never reach the logs', async (t) => {
  // Every way a key travels: header, bearer, MCP, rate-limited, revoked, bogus, failing requests.
  await request('GET', '/api/financial-docs?limit=1', { 'x-api-key': KEY, 'x-request-id': 'log-check-1' });
  await request('GET', '/api/shipments?limit=1', { authorization: `Bearer ${KEY}` });
  await request('GET', '/api/financial-docs?limit=oops', { 'x-api-key': KEY });
  await request(
    'POST',
    '/mcp',
    { 'x-api-key': KEY, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'logs', version: '1' } },
    }),
  );
  await request('GET', '/api/financial-docs', { 'x-api-key': BOGUS_KEY });
  await request('GET', '/api/financial-docs', { authorization: `Bearer ${revoked.key}` });
  // Keys in URLs: refused (401), and still never logged verbatim.
  await request('GET', `/api/financial-docs?api_key=${KEY}&limit=1`);
  await request('GET', `/api/shipments?limit=1&token=${encodeURIComponent(BOGUS_KEY)}`);
  await request('GET', `/api/financial-docs?x-api-key=${revoked.key}`);
  await request('GET', `/api/${KEY}/financial-docs`);
  await request('GET', `/api/financial-docs?limit=1&whatever=${KEY}`, { 'x-api-key': KEY });
  // pino writes its lines asynchronously: on a loaded machine the last requests' lines may still be on their way.
  const redacted = /"url":"\/api\/financial-docs\?api_key=\[Redacted\]&limit=1"/;
  for (const until = Date.now() + 10_000; !(redacted.test(service.output()) && /whatever=/.test(service.output())) && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 50));
  }
  const logs = service.output();
  t.match(logs, redacted, 'a key in the query is redacted, the rest of the URL kept');
  t.ok(logs.split('\n').filter((l) => l.startsWith('{')).length > 20, 'the service logged (LOG_LEVEL=trace)');
  t.match(logs, /log-check-1/, 'the requests are in the logs');
  for (const [name, key] of [
    ['demo key', KEY],
    ['revoked key', revoked.key],
    ['bogus key', BOGUS_KEY],
  ] as const) {
    t.notOk(logs.includes(key), `the ${name} is nowhere in ${logs.length} bytes of logs`);
  }
  t.notMatch(logs, /"(x-api-key|authorization)":"(?!\[Redacted\])/i, 'credential headers, when logged at all, are redacted');
});

// Last: it leaves the driver to reconnect, which must not spill into the other tests.
t.test('a database that hangs: 503 at the request deadline, then recovery', async (t) => {
  proxy.mode = 'blackhole';
  try {
    const started = Date.now();
    let readyMs = 0;
    const [data, ready] = await Promise.all([
      request('GET', '/api/shipments', { 'x-api-key': KEY }),
      request('GET', '/ready').then((r) => {
        readyMs = Date.now() - started;
        return r;
      }),
    ]);
    const ms = Date.now() - started;
    assertErrorAnswer(t, data, 503, 'data operation on a hung database', 'deadline_exceeded');
    t.equal(ready.status, 503, '/ready: 503');
    t.match(JSON.parse(ready.body).error, { reason: 'database_unavailable', details: [/no answer to a ping within 1000 ms/] }, '/ready says why');
    // READY_TIMEOUT_MS (1 s by default): a readiness probe (1 s in Kubernetes by default) gets its answer.
    t.ok(readyMs >= 900 && readyMs < 1000 + 1500, `/ready answered in ${readyMs} ms (READY_TIMEOUT_MS 1000)`);
    t.ok(ms < REQUEST_TIMEOUT_MS + 2500, `both answered within ${ms} ms (deadline ${REQUEST_TIMEOUT_MS} ms)`);
  } finally {
    // The hung connections are lost (as when a partition ends in resets); new ones work.
    proxy.mode = 'pass';
    proxy.dropConnections();
  }
  let ok = 0;
  let last: Raw | undefined;
  const until = Date.now() + 60_000;
  while (Date.now() < until && ok < 3) {
    last = await request('GET', '/api/shipments', { 'x-api-key': KEY });
    ok = last.status === 200 ? ok + 1 : 0;
  }
  const recovered = proxy.commands.length;
  t.equal(ok, 3, 'answers 200 again without a restart', {
    last: last && `${last.status} ${last.body.slice(0, 200)}`,
    commandsSeenByTheProxy: recovered,
    lastUnavailable: service
      .output()
      .split('\n')
      .filter((l) => l.includes('unavailable'))
      .slice(-3)
      .map((l) => l.slice(0, 400)),
  });
});
