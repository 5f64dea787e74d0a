/**
 * The MCP session caps (docs/mcp.md: MCP_MAX_SESSIONS_PER_KEY, MCP_MAX_SESSIONS_PER_TENANT) for
 * sessions opened at the same time. In a process of its own on purpose: the first sessions of a
 * process wait together for the MCP runtime to load, and each used to pass the cap's check before
 * any of them was counted, so twelve initialize requests kept twelve sessions under a cap of three.
 */
import t from 'tap';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { errorOf, listen } from './helpers/mcp.ts';
import { createApiKey } from '../lib/auth/api-keys.ts';

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'eager agent', version: '1' } },
};

const h = await startHarness(t, { env: { MCP_MAX_SESSIONS_PER_KEY: '3', MCP_MAX_SESSIONS_PER_TENANT: '5' } });
const base = await listen(h.app);

t.test('twelve initialize requests at once under a key cap of three: three sessions, nine 429s', async (t) => {
  const answers = await Promise.all(
    Array.from({ length: 12 }, () =>
      fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEY_A },
        body: JSON.stringify(INIT),
      }),
    ),
  );
  t.same(answers.map((r) => r.status).sort(), [...Array<number>(3).fill(200), ...Array<number>(9).fill(429)]);
  const refused = answers.find((r) => r.status === 429)!;
  t.match(await errorOf(refused), { reason: 'too_many_sessions', details: [/at most 3 open MCP sessions per API key/] });
  await Promise.all(answers.filter((r) => r !== refused).map((r) => r.body?.cancel() ?? Promise.resolve()));
  t.equal(h.app.mcp?.sessions.size, 3, 'three kept');
});

t.test('six legacy streams at once with another key: two more, the tenant cap of five', async (t) => {
  const key = (await createApiKey(h.db, TENANT_A, 'second agent')).key;
  const streams = await Promise.all(Array.from({ length: 6 }, () => fetch(`${base}/sse`, { headers: { 'x-api-key': key, accept: 'text/event-stream' } })));
  t.same(streams.map((r) => r.status).sort(), [200, 200, 429, 429, 429, 429]);
  await Promise.all(streams.map((r) => r.body?.cancel() ?? Promise.resolve()));
});
