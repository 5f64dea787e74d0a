/**
 * GET /api/analytics/cash-inflow-forecast through HTTP on the embedded engine:
 * receivables, payment delays, buckets, DSO and HHI against hand-computed values.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeFinancialDoc, freight, shortage, payment, creditNote, CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON } from '../fixtures/documents.ts';
import { financialDocs, tenantSettings } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { receivablesRollups } from '../../lib/analytics/receivables-rollup-kind.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml, paymentXml, requestXml, satAcuseXml } from '../helpers/cfdi-builder.ts';

export default async function cashInflowTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00'); // a Monday
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/cash-inflow-forecast';
  const get = (query: string, key = KEY_A) => h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
  const PERIOD = '?startDate=2026-01-01&endDate=2026-04-20'; // 110 days

  // Only the credit days are stored for A: every other parameter is the domain default (and says so).
  await tenantSettings(h.db).updateOne({ _id: TENANT_A }, { $set: { creditDaysByClient: { [CLIENT_COMPANY_2]: 60 } } }, { upsert: true });

  const paid = (client: string, date: string, paidOn: string) =>
    makeFinancialDoc({ tenant: TENANT_A, client, date: `${date}T12:00`, concepts: [freight(1_000)], payments: [payment(1_120, `${paidOn}T12:00`)] });
  // Payment history (delay = payment day − due day; 30 credit days, 60 for CLIENT_COMPANY_2):
  const h1 = paid(CLIENT_COMPANY, '2026-01-05', '2026-02-09'); // due 02-04: +5
  const h2 = paid(CLIENT_COMPANY, '2026-01-10', '2026-02-19'); // due 02-09: +10
  const h3 = paid(CLIENT_COMPANY, '2026-01-15', '2026-02-24'); // due 02-14: +10  → client median 10 (3 payments)
  const h4 = paid(CLIENT_COMPANY_2, '2026-01-02', '2026-03-05'); // due 03-03: +2
  // Open invoices as of 2026-04-20:
  const o1 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-04-01T12:00', concepts: [freight(10_000)] }); // 11,200; due 05-01, expected 05-11
  const o2 = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY_2,
    date: '2026-03-01T12:00',
    concepts: [freight(20_000)],
    payments: [payment(2_400, '2026-04-05T12:00')],
  }); // 22,400 − 2,400; due 04-30 (paid −25)
  const o3 = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_PERSON, date: '2026-02-01T12:00', concepts: [freight(5_000)] }); // 5,800; due 03-03, expected 03-08: overdue
  // Not open: cancelled, and settled by a credit note.
  const cancelled = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-04-05T12:00', concepts: [freight(1_000)], cancelled: true });
  const credited = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    date: '2026-03-10T12:00',
    concepts: [freight(1_000)],
    payments: [creditNote(1_120, '2026-03-20T12:00')],
  });
  // Settled by a credit note (no payment history): its 300 shortage deduction is not revenue (an indemnity is not a sale).
  const h5 = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY_2,
    date: '2026-01-20T12:00',
    concepts: [freight(1_000), shortage(300)],
    payments: [creditNote(1_420, '2026-01-25T12:00')],
  });
  // All delays: [−25, 2, 5, 10, 10] → portfolio median 5 (CLIENT_COMPANY_2 has 2 payments, CLIENT_PERSON none).
  const otherTenant = makeFinancialDoc({ tenant: TENANT_B, client: CLIENT_COMPANY, date: '2026-04-01T12:00', concepts: [freight(500_000)] });
  // B's history: three PPD invoices paid by complements 20 days after their due date, and three PUE invoices, paid
  // when issued (the ledger records that receipt at the invoice date, as the fixture does): no complement, no delay.
  const bPaid = (paymentMethod: 'PUE' | 'PPD', date: string, paidOn: string) =>
    makeFinancialDoc({ tenant: TENANT_B, client: CLIENT_COMPANY, date, paymentMethod, concepts: [freight(1_000)], payments: [payment(1_120, paidOn)] });
  const bHistory = [
    bPaid('PPD', '2026-01-05T12:00', '2026-02-24T12:00'), // due 02-04: +20
    bPaid('PPD', '2026-01-06T12:00', '2026-02-25T12:00'), // due 02-05: +20
    bPaid('PPD', '2026-01-07T12:00', '2026-02-26T12:00'), // due 02-06: +20
    bPaid('PUE', '2026-02-02T12:00', '2026-02-02T12:00'),
    bPaid('PUE', '2026-02-03T12:00', '2026-02-03T12:00'),
    bPaid('PUE', '2026-02-04T12:00', '2026-02-04T12:00'),
  ];
  await financialDocs(h.db).insertMany([h1, h2, h3, h4, h5, o1, o2, o3, cancelled, credited, otherTenant, ...bHistory].map(withDerivedFields));

  t.test('receivables, delays and weekly buckets', async (t) => {
    const res = await get(PERIOD);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body, { tenant: TENANT_A, computedAt: NOW.toISOString(), asOf: { instant: NOW.toISOString(), date: '2026-04-20' } });
    t.same(body.period, {
      startDate: '2026-01-01',
      endDate: '2026-04-20',
      days: 110,
      requestedEndDate: null,
      timeZone: 'America/Mexico_City',
      defaulted: false,
      maxDays: 366,
    });
    t.match(body.parameters, {
      bucket: 'week',
      creditDays: { default: 30, byClient: { [CLIENT_COMPANY_2]: 60 }, source: { default: 'default', byClient: 'tenant' } },
      paymentDelay: { minPaymentsForClientMedian: 3, historyFrom: '2026-01-01', historyTo: '2026-04-20', paymentsInHistory: 5, portfolioMedianDays: 5 },
      hhiBands: { unconcentratedBelow: 1500, highlyConcentratedAbove: 2500, singleClientFlagPct: 10, settingsSource: 'default' },
    });
    t.match(body.parameters.hhiBands.source, /Horizontal Merger Guidelines/);
    t.same(body.receivables, { openInvoices: 3, outstanding: 37_000, pastDue: { invoices: 1, amount: 5_800 }, notYetDue: { invoices: 2, amount: 31_200 } });
    t.same(body.forecast, {
      bucket: 'week',
      totalExpected: 37_000,
      overdue: { expected: 5_800, invoices: 1, oldestExpectedDate: '2026-03-08' },
      buckets: [
        { key: '2026-04-20', start: '2026-04-20', end: '2026-04-26', expected: 0, invoices: 0 },
        { key: '2026-04-27', start: '2026-04-27', end: '2026-05-03', expected: 0, invoices: 0 },
        { key: '2026-05-04', start: '2026-05-04', end: '2026-05-10', expected: 20_000, invoices: 1 },
        { key: '2026-05-11', start: '2026-05-11', end: '2026-05-17', expected: 11_200, invoices: 1 },
      ],
    });
    t.match(body.clients, { total: 3, listed: 3, limit: 20 });
    t.same(body.clients.data, [
      {
        client: CLIENT_COMPANY_2,
        clientName: o2.clientName,
        openInvoices: 1,
        outstanding: 20_000,
        pastDue: 0,
        creditDays: 60,
        creditDaysSource: 'client',
        delayDays: 5,
        delayBasis: 'portfolio',
        paymentsInHistory: 2,
        nextExpectedDate: '2026-05-05',
      },
      {
        client: CLIENT_COMPANY,
        clientName: o1.clientName,
        openInvoices: 1,
        outstanding: 11_200,
        pastDue: 0,
        creditDays: 30,
        creditDaysSource: 'default',
        delayDays: 10,
        delayBasis: 'client',
        paymentsInHistory: 3,
        nextExpectedDate: '2026-05-11',
      },
      {
        client: CLIENT_PERSON,
        clientName: o3.clientName,
        openInvoices: 1,
        outstanding: 5_800,
        pastDue: 5_800,
        creditDays: 30,
        creditDaysSource: 'default',
        delayDays: 5,
        delayBasis: 'portfolio',
        paymentsInHistory: 0,
        nextExpectedDate: null,
      },
    ]);
    t.same(
      body.items.data.map((i: { id: string }) => i.id),
      [o3.id, o2.id, o1.id],
      'by expected date',
    );
    t.match(body.items.data[1], {
      uuid: o2.invoice.uuid,
      outstanding: 20_000,
      dueDate: '2026-04-30',
      expectedDate: '2026-05-05',
      pastDue: false,
      overdue: false,
    });
    t.match(body.items.data[0], { dueDate: '2026-03-03', expectedDate: '2026-03-08', pastDue: true, overdue: true });
    // DSO = 37,000 ÷ 46,420 (credit sales: non-cancelled Totals in the period) × 110 = 87.677…
    t.same(body.dso, { value: 87.68, accountsReceivable: 37_000, creditSales: 46_420, days: 110 });
    // Revenue (SubTotal − discount − shortage): CLIENT_COMPANY_2 22,000, CLIENT_COMPANY 14,000, CLIENT_PERSON 5,000 of 41,000.
    // HHI = 53.6585² + 34.1463² + 12.1951² = 4,193.93.
    t.same(body.concentration, {
      hhi: 4_193.93,
      band: 'high',
      totalRevenue: 41_000,
      clients: 3,
      flaggedClients: 3,
      explanation: null,
      shares: [
        { client: CLIENT_COMPANY_2, revenue: 22_000, sharePct: 53.6585, flagged: true },
        { client: CLIENT_COMPANY, revenue: 14_000, sharePct: 34.1463, flagged: true },
        { client: CLIENT_PERSON, revenue: 5_000, sharePct: 12.1951, flagged: true },
      ],
    });
  });

  t.test('monthly buckets, one client (HHI 10,000), limit', async (t) => {
    const res = await get(`${PERIOD}&bucket=month&client=${CLIENT_COMPANY}&limit=1`);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.same(body.forecast.buckets, [
      { key: '2026-04', start: '2026-04-20', end: '2026-04-30', expected: 0, invoices: 0 },
      { key: '2026-05', start: '2026-05-01', end: '2026-05-31', expected: 11_200, invoices: 1 },
    ]);
    t.match(body.items, { total: 1, listed: 1, limit: 1 });
    t.match(body.concentration, { hhi: 10_000, band: 'high', clients: 1, shares: [{ client: CLIENT_COMPANY, sharePct: 100 }] });
    // With a client filter a client with 3 payments or more still takes its own median.
    t.match(body.clients, { total: 1, listed: 1, limit: 1, data: [{ client: CLIENT_COMPANY, delayDays: 10, delayBasis: 'client' }] });
  });

  /**
   * A client with fewer than 3 payments takes the portfolio median, every client's (5: [−25, 2, 5, 10, 10]), with a
   * client filter as without: CLIENT_COMPANY_2's own two delays (median −11.5) and CLIENT_PERSON's none are not a
   * portfolio. o2 is due 04-30 and expected 05-05, o3 due 03-03 and expected 03-08 (overdue), filtered or not.
   */
  const oneClientKeepsThePortfolioMedian = async (t: Test, how: string): Promise<void> => {
    for (const [client, item, next, payments] of [
      [
        CLIENT_COMPANY_2,
        { id: o2.id, dueDate: '2026-04-30', expectedDate: '2026-05-05', delayDays: 5, delayBasis: 'portfolio', overdue: false },
        '2026-05-05',
        2,
      ],
      [CLIENT_PERSON, { id: o3.id, dueDate: '2026-03-03', expectedDate: '2026-03-08', delayDays: 5, delayBasis: 'portfolio', overdue: true }, null, 0],
    ] as const) {
      const res = await get(`${PERIOD}&client=${client}`);
      assertConforms(t, res, 'GET', ROUTE);
      const body = res.json();
      t.match(body.parameters.paymentDelay, { paymentsInHistory: 5, portfolioMedianDays: 5 }, `${client} ${how}`);
      t.match(body.items.data, [item], `${client} ${how}`);
      t.match(body.clients.data, [{ client, delayDays: 5, delayBasis: 'portfolio', paymentsInHistory: payments, nextExpectedDate: next }], `${client} ${how}`);
    }
  };
  t.test('one client with fewer than 3 payments: the portfolio median of every client (from the documents)', (t) =>
    oneClientKeepsThePortfolioMedian(t, 'from the documents'),
  );

  t.test('a period without invoices: null + reason, never NaN', async (t) => {
    const res = await get('?startDate=2025-01-01&endDate=2025-01-31');
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body.asOf, { date: '2025-01-31' }, 'as of the end of a past period');
    t.same(body.receivables, { openInvoices: 0, outstanding: 0, pastDue: { invoices: 0, amount: 0 }, notYetDue: { invoices: 0, amount: 0 } });
    t.match(body.dso, { value: null, reason: /credit sales/, accountsReceivable: 0, creditSales: 0 });
    t.match(body.concentration, { hhi: null, band: null, totalRevenue: 0, explanation: /revenue is 0/ });
    t.same(body.forecast.buckets, [{ key: '2025-01-31', start: '2025-01-31', end: '2025-02-02', expected: 0, invoices: 0 }]);
  });

  t.test('as of a past day: later payments do not count yet', async (t) => {
    // On 2026-04-04 o2 was still fully open (its 2,400 came on 04-05) and o1 existed.
    const body = (await get('?startDate=2026-01-01&endDate=2026-04-04')).json();
    t.equal(body.asOf.date, '2026-04-04');
    t.match(body.receivables, { openInvoices: 3, outstanding: 11_200 + 22_400 + 5_800 });
  });

  t.test('default period and tenant isolation', async (t) => {
    const res = await get('');
    assertConforms(t, res, 'GET', ROUTE);
    t.match(res.json().period, { startDate: '2026-01-21', endDate: '2026-04-20', days: 90, defaulted: true });
    const b = await get(PERIOD, KEY_B);
    assertConforms(t, b, 'GET', ROUTE);
    t.match(b.json(), { tenant: TENANT_B, receivables: { openInvoices: 1, outstanding: 560_000 }, concentration: { hhi: 10_000 } });
  });

  t.test('parameter validation', async (t) => {
    const cases: [string, RegExp][] = [
      ['?bucket=day', /bucket must be one of: week, month/],
      ['?client=nope', /client/],
      ['?asOf=2026-02-30', /asOf/],
      ['?asOf=yesterday', /asOf/],
    ];
    for (const [query, detail] of cases) {
      const res = await get(query);
      t.equal(res.statusCode, 400, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(res.json().error.details.join(' | '), detail, query);
    }
  });

  // Last: it builds the kept receivables, which the subtests above read from the documents.
  t.test("a PUE invoice's receipt is no payment complement: the delay reads PPD invoices only", async (t) => {
    // B's client has three complements, each 20 days late: its own median, +20 (the PUE receipts, 30 days before their
    // due dates, would make it median(−30, −30, −30, 20, 20, 20) = −5). Its open invoice of 04-01 is due 05-01: 05-21.
    const expected = {
      paymentDelay: { paymentsInHistory: 3, portfolioMedianDays: 20 },
      client: { client: CLIENT_COMPANY, delayDays: 20, delayBasis: 'client', paymentsInHistory: 3, nextExpectedDate: '2026-05-21' },
      item: { id: otherTenant.id, dueDate: '2026-05-01', expectedDate: '2026-05-21' },
    };
    const check = (t: Test, body: { parameters: { paymentDelay: object }; clients: { data: object[] }; items: { data: object[] } }, how: string) => {
      t.match(body.parameters.paymentDelay, expected.paymentDelay, how);
      t.match(body.clients.data, [expected.client], how);
      t.match(body.items.data, [expected.item], how);
    };
    const fromDocuments = await get(PERIOD, KEY_B);
    assertConforms(t, fromDocuments, 'GET', ROUTE);
    check(t, fromDocuments.json(), 'from the documents');
    await receivablesRollups.rebuild(h.db);
    t.ok(await receivablesRollups.ready(h.db), 'the kept receivables are built');
    check(t, (await get(PERIOD, KEY_B)).json(), 'from the kept totals');
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_B });
    const out = (await client.callTool({ name: 'getCashInflowForecast', arguments: { startDate: '2026-01-01', endDate: '2026-04-20' } })) as {
      isError?: boolean;
      structuredContent?: Parameters<typeof check>[1];
    };
    t.notOk(out.isError);
    check(t, out.structuredContent!, 'MCP');
  });

  t.test('one client with fewer than 3 payments: the portfolio median of every client (from the kept totals)', async (t) => {
    t.ok(await receivablesRollups.ready(h.db), 'the kept receivables are built');
    await oneClientKeepsThePortfolioMedian(t, 'from the kept totals');
  });

  t.test('payment delays as of a past day: cancellations after it do not count yet (documents, then kept totals)', (t) => delaysJudgedAsOf(t));
  t.test('revenue as of a past day (DSO, shares, HHI): invoice cancellations after it do not count yet (documents, then kept totals)', (t) =>
    revenueJudgedAsOf(t),
  );
}

/**
 * The revenue of an answer as of a past day — the credit sales of DSO and each client's share, the HHI and the 10%
 * flag — judges each invoice cancelled or not as of that day, as the open invoices do: an invoice whose cancellation
 * took effect later was still revenue then. Imported PPD CFDI of September (Mexico City wall times; Total = amount +
 * 16% VAT − 4% retained = 1.12 × amount; revenue = SubTotal − Descuento = amount); period 09-01..09-30 (30 days):
 *   C1: i1 09-05 4,800 (Total 5,376; a complement of 2,688 on 09-25); i2 09-10 2,000 (Total 2,240)
 *   C2: i3 09-15   200 (Total   224);                                 i4 09-20 1,000 (Total 1,120)
 * A (nothing cancelled yet): revenue C1 6,800, C2 1,200 = 8,000 → shares 85% and 15% (both flagged, ≥ 10%);
 *   HHI 85² + 15² = 7,225 + 225 = 7,450 (high). Credit sales 5,376 + 2,240 + 224 + 1,120 = 8,960; receivables
 *   (5,376 − 2,688) + 2,240 + 224 + 1,120 = 6,272; DSO 6,272 ÷ 8,960 × 30 = 0.7 × 30 = 21.
 * i2 cancelled on 10-20 (request + SAT acknowledgement 202: in effect at once, whatever the amount):
 * B (from 10-20 on): revenue C1 4,800, C2 1,200 = 6,000 → 80% and 20%; HHI 6,400 + 400 = 6,800 (high). Credit sales
 *   5,376 + 224 + 1,120 = 6,720; receivables 2,688 + 224 + 1,120 = 4,032; DSO 4,032 ÷ 6,720 × 30 = 0.6 × 30 = 18.
 * i4 cancelled on 11-05 (202), after the kept totals are built (the marks recompute its day):
 * C (from 11-05 on): revenue C1 4,800, C2 200 = 5,000 → 96% and 4% (C2 no longer flagged); HHI 9,216 + 16 = 9,232.
 *   Credit sales 5,376 + 224 = 5,600; receivables 2,688 + 224 = 2,912; DSO 2,912 ÷ 5,600 × 30 = 0.52 × 30 = 15.6.
 * As of 09-30 (the default: the end of endDate) and 10-15 the answer stays A throughout; as of 10-20 and 11-04 it is
 * B once i2 is cancelled; as of 11-05 and today C once i4 is.
 */
async function revenueJudgedAsOf(t: Test): Promise<void> {
  const NOW = new Date('2026-11-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/cash-inflow-forecast';
  const C1 = 'GDI920315QR4';
  const C2 = 'TIN0902115Z3';
  const U = (n: number): string => `7E7E0000-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const post = async (name: string, content: string): Promise<void> => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { files: [{ name, content }] },
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json().files, [{ status: 'created' }], name);
  };
  const inv = (n: number, receiver: string, fecha: string, amount: number): Promise<void> =>
    post(
      `i${n}.xml`,
      invoiceXml({
        issuer: TENANT_A,
        receiver,
        uuid: U(n),
        fecha,
        method: 'PPD',
        lines: [{ desc: 'Flete', amount, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] }],
      }).xml,
    );
  const cancel = async (n: number, day: string): Promise<void> => {
    await post(`solicitud${n}.xml`, requestXml({ issuer: TENANT_A, fecha: `${day}T09:00:00`, folios: [{ uuid: U(n), motive: '02' }] }));
    await post(`acuse${n}.xml`, satAcuseXml({ issuer: TENANT_A, fecha: `${day}T10:00:00`, folios: [{ uuid: U(n), code: '202' }] }));
  };
  await inv(1, C1, '2026-09-05T10:00:00', 4_800);
  await post(
    'p61.xml',
    paymentXml({
      issuer: TENANT_A,
      receiver: C1,
      uuid: U(61),
      fecha: '2026-09-25T12:00:00',
      invoiceUuid: U(1),
      currency: 'MXN',
      exchangeRate: 1,
      before: 5_376,
      paid: 2_688,
    }),
  );
  await inv(2, C1, '2026-09-10T10:00:00', 2_000);
  await inv(3, C2, '2026-09-15T10:00:00', 200);
  await inv(4, C2, '2026-09-20T10:00:00', 1_000);

  type Expected = { revenue: [number, number]; share: [number, number]; flagged: number; hhi: number; creditSales: number; receivables: number; dso: number };
  const A: Expected = { revenue: [6_800, 1_200], share: [85, 15], flagged: 2, hhi: 7_450, creditSales: 8_960, receivables: 6_272, dso: 21 };
  const B: Expected = { revenue: [4_800, 1_200], share: [80, 20], flagged: 2, hhi: 6_800, creditSales: 6_720, receivables: 4_032, dso: 18 };
  const C: Expected = { revenue: [4_800, 200], share: [96, 4], flagged: 1, hhi: 9_232, creditSales: 5_600, receivables: 2_912, dso: 15.6 };
  const check = async (query: string, e: Expected, how: string): Promise<void> => {
    const res = await h.app.inject({ method: 'GET', url: `${ROUTE}?${query}`, headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.same(body.dso, { value: e.dso, accountsReceivable: e.receivables, creditSales: e.creditSales, days: 30 }, `${how}: DSO ${query}`);
    t.match(
      body.concentration,
      {
        hhi: e.hhi,
        band: 'high',
        totalRevenue: e.revenue[0] + e.revenue[1],
        clients: 2,
        flaggedClients: e.flagged,
        shares: [
          { client: C1, revenue: e.revenue[0], sharePct: e.share[0], flagged: true },
          { client: C2, revenue: e.revenue[1], sharePct: e.share[1], flagged: e.share[1] >= 10 },
        ],
      },
      `${how}: concentration ${query}`,
    );
  };
  const PERIOD = 'startDate=2026-09-01&endDate=2026-09-30';
  const SEP30 = PERIOD; // asOf: the end of endDate
  const OCT15 = `${PERIOD}&asOf=2026-10-15`;
  const OCT20 = `${PERIOD}&asOf=2026-10-20`;
  const NOV4 = `${PERIOD}&asOf=2026-11-04`;
  const NOV5 = `${PERIOD}&asOf=2026-11-05`;
  const TODAY = `${PERIOD}&asOf=2026-11-20`; // now

  await check(OCT15, A, 'from the documents, before any cancellation');
  await check(TODAY, A, 'from the documents, before any cancellation');
  await cancel(2, '2026-10-20');
  await check(SEP30, A, 'from the documents, i2 cancelled on 10-20');
  await check(OCT15, A, 'from the documents, i2 cancelled on 10-20');
  await check(OCT20, B, 'from the documents, i2 cancelled on 10-20');
  await check(TODAY, B, 'from the documents, i2 cancelled on 10-20');

  await receivablesRollups.rebuild(h.db);
  t.ok(await receivablesRollups.ready(h.db), 'the kept receivables are built');
  await check(SEP30, A, 'from the kept totals, i2 cancelled on 10-20');
  await check(OCT15, A, 'from the kept totals, i2 cancelled on 10-20');
  await check(OCT20, B, 'from the kept totals, i2 cancelled on 10-20');
  await check(NOV4, B, 'from the kept totals, i2 cancelled on 10-20');
  await check(TODAY, B, 'from the kept totals, i2 cancelled on 10-20');

  // Written while built: the marks recompute the kept day of i4.
  await cancel(4, '2026-11-05');
  await check(SEP30, A, 'from the kept totals, i4 cancelled on 11-05');
  await check(OCT15, A, 'from the kept totals, i4 cancelled on 11-05');
  await check(NOV4, B, 'from the kept totals, i4 cancelled on 11-05');
  await check(NOV5, C, 'from the kept totals, i4 cancelled on 11-05');
  await check(TODAY, C, 'from the kept totals, i4 cancelled on 11-05');
  t.same((await receivablesRollups.verify(h.db, TENANT_A)).mismatched, [], 'every kept day equals its documents');

  await receivablesRollups.forget(h.db);
  t.notOk(await receivablesRollups.ready(h.db), 'forgotten: the documents again');
  await check(SEP30, A, 'from the documents, i4 cancelled on 11-05');
  await check(OCT15, A, 'from the documents, i4 cancelled on 11-05');
  await check(NOV4, B, 'from the documents, i4 cancelled on 11-05');
  await check(NOV5, C, 'from the documents, i4 cancelled on 11-05');
  await check(TODAY, C, 'from the documents, i4 cancelled on 11-05');
}

/**
 * The payment delays of an answer as of a past day judge each payment (and its invoice) cancelled or not as of that
 * day, as the open invoices do: a cancellation that took effect later changes the answers of later days only. Imported
 * CFDI (Mexico City wall times, 30 credit days, delay = payment day − due day):
 *   C1: i1 08-01 (due 08-31) paid 09-02: +2; i2 08-02 (due 09-01) paid 09-05: +4; i3 08-03 (due 09-02) paid 09-11: +9
 *   C2: i4 08-04 (due 09-03) paid 09-23: +20; i5 08-05 (due 09-04) paid 10-04: +30
 *   open: i10 of C1, 10-20, due 11-19.
 * A (no cancellation yet): C1 median(2, 4, 9) = 4 (client); portfolio median(2, 4, 9, 20, 30) = 9; 5 payments;
 *   i10 expected 11-19 + 4 = 11-23.
 * p9 (the +9 complement) cancelled on 11-05 (request + SAT acknowledgement 201):
 * B (from 11-05 on): C1 has 2 payments → portfolio median(2, 4, 20, 30) = 12; 4 payments; i10 expected 11-19 + 12 = 12-01.
 * Invoice i1 (C1's +2) cancelled on 11-06, after the kept totals are built (the marks recompute its days):
 * C (from 11-06 on): C1 has 1 payment → portfolio median(4, 20, 30) = 20; 3 payments; i10 expected 11-19 + 20 = 12-09.
 * As of 10-31 (and 11-04) the answer stays A throughout; as of 11-05 it is B, then as of now C.
 */
async function delaysJudgedAsOf(t: Test): Promise<void> {
  const NOW = new Date('2026-11-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/cash-inflow-forecast';
  const C1 = 'GDI920315QR4';
  const C2 = 'TIN0902115Z3';
  const U = (n: number): string => `5EC0C000-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const post = async (name: string, content: string): Promise<void> => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { files: [{ name, content }] },
    });
    t.equal(res.statusCode, 200, res.body);
    t.match(res.json().files, [{ status: 'created' }], name);
  };
  const line = (amount: number) => ({
    desc: 'Flete',
    amount,
    transfers: [{ tax: '002' as const, rate: 0.16 }],
    retentions: [{ tax: '002' as const, rate: 0.04 }],
  });
  // Totals of 1,120 (1,000 + 16% VAT − 4% retained), i1's 896 (800): up to 1,000 MXN a cancellation needs no receiver's acceptance.
  const inv = (n: number, receiver: string, fecha: string, amount = 1_000): Promise<void> =>
    post(`i${n}.xml`, invoiceXml({ issuer: TENANT_A, receiver, uuid: U(n), fecha, method: 'PPD', lines: [line(amount)] }).xml);
  const pay = (n: number, invoice: number, receiver: string, fecha: string, total = 1_120): Promise<void> =>
    post(
      `p${n}.xml`,
      paymentXml({ issuer: TENANT_A, receiver, uuid: U(n), fecha, invoiceUuid: U(invoice), currency: 'MXN', exchangeRate: 1, before: total, paid: total }),
    );
  const cancel = async (n: number, day: string): Promise<void> => {
    await post(`solicitud${n}.xml`, requestXml({ issuer: TENANT_A, fecha: `${day}T09:00:00`, folios: [{ uuid: U(n), motive: '02' }] }));
    await post(`acuse${n}.xml`, satAcuseXml({ issuer: TENANT_A, fecha: `${day}T10:00:00`, folios: [{ uuid: U(n), code: '201' }] }));
  };
  await inv(1, C1, '2026-08-01T10:00:00', 800);
  await pay(61, 1, C1, '2026-09-02T12:00:00', 896);
  await inv(2, C1, '2026-08-02T10:00:00');
  await pay(62, 2, C1, '2026-09-05T12:00:00');
  await inv(3, C1, '2026-08-03T10:00:00');
  await pay(63, 3, C1, '2026-09-11T12:00:00');
  await inv(4, C2, '2026-08-04T10:00:00');
  await pay(64, 4, C2, '2026-09-23T12:00:00');
  await inv(5, C2, '2026-08-05T10:00:00');
  await pay(65, 5, C2, '2026-10-04T12:00:00');
  await inv(10, C1, '2026-10-20T10:00:00');

  // c1Open: C1's invoices open then (i10, and i3 again once its payment is cancelled: 1,120 each).
  type Expected = { payments: number; portfolio: number; c1: number; c1Payments: number; basis: 'client' | 'portfolio'; expectedDate: string; c1Open: number };
  const A: Expected = { payments: 5, portfolio: 9, c1: 4, c1Payments: 3, basis: 'client', expectedDate: '2026-11-23', c1Open: 1 };
  const B: Expected = { payments: 4, portfolio: 12, c1: 12, c1Payments: 2, basis: 'portfolio', expectedDate: '2026-12-01', c1Open: 2 };
  const C: Expected = { payments: 3, portfolio: 20, c1: 20, c1Payments: 1, basis: 'portfolio', expectedDate: '2026-12-09', c1Open: 2 };
  const check = async (query: string, e: Expected, how: string): Promise<void> => {
    const res = await h.app.inject({ method: 'GET', url: `${ROUTE}?${query}`, headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body.parameters.paymentDelay, { paymentsInHistory: e.payments, portfolioMedianDays: e.portfolio }, `${how}: ${query}`);
    t.match(
      body.clients.data,
      [{ client: C1, openInvoices: e.c1Open, outstanding: 1_120 * e.c1Open, delayDays: e.c1, delayBasis: e.basis, paymentsInHistory: e.c1Payments }],
      `${how}: ${query}`,
    );
    t.match(
      body.items.data.find((i: { uuid: string }) => i.uuid === U(10)),
      { dueDate: '2026-11-19', expectedDate: e.expectedDate, delayDays: e.c1, delayBasis: e.basis },
      `${how}: i10 ${query}`,
    );
  };
  const OCT31 = 'startDate=2026-08-01&endDate=2026-10-31&asOf=2026-10-31';
  const NOV4 = 'startDate=2026-08-01&endDate=2026-11-20&asOf=2026-11-04';
  const NOV5 = 'startDate=2026-08-01&endDate=2026-11-20&asOf=2026-11-05';
  const TODAY = 'startDate=2026-08-01&endDate=2026-11-20';

  await check(OCT31, A, 'from the documents, before any cancellation');
  await cancel(63, '2026-11-05');
  await check(OCT31, A, 'from the documents, p9 cancelled on 11-05');
  await check(NOV4, A, 'from the documents, p9 cancelled on 11-05');
  await check(NOV5, B, 'from the documents, p9 cancelled on 11-05');
  await check(TODAY, B, 'from the documents, p9 cancelled on 11-05');

  await receivablesRollups.rebuild(h.db);
  t.ok(await receivablesRollups.ready(h.db), 'the kept receivables are built');
  await check(OCT31, A, 'from the kept totals, p9 cancelled on 11-05');
  await check(NOV4, A, 'from the kept totals, p9 cancelled on 11-05');
  await check(NOV5, B, 'from the kept totals, p9 cancelled on 11-05');
  await check(TODAY, B, 'from the kept totals, p9 cancelled on 11-05');

  // Written while built: the marks recompute the kept days it touches.
  await cancel(1, '2026-11-06');
  await check(OCT31, A, 'from the kept totals, i1 cancelled on 11-06');
  await check(NOV5, B, 'from the kept totals, i1 cancelled on 11-06');
  await check(TODAY, C, 'from the kept totals, i1 cancelled on 11-06');
  t.same((await receivablesRollups.verify(h.db, TENANT_A)).mismatched, [], 'every kept day equals its documents');

  await receivablesRollups.forget(h.db);
  t.notOk(await receivablesRollups.ready(h.db), 'forgotten: the documents again');
  await check(OCT31, A, 'from the documents, i1 cancelled on 11-06');
  await check(NOV5, B, 'from the documents, i1 cancelled on 11-06');
  await check(TODAY, C, 'from the documents, i1 cancelled on 11-06');
}
