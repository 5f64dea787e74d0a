/**
 * MCP over the legacy HTTP+SSE transport (GET /sse + POST /messages) against
 * the service on a real port: the endpoint event, tools and resources with the
 * SDK's SSEClientTransport, tenant isolation, credentials, foreign and unknown
 * sessions, invalid arguments, and shutdown with open streams.
 */
import type { Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { startHarness, testConfig, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, errorOf, listen, seedTwoTenants } from '../helpers/mcp.ts';
import { buildApp } from '../../handlers/app.ts';
import { DOMAIN_NOTES_URI, OPENAPI_URI } from '../../lib/mcp/resources.ts';

export default async function sseTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  await seedTwoTenants(h.db);
  const base = await listen(h.app);
  const sessions = () => h.app.mcp?.sessions.size ?? -1;
  /** Earlier subtests' streams close asynchronously; wait until their sessions are gone. */
  async function settled(): Promise<number> {
    for (let i = 0; i < 100 && sessions() !== 0; i += 1) await new Promise((r) => setTimeout(r, 20));
    return sessions();
  }

  /** Opens GET /sse by hand and reads up to the endpoint event. */
  async function openStream(url: string, key: string): Promise<{ endpoint: string; res: Response; abort: () => void; next: () => Promise<string> }> {
    const ac = new AbortController();
    const res = await fetch(`${url}/sse`, { headers: { accept: 'text/event-stream', 'x-api-key': key }, signal: ac.signal });
    if (res.status !== 200 || !res.body) throw new Error(`GET /sse answered ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    const next = async (): Promise<string> => {
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const event = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (!event.startsWith(':')) return event;
          continue;
        }
        const { value, done } = await reader.read();
        if (done) throw new Error('stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    };
    const first = await next();
    const endpoint = /^event: endpoint\ndata: (.+)$/m.exec(first)?.[1];
    if (!endpoint) throw new Error(`unexpected first event: ${first}`);
    return { endpoint, res, abort: () => ac.abort(), next };
  }

  const postMessage = (url: string, path: string, key: string | null, body: unknown) =>
    fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}) },
      body: JSON.stringify(body),
    });

  t.test('GET /sse announces the message endpoint; POST /messages answers 202 and the response comes on the stream', async (t) => {
    const stream = await openStream(base, KEY_A);
    t.teardown(stream.abort);
    t.match(stream.endpoint, /^\/messages\?sessionId=[0-9a-f-]{36}$/);
    t.equal(stream.res.headers.get('content-type'), 'text/event-stream');
    t.ok(stream.res.headers.get('x-request-id'), 'hook headers survive the hand-over');
    t.ok(stream.res.headers.get('x-ratelimit-limit'));
    const init = await postMessage(base, stream.endpoint, KEY_A, {
      jsonrpc: '2.0',
      id: 'init-1',
      method: 'initialize',
      params: { protocolVersion: '2024-11-05', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    });
    t.equal(init.status, 202);
    t.equal(await init.text(), 'Accepted');
    const event = await stream.next();
    const data = JSON.parse(/^data: (.+)$/m.exec(event)?.[1] ?? 'null');
    t.match(event, /^event: message/);
    t.equal(data.id, 'init-1');
    t.equal(data.result.serverInfo.name, 'freight-backoffice');
    await (await postMessage(base, stream.endpoint, KEY_A, { jsonrpc: '2.0', method: 'notifications/initialized' })).text();
    const call = await postMessage(base, stream.endpoint, KEY_A, {
      jsonrpc: '2.0',
      id: 'c1',
      method: 'tools/call',
      params: { name: 'listShipments', arguments: { limit: 1 } },
    });
    t.equal(call.status, 202);
    await call.text();
    const answer = JSON.parse(/^data: (.+)$/m.exec(await stream.next())?.[1] ?? 'null');
    t.equal(answer.id, 'c1');
    t.equal(answer.result.structuredContent.meta.tenant, TENANT_A);
    t.equal(answer.result.structuredContent.data.length, 1);
  });

  t.test('SDK client: tools, resources and tenant isolation', async (t) => {
    const a = await connect(t, base, 'sse', { 'x-api-key': KEY_A }, '?toolsets=all');
    const b = await connect(t, base, 'sse', { authorization: `Bearer ${KEY_B}` });
    const { tools } = await a.listTools();
    t.same(tools.map((x) => x.name).sort(), (h.app.mcp?.tools ?? []).map((x) => x.name).sort());
    const { resources } = await b.listResources();
    const toolDocs = resources.map((r) => r.uri).filter((uri) => uri.startsWith('freight://docs/tools/'));
    t.same(
      resources
        .map((r) => r.uri)
        .filter((uri) => !toolDocs.includes(uri))
        .sort(),
      [DOMAIN_NOTES_URI, OPENAPI_URI].sort(),
      'the contract and the domain notes',
    );
    t.same(toolDocs.sort(), (await b.listTools()).tools.map((tool) => `freight://docs/tools/${tool.name}.md`).sort(), 'and one reference per tool');
    for (const [client, tenant] of [
      [a, TENANT_A],
      [b, TENANT_B],
    ] as const) {
      for (const name of ['listFinancialDocs', 'listShipments']) {
        const res = await client.callTool({ name, arguments: { detail: 'full' } });
        const body = res.structuredContent as { meta: { tenant: string }; data: { company: string }[] };
        t.equal(body.meta.tenant, tenant);
        t.ok(body.data.length === 2 && body.data.every((d) => d.company === tenant), `${name}: only ${tenant}'s documents`);
      }
    }
  });

  t.test('invalid arguments: tool error, the session stays usable', async (t) => {
    const client = await connect(t, base, 'sse', { 'x-api-key': KEY_A });
    const bad = await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 0, paymentStatus: 'maybe' } });
    t.equal(bad.isError, true);
    const error = (bad.structuredContent as { error: { code: number; details: string[] } }).error;
    t.equal(error.code, 400);
    t.same(error.details.sort(), ['limit must be an integer between 1 and 100', 'paymentStatus must be one of: paid, partial, unpaid'].sort());
    const ok = await client.callTool({ name: 'listFinancialDocs', arguments: { paymentStatus: 'partial' } });
    t.notOk(ok.isError);
    t.equal((ok.structuredContent as { meta: { total: number } }).meta.total, 1);
  });

  t.test('credentials: 401 before any session, on both endpoints', async (t) => {
    const before = await settled();
    t.equal(before, 0, 'earlier sessions closed with their streams');
    const none = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream' } });
    t.equal(none.status, 401);
    t.same(await none.json(), { error: { code: 401, message: 'Unauthorized', details: ['missing x-api-key header'], reason: 'missing_api_key' } });
    const wrong = await fetch(`${base}/sse`, { headers: { accept: 'text/event-stream', 'x-api-key': 'nope' } });
    t.equal(wrong.status, 401);
    await wrong.text();
    t.equal(sessions(), before, 'no session created');
    const client = new Client({ name: 'nokey', version: '1' });
    await t.rejects(
      client.connect(new SSEClientTransport(new URL('/sse', base), { requestInit: { headers: { 'x-api-key': 'nope' } } })),
      'the SDK client cannot connect with a wrong key',
    );

    const stream = await openStream(base, KEY_A);
    t.teardown(stream.abort);
    const ping = { jsonrpc: '2.0', id: 'p', method: 'ping' };
    const noKey = await postMessage(base, stream.endpoint, null, ping);
    t.equal(noKey.status, 401);
    t.equal((await errorOf(noKey)).code, 401);
  });

  t.test('sessions: foreign, unknown, missing id', async (t) => {
    const stream = await openStream(base, KEY_A);
    t.teardown(stream.abort);
    const ping = { jsonrpc: '2.0', id: 'p', method: 'ping' };
    const foreign = await postMessage(base, stream.endpoint, KEY_B, ping);
    t.equal(foreign.status, 404, "another tenant's key: as if the session did not exist");
    t.same((await errorOf(foreign)).code, 404);
    const unknown = await postMessage(base, '/messages?sessionId=f0f0f0f0-0000-4000-8000-000000000000', KEY_A, ping);
    t.equal(unknown.status, 404);
    await unknown.text();
    const missing = await postMessage(base, '/messages', KEY_A, ping);
    t.equal(missing.status, 400);
    t.same(await missing.json(), {
      error: {
        code: 400,
        message: 'Invalid query parameter',
        details: ['sessionId is required'],
        reason: 'invalid_parameter',
        fields: [{ in: 'query', name: 'sessionId', detail: 'sessionId is required' }],
      },
    });
    const own = await postMessage(base, stream.endpoint, KEY_A, ping);
    t.equal(own.status, 202, 'the owner still reaches it');
    await own.text();
    const garbage = await postMessage(base, stream.endpoint, KEY_A, { hello: 'world' });
    t.equal(garbage.status, 400, 'not a JSON-RPC message');
    await garbage.text();
    // A streamable session id is not a legacy one, and vice versa.
    const sessionId = new URL(stream.endpoint, base).searchParams.get('sessionId') ?? '';
    const cross = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEY_A, 'mcp-session-id': sessionId },
      body: JSON.stringify(ping),
    });
    t.equal(cross.status, 404);
    await cross.text();
  });

  t.test('a closed stream ends its session', async (t) => {
    const before = await settled();
    const stream = await openStream(base, KEY_B);
    t.equal(sessions(), before + 1);
    stream.abort();
    for (let i = 0; i < 50 && sessions() !== before; i += 1) await new Promise((r) => setTimeout(r, 20));
    t.equal(sessions(), before, 'removed when the client went away');
    const late = await postMessage(base, stream.endpoint, KEY_B, { jsonrpc: '2.0', id: 'x', method: 'ping' });
    t.equal(late.status, 404);
    await late.text();
  });

  t.test('behind a path prefix (the issuer has one), the endpoint event names the message path under it', async (t) => {
    const app = await buildApp({ config: testConfig({ PUBLIC_BASE_URL: 'https://api.example.test/freight' }), db: h.db, logger: false });
    t.teardown(() => app.close());
    const stream = await openStream(await listen(app), KEY_A);
    t.match(stream.endpoint, /^\/freight\/messages\?sessionId=[0-9a-f-]{36}$/, 'what a client at https://api.example.test/freight/sse posts to');
    stream.abort();
  });

  t.test('shutdown with open SSE streams does not hang', async (t) => {
    const app = await buildApp({ config: h.config, db: h.db, logger: false });
    const url = await listen(app);
    const raw = await Promise.all([KEY_A, KEY_B, KEY_A].map((key) => openStream(url, key)));
    const clients = await Promise.all([KEY_A, KEY_B].map((key) => connect(t, url, 'sse', { 'x-api-key': key })));
    const streamable = await connect(t, url, 'streamable', { 'x-api-key': KEY_A });
    t.equal(app.mcp?.sessions.size, 6);
    const t0 = Date.now();
    await app.close();
    const elapsed = Date.now() - t0;
    t.ok(elapsed < 3000, `app.close() resolved in ${elapsed} ms`);
    await Promise.all(raw.map(async (s) => t.rejects(s.next(), 'the raw stream was ended by the server')));
    await Promise.all([...clients, streamable].map((c) => c.close().catch(() => undefined)));
  });
}
