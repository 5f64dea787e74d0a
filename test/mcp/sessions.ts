/**
 * MCP session lifecycle as clients and operators meet it (issue 24 §4):
 *
 * - the official MCP Python SDK ends a session with `DELETE /mcp`, `content-type:
 *   application/json` and no body: 2xx, and 60 open-and-close cycles never reach a cap; REST
 *   DELETEs accept the same empty JSON body;
 * - sessions are capped per API key as well as per tenant, so one key cannot take the tenant's
 *   whole allowance, and a session answers only to the key that opened it;
 * - revoking a key closes its sessions, SSE streams included: at once when revoked through the
 *   service's process, within the key-cache delay (API_KEY_CACHE_TTL_MS) when revoked by another;
 * - a client that leaves while its session is being opened (GET /sse, an initialize POST) leaves
 *   no session behind to hold a place under the caps.
 */
import type { Test } from 'tap';
import http from 'node:http';
import { connect as netConnect } from 'node:net';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { errorOf, listen, openSseStream, seedTwoTenants } from '../helpers/mcp.ts';
import { buildApp } from '../../handlers/app.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { createApiKey, revokeApiKey } from '../../lib/auth/api-keys.ts';

export default async function sessionsTests(t: Test): Promise<void> {
  const TTL_MS = 600;
  const h = await startHarness(t, { env: { API_KEY_CACHE_TTL_MS: String(TTL_MS) } });
  await seedTwoTenants(h.db);
  const base = await listen(h.app);
  // "Another process": its own connection and Db handle (`npm run apikey -- revoke` beside the service).
  const other = await connectMongo(h.engine.uri, h.db.databaseName, { serverSelectionTimeoutMS: 2000 });
  t.teardown(() => other.client.close(true));

  const INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'python-sdk-style', version: '1' } },
  };
  const ACCEPT = 'application/json, text/event-stream';

  async function openSession(url: string, key: string): Promise<{ status: number; id: string | null; body: string }> {
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': key },
      body: JSON.stringify(INIT),
    });
    const body = await res.text();
    const id = res.headers.get('mcp-session-id');
    if (id) {
      const done = await fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': key, 'mcp-session-id': id },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      await done.text();
    }
    return { status: res.status, id, body };
  }

  /** A request through node:http, headers exactly as given (what httpx sends for a DELETE without content). */
  function rawRequest(url: string, method: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(url, { method, headers, agent: false }, (res) => {
        let body = '';
        res
          .setEncoding('utf8')
          .on('data', (d: string) => (body += d))
          .on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  /** The Python SDK's session end: DELETE /mcp with a JSON content type and no body. */
  const pythonSdkDelete = (url: string, key: string, id: string, contentLength?: '0') =>
    rawRequest(`${url}/mcp`, 'DELETE', {
      'x-api-key': key,
      'mcp-session-id': id,
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
      'content-type': 'application/json',
      accept: ACCEPT,
      ...(contentLength ? { 'content-length': contentLength } : {}),
    });

  t.test('DELETE /mcp with content-type: application/json and no body ends the session (MCP Python SDK)', async (t) => {
    for (const length of [undefined, '0'] as const) {
      const { id } = await openSession(base, KEY_A);
      const res = await pythonSdkDelete(base, KEY_A, id!, length);
      t.equal(res.status, 200, `2xx (${length === undefined ? 'no content-length' : 'content-length: 0'}): ${res.body.slice(0, 200)}`);
      const after = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': KEY_A, 'mcp-session-id': id! },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      });
      t.equal(after.status, 404, 'the session is gone');
      await after.text();
    }
  });

  t.test('60 open-and-close cycles never hit the session cap', async (t) => {
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const { status, id } = await openSession(base, KEY_A);
      statuses.push(status);
      if (id) statuses.push((await pythonSdkDelete(base, KEY_A, id)).status);
    }
    t.same([...new Set(statuses)], [200], '120 answers, all 200 (caps: 10 per key, 50 per tenant)');
    t.equal(h.app.mcp?.sessions.size, 0, 'no session left open');
  });

  t.test('a session with an empty JSON body is a JSON-RPC parse error, not a hang', async (t) => {
    const { id } = await openSession(base, KEY_A);
    const res = await fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': KEY_A, 'mcp-session-id': id! },
    });
    t.equal(res.status, 400);
    t.match(await res.json(), { jsonrpc: '2.0', error: { code: -32700 } });
    await pythonSdkDelete(base, KEY_A, id!);
  });

  t.test('REST DELETEs accept an empty body with a JSON content type', async (t) => {
    const scheduled = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: { 'x-api-key': KEY_A },
      payload: { userIds: ['empty-body'], ruleId: 'overdue-invoices', cycleKey: '2026-05', nameAlert: 'empty body' },
    });
    const jobId = scheduled.json().jobs[0].jobId as string;
    const res = await rawRequest(`${base}/api/alerts/jobs/${jobId}`, 'DELETE', { 'x-api-key': KEY_A, 'content-type': 'application/json' });
    t.equal(res.status, 200, res.body.slice(0, 200));
    const hook = await h.app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { 'x-api-key': KEY_A },
      payload: { url: 'https://hooks.example.com/empty-body', events: ['alert.triggered'] },
    });
    const del = await rawRequest(`${base}/api/webhooks/${hook.json().id}`, 'DELETE', {
      'x-api-key': KEY_A,
      'content-type': 'application/json',
      'content-length': '0',
    });
    t.equal(del.status, 200, del.body.slice(0, 200));
    const required = await rawRequest(`${base}/api/alerts/schedule`, 'POST', { 'x-api-key': KEY_A, 'content-type': 'application/json', 'content-length': '0' });
    t.equal(required.status, 400, 'an operation that requires a body still says so');
    t.match(JSON.parse(required.body).error, { reason: 'invalid_body', details: [/a JSON body is required/] });
  });

  t.test('sessions are capped per API key as well as per tenant; a session answers only to its key', async (t) => {
    const app = await buildApp({ config: h.config, db: h.db, logger: false, mcp: { maxSessionsPerKey: 2, maxSessionsPerTenant: 3 } });
    t.teardown(() => app.close());
    const url = await listen(app);
    const first = (await createApiKey(h.db, TENANT_A, 'first agent')).key;
    const second = (await createApiKey(h.db, TENANT_A, 'second agent')).key;
    const a1 = await openSession(url, first);
    const a2 = await openSession(url, first);
    t.same([a1.status, a2.status], [200, 200]);
    const a3 = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': first },
      body: JSON.stringify(INIT),
    });
    t.equal(a3.status, 429, 'a key at its cap');
    t.match(await errorOf(a3), { reason: 'too_many_sessions', details: [/at most 2 open MCP sessions per API key/] });
    const sse = await fetch(`${url}/sse`, { headers: { 'x-api-key': first, accept: 'text/event-stream' } });
    t.equal(sse.status, 429, 'the legacy transport counts too');
    await sse.text();
    const b1 = await openSession(url, second);
    t.equal(b1.status, 200, 'another key of the tenant still opens one');
    const b2 = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': second },
      body: JSON.stringify(INIT),
    });
    t.equal(b2.status, 429, 'and the tenant cap still holds');
    t.match(await errorOf(b2), { reason: 'too_many_sessions', details: [/at most 3 open MCP sessions per tenant/] });
    const foreign = await pythonSdkDelete(url, second, a1.id!);
    t.equal(foreign.status, 404, "another key of the same tenant cannot end (or use) a key's session");
    t.equal((await pythonSdkDelete(url, first, a1.id!)).status, 200, 'its own key can');
  });

  const sseStream = openSseStream;

  /** Opens a streamable session and its server stream (GET /mcp); resolves with the id and a promise of the stream's end. */
  async function streamableStream(url: string, key: string): Promise<{ id: string; ended: Promise<number> }> {
    const { id } = await openSession(url, key);
    const res = await fetch(`${url}/mcp`, { headers: { 'x-api-key': key, accept: 'text/event-stream', 'mcp-session-id': id! } });
    if (res.status !== 200) throw new Error(`GET /mcp: ${res.status}`);
    const reader = res.body!.getReader();
    const ended = (async () => {
      try {
        while (!(await reader.read()).done) {
          /* keep-alives */
        }
      } catch {
        /* ended */
      }
      return Date.now();
    })();
    return { id: id!, ended };
  }

  const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'still open'>((r) => setTimeout(() => r('still open'), ms).unref())]);

  t.test('a key revoked by another process: its SSE and streamable sessions are closed within the key-cache delay', async (t) => {
    const { key, record } = await createApiKey(h.db, TENANT_A, 'revoked elsewhere');
    const sse = await sseStream(base, key);
    const streamable = await streamableStream(base, key);
    const unrelated = await sseStream(base, KEY_A);
    const revokedAt = Date.now();
    t.same(await revokeApiKey(other.db, record._id), { revoked: 1, ambiguous: false });
    const [sseEnd, streamEnd] = await Promise.all([within(sse.ended, 10_000), within(streamable.ended, 10_000)]);
    t.not(sseEnd, 'still open', 'the SSE stream is closed');
    t.not(streamEnd, 'still open', 'the streamable server stream is closed');
    const slowest = Math.max(Number(sseEnd), Number(streamEnd)) - revokedAt;
    t.ok(slowest <= TTL_MS + 1500, `within ${slowest} ms of the revocation (API_KEY_CACHE_TTL_MS ${TTL_MS}; keys checked every max(TTL, 1 s))`);
    const post = await fetch(`${base}/messages?sessionId=${sse.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    t.equal(post.status, 404, 'the SSE session is gone, even for another key of the tenant');
    await post.text();
    t.equal(await within(unrelated.ended, 300), 'still open', "another key's stream stays open");
    await fetch(`${base}/messages?sessionId=${unrelated.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': KEY_A },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    }).then((r) => r.text());
  });

  t.test('a key revoked through the service process: its sessions are closed at once', async (t) => {
    const { key, record } = await createApiKey(h.db, TENANT_A, 'revoked here');
    const sse = await sseStream(base, key);
    const revokedAt = Date.now();
    await revokeApiKey(h.db, record._id);
    const end = await within(sse.ended, 5000);
    t.not(end, 'still open', 'closed');
    t.ok(Number(end) - revokedAt < 500, `after ${Number(end) - revokedAt} ms`);
  });

  t.test('clients that leave while their session is being opened leave none behind, however many more than the cap', async (t) => {
    const CAP = 2;
    const ATTEMPTS = 4 * CAP;
    const app = await buildApp({ config: h.config, db: h.db, logger: false, mcp: { maxSessionsPerKey: CAP } });
    t.teardown(() => app.close());
    const url = await listen(app);
    const port = Number(new URL(url).port);
    const { key, record } = await createApiKey(h.db, TENANT_A, 'leaves at once');
    const registry = app.mcp!.sessions;
    /** Its open sessions and the places held for those being opened. */
    const held = () => registry.countForKey(record._id);

    // What the server did with each request, whatever it made of it: an opening reserves a place under the caps (after
    // the key's check) and gives it up when the session is added and when the opening ends (sessions.ts `reserve`).
    const seen = { reserved: 0, released: 0, added: 0, closed: 0 };
    const reserve = registry.reserve.bind(registry);
    const add = registry.add.bind(registry);
    registry.reserve = (caller) => {
      seen.reserved += 1;
      const release = reserve(caller);
      return () => {
        seen.released += 1;
        release();
      };
    };
    registry.add = (session) => {
      seen.added += 1;
      add(session);
    };
    app.server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => res.once('close', () => (seen.closed += 1)));

    /**
     * Writes `request` on a new connection and destroys it at once, then waits, however long that takes, until the server
     * has handled it: its connection seen closed, the opening reached and ended. Answers what it left held.
     */
    async function leaveAtOnce(request: string): Promise<number> {
      const before = { ...seen };
      await new Promise<void>((resolve) => {
        const socket = netConnect(port, '127.0.0.1', () => {
          socket.write(request);
          socket.destroy();
        });
        socket.once('close', () => resolve());
      });
      const handled = () =>
        seen.closed > before.closed && seen.reserved > before.reserved && seen.released - before.released === 1 + (seen.added - before.added);
      while (!handled()) await new Promise((r) => setTimeout(r, 5));
      await nextTurn();
      return held();
    }

    const body = JSON.stringify(INIT);
    const requests = {
      'GET /sse': `GET /sse HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\naccept: text/event-stream\r\n\r\n`,
      'POST /mcp initialize': `POST /mcp HTTP/1.1\r\nHost: x\r\nx-api-key: ${key}\r\naccept: ${ACCEPT}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    };
    for (const [what, request] of Object.entries(requests)) {
      const left: number[] = [];
      for (let i = 0; i < ATTEMPTS; i++) {
        left.push(await leaveAtOnce(request));
        if (left.at(-1) !== 0) break; // one left behind is the fault; the next would meet the cap
      }
      t.same(left, Array<number>(ATTEMPTS).fill(0), `${what}: ${ATTEMPTS} clients gone at once (cap ${CAP}), nothing held after any of them`);
      t.equal(registry.size, 0, `${what}: no session remains`);
    }
    t.comment(`${seen.reserved} openings reached, ${seen.added} of them as far as a session`);

    // A client that stays opens its sessions as if nothing happened, up to the cap.
    const stream = await openSseStream(url, key);
    const session = await openSession(url, key);
    t.equal(session.status, 200, 'an initialize answered');
    t.ok(session.id, 'with its session id');
    t.equal(registry.size, CAP, 'the two sessions open, the cap reached by them alone');
    stream.close();
    await pythonSdkDelete(url, key, session.id!);
  });
}
