/**
 * MCP over streamable HTTP (/mcp) against the service on a real port:
 * initialize, resources, tenant isolation, credentials, sessions (unknown,
 * foreign, deleted, idle-expired, concurrent), invalid arguments, rate limit.
 */
import type { Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LATEST_PROTOCOL_VERSION, ReadResourceResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, errorOf, listen, seedTwoTenants } from '../helpers/mcp.ts';
import { ERROR_REASONS } from '../../lib/http/api-error.ts';
import { buildApp, loadSpec } from '../../handlers/app.ts';
import { DOMAIN_NOTES_URI, OPENAPI_URI } from '../../lib/mcp/resources.ts';

export default async function streamableTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  await seedTwoTenants(h.db);
  const base = await listen(h.app);
  const sessions = () => h.app.mcp?.sessions.size ?? -1;

  const INIT = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const ACCEPT = 'application/json, text/event-stream';

  /** A raw POST /mcp. */
  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers }, body: JSON.stringify(body) });

  /** Opens a session by hand; returns its id. */
  async function rawSession(key: string): Promise<string> {
    const res = await post(INIT, { 'x-api-key': key });
    await res.text();
    const id = res.headers.get('mcp-session-id');
    if (!id) throw new Error(`no session id (${res.status})`);
    await post({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'x-api-key': key, 'mcp-session-id': id }).then((r) => r.text());
    return id;
  }

  t.test('initialize: server info, instructions, capabilities', async (t) => {
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const info = client.getServerVersion();
    t.equal(info?.name, 'freight-backoffice');
    t.equal(info?.version, loadSpec().info.version);
    t.ok(client.getServerCapabilities()?.tools, 'tools capability');
    t.ok(client.getServerCapabilities()?.resources, 'resources capability');
    // listChanged promises notifications/*/list_changed (MCP 2025-06-18); a session's lists never change, so none is promised.
    const caps = client.getServerCapabilities();
    t.same([caps?.tools?.listChanged, caps?.resources?.listChanged, caps?.prompts?.listChanged], [false, false, false], 'no list change promised');
    t.match(client.getInstructions() ?? '', /domain-notes/);
    await client.ping();
  });

  t.test('resources: the OpenAPI document and the domain notes', async (t) => {
    const client = await connect(t, base, 'streamable', { authorization: `Bearer ${KEY_A}` });
    const { resources } = await client.listResources();
    const toolDocs = resources.map((r) => r.uri).filter((uri) => uri.startsWith('freight://docs/tools/'));
    t.same(
      resources
        .map((r) => r.uri)
        .filter((uri) => !toolDocs.includes(uri))
        .sort(),
      [DOMAIN_NOTES_URI, OPENAPI_URI].sort(),
      'the contract and the domain notes',
    );
    t.same(toolDocs.sort(), (await client.listTools()).tools.map((tool) => `freight://docs/tools/${tool.name}.md`).sort(), 'and one reference per tool');
    const openapi = await client.readResource({ uri: OPENAPI_URI });
    const first = openapi.contents[0] as { text: string; mimeType: string };
    t.equal(first.mimeType, 'application/json');
    t.same(JSON.parse(first.text), loadSpec(), 'the bundled spec, whole');
    t.equal(
      resources.find((r) => r.uri === OPENAPI_URI)?.size,
      Buffer.byteLength(first.text),
      'its size in bytes is listed (an agent sees it is large before reading it)',
    );
    // A malformed or missing uri is the client's mistake: -32602 Invalid params (JSON-RPC 2.0 §5.1), not -32603; an unknown one too.
    for (const params of [{ uri: 5 }, {}, { uri: '' }, { uri: 'not a uri' }, { uri: 'freight://docs/nothing.md' }]) {
      const err = await client.request({ method: 'resources/read', params: params as { uri: string } }, ReadResourceResultSchema).catch((e: unknown) => e);
      t.match(err, { code: -32602 }, `resources/read ${JSON.stringify(params)}`);
    }
    const notes = await client.readResource({ uri: DOMAIN_NOTES_URI });
    const md = (notes.contents[0] as { text: string }).text;
    t.match(md, /## Status codes/);
    t.same(
      ERROR_REASONS.filter((r) => !md.includes(`\`${r}\``)),
      [],
      'every error reason is explained to the agent',
    );
    t.match(md, /What each audit means/);
    t.match(md, /### listFinancialDocs: List financial documents/, 'generated operations section');
    t.match(md, /### listShipments:/);
  });

  t.test('tenant isolation: a session only ever sees its own tenant', async (t) => {
    const a = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const b = await connect(t, base, 'streamable', { 'x-api-key': KEY_B });
    for (const [client, tenant] of [
      [a, TENANT_A],
      [b, TENANT_B],
    ] as const) {
      for (const name of ['listFinancialDocs', 'listShipments']) {
        for (const detail of ['summary', 'full']) {
          const res = await client.callTool({ name, arguments: { detail, limit: 100 } });
          const body = res.structuredContent as { meta: { tenant: string; total: number }; data: { company: string }[] };
          t.equal(body.meta.tenant, tenant, `${name} ${detail}: meta.tenant`);
          t.equal(body.data.length, 2, `${name} ${detail}: two documents`);
          t.ok(
            body.data.every((d) => d.company === tenant),
            `${name} ${detail}: only ${tenant}'s documents`,
          );
        }
      }
      // The deprecated version 1 is not offered to tools (their outputSchema is the current shape): the header argument is refused, naming it.
      const v1 = await client.callTool({ name: 'listFinancialDocs', arguments: { 'x-api-version': '1' } });
      t.equal(v1.isError, true, 'x-api-version is not a tool argument');
      t.match(v1.structuredContent, { error: { code: 400, reason: 'invalid_parameter', fields: [{ name: 'x-api-version' }] } }, 'the error names it');
    }
  });

  t.test('writes over MCP: alert jobs are scheduled for, listed to and cancelled by their own tenant only', async (t) => {
    const a = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const b = await connect(t, base, 'streamable', { 'x-api-key': KEY_B });
    const body = { userIds: ['mcp-user-1', 'mcp-user-2'], ruleId: 'overdue-invoices', cycleKey: '2026-05', nameAlert: 'Vencidas (MCP)' };
    const foreign = await a.callTool({ name: 'scheduleAlerts', arguments: { body: { ...body, tenantId: TENANT_B } } });
    t.equal(foreign.isError, true, 'naming another tenant is refused');
    t.equal((foreign.structuredContent as { error: { code: number } }).error.code, 403);
    const scheduled = await a.callTool({ name: 'scheduleAlerts', arguments: { body, 'idempotency-key': 'mcp-test-0001' } });
    t.notOk(scheduled.isError, JSON.stringify(scheduled.structuredContent));
    const jobsOf = async (client: Client) => {
      const res = await client.callTool({ name: 'listAlertJobs', arguments: { cycleKey: '2026-05', limit: 100 } });
      return (res.structuredContent as { data: { id: string; tenant: string; userId: string }[] }).data;
    };
    const jobsA = await jobsOf(a);
    t.same(jobsA.map((j) => j.userId).sort(), body.userIds, 'one job per user, for A');
    t.ok(jobsA.every((j) => j.tenant === TENANT_A));
    t.same(await jobsOf(b), [], "B never sees A's jobs");
    const id = jobsA[0]?.id ?? '';
    const cancelByB = await b.callTool({ name: 'cancelAlertJob', arguments: { id } });
    t.equal(cancelByB.isError, true);
    t.equal((cancelByB.structuredContent as { error: { code: number } }).error.code, 404, "A's job does not exist for B");
    const cancelByA = await a.callTool({ name: 'cancelAlertJob', arguments: { id } });
    t.notOk(cancelByA.isError, JSON.stringify(cancelByA.structuredContent));
    t.equal((await jobsOf(a)).length, 1);
    const noId = await a.callTool({ name: 'cancelAlertJob', arguments: {} });
    t.equal(noId.isError, true, 'a missing path parameter is a tool error');
    t.same((noId.structuredContent as { error: { details: string[] } }).error.details, ['id is required']);
  });

  t.test(
    'arguments are named as the spec names them: Idempotency-Key replays (another body: 409); an unknown argument, or a null or an object for a value, is refused, never dropped',
    async (t) => {
      const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
      const { tools } = await client.listTools();
      const schedule = tools.find((tool) => tool.name === 'scheduleAlerts')!;
      t.ok('Idempotency-Key' in (schedule.inputSchema.properties ?? {}), 'the tool lists Idempotency-Key, as the spec spells it');
      const body = { userIds: ['idem-1'], ruleId: 'overdue-invoices', cycleKey: '2026-06', nameAlert: 'Idempotent (MCP)' };
      const first = await client.callTool({ name: 'scheduleAlerts', arguments: { body, 'Idempotency-Key': 'mcp-spec-name-0001' } });
      t.notOk(first.isError, JSON.stringify(first.structuredContent));
      t.match(first.structuredContent, { newlyScheduled: 1, alreadyScheduled: 0 });
      const again = await client.callTool({ name: 'scheduleAlerts', arguments: { body, 'Idempotency-Key': 'mcp-spec-name-0001' } });
      t.same(
        again.structuredContent,
        first.structuredContent,
        'the key was applied: the replay answers the first result (newlyScheduled 1), not a second schedule (alreadyScheduled 1)',
      );
      const replay = await client.callTool({ name: 'scheduleAlerts', arguments: { body, 'idempotency-key': 'mcp-spec-name-0001' } });
      t.same(replay.structuredContent, first.structuredContent, 'a header parameter matches whatever its case: the replay answers the first result');
      const reused = await client.callTool({
        name: 'scheduleAlerts',
        arguments: { body: { ...body, userIds: ['idem-2'] }, 'Idempotency-Key': 'mcp-spec-name-0001' },
      });
      t.equal(reused.isError, true, 'the key with another body is a tool error');
      t.match(
        reused.structuredContent,
        { error: { code: 409, message: 'Conflict', reason: 'idempotency_key_reused', details: [/already used for a different request/] } },
        'carrying the REST 409 (idempotency_key_reused)',
      );
      for (const [name, args] of [
        ['scheduleAlerts', { body, Idempotency_Key: 'typo' }],
        ['getWebhook', { id: 'aaaaaaaaaaaaaaaaaaaaaaaa', detail: 'full' }],
        ['listShipments', { nope: 1 }],
      ] as const) {
        const res = await client.callTool({ name, arguments: args });
        t.equal(res.isError, true, `${name}: refused`);
        const unknownName = Object.keys(args).find((k) => !['body', 'id'].includes(k))!;
        t.match(
          (res.structuredContent as { error: unknown }).error,
          { code: 400, reason: 'invalid_parameter', fields: [{ name: unknownName, detail: new RegExp(`unknown argument '${unknownName}'`) }] },
          `${name}: names ${unknownName}`,
        );
      }
      // A null, an object or a list where a value goes is refused naming the argument, never read as the text "null".
      for (const [name, args, arg, shown] of [
        ['listFinancialDocs', { folio: null }, 'folio', 'null'],
        ['listFinancialDocs', { folio: { a: 1 } }, 'folio', 'an object'],
        ['listShipments', { shipmentId: null }, 'shipmentId', 'null'],
        ['listShipments', { limit: [5] }, 'limit', 'a list'],
        ['listAlertJobs', { userId: null }, 'userId', 'null'],
        ['getShipment', { id: null }, 'id', 'null'],
        [
          'scheduleAlerts',
          { body: { userIds: ['x'], ruleId: 'overdue-invoices', cycleKey: '2026-07', nameAlert: 'n' }, 'Idempotency-Key': null },
          'Idempotency-Key',
          'null',
        ],
      ] as const) {
        const res = await client.callTool({ name, arguments: args });
        t.equal(res.isError, true, `${name} ${arg}=${shown}: refused`);
        t.match(
          (res.structuredContent as { error: unknown }).error,
          {
            code: 400,
            reason: 'invalid_parameter',
            fields: [{ name: arg, detail: `argument '${arg}' is ${shown}: give a value of its type, or leave it out` }],
          },
          `${name}: names ${arg}`,
        );
      }
      const res = await client.callTool({ name: 'listFinancialDocs', arguments: { folio: 'A-1', limit: 5 } });
      t.notOk(res.isError, 'values of their type are read as before');
      const jobs = await client.callTool({ name: 'listAlertJobs', arguments: { cycleKey: '2026-06' } });
      t.same(
        (jobs.structuredContent as { data: { userId: string }[] }).data.map((j) => j.userId),
        ['idem-1'],
        'one job: the refused call scheduled nothing',
      );
    },
  );

  t.test('invalid arguments: tool error with the REST error body, session still usable', async (t) => {
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const bad = await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 500 } });
    t.equal(bad.isError, true);
    t.same(bad.structuredContent, {
      error: {
        code: 400,
        message: 'Invalid query parameter',
        details: ['limit must be an integer between 1 and 100'],
        reason: 'invalid_parameter',
        fields: [{ in: 'query', name: 'limit', detail: 'limit must be an integer between 1 and 100' }],
      },
    });
    const unknown = await client.callTool({ name: 'listShipments', arguments: { nope: 1 } });
    t.equal(unknown.isError, true);
    t.match(
      (unknown.structuredContent as { error: unknown }).error,
      { code: 400, reason: 'invalid_parameter', fields: [{ in: 'query', name: 'nope' }] },
      'unknown argument refused as REST refuses it',
    );
    const wrongType = await client.callTool({ name: 'listShipments', arguments: { startDate: 'yesterday', dateFilterBy: 'sometime' } });
    t.equal(wrongType.isError, true);
    const wrongTypeError = (wrongType.structuredContent as { error: { details: string[]; fields: { in: string; name: string; detail: string }[] } }).error;
    t.equal(wrongTypeError.details.length, 2, 'one detail per problem');
    t.same(wrongTypeError.fields.map((f) => `${f.in} ${f.name}`).sort(), ['query dateFilterBy', 'query startDate'], 'each detail names its parameter');
    // A path argument that is a dot segment would resolve the URL into another route (`..`: GET /api/): refused, named.
    for (const id of ['..', '.']) {
      const dots = await client.callTool({ name: 'getFinancialDoc', arguments: { id } });
      t.equal(dots.isError, true);
      t.same(
        (dots.structuredContent as { error: unknown }).error,
        {
          code: 400,
          message: 'Invalid path parameter',
          details: [`id cannot be "${id}" (a dot segment of the path)`],
          reason: 'invalid_parameter',
          fields: [{ in: 'path', name: 'id', detail: `id cannot be "${id}" (a dot segment of the path)` }],
        },
        `id ${id}`,
      );
    }
    const shipment = await client.callTool({ name: 'recordLegDelivery', arguments: { id: 'X', shipmentId: '..', body: {} } });
    t.match((shipment.structuredContent as { error: unknown }).error, { code: 400, fields: [{ in: 'path', name: 'shipmentId' }] }, 'any path argument');
    await t.rejects(client.callTool({ name: 'noSuchTool', arguments: {} }), /Unknown tool/, 'unknown tool is a protocol error');
    const ok = await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 1 } });
    t.notOk(ok.isError, 'the session still works');
    t.equal((ok.structuredContent as { data: unknown[] }).data.length, 1);
  });

  t.test('malformed params of tools/call and prompts/get: -32602 Invalid params naming the problem, not -32603; a message that is none, -32600', async (t) => {
    const id = await rawSession(KEY_A);
    /** The JSON-RPC answer of one request, whether the SDK answered it as JSON or as an event. */
    const answer = async (body: unknown) => {
      const res = await post(body, { 'x-api-key': KEY_A, 'mcp-session-id': id });
      const text = await res.text();
      const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text);
      return JSON.parse(json) as { id: number; error?: { code: number; message: string } };
    };
    // tools/call's params are checked by the SDK's server (its message lists the schema's issues, the path in it).
    const cases: [string, unknown, RegExp][] = [
      ['arguments not an object', { name: 'listFinancialDocs', arguments: [1] }, /"arguments"/],
      ['no tool name', {}, /"name"/],
      ['no params at all', undefined, /"params"/],
    ];
    for (const [what, params, names] of cases) {
      const a = await answer({ jsonrpc: '2.0', id: 7, method: 'tools/call', ...(params === undefined ? {} : { params }) });
      t.equal(a.error?.code, -32602, `${what}: Invalid params (JSON-RPC 2.0 §5.1), not -32603 Internal error`);
      t.match(a.error?.message, /^MCP error -32602: Invalid tools\/call request: /, what);
      t.match(a.error?.message, names, `${what}: the field named`);
    }
    // Not a JSON-RPC message at all: Invalid Request (JSON-RPC 2.0 §5.1), not a parse error (the JSON parsed).
    for (const body of [
      { jsonrpc: '2.0', id: 4 },
      { id: 4, method: 'ping' },
      5,
      [],
      [
        { jsonrpc: '2.0', id: 5, method: 'ping' },
        { jsonrpc: '2.0', id: 6 },
      ],
    ]) {
      const res = await post(body, { 'x-api-key': KEY_A, 'mcp-session-id': id });
      t.equal(res.status, 400, JSON.stringify(body));
      t.match(await res.json(), { jsonrpc: '2.0', id: null, error: { code: -32600, message: /^Invalid Request: / } }, JSON.stringify(body));
    }
    const prompt = await answer({ jsonrpc: '2.0', id: 8, method: 'prompts/get', params: { arguments: { month: '2026-10' } } });
    t.match(
      prompt.error,
      { code: -32602, message: /^MCP error -32602: Invalid params of prompts\/get: params\.name: Invalid input: expected string/ },
      'prompts/get alike, in a sentence',
    );
    const ok = await answer({ jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'listFinancialDocs', arguments: { limit: 1 } } });
    t.equal(ok.error, undefined, 'the session goes on');
    await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEY_A, 'mcp-session-id': id } });
  });

  t.test('credentials: 401 in the service error shape before any session', async (t) => {
    const before = sessions();
    const none = await post(INIT);
    t.equal(none.status, 401);
    t.same(await none.json(), { error: { code: 401, message: 'Unauthorized', details: ['missing x-api-key header'], reason: 'missing_api_key' } });
    t.equal(none.headers.get('mcp-session-id'), null, 'no session id');
    const wrong = await post(INIT, { 'x-api-key': 'not-a-key' });
    t.equal(wrong.status, 401);
    t.same((await errorOf(wrong)).details, ['unknown or revoked API key']);
    const wrongBearer = await post(INIT, { authorization: 'Bearer not-a-key' });
    t.equal(wrongBearer.status, 401);
    await wrongBearer.text();
    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${base}/mcp`, { method, headers: { accept: 'text/event-stream', 'mcp-session-id': 'x' } });
      t.equal(res.status, 401, `${method} without key`);
      await res.text();
    }
    t.equal(sessions(), before, 'no session was created');
    const client = new Client({ name: 'nokey', version: '1' });
    await t.rejects(client.connect(new StreamableHTTPClientTransport(new URL('/mcp', base))), 'the SDK client cannot connect without a key');
    t.equal(sessions(), before);
  });

  t.test('sessions: unknown, foreign, missing, deleted', async (t) => {
    const id = await rawSession(KEY_A);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    const own = await post(list, { 'x-api-key': KEY_A, 'mcp-session-id': id });
    t.equal(own.status, 200);
    await own.text();

    const foreign = await post(list, { 'x-api-key': KEY_B, 'mcp-session-id': id });
    t.equal(foreign.status, 404, "another tenant's key: as if the session did not exist");
    t.same(await foreign.json(), { jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    const foreignDelete = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEY_B, 'mcp-session-id': id } });
    t.equal(foreignDelete.status, 404, 'nor can it end the session');
    await foreignDelete.text();

    const unknown = await post(list, { 'x-api-key': KEY_A, 'mcp-session-id': 'f0f0f0f0-0000-4000-8000-000000000000' });
    t.equal(unknown.status, 404);
    t.equal((await errorOf(unknown)).code, -32001);

    const missing = await post(list, { 'x-api-key': KEY_A });
    t.equal(missing.status, 400, 'no session id on a request other than initialize');
    t.equal((await errorOf(missing)).code, -32000);

    const ended = await fetch(`${base}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEY_A, 'mcp-session-id': id } });
    t.equal(ended.status, 200);
    await ended.text();
    const after = await post(list, { 'x-api-key': KEY_A, 'mcp-session-id': id });
    t.equal(after.status, 404, 'a deleted session answers 404');
    await after.text();
  });

  t.test('the SDK client ends its session with DELETE', async (t) => {
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), { requestInit: { headers: { 'x-api-key': KEY_A } } });
    const client = new Client({ name: 'terminate', version: '1' });
    await client.connect(transport);
    const id = transport.sessionId;
    t.ok(id);
    const before = sessions();
    await transport.terminateSession();
    t.equal(sessions(), before - 1);
    await client.close();
  });

  t.test('concurrent sessions of both tenants', async (t) => {
    const clients = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const key = i % 2 === 0 ? KEY_A : KEY_B;
        return { tenant: i % 2 === 0 ? TENANT_A : TENANT_B, client: await connect(t, base, 'streamable', { 'x-api-key': key }) };
      }),
    );
    const results = await Promise.all(
      clients.flatMap(({ client, tenant }) =>
        Array.from({ length: 5 }, async (_, j) => {
          const res = await client.callTool({ name: j % 2 ? 'listShipments' : 'listFinancialDocs', arguments: { limit: 10 } });
          const body = res.structuredContent as { meta: { tenant: string }; data: { company: string }[] };
          return body.meta.tenant === tenant && body.data.every((d) => d.company === tenant);
        }),
      ),
    );
    t.equal(results.length, 40);
    t.ok(results.every(Boolean), 'every concurrent call answered for its own tenant');
  });

  t.test('rate limit: MCP requests count like REST, a tool call counts once, 429 in the service shape', async (t) => {
    const app = await buildApp({ config: { ...h.config, rateLimit: { ...h.config.rateLimit, max: 6, windowMs: 60_000 } }, db: h.db, logger: false });
    t.teardown(() => app.close());
    const url = await listen(app);
    const key = KEY_B;
    const send = (body: unknown, id?: string) =>
      fetch(`${url}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': key, ...(id ? { 'mcp-session-id': id } : {}) },
        body: JSON.stringify(body),
      });
    const init = await send(INIT);
    await init.text();
    t.equal(init.headers.get('x-ratelimit-limit'), '6', 'rate limit headers survive the hand-over to the SDK');
    t.equal(init.headers.get('x-ratelimit-remaining'), '5');
    t.ok(init.headers.get('x-request-id'));
    const id = init.headers.get('mcp-session-id') ?? '';
    const call = await send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'listFinancialDocs', arguments: {} } }, id);
    const text = await call.text();
    t.match(text, /"structuredContent"/);
    t.equal(call.headers.get('x-ratelimit-remaining'), '4', 'the tool call and its REST dispatch count once');
    for (let i = 0; i < 4; i += 1) await (await send({ jsonrpc: '2.0', id: 10 + i, method: 'ping' }, id)).text();
    const limited = await send({ jsonrpc: '2.0', id: 20, method: 'ping' }, id);
    t.equal(limited.status, 429);
    t.ok(limited.headers.get('retry-after'));
    const error = await errorOf(limited);
    t.equal(error.code, 429);
    t.equal(error.message, 'Too Many Requests');
    t.equal(error.reason, 'rate_limited');
  });

  t.test('idle sessions are closed by the sweep and then answer 404', async (t) => {
    const app = await buildApp({ config: h.config, db: h.db, logger: false, mcp: { idleTimeoutMs: 300, sweepIntervalMs: 50 } });
    t.teardown(() => app.close());
    const url = await listen(app);
    const client = new Client({ name: 'idle', version: '1' });
    const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), { requestInit: { headers: { 'x-api-key': KEY_A } } });
    await client.connect(transport);
    t.equal(app.mcp?.sessions.size, 1);
    await new Promise((r) => setTimeout(r, 700));
    t.equal(app.mcp?.sessions.size, 0, 'swept');
    const res = await fetch(`${url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': KEY_A, 'mcp-session-id': transport.sessionId ?? '' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
    });
    t.equal(res.status, 404);
    await res.text();
    await client.close();
  });

  t.test('per-tenant session cap: 429 before a session is created', async (t) => {
    const app = await buildApp({ config: h.config, db: h.db, logger: false, mcp: { maxSessionsPerTenant: 2 } });
    t.teardown(() => app.close());
    const url = await listen(app);
    const open = async (key: string) =>
      fetch(`${url}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: ACCEPT, 'x-api-key': key }, body: JSON.stringify(INIT) });
    for (let i = 0; i < 2; i += 1) t.equal((await open(KEY_A).then(async (r) => (await r.text(), r))).status, 200);
    const third = await open(KEY_A);
    t.equal(third.status, 429);
    t.match(await errorOf(third), { code: 429, reason: 'too_many_sessions' }, 'a reason of its own: waiting does not help, ending a session does');
    const other = await open(KEY_B);
    t.equal(other.status, 200, 'the other tenant is not affected');
    await other.text();
  });

  t.test('a server stream (GET /mcp) does not hold up shutdown', async (t) => {
    const app = await buildApp({ config: h.config, db: h.db, logger: false });
    const url = await listen(app);
    let streams = 0;
    app.server.on('request', (req) => {
      if (req.method === 'GET' && req.url === '/mcp') streams += 1;
    });
    const clients = await Promise.all([KEY_A, KEY_B, KEY_A].map((key) => connect(t, url, 'streamable', { 'x-api-key': key })));
    // The SDK client opens the GET stream after initialization; give it a moment.
    await new Promise((r) => setTimeout(r, 200));
    t.equal(app.mcp?.sessions.size, 3);
    t.equal(streams, 3, 'each client holds a server stream open');
    const t0 = Date.now();
    await app.close();
    t.ok(Date.now() - t0 < 3000, `app.close() resolved in ${Date.now() - t0} ms`);
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
  });
}
