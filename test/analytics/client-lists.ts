/**
 * Every per-client list of a report is bounded by its `limit`, largest first, with how many there are (the
 * receivables aging's and unit economics' shape): 150 clients with one open invoice each in October 2026. The
 * answers stay small whatever the number of clients, and an agent that asks for `limit: 1` gets its answer over MCP
 * (before, the forecast, the discounts audit and the tax summary listed every client whatever `limit` said: a
 * 413 over MCP with advice to lower a `limit` that changed nothing).
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { makeFinancialDoc, freight } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';

type Obj = Record<string, unknown>;
interface ListShape {
  total: number;
  listed: number;
  limit: number;
  data: { client: string }[];
}

export default async function clientListsTests(t: Test): Promise<void> {
  const NOW = new Date('2026-11-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const L = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  // 150 companies (12-character RFCs): client i is billed 1,000 + i of freight on an October day, unpaid.
  const rfc = (i: number): string => `${L[i % 26]}${L[Math.floor(i / 26)]}A800110AB1`;
  await financialDocs(h.db).insertMany(
    Array.from({ length: 150 }, (_, i) =>
      makeFinancialDoc({
        tenant: TENANT_A,
        client: rfc(i),
        date: `2026-10-${String(1 + (i % 28)).padStart(2, '0')}T12:00`,
        paymentMethod: 'PPD',
        concepts: [freight(1_000 + i)],
      }),
    ).map(withDerivedFields),
  );
  const largest = rfc(149);

  const REPORTS: { route: string; tool: string; args: Obj; lists: (b: Obj) => [ListShape, string][] }[] = [
    {
      route: '/api/analytics/cash-inflow-forecast',
      tool: 'getCashInflowForecast',
      args: { startDate: '2026-10-01', endDate: '2026-10-31' },
      lists: (b) => [[b.clients as ListShape, largest]],
    },
    {
      route: '/api/analytics/discounts-and-shrinkage',
      tool: 'auditDiscountsAndShrinkage',
      args: { startDate: '2026-10-01', endDate: '2026-10-31' },
      lists: (b) => {
        const d = b.discounts as { byClient: ListShape; byClientMonth: ListShape };
        // No demurrage billed: every client ties at 0, so by RFC.
        return [
          [d.byClient, largest],
          [d.byClientMonth, largest],
          [(b.demurrage as { byClient: ListShape }).byClient, rfc(0)],
        ];
      },
    },
    {
      route: '/api/tax-summary',
      tool: 'getTaxSummary',
      args: { targetMonth: '2026-10' },
      lists: (b) => [[(b.months as { clients: ListShape }[])[0]!.clients, largest]],
    },
    { route: '/api/receivables/aging', tool: 'getReceivablesAging', args: {}, lists: (b) => [[b.clients as ListShape, largest]] },
  ];
  const query = (args: Obj): string => new URLSearchParams(Object.entries(args).map(([k, v]): [string, string] => [k, String(v)])).toString();

  for (const r of REPORTS) {
    t.test(`${r.route}: limit caps every per-client list, largest first`, async (t) => {
      const res = await h.app.inject({ method: 'GET', url: `${r.route}?${query({ ...r.args, limit: 1 })}`, headers: { 'x-api-key': KEY_A } });
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      assertConforms(t, res, 'GET', r.route);
      for (const [list, first] of r.lists(res.json())) t.match(list, { total: 150, listed: 1, limit: 1, data: [{ client: first }] });
      t.ok(res.body.length < 20_000, `the answer stays small with 150 clients (${res.body.length} bytes)`);
      const def = await h.app.inject({ method: 'GET', url: `${r.route}?${query(r.args)}`, headers: { 'x-api-key': KEY_A } });
      for (const [list] of r.lists(def.json())) t.match(list, { total: 150, listed: 20, limit: 20 }, 'the default limit, 20');
    });
  }

  t.test('MCP: each tool answers with limit 1 and with its default, the same lists as REST', async (t) => {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
    for (const r of REPORTS) {
      for (const args of [{ ...r.args, limit: 1 }, r.args]) {
        const out = (await client.callTool({ name: r.tool, arguments: args })) as { isError?: boolean; structuredContent?: Obj; content?: { text?: string }[] };
        t.notOk(out.isError, `${r.tool} ${JSON.stringify(args)}: ${out.content?.[0]?.text?.slice(0, 200) ?? ''}`);
        const listed = 'limit' in args ? 1 : 20;
        for (const [list, first] of r.lists(out.structuredContent!)) t.match(list, { total: 150, listed, data: [{ client: first }] }, r.tool);
      }
    }
  });
}
