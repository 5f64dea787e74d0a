/**
 * Toolsets (issue 40): a session lists and calls the tools of the toolsets its URL names
 * (`?toolsets=`, one per spec tag, `all`), only the read-only ones with `readOnly=true`;
 * by default every toolset but webhooks, settings, filing, originals and exports. Both transports; bad values are a 400 before any session.
 */
import type { Test } from 'tap';
import { assertConforms, startHarness, KEY_A } from '../helpers/harness.ts';
import { connect, listen, seedTwoTenants, type Transport } from '../helpers/mcp.ts';

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
}
