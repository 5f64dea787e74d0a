/**
 * Costs and margin of GET /api/analytics/unit-economics (docs/domain.md, "Costs and margin")
 * through HTTP on received CFDIs imported as XML, and the assignment operations (one document,
 * many as CSV or JSON, MCP). Every expected figure is computed by hand below.
 *
 * Tenant A's legs delivered in March 2026 (1,000 km in all):
 *   T1  client C1, vehicle V1 (plate 65-OS-1Y), driver D1, OR000001→DE000001, 400 km, freight 20,000, toll 600, 20,000 L
 *   T2  client C2, vehicle V1,                  driver D2, OR000001→DE000002, 100 km, freight  6,000,             10,000 L
 *   T3  client C1, vehicle V2 (plate 12-XY-9Z), driver D2, OR000001→DE000002, 500 km, freight 25,000,             30,000 L
 *   T4  client C2, vehicle V3, delivered in April (outside March: V3 has no km in March)
 * V1 has 500 km, V2 500 km.
 *
 * Received CFDIs (receiver tenant A), issued in March unless said, VAT 16% on each (not a cost):
 *   F1 fuel        10,000            "Diesel camion placas 65-OS-1Y" → names V1's plate
 *   F2 fuel         5,000 − 1,000 discount = 4,000 net
 *   M1 maintenance  2,000
 *   S1 subcontracted freight 3,000
 *   K1 tolls        1,000
 *   I1 insurance    1,200
 *   X1 fuel 50,000, cancelled (SAT acknowledgement 202): not counted
 *   A1 fuel 70,000 issued in April: not counted
 *   O1 office rent 8,000 (category other): not a trip cost
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml, satAcuseXml } from '../helpers/cfdi-builder.ts';
import { asCreditNote } from '../helpers/differential-writes.ts';
import { makeTrip, leg, diesel, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import type { TripPlace } from '../../lib/model/trip-document.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';
import { unitEconomicsRollups } from '../../lib/analytics/unit-economics-rollup-kind.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';

export default async function unitCostsTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  let clock = NOW;
  const h = await startHarness(t, { build: { now: () => clock } });
  const ROUTE = '/api/analytics/unit-economics';
  const MARCH = '?startDate=2026-03-01&endDate=2026-03-31';
  const C1 = CLIENT_COMPANY;
  const C2 = CLIENT_COMPANY_2;

  const place = (id: string, city: string): TripPlace => ({
    id,
    nif: 'PEM000101AAA',
    name: `Terminal ${city}`,
    address: { street: 'Km 1', city, municipality: '001', province: city, state: 'VER', country: 'MEX', zip: '00000' },
  });
  const OR1 = place('OR000001', 'Tuxpan');
  const DE1 = place('DE000001', 'Puebla');
  const DE2 = place('DE000002', 'Xalapa');
  const day = (d: string) => ({ loadDate: `${d}T06:00`, unloadDate: `${d}T16:00` });
  const V1 = { id: 'V1', plate: '65-OS-1Y', config: 'T3S2' };
  const V2 = { id: 'V2', plate: '12-XY-9Z', config: 'T3S2' };
  const D1 = { id: 'D1', name: 'Ana' };
  const D2 = { id: 'D2', name: 'Beto' };
  await insertTrips(h.db, [
    makeTrip({
      _id: 'T1',
      tenant: TENANT_A,
      client: C1,
      vehicle: V1,
      driver: D1,
      origin: OR1,
      destination: DE1,
      legs: [leg({ ...day('2026-03-05'), distanceKm: 400, products: [diesel(20_000, 20_000)], pricing: { billedFreight: 20_000, toll: 600 } })],
    }),
    makeTrip({
      _id: 'T2',
      tenant: TENANT_A,
      client: C2,
      vehicle: V1,
      driver: D2,
      origin: OR1,
      destination: DE2,
      legs: [leg({ ...day('2026-03-10'), distanceKm: 100, products: [diesel(10_000, 10_000)], pricing: { billedFreight: 6_000 } })],
    }),
    makeTrip({
      _id: 'T3',
      tenant: TENANT_A,
      client: C1,
      vehicle: V2,
      driver: D2,
      origin: OR1,
      destination: DE2,
      legs: [leg({ ...day('2026-03-20'), distanceKm: 500, products: [diesel(30_000, 30_000)], pricing: { billedFreight: 25_000 } })],
    }),
    makeTrip({
      _id: 'T4',
      tenant: TENANT_A,
      client: C2,
      vehicle: { id: 'V3', plate: 'ZZ-99-XX' },
      origin: OR1,
      destination: DE1,
      legs: [leg({ ...day('2026-04-02'), distanceKm: 300, pricing: { billedFreight: 9_000 } })],
    }),
    makeTrip({
      _id: 'TB1',
      tenant: TENANT_B,
      client: C1,
      vehicle: V1,
      origin: OR1,
      destination: DE1,
      legs: [leg({ ...day('2026-03-05'), distanceKm: 1_000, pricing: { billedFreight: 99_000 } })],
    }),
  ]);

  const GAS = 'PGA010101AB1';
  const U = (n: number): string => `7C2A0E55-00${String(n).padStart(2, '0')}-4000-8000-0000000002${String(n).padStart(2, '0')}`;
  const rid = (n: number, tenant = TENANT_A): string => `${tenant}-RCFDI-${U(n)}`;
  const vat = [{ tax: '002' as const, rate: 0.16 }];
  const cfdi = (n: number, code: string, desc: string, amount: number, fecha = '2026-03-15T10:00:00', discount = 0, receiver = TENANT_A) =>
    invoiceXml({ issuer: GAS, issuerName: 'PROVEEDOR', receiver, uuid: U(n), fecha, method: 'PUE', lines: [{ code, desc, amount, discount, transfers: vat }] })
      .xml;
  const files = [
    { name: 'F1.xml', content: cfdi(1, '15101505', 'Diesel camion placas 65-OS-1Y', 10_000) },
    { name: 'F2.xml', content: cfdi(2, '15101505', 'Diesel', 5_000, '2026-03-16T10:00:00', 1_000) },
    { name: 'M1.xml', content: cfdi(3, '78181506', 'Alineacion y balanceo', 2_000) },
    { name: 'S1.xml', content: cfdi(4, '78101802', 'Flete Tuxpan-Xalapa', 3_000) },
    { name: 'K1.xml', content: cfdi(5, '95111603', 'Caseta', 1_000) },
    { name: 'I1.xml', content: cfdi(6, '84131503', 'Seguro de camion', 1_200) },
    { name: 'X1.xml', content: cfdi(7, '15101505', 'Diesel', 50_000) },
    { name: 'A1.xml', content: cfdi(8, '15101505', 'Diesel', 70_000, '2026-04-03T10:00:00') },
    { name: 'O1.xml', content: cfdi(9, '80131502', 'Renta de oficina', 8_000) },
  ];
  const imported = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: {
      files: [...files, { name: 'acuse.xml', content: satAcuseXml({ issuer: GAS, fecha: '2026-03-17T09:00:00', folios: [{ uuid: U(7), code: '202' }] }) }],
    },
  });
  if (imported.statusCode !== 200) throw new Error(imported.body);
  // Tenant B's own received CFDI (for the isolation checks).
  const importedB = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_B, 'content-type': 'application/json' },
    payload: { files: [{ name: 'B1.xml', content: cfdi(20, '15101505', 'Diesel', 9_000, '2026-03-15T10:00:00', 0, TENANT_B) }] },
  });
  if (importedB.statusCode !== 200) throw new Error(importedB.body);

  const get = async (query: string, key = KEY_A) => {
    const res = await h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
    return { res, body: res.json() };
  };
  const send = (method: 'PUT' | 'DELETE' | 'POST', url: string, payload?: unknown, key = KEY_A, type = 'application/json') =>
    h.app.inject({
      method,
      url,
      headers: { 'x-api-key': key, ...(payload === undefined ? {} : { 'content-type': type }) },
      ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }),
    });

  t.test('before any assignment: only the plate places a document', async (t) => {
    const { res, body } = await get(MARCH);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    // Spread: F2 4,000 + M1 2,000 + S1 3,000 + K1 1,000 + I1 1,200 = 11,200 (11.2 per km).
    // Assigned: F1 10,000 to V1 (its plate) + T1's toll 600 = 10,600. Total 21,800.
    t.match(body.costs, { assigned: 10_600, spread: 11_200, unallocated: 0 });
    t.equal(body.totals.cost, 21_800);
    // V1: F1 10,000 + 11,200 × 500/1,000 = 5,600 + toll 600 = 16,200.
    t.match(
      body.byVehicle.data.find((v: { vehicle: string }) => v.vehicle === 'V1'),
      { cost: 16_200 },
    );
  });

  t.test('assign one document: PUT and DELETE, idempotent, tenant-bound', async (t) => {
    const put = await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V2' });
    t.equal(put.statusCode, 200, put.body);
    assertConforms(t, put, 'PUT', '/api/received-docs/:id/assignment');
    t.match(put.json(), { tenant: TENANT_A, id: rid(2), uuid: U(2), vehicle: 'V2', tripId: null, assignedAt: NOW.toISOString() });
    const again = await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V2' });
    t.same(again.json(), put.json(), 'the same assignment again changes nothing');
    // "V2 " (the spec's pattern admits a trailing space) is vehicle V2, as in the bulk rows and the CSV: the same again.
    const spaced = await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V2 ' });
    t.equal(spaced.statusCode, 200, spaced.body);
    t.same(spaced.json(), put.json(), 'trimmed: the same assignment');
    // Another tenant's document, an unknown one, another tenant's trip, a vehicle on no trip: 404.
    t.equal((await send('PUT', `/api/received-docs/${rid(20, TENANT_B)}/assignment`, { vehicle: 'V1' })).statusCode, 404);
    t.equal((await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V1' }, KEY_B)).statusCode, 404);
    t.equal((await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { tripId: 'TB1' })).statusCode, 404);
    const ghost = await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V9' });
    t.equal(ghost.statusCode, 404);
    t.match(ghost.json().error.details.join(' '), /no vehicle V9/);
    // Both or neither: the body's schema refuses it.
    t.equal((await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V2', tripId: 'T3' })).statusCode, 400);
    t.equal((await send('PUT', `/api/received-docs/${rid(2)}/assignment`, {})).statusCode, 400);
    // DELETE on a document never assigned is no error; tenant B cannot touch A's.
    const del = await send('DELETE', `/api/received-docs/${rid(3)}/assignment`);
    t.equal(del.statusCode, 200, del.body);
    assertConforms(t, del, 'DELETE', '/api/received-docs/:id/assignment');
    t.same(del.json(), { tenant: TENANT_A, id: rid(3), uuid: U(3), vehicle: null, tripId: null, assignedAt: null });
    t.equal((await send('DELETE', `/api/received-docs/${rid(2)}/assignment`, undefined, KEY_B)).statusCode, 404);
  });

  t.test('assign many as CSV: a report per line, bad lines rejected, others applied', async (t) => {
    const csv = [
      'uuid,vehicle,tripId',
      `${U(4)},,T3`, // line 2: S1 → trip T3
      `${U(6).toLowerCase()},V3,`, // line 3: I1 → V3 (no km in March: spread after all)
      `${U(20)},V1,`, // line 4: tenant B's document
      `${U(3)},V1,T1`, // line 5: both
      'not-a-uuid,V1,', // line 6
      `${U(5)},V9,`, // line 7: unknown vehicle
      `${U(5)},V1,`, // line 8: K1 → V1 …
      `${U(5)},,`, // line 9: … then unassigned: the later line wins
    ].join('\n');
    const res = await send('POST', '/api/received-assignments', csv, KEY_A, 'text/csv');
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'POST', '/api/received-assignments');
    const body = res.json();
    t.same(body.summary, { rows: 8, assigned: 2, unassigned: 1, rejected: 5 });
    t.match(body.rows, [
      { line: 2, uuid: U(4), status: 'assigned' },
      { line: 3, uuid: U(6), status: 'assigned' },
      { line: 4, status: 'rejected', reason: /no such received document/ },
      { line: 5, status: 'rejected', reason: /not both/ },
      { line: 6, status: 'rejected', reason: /not a CFDI UUID/ },
      { line: 7, status: 'rejected', reason: /superseded by line 9/ },
      { line: 8, status: 'rejected', reason: /superseded by line 9/ },
      { line: 9, uuid: U(5), status: 'unassigned' },
    ]);
    // The same file a day later changes nothing, not even the instant, as the single PUT.
    clock = new Date(NOW.getTime() + 86_400_000);
    t.same((await send('POST', '/api/received-assignments', csv, KEY_A, 'text/csv')).json().summary, body.summary);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=settings');
    const tool = await client.callTool({ name: 'assignReceivedDocs', arguments: { body: { rows: [{ uuid: U(4), tripId: 'T3' }] } } });
    t.match(tool.structuredContent, { summary: { assigned: 1 } }, 'MCP: the same row again');
    const unchanged = await send('PUT', `/api/received-docs/${rid(4)}/assignment`, { tripId: 'T3' });
    t.match(unchanged.json(), { tripId: 'T3', assignedAt: NOW.toISOString() }, 'assigned when first sent');
    // A later line wins whatever it holds: rejected for its vehicle, it still leaves the earlier one unapplied.
    const later = await send('POST', '/api/received-assignments', [`uuid,vehicle,tripId`, `${U(2)},V1,`, `${U(2)},=1+1,`].join('\n'), KEY_A, 'text/csv');
    t.match(later.json(), {
      summary: { rows: 2, assigned: 0, rejected: 2 },
      rows: [
        { line: 2, reason: 'superseded by line 3 (the same uuid)' },
        { line: 3, reason: /vehicle "=1\+1" is not a vehicle id/ },
      ],
    });
    // A cut line (the uuid alone) is rejected, not read as "both empty", which would remove the assignment.
    const cut = await send('POST', '/api/received-assignments', ['uuid,vehicle,tripId', U(2), `${U(2)},V1`].join('\n'), KEY_A, 'text/csv');
    t.match(cut.json(), {
      summary: { rows: 2, assigned: 0, unassigned: 0, rejected: 2 },
      rows: [
        { line: 2, status: 'rejected', reason: /1 value; the line has 3/ },
        { line: 3, status: 'rejected', reason: /2 values; the line has 3/ },
      ],
    });
    t.match(
      (await send('PUT', `/api/received-docs/${rid(2)}/assignment`, { vehicle: 'V2' })).json(),
      { vehicle: 'V2', assignedAt: NOW.toISOString() },
      'still V2',
    );
    clock = NOW;
    // A header that is not the template's refuses the file.
    const bad = await send('POST', '/api/received-assignments', 'id,vehicle\nX,V1', KEY_A, 'text/csv');
    t.equal(bad.statusCode, 400);
    // More lines than one request holds (20,000) refuse the file whole, as JSON past 20,000 rows is: 4 MiB of `,`
    // lines answered a 265 MB report, a row per line.
    const many = await send('POST', '/api/received-assignments', `uuid,vehicle,tripId\n${',\n'.repeat(2_000_000)}`, KEY_A, 'text/csv');
    t.equal(many.statusCode, 400);
    t.match(many.json().error, { reason: 'invalid_body', details: [/^more than 20000 lines after the header \(line 20002 is past them\)/] });
    t.ok(many.body.length < 2_000, `a small answer (${many.body.length} bytes)`);
    // The same as JSON rows (what MCP sends); tenant B's key finds none of A's documents.
    const json = await send('POST', '/api/received-assignments', { rows: [{ uuid: U(4), tripId: 'T3' }] }, KEY_B);
    t.match(json.json(), { tenant: TENANT_B, summary: { rows: 1, rejected: 1 } });
  });

  t.test('costs assigned vs spread by km, margins per client, lane, vehicle and driver', async (t) => {
    const { res, body } = await get(MARCH);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    // Spread pool: M1 2,000 + K1 1,000 + I1 1,200 (V3 has no km in March) = 4,200 over 1,000 km.
    // V1 pool: F1 10,000 (plate). V2 pool: F2 4,000 (PUT). Trip T3: S1 3,000 (CSV). T1's toll 600.
    // Total 21,800; revenue 51,000; margin = 51,000 + 600 (toll recharged) − 21,800 = 29,800.
    t.match(body.totals, {
      trips: 3,
      km: 1_000,
      litres: 60_000,
      revenue: 51_000,
      cost: 21_800,
      costPerKm: { value: 21.8 },
      costPerLitre: { value: 0.3633 }, // 21,800 / 60,000
      costPerTrip: { value: 7_266.67 }, // 21,800 / 3
      margin: 29_800,
      marginPerKm: { value: 29.8 },
    });
    t.same(body.costs, {
      categories: [
        { category: 'fuel', amount: 14_000, assigned: 14_000, spread: 0, documents: 2, unallocated: 0 },
        { category: 'tolls', amount: 1_600, assigned: 600, spread: 1_000, documents: 1, unallocated: 0 },
        { category: 'maintenance', amount: 2_000, assigned: 0, spread: 2_000, documents: 1, unallocated: 0 },
        { category: 'tyres', amount: 0, assigned: 0, spread: 0, documents: 0, unallocated: 0 },
        { category: 'insurance', amount: 1_200, assigned: 0, spread: 1_200, documents: 1, unallocated: 0 },
        { category: 'subcontractedFreight', amount: 3_000, assigned: 3_000, spread: 0, documents: 1, unallocated: 0 },
      ],
      assigned: 17_600, // 14,000 + 600 + 3,000
      spread: 4_200,
      unallocated: 0,
    });
    const rows = (list: { data: Record<string, unknown>[] }, key: string) =>
      Object.fromEntries(list.data.map((r) => [r[key], [r.cost, r.margin, (r.marginPerKm as { value: number }).value]]));
    // V1 (T1 + T2, 500 km): F1 10,000 + 4,200 × 500/1,000 = 2,100 + toll 600 = 12,700; margin 26,000 + 600 − 12,700 = 13,900; 27.8/km.
    // V2 (T3, 500 km): F2 4,000 + 2,100 + S1 3,000 = 9,100; margin 25,000 − 9,100 = 15,900; 31.8/km.
    t.same(rows(body.byVehicle, 'vehicle'), { V1: [12_700, 13_900, 27.8], V2: [9_100, 15_900, 31.8] });
    // C1 (T1 400 km on V1, T3 500 km on V2): 4,200 × 900/1,000 = 3,780 + 10,000 × 400/500 = 8,000 + 4,000 + 3,000 + 600 = 19,380;
    //    margin 45,000 + 600 − 19,380 = 26,220; 26,220 / 900 = 29.13.
    // C2 (T2 100 km on V1): 420 + 10,000 × 100/500 = 2,000 → 2,420; margin 6,000 − 2,420 = 3,580; 35.8/km.
    t.same(rows(body.byClient, 'client'), { [C1]: [19_380, 26_220, 29.13], [C2]: [2_420, 3_580, 35.8] });
    // Lane OR000001→DE000001 (T1, 400 km on V1): 1,680 + 8,000 + 600 = 10,280; margin 20,600 − 10,280 = 10,320; 25.8/km.
    // Lane OR000001→DE000002 (T2 100 km V1, T3 500 km V2): 2,520 + 2,000 + 4,000 + 3,000 = 11,520; margin 31,000 − 11,520 = 19,480; 32.47/km.
    t.same(rows(body.routes, 'routeKey'), { 'OR000001→DE000001': [10_280, 10_320, 25.8], 'OR000001→DE000002': [11_520, 19_480, 32.47] });
    // Driver D1 drove T1 (= the first lane), D2 drove T2 and T3 (= the second).
    t.same(rows(body.byDriver, 'driver'), { D1: [10_280, 10_320, 25.8], D2: [11_520, 19_480, 32.47] });
    t.match(body.byDriver.data, [
      { driver: 'D2', name: 'Beto' },
      { driver: 'D1', name: 'Ana' },
    ]);

    // One vehicle: V1's legs take V1's pool whole and half of the spread pool.
    const v1 = (await get(`${MARCH}&vehicle=V1`)).body;
    t.match(v1.totals, { km: 500, cost: 12_700, margin: 13_900, marginPerKm: { value: 27.8 } });
    t.match(v1.costs, { assigned: 10_600, spread: 2_100 }); // 10,000 + 600; 4,200 × 500/1,000
    // One client: C2 (T2 only) takes none of trip T3's S1.
    const c2 = (await get(`${MARCH}&client=${C2}`)).body;
    t.match(c2.totals, { cost: 2_420, margin: 3_580 });

    // Tenant B: its own 9,000 fuel spread over its own 1,000 km; nothing of A's.
    const b = (await get(MARCH, KEY_B)).body;
    t.match(b.totals, { km: 1_000, cost: 9_000, costPerKm: { value: 9 } });
  });

  t.test('unassigning puts the cost back to the spread', async (t) => {
    t.equal((await send('DELETE', `/api/received-docs/${rid(4)}/assignment`)).statusCode, 200);
    const { body } = await get(MARCH);
    // S1 3,000 joins the spread: 7,200 spread, 14,600 assigned; the total is the same.
    t.match(body.costs, { assigned: 14_600, spread: 7_200 });
    t.equal(body.totals.cost, 21_800);
    t.equal((await send('PUT', `/api/received-docs/${rid(4)}/assignment`, { tripId: 'T3' })).statusCode, 200);
  });

  t.test('no legs delivered in the period: costs unallocated, no NaN', async (t) => {
    // February: no leg, no document either; April: A1 70,000 fuel and T4's 300 km.
    const feb = (await get('?startDate=2026-02-01&endDate=2026-02-28')).body;
    t.match(feb.totals, { cost: 0, costPerKm: { value: null } });
    const apr = (await get('?startDate=2026-04-01&endDate=2026-04-20')).body;
    // A1 is spread over T4's 300 km: 70,000; margin 9,000 − 70,000 = −61,000.
    t.match(apr.totals, { km: 300, cost: 70_000, margin: -61_000, costPerKm: { value: 233.33 } });
  });

  t.test('MCP: margin per km of truck V1 last quarter, in one tool call', async (t) => {
    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    // "Last quarter" as of 2026-04-20 is January–March 2026.
    const r = (await client.callTool({
      name: 'getFreightUnitEconomics',
      arguments: { vehicle: 'V1', startDate: '2026-01-01', endDate: '2026-03-31' },
    })) as unknown as { structuredContent: { byVehicle: { data: { vehicle: string; marginPerKm: { value: number } }[] } }; isError?: boolean };
    t.notOk(r.isError);
    // The same 27.8 as above: no leg or document of V1 in January or February.
    t.same(
      r.structuredContent.byVehicle.data.map((v) => [v.vehicle, v.marginPerKm.value]),
      [['V1', 27.8]],
    );
    // The assignment tools are in the `settings` toolset.
    const settings = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?toolsets=settings');
    const put = (await settings.callTool({ name: 'assignReceivedDoc', arguments: { id: rid(3), body: { vehicle: 'V2 ' } } })) as unknown as {
      structuredContent: { vehicle: string };
      isError?: boolean;
    };
    t.notOk(put.isError);
    t.equal(put.structuredContent.vehicle, 'V2', '"V2 " trimmed, as over REST');
    const un = (await settings.callTool({ name: 'unassignReceivedDoc', arguments: { id: rid(3) } })) as { isError?: boolean };
    t.notOk(un.isError);
  });

  /**
   * A vehicle's plates (docs/domain.md "Costs and margin", "Where a document goes"): every plate a
   * vehicle's delivered trips of the period carried names it, not only its label (the greatest).
   * A fresh store (both tenants' March 2026), read first from the documents, then from the totals
   * kept on write (its whole month as tables; a partial period as days; a filter as combinations).
   *   Tenant A: V1 carried AAA-111-A on TA1 (5 March, 300 km) and ZZZ-999-Z on TA2 (12 March, 200 km);
   *             V2 (BBB-222-B) TA3 (20 March, 500 km). "Diesel placas AAA-111-A", 2,000.00 + VAT (10 March).
   *   Tenant B: PLT-0001 on V1's TB1 (5 March, 500 km) and on V2's TB3 (20 March, 1,000 km); V1 then
   *             PLT-0009 on TB2 (12 March, 500 km). "Diesel PLT-0001", 2,000.00 + VAT (10 March).
   */
  t.test('plates: a vehicle named by any plate it carried in the period; a plate two vehicles carried names neither', async (t) => {
    const hp = await startHarness(t, { build: { now: () => NOW } });
    const tripOf = (id: string, tenant: string, vehicle: { id: string; plate: string }, d: string, km: number) =>
      makeTrip({
        _id: id,
        tenant,
        client: C1,
        vehicle,
        legs: [leg({ ...day(d), distanceKm: km, products: [diesel(10_000, 10_000)], pricing: { billedFreight: 10_000 } })],
      });
    await insertTrips(hp.db, [
      tripOf('TA1', TENANT_A, { id: 'V1', plate: 'AAA-111-A' }, '2026-03-05', 300),
      tripOf('TA2', TENANT_A, { id: 'V1', plate: 'ZZZ-999-Z' }, '2026-03-12', 200),
      tripOf('TA3', TENANT_A, { id: 'V2', plate: 'BBB-222-B' }, '2026-03-20', 500),
      tripOf('TB1', TENANT_B, { id: 'V1', plate: 'PLT-0001' }, '2026-03-05', 500),
      tripOf('TB2', TENANT_B, { id: 'V1', plate: 'PLT-0009' }, '2026-03-12', 500),
      tripOf('TB3', TENANT_B, { id: 'V2', plate: 'PLT-0001' }, '2026-03-20', 1_000),
    ]);
    const diesel2000 = (n: number, desc: string, receiver: string) =>
      invoiceXml({
        issuer: GAS,
        issuerName: 'PROVEEDOR',
        receiver,
        uuid: U(40 + n),
        fecha: '2026-03-10T10:00:00',
        method: 'PUE',
        lines: [{ code: '15101505', desc, amount: 2_000, transfers: vat }],
      }).xml;
    for (const [key, receiver, desc] of [
      [KEY_A, TENANT_A, 'Diesel placas AAA-111-A'],
      [KEY_B, TENANT_B, 'Diesel PLT-0001'],
    ] as const) {
      const res = await hp.app.inject({
        method: 'POST',
        url: '/api/imports',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: { files: [{ name: 'D.xml', content: diesel2000(key === KEY_A ? 1 : 2, desc, receiver) }] },
      });
      t.equal(res.statusCode, 200, res.body);
    }
    const mcpA = await connect(t, await listen(hp.app), 'streamable', { 'x-api-key': KEY_A });
    const mcpB = await connect(t, await listen(hp.app), 'streamable', { 'x-api-key': KEY_B });
    type Body = {
      byVehicle: { data: { vehicle: string; plate: string; cost: number }[] };
      costs: { assigned: number; spread: number };
      totals: { cost: number };
    };
    const http = async (query: string, key: string): Promise<Body> => {
      const res = await hp.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
      t.equal(res.statusCode, 200, res.statusCode === 200 ? `GET ${query}` : res.body);
      return res.json();
    };
    const mcp = async (client: typeof mcpA, args: Record<string, string>): Promise<Body> => {
      const r = (await client.callTool({ name: 'getFreightUnitEconomics', arguments: args })) as unknown as { structuredContent: Body; isError?: boolean };
      t.notOk(r.isError);
      return r.structuredContent;
    };
    const vehicles = (b: Body) => b.byVehicle.data.map((v) => [v.vehicle, v.plate, v.cost]).sort();
    const check = async (how: string) => {
      for (const [from, path] of [
        ['2026-03-01', 'the whole month'],
        ['2026-03-02', 'a partial period'],
      ] as const) {
        const q = { startDate: from, endDate: '2026-03-31' };
        const query = `?startDate=${from}&endDate=2026-03-31`;
        // A: AAA-111-A names V1 (it carried it on TA1, though its label is ZZZ-999-Z): 2,000 assigned to V1, none to V2.
        for (const a of [await http(query, KEY_A), await mcp(mcpA, q)]) {
          t.same(
            vehicles(a),
            [
              ['V1', 'ZZZ-999-Z', 2_000],
              ['V2', 'BBB-222-B', 0],
            ],
            `${how}, ${path}: the lesser plate of V1 places the diesel on V1`,
          );
          t.match(a.costs, { assigned: 2_000, spread: 0 });
        }
        // B: PLT-0001 was carried by V1 (TB1) and V2 (TB3): it names neither, 2,000 spread by km over 2,000 km: V1 1,000, V2 1,000.
        for (const b of [await http(query, KEY_B), await mcp(mcpB, q)]) {
          t.same(
            vehicles(b),
            [
              ['V1', 'PLT-0009', 1_000],
              ['V2', 'PLT-0001', 1_000],
            ],
            `${how}, ${path}: a plate two vehicles carried places nothing`,
          );
          t.match(b.costs, { assigned: 0, spread: 2_000 });
        }
      }
      // One vehicle: V1's legs take its 2,000 whole (A); half of the spread 2,000 (B).
      t.match((await http('?startDate=2026-03-01&endDate=2026-03-31&vehicle=V1', KEY_A)).totals, { cost: 2_000 }, `${how}, vehicle V1 (A)`);
      t.match((await mcp(mcpB, { startDate: '2026-03-01', endDate: '2026-03-31', vehicle: 'V1' })).totals, { cost: 1_000 }, `${how}, vehicle V1 (B)`);
    };
    t.notOk(await unitEconomicsRollups.ready(hp.db), 'read from the documents');
    await check('from the documents');
    await unitEconomicsRollups.rebuild(hp.db);
    t.ok(await unitEconomicsRollups.ready(hp.db), 'read from the totals kept on write');
    await check('kept on write');
  });

  /**
   * Suppliers' credit notes (docs/domain.md "Costs and margin", "What counts" and "At what amount"):
   * a negative cost, its own subtotal net of discounts in MXN at its own rate, in its own month, of its
   * invoice's category and placed where its invoice is; a cancelled note counts nothing. A fresh store:
   *   TC1 V1 (AAA-111-A) 5 March 600 km; TC2 V2 (BBB-222-B) 20 March 400 km; TC3 V1 10 April 500 km; TC4 V2 12 April 500 km.
   *   TY  tyres 8,000.00 + VAT, 8 March, assigned to V1 (PUT); NC1 on TY 1,000.00 + 160.00, 20 March;
   *       NC3 on TY 2,000.00 + 320.00, 22 March, cancelled (the SAT's acknowledgement 202).
   *   FU  fuel 10,000.00 + VAT, 10 March, "Diesel placas BBB-222-B" (V2 by its plate); NC2 on FU 500.00 + 80.00, 2 April.
   *   MU  maintenance USD 1,000.00 + VAT at 17.50 (17,500.00), 12 March, spread; NC4 on MU USD 100.00 + 16.00 at its own 18.00, 25 March (1,800.00).
   */
  t.test("credit notes: a negative cost in the note's month, of its invoice's category, where its invoice goes", async (t) => {
    const hn = await startHarness(t, { build: { now: () => NOW } });
    const tripOf = (id: string, vehicle: { id: string; plate: string }, d: string, km: number) =>
      makeTrip({
        _id: id,
        tenant: TENANT_A,
        client: C1,
        vehicle,
        legs: [leg({ ...day(d), distanceKm: km, products: [diesel(10_000, 10_000)], pricing: { billedFreight: 10_000 } })],
      });
    const W1 = { id: 'V1', plate: 'AAA-111-A' };
    const W2 = { id: 'V2', plate: 'BBB-222-B' };
    await insertTrips(hn.db, [
      tripOf('TC1', W1, '2026-03-05', 600),
      tripOf('TC2', W2, '2026-03-20', 400),
      tripOf('TC3', W1, '2026-04-10', 500),
      tripOf('TC4', W2, '2026-04-12', 500),
    ]);
    const doc = (n: number, code: string, desc: string, amount: number, fecha: string, usd?: number) =>
      invoiceXml({
        issuer: GAS,
        issuerName: 'PROVEEDOR',
        receiver: TENANT_A,
        uuid: U(60 + n),
        fecha,
        method: 'PUE',
        ...(usd ? { currency: 'USD', exchangeRate: usd } : {}),
        lines: [{ code, desc, amount, transfers: vat }],
      }).xml;
    const note = (n: number, invoice: number, code: string, amount: number, fecha: string, usd?: number) =>
      asCreditNote(doc(n, code, 'Bonificacion', amount, fecha, usd), U(60 + invoice), 'emisor');
    const imported = await hn.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: {
        files: [
          { name: 'TY.xml', content: doc(1, '25172504', 'Llantas', 8_000, '2026-03-08T10:00:00') },
          { name: 'FU.xml', content: doc(2, '15101505', 'Diesel placas BBB-222-B', 10_000, '2026-03-10T10:00:00') },
          { name: 'MU.xml', content: doc(3, '78181506', 'Servicio', 1_000, '2026-03-12T10:00:00', 17.5) },
          { name: 'NC1.xml', content: note(4, 1, '25172504', 1_000, '2026-03-20T10:00:00') },
          { name: 'NC2.xml', content: note(5, 2, '15101505', 500, '2026-04-02T10:00:00') },
          { name: 'NC3.xml', content: note(6, 1, '25172504', 2_000, '2026-03-22T10:00:00') },
          { name: 'NC4.xml', content: note(7, 3, '78181506', 100, '2026-03-25T10:00:00', 18) },
          { name: 'acuse.xml', content: satAcuseXml({ issuer: GAS, fecha: '2026-03-23T09:00:00', folios: [{ uuid: U(66), code: '202' }] }) },
        ],
      },
    });
    t.equal(imported.statusCode, 200, imported.body);
    t.match(imported.json().summary, { rejected: 0 });
    const put = await hn.app.inject({
      method: 'PUT',
      url: `/api/received-docs/${rid(61)}/assignment`,
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { vehicle: 'V1' },
    });
    t.equal(put.statusCode, 200, put.body);
    const mcp = await connect(t, await listen(hn.app), 'streamable', { 'x-api-key': KEY_A });
    type Category = { category: string; amount: number; assigned: number; spread: number; documents: number };
    type Body = {
      totals: { cost: number };
      costs: { categories: Category[]; assigned: number; spread: number };
      byVehicle: { data: { vehicle: string; cost: number }[] };
    };
    const answers = async (startDate: string, endDate: string, vehicle?: string): Promise<Body[]> => {
      const q = `?startDate=${startDate}&endDate=${endDate}${vehicle ? `&vehicle=${vehicle}` : ''}`;
      const res = await hn.app.inject({ method: 'GET', url: `${ROUTE}${q}`, headers: { 'x-api-key': KEY_A } });
      t.equal(res.statusCode, 200, res.statusCode === 200 ? `GET ${q}` : res.body);
      const r = (await mcp.callTool({ name: 'getFreightUnitEconomics', arguments: { startDate, endDate, ...(vehicle ? { vehicle } : {}) } })) as unknown as {
        structuredContent: Body;
        isError?: boolean;
      };
      t.notOk(r.isError);
      return [res.json(), r.structuredContent];
    };
    const nonZero = (b: Body) => b.costs.categories.filter((c) => c.documents > 0).map((c) => [c.category, c.amount, c.assigned, c.spread, c.documents]);
    const vehicles = (b: Body) => Object.fromEntries(b.byVehicle.data.map((v) => [v.vehicle, v.cost]));
    const check = async (how: string) => {
      for (const start of ['2026-03-01', '2026-03-02']) {
        for (const b of await answers(start, '2026-03-31')) {
          // Tyres 8,000 − NC1 1,000 = 7,000 on V1 (NC3 cancelled: nothing); fuel 10,000 on V2 (NC2 is April's);
          // maintenance 17,500 − NC4 100 × 18.00 = 1,800 → 15,700 spread by km. Total 32,700.
          t.same(
            nonZero(b),
            [
              ['fuel', 10_000, 10_000, 0, 1],
              ['maintenance', 15_700, 0, 15_700, 2],
              ['tyres', 7_000, 7_000, 0, 2],
            ],
            `${how}, March from ${start}: each note lowers its invoice's category`,
          );
          t.equal(b.totals.cost, 32_700);
          // V1 (600 km): 7,000 + 15,700 × 600/1,000 = 9,420 → 16,420; V2 (400 km): 10,000 + 6,280 = 16,280.
          t.same(vehicles(b), { V1: 16_420, V2: 16_280 }, `${how}, March from ${start}: placed where the invoices are`);
        }
      }
      for (const b of await answers('2026-03-01', '2026-03-31', 'V1')) t.match(b.totals, { cost: 16_420 }, `${how}, March, vehicle V1`);
      // April: NC2 −500 of fuel on V2 (FU names BBB-222-B, which V2 carried in April too): V2 −500, V1 0.
      for (const b of await answers('2026-04-01', '2026-04-20')) {
        t.same(nonZero(b), [['fuel', -500, -500, 0, 1]], `${how}, April: the note in its own month`);
        t.same(vehicles(b), { V1: 0, V2: -500 });
        t.equal(b.totals.cost, -500);
      }
    };
    t.notOk(await unitEconomicsRollups.ready(hn.db), 'read from the documents');
    await check('from the documents');
    await unitEconomicsRollups.rebuild(hn.db);
    t.ok(await unitEconomicsRollups.ready(hn.db), 'read from the totals kept on write');
    await check('kept on write');
    // Moving the tyres invoice to V2 moves its March note with it (the assignment marks the note's day too).
    const moved = await hn.app.inject({
      method: 'PUT',
      url: `/api/received-docs/${rid(61)}/assignment`,
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { vehicle: 'V2' },
    });
    t.equal(moved.statusCode, 200, moved.body);
    // V1: 9,420; V2: 16,280 + 7,000 = 23,280.
    for (const b of await answers('2026-03-02', '2026-03-31')) t.same(vehicles(b), { V1: 9_420, V2: 23_280 }, 'kept on write, after the move');
  });

  t.test("a tenant whose RFC holds '&' or 'Ñ' assigns a received CFDI to its imported trip (PUT, JSON rows, CSV)", async (t) => {
    const tenant = 'Ñ&A850101AB1';
    const key = (await createApiKey(h.db, tenant, 'ampersand')).key;
    // As an import names a trip: `${tenant}-CP-${uuid}`.
    const trip = `${tenant}-CP-1A2B3C4D-0011-4000-8000-000000000031`;
    await insertTrips(h.db, [makeTrip({ _id: trip, tenant, legs: [leg({ ...day('2026-03-05'), distanceKm: 100, products: [diesel(10_000, 10_000)] })] })]);
    const files = [31, 32, 33].map((n) => ({
      name: `R${n}.xml`,
      content: cfdi(n, '78101802', 'Flete subcontratado', 1_000, '2026-03-15T10:00:00', 0, tenant),
    }));
    const imported = await send('POST', '/api/imports', { files }, key);
    t.equal(imported.statusCode, 200, imported.body);
    const put = await send('PUT', `/api/received-docs/${encodeURIComponent(rid(31, tenant))}/assignment`, { tripId: trip }, key);
    t.equal(put.statusCode, 200, put.body);
    assertConforms(t, put, 'PUT', '/api/received-docs/:id/assignment');
    t.match(put.json(), { tripId: trip, vehicle: null });
    const rows = await send('POST', '/api/received-assignments', { rows: [{ uuid: U(32), tripId: trip }] }, key);
    t.equal(rows.statusCode, 200, rows.body);
    t.match(rows.json().rows, [{ status: 'assigned' }], 'JSON rows');
    const csv = await send('POST', '/api/received-assignments/csv', `uuid,vehicle,tripId\n${U(33)},,${trip}\n`, key, 'text/csv');
    t.equal(csv.statusCode, 200, csv.body);
    t.match(csv.json().rows, [{ status: 'assigned' }], 'CSV');
  });
}
