/**
 * Every report in MXN (issue 20): a document in another currency keeps its CFDI amounts and
 * rate, and the audits and alerts convert them at its exchange rate. Hand-computed:
 *   U  USD 1,000.00 freight (discount 100.00, base 900.00) + IVA 0%, TipoCambio 17.50, unpaid:
 *      Total 900.00 USD = 15,750.00 MXN outstanding; gross freight 17,500.00, discount 1,750.00 MXN.
 *   M  MXN freight 10,000.00 + IVA 1,600.00 − 4% 400.00 = 11,200.00, unpaid.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { makeFinancialDoc, freight, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { overdueInvoiceFindings } from '../../lib/alerts/rules.ts';
import { evaluateAlertRule } from '../../lib/alerts/evaluate.ts';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';

export default async function currencyTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const get = async (url: string, route = url.split('?')[0]!) => {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    assertConforms(t, res, 'GET', route);
    return res.json();
  };

  const zero = { tax: 'IVA' as const, factor: 'Tasa' as const, rate: 0, base: 900, amount: 0 };
  const usd = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY_2,
    date: '2026-03-02T12:00',
    currency: 'USD',
    exchangeRate: 17.5,
    concepts: [freight(1_000, { discount: 100, taxes: { transfers: [zero], retentions: [] } })],
  });
  const mxn = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-03T12:00', concepts: [freight(10_000)] });
  await financialDocs(h.db).insertMany([usd, mxn].map(withDerivedFields));

  t.test('the documents keep their own currency', async (t) => {
    const one = await get(`/api/financial-docs/${usd.id}`, '/api/financial-docs/:id');
    t.match(one, { currency: 'USD', exchangeRate: 17.5, amounts: { subtotal: 1_000, discount: 100, total: 900 }, balance: { pending: 900 } });
  });

  t.test('cash inflow forecast: receivables and revenue in MXN', async (t) => {
    const body = await get('/api/analytics/cash-inflow-forecast?startDate=2026-03-01&endDate=2026-04-20');
    t.match(body.receivables, { openInvoices: 2, outstanding: 26_950 }, '15,750 + 11,200');
    const shares = Object.fromEntries(body.concentration.shares.map((c: { client: string; revenue: number }) => [c.client, c.revenue]));
    t.same(shares, { [CLIENT_COMPANY]: 10_000, [CLIENT_COMPANY_2]: 15_750 }, 'revenue = SubTotal − Descuento, in MXN');
  });

  t.test('discounts audit in MXN', async (t) => {
    const body = await get('/api/analytics/discounts-and-shrinkage?startDate=2026-03-01&endDate=2026-03-31');
    t.match(
      body.discounts.byClient.data.find((c: { client: string }) => c.client === CLIENT_COMPANY_2),
      { grossFreight: 17_500, discounts: 1_750, discountRatePct: { value: 10 } },
    );
  });

  t.test('overdue alert amounts in MXN', async (t) => {
    const findings = overdueInvoiceFindings([usd, mxn], {
      cycleKey: '2026-04',
      asOf: NOW.getTime(),
      settings: { ...DEFAULT_SETTINGS, _id: TENANT_A, name: 'Test' },
    });
    t.same(Object.fromEntries(findings.map((f) => [f.ref, f.amount])), { [mxn._id]: 11_200, [usd._id]: 15_750 });
    t.match(findings.find((f) => f.ref === usd._id)!.message, /MXN 15,750\.00 pending/);
    // The same from the stored documents, as the worker reads them (only their balance fields).
    const stored = await evaluateAlertRule(h.db, { tenant: TENANT_A, ruleId: 'overdue-invoices', cycleKey: '2026-04', asOf: NOW }, 10_000);
    t.same(stored.findings, findings, "the worker's read of the stored documents gives the same findings");
  });
}
