/**
 * GET /api/tax-summary through HTTP on the embedded engine, against numbers
 * computed by hand from a small crafted dataset.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { makeFinancialDoc, freight, shortage, payment, CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { invoiceXml, paymentXml } from '../helpers/cfdi-builder.ts';

export default async function taxSummaryTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/tax-summary';
  const get = (query: string, key = KEY_A) => h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });

  // March 2026, tenant A.
  // d1: freight 10,000 + shortage line 500 (ObjetoImp 01). VAT 1,600, retention 400 = 4% of the FREIGHT base,
  //     not of the 10,500 SubTotal (the naive check would expect 420). Total 11,700; PPD, half paid in April.
  const d1 = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    date: '2026-03-05T10:00',
    paymentMethod: 'PPD',
    concepts: [freight(10_000), shortage(500)],
    payments: [payment(5_850, '2026-04-10T09:00')],
  });
  // d2: real VAT mismatch: 20,000 × 16% = 3,200 but 3,300 declared (totals consistent with the declared VAT).
  const d2 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY_2, date: '2026-03-12T09:00', concepts: [freight(20_000, { vat: 3_300 })] });
  // d3: persona física, PUE: expected retention 0. Total 5,800.
  const d3 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_PERSON, date: '2026-03-15T12:00', paymentMethod: 'PUE', concepts: [freight(5_000)] });
  // d4: cancelled (Total 1,120): excluded from every sum, counted apart.
  const d4 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-20T12:00', concepts: [freight(1_000)], cancelled: true });
  // d5: VAT 53.34 declared vs round2(333.33 × 0.16 = 53.3328) = 53.33 expected: within ±0.01, not flagged.
  const d5 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-25T12:00', concepts: [freight(333.33, { vat: 53.34 })] });
  // d6: April.
  const d6 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-04-02T12:00', concepts: [freight(2_000)] });
  // Tenant B, same month and client: must never change A's numbers.
  const other = makeFinancialDoc({ tenant: TENANT_B, client: CLIENT_COMPANY, date: '2026-03-10T12:00', concepts: [freight(99_999, { vat: 1 })] });
  await financialDocs(h.db).insertMany([d1, d2, d3, d4, d5, d6, other].map(withDerivedFields));

  t.test('invoice basis, March: hand-computed totals', async (t) => {
    const res = await get('?targetMonth=2026-03');
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.equal(body.tenant, TENANT_A);
    t.equal(body.basis, 'invoice');
    t.equal(body.computedAt, NOW.toISOString());
    t.same(body.period, {
      startDate: '2026-03-01',
      endDate: '2026-03-31',
      targetMonth: '2026-03',
      days: 31,
      requestedEndDate: null,
      timeZone: 'America/Mexico_City',
      source: 'targetMonth',
      maxDays: 366,
    });
    t.match(body.parameters, {
      vatRate: 0.16,
      retentionRate: 0.04,
      discrepancyTolerance: 0.01,
      settingsSource: { vatRate: 'default', retentionRate: 'default', discrepancyTolerance: 'default' },
    });
    t.same(body.totals, {
      documents: 4,
      cancelledDocuments: 1,
      cancelledTotal: 1_120,
      pendingCancellations: 0,
      subtotal: 35_833.33,
      discount: 0,
      taxableBase: 35_333.33,
      freightBase: 35_333.33,
      exempt: { total: 500, shortage: 500, indemnity: 0, other: 0 },
      vatBases: { rate16: 35_333.33, rate8: 0, rate0: 0, exempt: 0, otherRates: 0 },
      vat: { declared: 5_753.34, expected: 5_653.33, difference: 100.01 },
      retention: { declared: 1_213.33, expected: 1_213.33, difference: 0 },
      isrRetained: 0,
      ieps: { transferred: 0, retained: 0 },
      transferredTaxes: 5_753.34,
      retainedTaxes: 1_213.33,
      total: 40_373.34,
      collected: null,
      findings: { discrepancies: 1, warnings: 0, infos: 1 },
      documentsWithDiscrepancies: 1,
    });
    t.equal(body.months.length, 1);
    const march = body.months[0];
    t.equal(march.month, '2026-03');
    t.same(march.totals, body.totals, 'one month: its totals are the totals');
    // Largest Σ Total first: 22,500.00, 12,073.34, 5,800.00.
    t.match(march.clients, { total: 3, listed: 3, limit: 20 });
    t.same(
      march.clients.data.map((c: { client: string }) => c.client),
      [CLIENT_COMPANY_2, CLIENT_COMPANY, CLIENT_PERSON],
    );
    const [company2, company, person] = march.clients.data;
    t.match(company, {
      clientKind: 'company',
      totals: {
        documents: 2,
        cancelledDocuments: 1,
        cancelledTotal: 1_120,
        subtotal: 10_833.33,
        exempt: { shortage: 500 },
        retention: { declared: 413.33, expected: 413.33 },
        findings: { discrepancies: 0 },
      },
    });
    t.match(company2, { totals: { documents: 1, vat: { declared: 3_300, expected: 3_200, difference: 100 }, documentsWithDiscrepancies: 1 } });
    t.match(
      person,
      { clientKind: 'person', totals: { documents: 1, retention: { declared: 0, expected: 0 }, findings: { discrepancies: 0, warnings: 0 } } },
      'a persona física retains nothing, and that is no finding',
    );

    // Findings: the shortage line is information, not a discrepancy; the VAT mismatch is; the cancelled one is counted apart.
    t.same(body.findings.byKind, { discrepancy: 1, warning: 0, info: 2 });
    t.same(body.findings.byCode, { DOCUMENT_CANCELLED: 1, EXEMPT_EXCLUDED: 1, VAT_MISMATCH: 1 });
    t.same(
      body.findings.items.map((f: { code: string; docId: string }) => [f.code, f.docId]),
      [
        ['VAT_MISMATCH', d2.id],
        ['EXEMPT_EXCLUDED', d1.id],
        ['DOCUMENT_CANCELLED', d4.id],
      ],
    );
    t.match(body.findings.items[0], {
      kind: 'discrepancy',
      uuid: d2.invoice.uuid,
      client: CLIENT_COMPANY_2,
      month: '2026-03',
      conceptIndex: 0,
      declared: 3_300,
      expected: 3_200,
      difference: 100,
    });
    t.match(body.findings.items[1], { kind: 'info', conceptIndex: 1, declared: 500, expected: 500, difference: 0 });
    t.notOk(
      body.findings.items.some((f: { docId: string }) => f.docId === d5.id),
      'a 0.01 rounding difference is within tolerance',
    );
  });

  t.test('payment basis: the partially paid PPD invoice counts half in April', async (t) => {
    const res = await get('?targetMonth=2026-04&basis=payment');
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.equal(body.basis, 'payment');
    t.match(body.basisDescription, /payment complements/);
    // 5,850 of 11,700 paid: every amount × 0.5.
    t.same(body.totals, {
      documents: 1,
      cancelledDocuments: 0,
      cancelledTotal: 0,
      pendingCancellations: 0,
      subtotal: 5_250,
      discount: 0,
      taxableBase: 5_000,
      freightBase: 5_000,
      exempt: { total: 250, shortage: 250, indemnity: 0, other: 0 },
      vatBases: { rate16: 5_000, rate8: 0, rate0: 0, exempt: 0, otherRates: 0 },
      vat: { declared: 800, expected: 800, difference: 0 },
      retention: { declared: 200, expected: 200, difference: 0 },
      isrRetained: 0,
      ieps: { transferred: 0, retained: 0 },
      transferredTaxes: 800,
      retainedTaxes: 200,
      total: 5_850,
      collected: 5_850,
      findings: { discrepancies: 0, warnings: 0, infos: 1 },
      documentsWithDiscrepancies: 0,
    });
    t.same(
      body.months[0].clients.data.map((c: { client: string }) => c.client),
      [CLIENT_COMPANY],
    );

    const march = (await get('?targetMonth=2026-03&basis=payment')).json();
    t.match(
      march.totals,
      { documents: 1, total: 5_800, collected: 5_800, vat: { declared: 800 }, retention: { declared: 0, expected: 0 } },
      'only the PUE invoice is cash in March',
    );
  });

  t.test('date range: every month listed, each document in its invoice month', async (t) => {
    const res = await get('?startDate=2026-03-01&endDate=2026-04-30');
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body.period, { startDate: '2026-03-01', endDate: '2026-04-30', targetMonth: null, days: 61, source: 'range' });
    t.same(
      body.months.map((m: { month: string }) => m.month),
      ['2026-03', '2026-04'],
    );
    t.match(body.months[1].totals, {
      documents: 1,
      subtotal: 2_000,
      vat: { declared: 320, expected: 320 },
      retention: { declared: 80, expected: 80 },
      total: 2_240,
    });
    t.equal(body.totals.documents, 5);
    t.equal(body.totals.total, 42_613.34);
  });

  t.test('default period is the current month; filters and the findings list', async (t) => {
    const def = (await get('')).json();
    t.match(def.period, { targetMonth: '2026-04', source: 'default', startDate: '2026-04-01', endDate: '2026-04-30' });
    t.equal(def.totals.documents, 1);

    const person = await get(`?targetMonth=2026-03&client=${CLIENT_PERSON}`);
    assertConforms(t, person, 'GET', ROUTE);
    t.match(person.json(), { filters: { client: CLIENT_PERSON }, totals: { documents: 1, subtotal: 5_000, retention: { expected: 0 } } });

    const onlyDiscrepancies = (await get('?targetMonth=2026-03&findingKind=discrepancy')).json();
    t.same(
      onlyDiscrepancies.findings.items.map((f: { code: string }) => f.code),
      ['VAT_MISMATCH'],
    );
    t.equal(onlyDiscrepancies.findings.total, 3, 'every finding still counted');
    t.equal(onlyDiscrepancies.findings.kind, 'discrepancy');

    const capped = (await get('?targetMonth=2026-03&limit=1')).json();
    t.match(capped.findings, { total: 3, listed: 1, limit: 1 });

    const empty = await get('?targetMonth=2025-01');
    assertConforms(t, empty, 'GET', ROUTE);
    t.match(empty.json(), {
      totals: { documents: 0, subtotal: 0 },
      months: [{ month: '2025-01', clients: { total: 0, listed: 0, data: [] } }],
      findings: { total: 0, items: [] },
    });
  });

  t.test('tenant isolation', async (t) => {
    const b = await get('?targetMonth=2026-03', KEY_B);
    t.equal(b.statusCode, 200);
    assertConforms(t, b, 'GET', ROUTE);
    t.match(b.json(), { tenant: TENANT_B, totals: { documents: 1, subtotal: 99_999 }, findings: { byKind: { discrepancy: 1 } } });
    // A's March numbers above already exclude B's document (documents 4, subtotal 35,833.33).
    const a = (await get(`?targetMonth=2026-03&client=${CLIENT_COMPANY}`)).json();
    t.equal(a.totals.subtotal, 10_833.33);
  });

  t.test('parameter validation', async (t) => {
    const cases: [string, RegExp][] = [
      ['?targetMonth=2026-13', /targetMonth/],
      ['?targetMonth=2026-3', /targetMonth/],
      // Years outside 1970–2999, as every other date parameter: 9999-12 ends in the year 10000 (a 500), 0001-01 was read as 1901.
      ['?targetMonth=9999-12', /targetMonth/],
      ['?targetMonth=0001-01&basis=payment', /targetMonth/],
      ['?basis=cash', /basis must be one of: invoice, payment/],
      ['?limit=0', /limit must be an integer between 1 and 100/],
      ['?startDate=2026-02-30', /startDate/],
      ['?foo=1', /unknown query parameter 'foo'/],
    ];
    for (const [query, detail] of cases) {
      const res = await get(query);
      t.equal(res.statusCode, 400, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(res.json().error.details.join(' | '), detail, query);
    }
    for (const month of ['1970-01', '2999-12']) t.match((await get(`?targetMonth=${month}`)).json(), { period: { targetMonth: month } }, month);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const tool = await client.callTool({ name: 'getTaxSummary', arguments: { targetMonth: '9999-12' } });
    t.equal(tool.isError, true, 'MCP: the same month refused');
    t.match(JSON.stringify(tool.content), /targetMonth/);
    const noKey = await h.app.inject({ method: 'GET', url: ROUTE });
    t.equal(noKey.statusCode, 401);
    assertConforms(t, noKey, 'GET', ROUTE);
  });

  t.test('payment basis: an invoice collected in thirds over three months adds up to its taxes to the cent', async (t) => {
    // 10,000.00 freight + 1,600.00 VAT − 400.00 retained by the company client = 11,200.00 (PPD 2025-10-01), collected
    // 3,733.33 on 10-10, 3,733.33 on 11-10, 3,733.34 on 12-10. A month's part of an amount x is the difference of the
    // running total's proportions: prop(x, collected by its end) − prop(x, collected before it), prop(x, c) = round2(x ×
    // c ÷ 11,200.00), so the three months add up to x (each month's share rounded by itself gave 533.33 VAT and
    // 133.33 retention three times: 1,599.99 and 399.99 for an invoice paid in full).
    //   Running totals 3,733.33 / 7,466.66 / 11,200.00:
    //   VAT   Oct round2(1,600 × 3,733.33 ÷ 11,200 = 533.3329) = 533.33; Nov round2(1,066.6657) = 1,066.67 − 533.33 = 533.34;
    //         Dec 1,600.00 − 1,066.67 = 533.33 → 1,600.00
    //   ret.  Oct round2(400 × 3,733.33 ÷ 11,200 = 133.3332) = 133.33; Nov round2(266.6664) = 266.67 − 133.33 = 133.34;
    //         Dec 400.00 − 266.67 = 133.33 → 400.00
    //   base  Oct round2(10,000 × 3,733.33 ÷ 11,200 = 3,333.3304) = 3,333.33; Nov round2(6,666.6607) = 6,666.66 − 3,333.33 =
    //         3,333.33; Dec 10,000.00 − 6,666.66 = 3,333.34 → 10,000.00
    const U = (n: number): string => `7A2B0C55-00${String(n).padStart(2, '0')}-4000-8000-0000000008${String(n).padStart(2, '0')}`;
    const CLIENT = 'CLI010101AB1';
    const pay = (n: number, fecha: string, before: number, paid: number) => ({
      name: `p${n}.xml`,
      content: paymentXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(n), fecha, invoiceUuid: U(1), currency: 'MXN', exchangeRate: 1, before, paid }),
    });
    const invoice = invoiceXml({
      issuer: TENANT_A,
      receiver: CLIENT,
      uuid: U(1),
      fecha: '2025-10-01T09:00:00',
      method: 'PPD',
      lines: [{ code: '78101802', desc: 'Flete', amount: 10_000, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] }],
    }).xml;
    const imported = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: {
        files: [
          { name: 'i1.xml', content: invoice },
          pay(2, '2025-10-10T10:00:00', 11_200, 3_733.33),
          pay(3, '2025-11-10T10:00:00', 7_466.67, 3_733.33),
          pay(4, '2025-12-10T10:00:00', 3_733.34, 3_733.34),
        ],
      },
    });
    t.match(imported.json(), { summary: { rejected: 0 } });
    const months = [
      ['2025-10', 533.33, 133.33, 3_333.33, 3_733.33],
      ['2025-11', 533.34, 133.34, 3_333.33, 3_733.33],
      ['2025-12', 533.33, 133.33, 3_333.34, 3_733.34],
    ] as const;
    for (const [month, vat, retention, base, collected] of months) {
      const res = await get(`?targetMonth=${month}&basis=payment`);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(
        res.json().totals,
        {
          taxableBase: base,
          vat: { declared: vat, expected: vat, difference: 0 },
          retention: { declared: retention, expected: retention, difference: 0 },
          collected,
        },
        month,
      );
    }
    const whole = {
      documents: 1,
      taxableBase: 10_000,
      vat: { declared: 1_600, expected: 1_600, difference: 0 },
      retention: { declared: 400, expected: 400, difference: 0 },
      collected: 11_200,
    };
    const res = await get('?startDate=2025-10-01&endDate=2025-12-31&basis=payment');
    t.equal(res.statusCode, 200);
    const body = res.json();
    t.match(body.totals, whole, 'Oct–Dec: the invoice paid in full, all its taxes');
    t.same(
      body.months.map((m: { month: string; totals: { vat: { declared: number }; retention: { declared: number } } }) => [
        m.month,
        m.totals.vat.declared,
        m.totals.retention.declared,
      ]),
      months.map(([month, vat, retention]) => [month, vat, retention]),
    );
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const tool = (await client.callTool({ name: 'getTaxSummary', arguments: { startDate: '2025-10-01', endDate: '2025-12-31', basis: 'payment' } })) as {
      structuredContent?: { totals: unknown };
    };
    t.match(tool.structuredContent?.totals, whole, 'MCP');
  });
}
