/**
 * Receivables as of a date (issue 36) through HTTP and MCP, on imported CFDI XML: what each client
 * owed at the end of 31 October, asked on 15 November, and what it owes today.
 *
 * Hand-computed (tenant default credit days 30; client C2 60; amounts = CFDI Totals, net of the 4%):
 *   I1 C1 2026-06-15 freight 10,000 → 11,200 PPD; paid 5,000 on 09-10 and 6,200 on 11-05.
 *      Due 07-15. On 10-31: 6,200 open, 108 days past due (16 + 31 + 30 + 31) → over 90. Today: paid.
 *   I2 C1 2026-09-20 freight 5,000 → 5,600. Due 10-20. On 10-31: 11 days → 1–30. Today: 26 → 1–30.
 *   I3 C2 2026-08-01 freight 20,000 → 22,400. Due 09-30 (60 days). On 10-31: 31 → 31–60. Today: 46.
 *   I4 C2 2026-10-25 freight 1,000 → 1,120. Due 12-24: current on both days.
 *   I5 C1 2026-11-02 freight 2,000 → 2,240. Emitted after 10-31: only today's answer has it (current).
 *   I6 C1 2026-07-20 freight 2,000 → 2,240, cancelled on 11-03 (SAT acknowledgement 202). Due 08-19.
 *      On 10-31 still open: 73 days → 61–90. Today: cancelled, not owed.
 *   I7 FOREIGN 2026-10-10 USD 1,000 at 18.50, IVA 0% → 18,500 MXN. Due 11-09. On 10-31: current (−9);
 *      today 6 days → 1–30.
 * On 10-31: current 19,620 (I4, I7), 1–30 5,600, 31–60 22,400, 61–90 2,240, over 90 6,200; total
 * 56,060 in 6 invoices; clients C2 23,520, FOREIGN 18,500, C1 14,040.
 * Today: current 3,360 (I4, I5), 1–30 24,100 (I2, I7), 31–60 22,400; total 49,860 in 5 invoices.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { saveTenantSettings, getTenantSettings } from '../../lib/settings/settings-repo.ts';
import { invoiceXml, paymentXml, requestXml, satAcuseXml } from '../helpers/cfdi-builder.ts';

export default async function receivablesAgingTests(t: Test): Promise<void> {
  const NOW = new Date('2026-11-15T18:00:00Z');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const C1 = 'GDI920315QR4';
  const C2 = 'TIN0902115Z3';
  const FOREIGN = 'XEXX010101000';

  type Json = Record<string, any>;
  interface Api {
    importFile(name: string, xml: string): Promise<Json>;
    aging(query: Record<string, string | number>): Promise<{ status: number; body: Json }>;
    forecast(query: Record<string, string | number>): Promise<{ status: number; body: Json }>;
    list(query: Record<string, string | number>): Promise<{ status: number; body: Json }>;
  }

  const qs = (q: Record<string, string | number>) => new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();

  function httpApi(t: Test, key: string): Api {
    const get = async (path: string, q: Record<string, string | number>) => {
      const res = await h.app.inject({ method: 'GET', url: `${path}?${qs(q)}`, headers: { 'x-api-key': key } });
      assertConforms(t, res, 'GET', path);
      return { status: res.statusCode, body: res.json<Json>() };
    };
    return {
      async importFile(name, xml) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/api/imports',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          payload: { files: [{ name, content: xml }] },
        });
        return res.json<Json>().files[0];
      },
      aging: (q) => get('/api/receivables/aging', q),
      forecast: (q) => get('/api/analytics/cash-inflow-forecast', q),
      list: (q) => get('/api/financial-docs', q),
    };
  }

  async function mcpApi(t: Test, key: string): Promise<Api> {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key });
    const call = async (name: string, args: Json) => {
      const r = (await client.callTool({ name, arguments: args })) as unknown as { structuredContent: Json; isError?: boolean };
      return { status: r.isError ? (r.structuredContent.error as Json).code : 200, body: r.structuredContent };
    };
    return {
      importFile: async (name, xml) => (await call('importDocuments', { body: { files: [{ name, content: xml }] } })).body.files[0],
      aging: (q) => call('getReceivablesAging', q),
      forecast: (q) => call('getCashInflowForecast', q),
      list: (q) => call('listFinancialDocs', q),
    };
  }

  const bucket = (invoices: number, amount: number) => ({ invoices, amount });

  async function scenario(t: Test, api: Api, tenant: string, run: number): Promise<void> {
    const uuid = (n: number) => `7A3C4D5E-00${run}${n}-4000-8000-0000000000${run}${n}`;
    const freight = (amount: number) => ({
      desc: 'Flete Tula - Salamanca',
      amount,
      transfers: [{ tax: '002' as const, rate: 0.16 }],
      retentions: [{ tax: '002' as const, rate: 0.04 }],
    });
    await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, tenant)), creditDaysByClient: { [C2]: 60 } });
    const invoices: [number, string, string, number][] = [
      [1, C1, '2026-06-15T10:00:00', 10_000],
      [2, C1, '2026-09-20T10:00:00', 5_000],
      [3, C2, '2026-08-01T10:00:00', 20_000],
      [4, C2, '2026-10-25T10:00:00', 1_000],
      [5, C1, '2026-11-02T10:00:00', 2_000],
      [6, C1, '2026-07-20T10:00:00', 2_000],
    ];
    for (const [n, receiver, fecha, amount] of invoices) {
      const x = invoiceXml({ issuer: tenant, receiver, uuid: uuid(n), fecha, method: 'PPD', lines: [freight(amount)] });
      t.match(await api.importFile(`i${n}.xml`, x.xml), { status: 'created' }, `I${n}`);
    }
    const usd = invoiceXml({
      issuer: tenant,
      receiver: FOREIGN,
      receiverName: 'ACME LOGISTICS INC',
      uuid: uuid(7),
      fecha: '2026-10-10T10:00:00',
      method: 'PPD',
      currency: 'USD',
      exchangeRate: 18.5,
      lines: [{ desc: 'Flete internacional, tramo nacional', amount: 1_000, transfers: [{ tax: '002', rate: 0 }] }],
    });
    t.match(await api.importFile('i7.xml', usd.xml), { status: 'created' });
    const pay = (n: number, fecha: string, before: number, paid: number) =>
      paymentXml({ issuer: tenant, receiver: C1, uuid: uuid(n), fecha, invoiceUuid: uuid(1), currency: 'MXN', exchangeRate: 1, before, paid });
    t.match(await api.importFile('p8.xml', pay(8, '2026-09-10T12:00:00', 11_200, 5_000)), { status: 'created' });
    t.match(await api.importFile('p9.xml', pay(9, '2026-11-05T12:00:00', 6_200, 6_200)), { status: 'created' });
    t.match(await api.importFile('acuse.xml', satAcuseXml({ issuer: tenant, fecha: '2026-11-03T11:00:00', folios: [{ uuid: uuid(6), code: '202' }] })), {
      status: 'created',
    });

    const october = await api.aging({ asOf: '2026-10-31', limit: 3 });
    t.equal(october.status, 200);
    t.match(october.body, {
      tenant,
      asOf: { date: '2026-10-31' },
      filters: { client: null, asOf: '2026-10-31' },
      totals: {
        openInvoices: 6,
        outstanding: 56_060,
        buckets: {
          current: bucket(2, 19_620),
          days1to30: bucket(1, 5_600),
          days31to60: bucket(1, 22_400),
          days61to90: bucket(1, 2_240),
          over90: bucket(1, 6_200),
        },
      },
      parameters: { creditDays: { default: 30, byClient: { [C2]: 60 } } },
    });
    t.same(
      october.body.clients.data.map((c: Json) => [c.client, c.openInvoices, c.outstanding, c.creditDays]),
      [
        [C2, 2, 23_520, 60],
        [FOREIGN, 1, 18_500, 30],
        [C1, 3, 14_040, 30],
      ],
      'clients by outstanding',
    );
    t.match(october.body.clients.data[2].buckets, {
      over90: bucket(1, 6_200),
      days61to90: bucket(1, 2_240),
      days1to30: bucket(1, 5_600),
      current: bucket(0, 0),
    });
    t.same(
      october.body.items.data.map((i: Json) => [i.uuid, i.dueDate, i.daysPastDue, i.bucket, i.outstanding]),
      [
        [uuid(1), '2026-07-15', 108, 'over90', 6_200],
        [uuid(6), '2026-08-19', 73, 'days61to90', 2_240],
        [uuid(3), '2026-09-30', 31, 'days31to60', 22_400],
      ],
      'the oldest first, capped by limit',
    );
    t.match(october.body.items, { total: 6, listed: 3, limit: 3 });

    const usdOnly = await api.aging({ asOf: '2026-10-31', client: FOREIGN });
    t.match(
      usdOnly.body.items.data,
      [{ uuid: uuid(7), currency: 'USD', exchangeRate: 18.5, outstanding: 18_500, daysPastDue: -9, bucket: 'current' }],
      'USD at its own rate',
    );
    t.match(usdOnly.body.filters, { client: FOREIGN });

    const today = await api.aging({});
    t.match(today.body, {
      asOf: { date: '2026-11-15', instant: NOW.toISOString() },
      totals: {
        openInvoices: 5,
        outstanding: 49_860,
        buckets: { current: bucket(2, 3_360), days1to30: bucket(2, 24_100), days31to60: bucket(1, 22_400), over90: bucket(0, 0) },
      },
    });

    const tomorrow = await api.aging({ asOf: '2026-11-16' });
    t.equal(tomorrow.status, 200);
    t.match(
      tomorrow.body,
      { filters: { asOf: '2026-11-16' }, asOf: { date: '2026-11-15', instant: NOW.toISOString() } },
      'a later day: the balances of now, both days named',
    );
    t.same(tomorrow.body.totals, today.body.totals);

    const listed = async (q: Record<string, string | number>) => {
      const page = await api.list({ limit: 100, ...q });
      t.equal(page.status, 200);
      return page.body.data.map((d: Json) => d.id).sort();
    };
    const ids = (...ns: number[]) => ns.map((n) => `${tenant}-CFDI-${uuid(n)}`).sort();
    t.same(await listed({ openAsOf: '2026-10-31' }), ids(1, 2, 3, 4, 6, 7), 'the list: open at the end of 31 October');
    t.same(await listed({ openAsOf: '2026-11-15' }), ids(2, 3, 4, 5, 7), 'open today');
    t.same(await listed({ openAsOf: '2026-10-31', client: C1, endDate: '2026-08-31' }), ids(1, 6), 'with the other filters');
    t.same(await listed({ openAsOf: '2026-06-15' }), ids(1), 'on the day of the first invoice');
    t.same(await listed({ openAsOf: '2026-06-14' }), [], 'and before it');
    t.same(await listed({ openAsOf: '2027-01-31' }), ids(2, 3, 4, 5, 7), 'a later day: open now');

    const forecast = await api.forecast({ startDate: '2026-08-01', endDate: '2026-11-15', asOf: '2026-10-31', bucket: 'month' });
    t.equal(forecast.status, 200);
    t.match(forecast.body, { asOf: { date: '2026-10-31' }, receivables: { openInvoices: 6, outstanding: 56_060 } }, 'the forecast from the same day');
    t.match(
      (await api.forecast({ asOf: '2026-12-01' })).body,
      { asOf: { date: '2026-11-15' }, receivables: { openInvoices: 5, outstanding: 49_860 } },
      'a later day: now',
    );
  }

  /**
   * J1 C1 2026-10-05 freight 1,000 → 1,120 (+ IVA 160 − 4% 40) PPD, due 11-04; paid whole on 10-20 by a complement
   * the SAT cancelled on 11-04 (a request and its acknowledgement). On 10-31 the payment counted: nothing open,
   * before and after the cancellation arrived. Today (11-15): 1,120 open again, 11 days past due → 1–30.
   */
  async function cancelledAfterTheDay(t: Test, api: Api, tenant: string, run: number): Promise<void> {
    const uuid = (n: number) => `7A3C4D5E-01${run}${n}-4000-8000-0000000001${run}${n}`;
    const x = invoiceXml({
      issuer: tenant,
      receiver: C1,
      uuid: uuid(1),
      fecha: '2026-10-05T10:00:00',
      method: 'PPD',
      lines: [{ desc: 'Flete Tula - Salamanca', amount: 1_000, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] }],
    });
    t.match(await api.importFile('j1.xml', x.xml), { status: 'created' });
    const pay = paymentXml({
      issuer: tenant,
      receiver: C1,
      uuid: uuid(2),
      fecha: '2026-10-20T12:00:00',
      invoiceUuid: uuid(1),
      currency: 'MXN',
      exchangeRate: 1,
      before: 1_120,
      paid: 1_120,
    });
    t.match(await api.importFile('j1-pago.xml', pay), { status: 'created' });
    const onOctober31 = async () => ({
      aging: (await api.aging({ asOf: '2026-10-31' })).body.totals,
      listed: (await api.list({ openAsOf: '2026-10-31' })).body.data.length,
      forecast: (await api.forecast({ asOf: '2026-10-31' })).body.receivables,
    });
    const before = await onOctober31();
    t.match(before, { aging: { openInvoices: 0, outstanding: 0 }, listed: 0, forecast: { openInvoices: 0, outstanding: 0 } }, 'paid on 10-20');
    t.match(await api.importFile('solicitud.xml', requestXml({ issuer: tenant, fecha: '2026-11-04T09:00:00', folios: [{ uuid: uuid(2), motive: '02' }] })), {
      status: 'created',
    });
    t.match(await api.importFile('acuse.xml', satAcuseXml({ issuer: tenant, fecha: '2026-11-04T10:00:00', folios: [{ uuid: uuid(2), code: '201' }] })), {
      status: 'created',
    });
    t.same(await onOctober31(), before, 'the same answer on 10-31 once the payment is cancelled on 11-04');
    t.match((await api.aging({})).body.totals, { openInvoices: 1, outstanding: 1_120, buckets: { days1to30: bucket(1, 1_120) } }, 'owed again today');
    t.equal((await api.list({ openAsOf: '2026-11-04' })).body.data.length, 1, 'open from the cancellation on');
  }

  t.test('a payment cancelled after the as-of day counted on it: HTTP and MCP', async (t) => {
    await cancelledAfterTheDay(t, httpApi(t, (await createApiKey(h.db, 'CAAG750315QW2', 'http')).key), 'CAAG750315QW2', 1);
    await cancelledAfterTheDay(t, await mcpApi(t, (await createApiKey(h.db, 'CLAG800101AB4', 'mcp')).key), 'CLAG800101AB4', 2);
  });

  t.test('HTTP', async (t) => {
    const tenant = 'ROAG750315QW2';
    await scenario(t, httpApi(t, (await createApiKey(h.db, tenant, 'http')).key), tenant, 1);
  });

  t.test('MCP', async (t) => {
    const tenant = 'LOAG800101AB4';
    await scenario(t, await mcpApi(t, (await createApiKey(h.db, tenant, 'mcp')).key), tenant, 2);
  });
}
