/**
 * OpenTelemetry traces end to end: an in-test OTLP/HTTP receiver (a plain HTTP server reading the
 * exporter's JSON) gets the spans of a REST request that carries a `traceparent` (same trace id,
 * parent the caller's span id), of the MongoDB commands it ran (children in that trace), and of an
 * MCP tool call whose `_meta` carries a `traceparent` (the tool span continues it; the REST
 * operation it runs is its child), and of a webhook delivery job (a trace of its own, its database
 * commands its children). The trace ids are made here, not by the code under test.
 */
import t from 'tap';
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, KEY_A } from './helpers/harness.ts';
import { connect, listen } from './helpers/mcp.ts';
import { connectMongo } from '../lib/db/client.ts';
import { startReceiver } from './helpers/receiver.ts';
import { webhooksPlugin } from '../lib/webhooks/plugin.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
}
interface OtlpRequest {
  resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

// The receiver: every span of every export, and the service names they came from.
const spans: OtlpSpan[] = [];
const services = new Set<string>();
const contentTypes = new Set<string>();
const receiver = http.createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    contentTypes.add(String(req.headers['content-type']));
    if (req.method === 'POST' && req.url === '/v1/traces') {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest;
      for (const rs of body.resourceSpans) {
        const name = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue;
        if (name) services.add(name);
        for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
t.teardown(() => new Promise<void>((r) => receiver.close(() => r())));
const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const h = await startHarness(t);
// The service's client reports its commands when tracing is on (scripts/embedded-mongo/open-database.ts): the same here.
const traced = await connectMongo(h.engine.uri, h.db.databaseName, { serverSelectionTimeoutMS: 2000, driver: { monitorCommands: true } });
t.teardown(() => traced.client.close(true));
const hooks = await startReceiver();
t.teardown(() => hooks.close());
const app = await h.rebuild({
  db: traced.db,
  env: {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_SERVICE_NAME: 'freight-test',
    WEBHOOK_ALLOW_PRIVATE: 'true',
    WEBHOOK_ALLOWED_PORTS: '*',
    WEBHOOK_PROCESS_EVERY_MS: '100',
  },
  plugins: [webhooksPlugin({ worker: true })],
});
const base = await listen(app);

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const SERVER = 2;
const attribute = (span: OtlpSpan, key: string) => {
  const v = span.attributes?.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue === undefined ? undefined : Number(v.intValue));
};

t.test('a request with a traceparent: its span, and its MongoDB commands, are in that trace', async (t) => {
  const traceId = hex(16);
  const callerSpan = hex(8);
  const res = await fetch(`${base}/api/financial-docs?limit=5`, { headers: { 'x-api-key': KEY_A, traceparent: `00-${traceId}-${callerSpan}-01` } });
  t.equal(res.status, 200);
  await app.tracing.flush();

  const server = spans.find((s) => s.traceId === traceId && s.kind === SERVER);
  t.ok(server, 'a server span in the caller’s trace');
  t.equal(server?.name, 'GET listFinancialDocs', 'named by its operationId');
  t.equal(server?.parentSpanId, callerSpan, "the caller's span is its parent");
  t.equal(attribute(server!, 'http.response.status_code'), 200);
  t.equal(attribute(server!, 'http.route'), '/api/financial-docs');
  const mongo = spans.filter((s) => s.traceId === traceId && attribute(s, 'db.system.name') === 'mongodb');
  t.ok(mongo.length >= 1, `${mongo.length} MongoDB command spans in the trace`);
  t.ok(
    mongo.some((s) => attribute(s, 'db.collection.name') === 'financialDocs'),
    'the list read the financial documents',
  );
  const ids = new Set(spans.filter((s) => s.traceId === traceId).map((s) => s.spanId));
  t.ok(
    mongo.every((s) => s.parentSpanId !== undefined && ids.has(s.parentSpanId)),
    'each command span is a child within the trace',
  );
  t.ok(services.has('freight-test'), 'service.name from OTEL_SERVICE_NAME');
  t.ok(
    [...contentTypes].every((c) => c.startsWith('application/json')),
    'OTLP/HTTP JSON',
  );
});

t.test('a request without one starts a trace of its own', async (t) => {
  const before = new Set(spans.map((s) => s.traceId));
  t.equal((await fetch(`${base}/health`, { headers: { traceparent: 'not-a-traceparent' } })).status, 200);
  await app.tracing.flush();
  const health = spans.filter((s) => s.name === 'GET getHealth' && !before.has(s.traceId));
  t.equal(health.length, 1);
  t.equal(health[0]?.parentSpanId ?? '', '', 'a root span (a malformed traceparent is ignored)');
  t.match(health[0]?.traceId, /^[0-9a-f]{32}$/);
});

t.test('an MCP tool call continues the traceparent of its _meta; the operation it runs is its child', async (t) => {
  const traceId = hex(16);
  const callerSpan = hex(8);
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const result = (await client.callTool({
    name: 'listFinancialDocs',
    arguments: { limit: 5 },
    _meta: { traceparent: `00-${traceId}-${callerSpan}-01` },
  })) as CallToolResult;
  t.notOk(result.isError);
  await app.tracing.flush();

  const tool = spans.find((s) => s.traceId === traceId && s.name === 'tools/call listFinancialDocs');
  t.ok(tool, 'the tool call span is in the trace of _meta.traceparent');
  t.equal(tool?.parentSpanId, callerSpan);
  t.equal(attribute(tool!, 'gen_ai.tool.name'), 'listFinancialDocs');
  const inner = spans.find((s) => s.traceId === traceId && s.name === 'GET listFinancialDocs');
  t.ok(inner, 'the REST operation the tool ran');
  t.equal(inner?.parentSpanId, tool?.spanId, 'is a child of the tool call');
  t.ok(
    spans.some((s) => s.traceId === traceId && attribute(s, 'db.collection.name') === 'financialDocs'),
    'and so are its database reads',
  );
});

t.test('a webhook delivery job is a trace of its own, with its database commands', async (t) => {
  const api = (path: string, method = 'GET', body?: unknown) =>
    fetch(`${base}${path}`, {
      method,
      headers: { 'x-api-key': KEY_A, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const created = await api('/api/webhooks', 'POST', { url: hooks.url('/traced'), events: ['alert.triggered'] });
  t.equal(created.status, 201);
  const hook = (await created.json()) as { id: string; secret: string };
  hooks.secrets.set('/traced', hook.secret);
  t.equal((await api(`/api/webhooks/${hook.id}/test`, 'POST')).status, 202);
  const deadline = Date.now() + 20_000;
  for (;;) {
    const list = (await (await api(`/api/webhooks/${hook.id}/deliveries`)).json()) as { data: { status: string }[] };
    if (list.data[0]?.status === 'succeeded') break;
    if (Date.now() > deadline) throw new Error('the test delivery was not delivered');
    await new Promise((r) => setTimeout(r, 50));
  }
  await app.tracing.flush();
  const jobs = spans.filter((s) => s.name === 'job webhook:deliver');
  t.equal(jobs.length, 1, 'one delivery, one job span');
  const job = jobs[0]!;
  t.equal(job.parentSpanId ?? '', '', 'a root span: not part of the poll nor of the request that queued it');
  t.equal(attribute(job, 'messaging.destination.name'), 'webhook:deliver');
  const commands = spans.filter((s) => s.traceId === job.traceId && attribute(s, 'db.system.name') === 'mongodb');
  t.ok(
    commands.some((s) => attribute(s, 'db.collection.name') === 'webhookDeliveries'),
    'the delivery read and recorded in its trace',
  );
  t.ok(
    commands.every((s) => s.parentSpanId === job.spanId),
    "each command a child of the job's span",
  );
});
