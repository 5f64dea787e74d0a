/**
 * Toolsets (issue 40): a session lists and calls the tools of the toolsets its URL names
 * (`?toolsets=`, one per spec tag, `all`), only the read-only ones with `readOnly=true`;
 * by default every toolset but webhooks, settings, filing, originals and exports. Both transports; bad values are a 400 before any session.
 */
import type { Test } from 'tap';
import { assertConforms, startHarness, KEY_A } from '../helpers/harness.ts';
import { connect, listen, seedTwoTenants, type Transport } from '../helpers/mcp.ts';
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { getPrompt, promptListing } from '../../lib/mcp/prompts.ts';

export default async function toolsetsTests(t: Test): Promise<void> {
  const h = await startHarness(t, { build: { now: () => new Date('2026-04-01T18:00:00Z') } });
  await seedTwoTenants(h.db);
  const base = await listen(h.app);

  const WEBHOOK_TOOLS = ['createWebhook', 'deleteWebhook', 'getWebhook', 'listWebhookDeliveries', 'listWebhooks', 'rotateWebhookSecret', 'sendWebhookTest'];
  const SETTINGS_TOOLS = ['getReceivedCategoryRules', 'setReceivedCategoryRules', 'assignReceivedDoc', 'unassignReceivedDoc', 'assignReceivedDocs'];
  const FILING_TOOLS = ['getDiot', 'listTaxPositionLines'];
  const ORIGINALS_TOOLS = ['createCfdiOriginalLink', 'createCfdiPrintedFormLink'];
  const EXPORT_TOOLS = [
    'listExports',
    'getExport',
    'exportFinancialDocs',
    'exportShipments',
    'exportReceivedDocs',
    'exportTaxPositionLines',
    'exportAlertJobs',
    'exportAlerts',
    'exportTaxSummary',
    'exportTaxPosition',
    'exportDiot',
    'exportReceivablesAging',
    'exportCashInflowForecast',
    'exportDiscountsAndShrinkage',
    'exportFleetUtilization',
    'exportDispatchToBill',
    'exportUnitEconomics',
    'exportOriginals',
  ];
  const names = async (client: Awaited<ReturnType<typeof connect>>) => (await client.listTools()).tools.map((tool) => tool.name).sort();

  for (const kind of ['streamable', 'sse'] as Transport[]) {
    t.test(`${kind}: default, all, one toolset, read-only`, async (t) => {
      const all = await names(await connect(t, base, kind, { 'x-api-key': KEY_A }, '?toolsets=all'));
      const byDefault = await names(await connect(t, base, kind, { 'x-api-key': KEY_A }));
      t.same(
        byDefault,
        all.filter((name) => ![...WEBHOOK_TOOLS, ...SETTINGS_TOOLS, ...FILING_TOOLS, ...ORIGINALS_TOOLS, ...EXPORT_TOOLS].includes(name)),
        'the default leaves out the webhook, settings, filing, originals and exports tools only',
      );
      t.ok(
        [...WEBHOOK_TOOLS, ...SETTINGS_TOOLS, ...FILING_TOOLS, ...ORIGINALS_TOOLS, ...EXPORT_TOOLS].every((name) => all.includes(name)),
        '`all` has them',
      );
      const settings = await connect(t, base, kind, { 'x-api-key': KEY_A }, '?toolsets=settings,received,filing&readOnly=true');
      t.same(
        await names(settings),
        ['getDiot', 'getReceivedCategoryRules', 'getReceivedDoc', 'listReceivedDocs', 'listTaxPositionLines'],
        'settings and filing by name (x-mcp-toolset), read-only',
      );

      const tax = await connect(t, base, kind, { 'x-api-key': KEY_A }, '?toolsets=tax,shipments');
      t.same(
        await names(tax),
        ['getShipment', 'getTaxPosition', 'getTaxSummary', 'importDeliveries', 'listShipments', 'recordLegDelivery'],
        'tax and shipments',
      );
      const { resources } = await tax.listResources();
      t.same(
        resources
          .map((r) => r.uri)
          .filter((uri) => uri.startsWith('freight://docs/tools/'))
          .sort(),
        ['getShipment', 'getTaxPosition', 'getTaxSummary', 'importDeliveries', 'listShipments', 'recordLegDelivery'].map((n) => `freight://docs/tools/${n}.md`),
        'one reference per listed tool',
      );
      const other = await tax.callTool({ name: 'listFinancialDocs', arguments: {} }).catch((err: Error) => err);
      t.match(
        other,
        { message: /listFinancialDocs is not in this session's toolsets \(shipments, tax\).*toolsets=/ },
        'a tool of another toolset is refused, saying how to get it',
      );

      const reader = await connect(t, base, kind, { 'x-api-key': KEY_A }, '?toolsets=shipments&readOnly=true');
      t.same(await names(reader), ['getShipment', 'listShipments'], 'read-only: the GET operations');
      const write = await reader.callTool({ name: 'importDeliveries', arguments: { body: { rows: [] } } }).catch((err: Error) => err);
      t.match(write, { message: /not in this session's toolsets \(shipments, read-only\).*without readOnly=true/ }, 'a write is refused');
      const listed = await reader.callTool({ name: 'listShipments', arguments: {} });
      t.notOk(listed.isError, 'a read answers');
    });
  }

  t.test('bad selections are a 400 in the error shape, before any session', async (t) => {
    const post = (query: string) =>
      h.app.inject({
        method: 'POST',
        url: `/mcp${query}`,
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        payload: {
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
        },
      });
    for (const [query, field, detail] of [
      ['?toolsets=taxes', 'toolsets', /unknown taxes; the toolsets are .*webhooks, or all/],
      ['?toolsets=', 'toolsets', /toolsets is empty/],
      ['?readOnly=yes', 'readOnly', /readOnly must be true or false/],
      ['?tools=tax', 'tools', /tools/],
    ] as const) {
      const res = await post(query);
      t.equal(res.statusCode, 400, `POST /mcp${query}`);
      assertConforms(t, res, 'POST', '/mcp');
      t.match(res.json().error, { fields: [{ in: 'query', name: field }], details: [detail] });
      t.notOk(res.headers['mcp-session-id'], 'no session');
    }
    const sse = await h.app.inject({ method: 'GET', url: '/sse?toolsets=nope', headers: { 'x-api-key': KEY_A } });
    t.equal(sse.statusCode, 400, 'GET /sse too');
    t.match(sse.json().error, { reason: 'invalid_parameter', fields: [{ in: 'query', name: 'toolsets' }] });
    const unauthenticated = await h.app.inject({ method: 'POST', url: '/mcp?toolsets=taxes', headers: { 'content-type': 'application/json' }, payload: {} });
    t.equal(unauthenticated.statusCode, 401, 'the key is checked first');
  });

  t.test('prompts: only values the tools take, the audit period for the trips, only tools of the session', async (t) => {
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    // The tools take years 1970–2999 (spec: CalendarDate, TargetMonth, PositionMonth, CycleKey): a prompt refuses what they would.
    for (const [name, args, arg] of [
      ['month-end-tax-review', { month: '1969-12' }, 'month'],
      ['month-end-tax-review', { month: '3000-01' }, 'month'],
      ['shrinkage-claim', { client: 'PEM990101AB1', startDate: '1969-12-31' }, 'startDate'],
      ['shrinkage-claim', { client: 'PEM990101AB1', endDate: '3000-01-01' }, 'endDate'],
      ['collections-follow-up', { month: '0001-01' }, 'month'],
    ] as const) {
      const err = await client.getPrompt({ name, arguments: { ...args } }).catch((e: unknown) => e);
      t.match(err, { code: -32602, message: new RegExp(`argument '${arg}' is .*1970–2999`) }, `${name} ${JSON.stringify(args)}: InvalidParams`);
    }
    const ok = await client.getPrompt({ name: 'month-end-tax-review', arguments: { month: '1970-01' } });
    t.match((ok.messages[0]!.content as { text: string }).text, /"targetMonth": "1970-01"/, 'the first month the tools take');

    // The audit covers 90 days by default and at most 366; the trips listed must be those of the same period.
    const stepTwo = async (args: Record<string, string>) =>
      ((await client.getPrompt({ name: 'shrinkage-claim', arguments: { client: 'PEM990101AB1', ...args } })).messages[0]!.content as { text: string }).text
        .split('\n')
        .find((line) => line.startsWith('2. '))!;
    const openOrCut: Record<string, string>[] = [
      {},
      { startDate: '2026-01-01' },
      { endDate: '2026-03-31' },
      { startDate: '2024-01-01', endDate: '2026-03-31' },
    ];
    for (const args of openOrCut) {
      const line = await stepTwo(args);
      t.match(
        line,
        /listShipments with \{"client":"PEM990101AB1","dateFilterBy":"offload"\} plus "startDate" and "endDate" set to the period the audit answered/,
        JSON.stringify(args),
      );
    }
    t.match(
      await stepTwo({ startDate: '2026-01-01', endDate: '2026-03-31' }),
      /listShipments with \{"client":"PEM990101AB1","startDate":"2026-01-01","endDate":"2026-03-31","dateFilterBy":"offload"\}/,
      'a whole period is passed as it is',
    );

    // Given a session's tools, a prompt names none outside them (server.ts passes the session's tool names).
    /** The tool names of a session opened with `query`, the session closed again (a key has few open at once). */
    const toolsOf = async (query: string) => {
      const session = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, query);
      const { tools } = await session.listTools();
      await (session.transport as StreamableHTTPClientTransport).terminateSession();
      await session.close();
      return new Set(tools.map((tool) => tool.name));
    };
    const catalogue = [...(await toolsOf('?toolsets=all'))];
    const named = (text: string) => catalogue.filter((tool) => new RegExp(`\\b${tool}\\b`).test(text));
    for (const query of ['', '?toolsets=all', '?readOnly=true', '?toolsets=tax', '?toolsets=tax,financial', '?toolsets=financial,analytics&readOnly=true']) {
      const tools = await toolsOf(query);
      for (const prompt of promptListing(tools)) {
        const optional = prompt.arguments!.filter((a) => !a.required).map((a) => a.name);
        const required = Object.fromEntries(prompt.arguments!.filter((a) => a.required).map((a) => [a.name, a.name === 'month' ? '2026-03' : 'PEM990101AB1']));
        for (const extra of [{}, ...optional.map((a) => ({ [a]: a === 'month' ? '2026-03' : a === 'client' ? 'PEM990101AB1' : '2026-01-01' }))]) {
          const text = (getPrompt(prompt.name, { ...required, ...extra }, tools).messages[0]!.content as { text: string }).text;
          const outside = named(text).filter((tool) => !tools.has(tool));
          t.same(outside, [], `${query || 'default'}: ${prompt.name} ${JSON.stringify(extra)} names only the session's tools`);
        }
      }
      const hidden = promptListing().filter((p) => !promptListing(tools).some((q) => q.name === p.name));
      for (const p of hidden)
        t.throws(() => getPrompt(p.name, {}, tools), { code: -32602, message: /not in this session's tools/ }, `${query}: ${p.name} refused`);
    }
    const readOnly = await toolsOf('?readOnly=true');
    t.same(
      promptListing(readOnly)
        .find((p) => p.name === 'collections-follow-up')
        ?.arguments?.map((a) => a.name),
      ['client'],
      'read-only: no month to schedule the alert for (scheduleAlerts writes)',
    );
    t.throws(() => getPrompt('collections-follow-up', { month: '2026-03' }, readOnly), { code: -32602, message: /unknown argument\(s\) month/ });

    // Over the protocol: the session's own prompts. A tax-only session has none (each names a tool of another toolset).
    const tax = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?toolsets=tax');
    t.same((await tax.listPrompts()).prompts, [], 'toolsets=tax: no prompt');
    t.match(
      await tax.getPrompt({ name: 'month-end-tax-review', arguments: { month: '2026-03' } }).catch((e: unknown) => e),
      { code: -32602, message: /calls getFinancialDoc, listFinancialDocs, not in this session's tools/ },
      'toolsets=tax: month-end-tax-review refused, naming the missing tools',
    );
    await (tax.transport as StreamableHTTPClientTransport).terminateSession();
    const ro = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?readOnly=true');
    t.same(
      (await ro.listPrompts()).prompts.map((p) => [p.name, p.arguments?.map((a) => a.name)]),
      [
        ['month-end-tax-review', ['month']],
        ['shrinkage-claim', ['client', 'startDate', 'endDate']],
        ['collections-follow-up', ['client']],
      ],
      'read-only: every prompt, collections-follow-up without the alert it cannot schedule',
    );
    await (ro.transport as StreamableHTTPClientTransport).terminateSession();
  });

  t.test('the contract says which toolsets there are and which a session has by default, as the service does', async (t) => {
    const doc = (await h.app.inject({ method: 'GET', url: '/docs/mcp.json' })).json<{
      components: { parameters: { Toolsets: { description: string } } };
    }>();
    const { description } = doc.components.parameters.Toolsets;
    // The names the service accepts, from its own 400.
    const refused = await fetch(`${base}/mcp?toolsets=none-such`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEY_A },
      body: '{}',
    });
    const accepted = /the toolsets are (.*), or all$/.exec(((await refused.json()) as { error: { details: string[] } }).error.details[0]!)![1]!.split(', ');
    t.ok(accepted.length > 10, accepted.join(', '));
    const [named, byDefault] = description.split(/Default every toolset but/);
    for (const name of accepted) t.match(named, new RegExp(`\\b${name}\\b`), `the contract names the toolset ${name}`);
    const left = (byDefault ?? '').split('.')[0]!;
    // One session at a time, ended at once (the sessions a key may hold are capped).
    const namesOf = async (query: string) => {
      const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, query);
      const listed = await names(client);
      await (client.transport as StreamableHTTPClientTransport).terminateSession();
      return listed;
    };
    const all = await namesOf('?toolsets=all');
    const listed = await namesOf('');
    for (const name of accepted) {
      const inDefault = (await namesOf(`?toolsets=${name}`)).every((tool) => listed.includes(tool));
      t.equal(new RegExp(`\`${name}\``).test(left), !inDefault, `${name}: ${inDefault ? 'in' : 'left out of'} the default, as the contract says`);
    }
    t.ok(all.length > listed.length);
  });
}
