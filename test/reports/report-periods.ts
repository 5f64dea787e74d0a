/**
 * Report periods as a client's own tools see them (no cross-field 400s): an inverted range is an
 * empty period, a range above 366 days covers its first 366 days and says what was asked, and the
 * tax summary's targetMonth with dates is their intersection. Every answer conforms to the spec.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { makeFinancialDoc, freight, CLIENT_COMPANY } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';

export default async function reportPeriodsTests(t: Test): Promise<void> {
  const h = await startHarness(t, { build: { now: () => new Date('2026-04-20T12:00:00-06:00') } });
  await financialDocs(h.db).insertMany(
    [
      makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-05T10:00', concepts: [freight(10_000)] }),
      makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-20T10:00', concepts: [freight(2_000)] }),
    ].map(withDerivedFields),
  );

  const REPORTS = [
    '/api/tax-summary',
    '/api/analytics/cash-inflow-forecast',
    '/api/analytics/discounts-and-shrinkage',
    '/api/analytics/fleet-utilization',
    '/api/analytics/dispatch-to-bill',
    '/api/analytics/unit-economics',
  ];
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } });

  for (const route of REPORTS) {
    t.test(`${route}: inverted and over-long ranges`, async (t) => {
      const inverted = await get(`${route}?startDate=2026-03-10&endDate=2026-03-01`);
      t.equal(inverted.statusCode, 200, inverted.body.slice(0, 200));
      assertConforms(t, inverted, 'GET', route);
      t.match(inverted.json().period, { startDate: '2026-03-10', endDate: '2026-03-01', days: 0, requestedEndDate: null }, 'an empty period');
      // asOf = min(now, the end of endDate): 2026-03-01, not the day before startDate.
      // (dispatch-to-bill ages its unbilled trips now, whatever the period.)
      if (/cash-inflow-forecast|fleet-utilization/.test(route)) t.equal(inverted.json().asOf.date, '2026-03-01', 'balances judged at the end of endDate');
      const long = await get(`${route}?startDate=2025-01-01&endDate=2026-03-01`);
      t.equal(long.statusCode, 200, long.body.slice(0, 200));
      assertConforms(t, long, 'GET', route);
      t.match(
        long.json().period,
        { startDate: '2025-01-01', endDate: '2026-01-01', days: 366, requestedEndDate: '2026-03-01' },
        'the first 366 days, saying what was asked',
      );
    });
  }

  t.test('MCP: an inverted range is judged at the end of its endDate too', async (t) => {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    for (const name of ['getCashInflowForecast', 'auditFleetUtilization']) {
      const r = (await client.callTool({ name, arguments: { startDate: '2026-03-10', endDate: '2026-03-01' } })) as unknown as {
        structuredContent: { period: { days: number }; asOf: { date: string } };
      };
      t.match(r.structuredContent, { period: { days: 0 }, asOf: { date: '2026-03-01' } }, name);
    }
  });

  t.test('tax summary: targetMonth with dates is their intersection', async (t) => {
    const res = await get('/api/tax-summary?targetMonth=2026-03&startDate=2026-03-10&endDate=2026-04-30');
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', '/api/tax-summary');
    t.match(res.json().period, { startDate: '2026-03-10', endDate: '2026-03-31', days: 22, targetMonth: '2026-03', source: 'targetMonth' });
    t.equal(res.json().totals.documents, 1, 'only the document inside both');
    const disjoint = await get('/api/tax-summary?targetMonth=2026-03&startDate=2026-05-01');
    t.equal(disjoint.statusCode, 200);
    t.match(disjoint.json(), { period: { days: 0 }, months: [], totals: { documents: 0 } }, 'disjoint: an empty period');
    const inverted = await get('/api/tax-summary?startDate=2026-03-10&endDate=2026-03-01');
    t.match(inverted.json(), { months: [], totals: { documents: 0 } });
  });
}
