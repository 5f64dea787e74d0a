/**
 * Text of an imported CFDI that reads like a MongoDB expression ("$$ROOT…", "$ …") is data: the
 * reports that reshape concept lines in the database ($map, $filter) read it as the text it is,
 * as MongoDB does. The embedded engine evaluated each element of such an array again as an
 * expression: a received concept "$$ROOT diésel" failed the unit economics with a 500 (an undefined
 * variable), and "$ diésel placas 65-OS-1Y" was read as a missing field, so the plate it names was
 * lost. Every expected figure is computed by hand below.
 *
 * Tenant A, March 2026:
 *   T1  vehicle V1 (plate 65-OS-1Y), one leg delivered 2026-03-05: 400 km, freight 20,000, no toll
 *   R1  received fuel CFDI 10,000, "$ diésel placas 65-OS-1Y": names V1's plate → assigned to V1
 *   R2  received fuel CFDI  2,000, "$$ROOT diésel": no plate → spread over the one leg
 *   I1  issued freight CFDI 20,000 with a 1,000 discount, "$$VIP flete Tuxpan"
 * Unit economics: cost 10,000 + 2,000 = 12,000; margin 20,000 − 12,000 = 8,000.
 * Discounts: gross freight 20,000, discounts 1,000, rate 1,000 ÷ 20,000 × 100 = 5 %.
 *
 * February 2026, text in the keys the engine groups by (an object key, e.g. { origin, destination }):
 * the engine evaluated each field of such an object again, so "$$ROOT…" failed the query and
 * "$driver" was read as the trip's driver.
 *   T2  vehicle id "$driver" (plate "$$ROOT placa"), route "$$ROOT-ish" → "$originName", one leg
 *       delivered 2026-02-10: 300 km, freight 5,000
 *   I2  issued CFDI 3,000 with a 300 discount, ClaveProdServ "$$ROOT12" ("servicio especial": kind
 *       other, family "$$ROOT", not freight)
 * Unit economics: revenue 5,000, cost 0, margin 5,000, 300 km, all on vehicle "$driver" and on the
 * one route. Discounts: 1 document, with a discount of 300; gross freight 0, so no rate.
 */
import type { Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml } from '../helpers/cfdi-builder.ts';
import { makeTrip, leg, diesel, CLIENT_COMPANY } from '../fixtures/documents.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';
import { getFreightUnitEconomics } from '../../lib/analytics/get-freight-unit-economics.ts';

export default async function expressionLikeTextTests(t: Test): Promise<void> {
  const h = await startHarness(t, { build: { now: () => new Date('2026-04-20T12:00:00-06:00') } });
  const MARCH = { startDate: '2026-03-01', endDate: '2026-03-31' };
  const SUPPLIER = 'PGA010101AB1';

  await insertTrips(h.db, [
    makeTrip({
      _id: 'T2',
      tenant: TENANT_A,
      vehicle: { id: '$driver', plate: '$$ROOT placa', config: 'C2' },
      driver: { id: 'DRV-9', name: 'Ana' },
      origin: { ...makeTrip().origin, id: '$$ROOT-ish' },
      destination: { ...makeTrip().destination, id: '$originName' },
      legs: [
        leg({
          loadDate: '2026-02-10T06:00',
          unloadDate: '2026-02-10T16:00',
          distanceKm: 300,
          products: [diesel(10_000, 10_000)],
          pricing: { billedFreight: 5_000 },
        }),
      ],
    }),
    makeTrip({
      _id: 'T1',
      tenant: TENANT_A,
      vehicle: { id: 'V1', plate: '65-OS-1Y', config: 'T3S2' },
      legs: [
        leg({
          loadDate: '2026-03-05T06:00',
          unloadDate: '2026-03-05T16:00',
          distanceKm: 400,
          products: [diesel(20_000, 20_000)],
          pricing: { billedFreight: 20_000 },
        }),
      ],
    }),
  ]);
  const cfdis = [
    { n: 1, issuer: SUPPLIER, receiver: TENANT_A, code: '15101505', desc: '$ diésel placas 65-OS-1Y', amount: 10_000 },
    { n: 2, issuer: SUPPLIER, receiver: TENANT_A, code: '15101505', desc: '$$ROOT diésel', amount: 2_000 },
    { n: 3, issuer: TENANT_A, receiver: CLIENT_COMPANY, code: '78101802', desc: '$$VIP flete Tuxpan', amount: 20_000, discount: 1_000 },
    {
      n: 4,
      issuer: TENANT_A,
      receiver: CLIENT_COMPANY,
      code: '$$ROOT12',
      desc: 'servicio especial',
      amount: 3_000,
      discount: 300,
      fecha: '2026-02-11T10:00:00',
    },
  ];
  const uuid = (n: number): string => `5E7A0C11-000${n}-4000-8000-00000000000${n}`;
  const files = cfdis.map((c) => ({
    name: `${c.n}.xml`,
    content: invoiceXml({
      issuer: c.issuer,
      receiver: c.receiver,
      uuid: uuid(c.n),
      fecha: c.fecha ?? `2026-03-0${5 + c.n}T10:00:00`,
      lines: [{ code: c.code, desc: c.desc, amount: c.amount, ...(c.discount ? { discount: c.discount } : {}), transfers: [{ tax: '002', rate: 0.16 }] }],
    }).xml,
  }));
  const imported = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A }, payload: { files } });
  if (imported.statusCode !== 200 || imported.json().summary.created !== 4) throw new Error(`setup: ${imported.body}`);

  const FEBRUARY = { startDate: '2026-02-01', endDate: '2026-02-28' };
  const get = async (route: string, period = MARCH) => {
    const res = await h.app.inject({ method: 'GET', url: `${route}?${new URLSearchParams(period).toString()}`, headers: { 'x-api-key': KEY_A } });
    return { status: res.statusCode, body: res.json() };
  };
  const unitEconomics = {
    totals: { revenue: 20_000, cost: 12_000, margin: 8_000 },
    costs: { categories: [{ category: 'fuel', documents: 2, assigned: 10_000, spread: 2_000, unallocated: 0 }] },
  };
  const discounts = { totals: { documents: 1, documentsWithDiscount: 1, grossFreight: 20_000, discounts: 1_000, discountRatePct: { value: 5 } } };

  t.test('the received concepts are read as their text: R1 assigned by its plate, R2 spread', async (t) => {
    const res = await get('/api/analytics/unit-economics');
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    t.match(res.body, unitEconomics);
  });

  t.test('the issued concept is read as its text: its freight and discount counted', async (t) => {
    const res = await get('/api/analytics/discounts-and-shrinkage');
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    t.match(res.body.discounts, discounts);
  });

  const february = {
    totals: { revenue: 5_000, cost: 0, margin: 5_000, km: 300 },
    byVehicle: { total: 1, data: [{ vehicle: '$driver', plate: '$$ROOT placa', km: 300, revenue: 5_000 }] },
    routes: { total: 1, data: [{ origin: { id: '$$ROOT-ish' }, destination: { id: '$originName' }, km: 300 }] },
  };
  const februaryDiscounts = { totals: { documents: 1, documentsWithDiscount: 1, grossFreight: 0, discounts: 300, discountRatePct: { value: null } } };

  t.test('text in the keys grouped by is read as its text: the vehicle "$driver", the route "$$ROOT-ish"', async (t) => {
    const res = await get('/api/analytics/unit-economics', FEBRUARY);
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    t.match(res.body, february);
    // The same from the documents themselves (the reference `npm run rollups -- --verify` checks the kept days against).
    const now = () => new Date(res.body.computedAt);
    t.match(
      await getFreightUnitEconomics({ db: h.db, config: h.config, now }, TENANT_A, { ...FEBRUARY, litresBasis: 'loaded', limit: 20 }, { fromDocuments: true }),
      february,
    );
  });

  t.test('a ClaveProdServ "$$ROOT12" is its text: not freight, its discount counted', async (t) => {
    const res = await get('/api/analytics/discounts-and-shrinkage', FEBRUARY);
    t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    t.match(res.body.discounts, februaryDiscounts);
  });

  t.test('the descriptions read back as imported', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: `/api/received-docs/${TENANT_A}-RCFDI-${uuid(2)}`, headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200);
    t.match(res.json().concepts, [{ description: '$$ROOT diésel' }]);
  });

  t.test('MCP: the same figures', async (t) => {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    type ToolResult = { structuredContent: { discounts?: unknown }; isError?: boolean };
    const ue = (await client.callTool({ name: 'getFreightUnitEconomics', arguments: MARCH })) as unknown as ToolResult;
    t.notOk(ue.isError);
    t.match(ue.structuredContent, unitEconomics);
    const ds = (await client.callTool({ name: 'auditDiscountsAndShrinkage', arguments: MARCH })) as unknown as ToolResult;
    t.notOk(ds.isError);
    t.match(ds.structuredContent.discounts, discounts);
    const feb = (await client.callTool({ name: 'getFreightUnitEconomics', arguments: FEBRUARY })) as unknown as ToolResult;
    t.notOk(feb.isError);
    t.match(feb.structuredContent, february);
    const febDs = (await client.callTool({ name: 'auditDiscountsAndShrinkage', arguments: FEBRUARY })) as unknown as ToolResult;
    t.notOk(febDs.isError);
    t.match(febDs.structuredContent.discounts, februaryDiscounts);
  });
}
