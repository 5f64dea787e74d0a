/**
 * POST /api/deliveries (issue 21): a month of reception tickets as a CSV (or the
 * same rows as JSON, over REST and MCP). Each leg's rows are its delivery;
 * the report says per row applied / unchanged / rejected with the reason; a
 * bad row leaves only its own leg unrecorded; a file that cannot be read as a
 * whole is a 400 and records nothing.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { makeTrip, leg, diesel, gasoline } from '../fixtures/documents.ts';
import { trips } from '../../lib/db/collections.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function csvTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  const NOW = new Date('2026-03-31T18:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const base = await listen(h.app);
  const ROUTE = '/api/deliveries';

  const onTheRoad = (shipment: string, ...products: ReturnType<typeof diesel>[]) =>
    leg({ shipment, loadDate: '2026-03-09T08:00', unloadDate: null, status: 2, products });
  const t1 = makeTrip({
    _id: 'TGO-T1',
    tenant: TENANT_A,
    legs: [onTheRoad('S1-1', diesel(20_000, null)), onTheRoad('S1-2', diesel(10_000, null), gasoline(5_000, null))],
  });
  const t2 = makeTrip({ _id: 'TGO-T2', tenant: TENANT_A, legs: [onTheRoad('S2-1', diesel(30_000, null))] });
  const t3 = makeTrip({ _id: 'TGO-T3', tenant: TENANT_A, legs: [onTheRoad('S3-1', diesel(15_000, null), gasoline(15_000, null))] });
  const tB = makeTrip({ _id: 'FNO-T1', tenant: TENANT_B, legs: [onTheRoad('SB-1', diesel(10_000, null))] });
  await insertTrips(h.db, [t1, t2, t3, tB]);

  const post = (payload: string | object, contentType: string, key = KEY_A) =>
    h.app.inject({
      method: 'POST',
      url: ROUTE,
      headers: { 'x-api-key': key, 'content-type': contentType },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });
  const storedAll = async () => (await trips(h.db).find({}).sort({ _id: 1 }).toArray()).map((d) => JSON.stringify(d));
  const leg0 = async (id: string, shipment: string) => (await trips(h.db).findOne({ _id: id }))!.shipments.find((l) => l.shipment === shipment)!;
  const outcome = (report: Json) => report.rows.map((r: Json) => [r.line, r.status, r.reason ?? '']);

  // A clerk's file as a spreadsheet saves it: a byte-order mark, CRLF, a quoted value.
  const CSV = [
    '\uFEFFtripId,shipmentId,productCode,offloaded,offloadDate,ticket',
    'TGO-T1,S1-1,15101505,19950,2026-03-10 09:00,"TK-101"',
    'TGO-T1,S1-2,15101505,9990,2026-03-11T10:00:00-06:00,TK-102',
    'TGO-T1,S1-2,15101514,4999,2026-03-11T10:00:00-06:00,TK-102',
    'TGO-T2,S2-1,15101505,300000,2026-03-12 08:00,TK-103',
    'TGO-T3,S3-1,15101505,14990,2026-03-12 08:00,TK-104',
    'TGO-T3,S3-1,15101514,"1,234",2026-03-12 08:00,TK-104',
    'FNO-T1,SB-1,15101505,9990,2026-03-10 09:00,TK-105',
    'TGO-T1,S9-9,15101505,100,2026-03-10 09:00,',
    '',
  ].join('\r\n');

  t.test('a CSV of tickets: each leg recorded or rejected on its own, with the reason', async (t) => {
    const res = await post(CSV, 'text/csv; charset=utf-8');
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'POST', ROUTE);
    const report = res.json();
    t.equal(report.tenant, TENANT_A);
    t.same(outcome(report), [
      [2, 'applied', ''],
      [3, 'applied', ''],
      [4, 'applied', ''],
      [5, 'rejected', 'offloaded 300000 L of product 15101505 is more than 5% above the 30000 L loaded (at most 31500 L)'],
      [6, 'rejected', 'leg not recorded: line 7 of the same leg is rejected'],
      [7, 'rejected', 'offloaded "1,234" is not a number of litres (digits and a decimal point, e.g. 30952.5)'],
      [8, 'rejected', 'no shipment FNO-T1 for this tenant'],
      [9, 'rejected', 'shipment TGO-T1 has no leg S9-9'],
    ]);
    t.same(report.summary, { rows: 8, legs: 6, applied: 3, unchanged: 0, rejected: 5 });
    t.match(report.rows[0], { tripId: 'TGO-T1', shipmentId: 'S1-1', productCode: '15101505' });

    t.match(await leg0('TGO-T1', 'S1-1'), {
      unloadDate: Date.parse('2026-03-10T15:00:00Z'),
      status: 4,
      products: [{ offloaded: 19_950 }],
      delivery: { source: 'recorded', ticket: 'TK-101' },
    });
    t.same(
      (await leg0('TGO-T1', 'S1-2')).products.map((p) => p.offloaded),
      [9_990, 4_999],
    );
    for (const [id, s] of [
      ['TGO-T2', 'S2-1'],
      ['TGO-T3', 'S3-1'],
    ])
      t.match(await leg0(id!, s!), { unloadDate: null, status: 2, products: [{ offloaded: null }] }, `${id}: still in transit`);
    t.equal((await leg0('FNO-T1', 'SB-1')).unloadDate, null, "B's trip untouched");

    const trip = (await h.app.inject({ method: 'GET', url: '/api/shipments/TGO-T1', headers: { 'x-api-key': KEY_A } })).json();
    t.match(trip.shipments, [
      { shipmentId: 'S1-1', delivered: true, deliveryTicket: 'TK-101', volumes: { shrinkageVolume: 50, shrinkagePercent: 0.25, exceedsTolerance: true } },
      { shipmentId: 'S1-2', delivered: true, deliveryTicket: 'TK-102', volumes: { offloaded: 14_989, shrinkageVolume: 11 } },
    ]);
  });

  t.test('the same file again: recorded legs unchanged, nothing written; the corrected rows are applied', async (t) => {
    const before = await storedAll();
    const again = (await post(CSV, 'text/csv')).json();
    t.same(again.summary, { rows: 8, legs: 6, applied: 0, unchanged: 3, rejected: 5 });
    t.same(await storedAll(), before, 'nothing written');
    const fixed = CSV.replace('300000', '29900').replace('"1,234"', '14900');
    const report = (await post(fixed, 'text/csv')).json();
    t.same(report.summary, { rows: 8, legs: 6, applied: 3, unchanged: 3, rejected: 2 });
    t.match(await leg0('TGO-T3', 'S3-1'), { status: 4, products: [{ offloaded: 14_990 }, { offloaded: 14_900 }] });
  });

  t.test('rows of one leg must agree on its date and ticket, and name every product', async (t) => {
    const csv = [
      'tripId,shipmentId,productCode,offloaded,offloadDate,ticket',
      'TGO-T3,S3-1,15101505,14990,2026-03-12 08:00,TK-104',
      'TGO-T3,S3-1,15101514,14900,2026-03-12 09:00,TK-104',
      'TGO-T1,S1-2,15101505,9990,2026-03-11 10:00,TK-102',
    ].join('\n');
    const report = (await post(csv, 'text/csv')).json();
    t.same(outcome(report), [
      [
        2,
        'rejected',
        'the rows of this leg (lines 2, 3) disagree on offloadDate (2026-03-12T14:00:00.000Z, 2026-03-12T15:00:00.000Z): one ticket has one date and reference',
      ],
      [
        3,
        'rejected',
        'the rows of this leg (lines 2, 3) disagree on offloadDate (2026-03-12T14:00:00.000Z, 2026-03-12T15:00:00.000Z): one ticket has one date and reference',
      ],
      [4, 'rejected', 'product 15101514 of leg S1-2 is missing: every product of the leg needs its offloaded litres'],
    ]);
    t.same(
      (await leg0('TGO-T1', 'S1-2')).products.map((p) => p.offloaded),
      [9_990, 4_999],
      'the recorded delivery is not replaced by a partial one',
    );
  });

  t.test('a first line that is not the template header is 400 and records nothing', async (t) => {
    const before = await storedAll();
    const row = 'TGO-T2,S2-1,15101505,29000,2026-03-12 08:00';
    for (const [name, csv, detail] of [
      ['an unknown column', `tripId,shipmentId,productCode,litros,offloadDate\n${row}`, /column "litros" is not one of .*column offloaded is missing/],
      [
        'columns in another order',
        `shipmentId,tripId,productCode,offloaded,offloadDate\n${row}`,
        /the first line must be exactly tripId,shipmentId,productCode,offloaded,offloadDate/,
      ],
      [
        'semicolons',
        `tripId;shipmentId;productCode;offloaded;offloadDate\n${row}`,
        /column "tripId;shipmentId;productCode;offloaded;offloadDate" is not one of/,
      ],
      ['an empty body', '', /the file is empty/],
      [
        'eight unknown columns',
        `a,b,c,d,e,f,g,h\n${row}`,
        /column "e" is not one of .* \| header \(line 1\): and 3 more columns that are not \| header \(line 1\): column tripId is missing/,
      ],
      // A file without line feeds is one line: its columns were named one by one (4 MiB of them: a 500).
      ['3 MB of columns on one line', `x${',x'.repeat(1_500_000)}`, /^header \(line 1\): the first line holds 3,000,001 characters, more than any header \| /],
      ['lines ended by CR alone ("CSV (Macintosh)")', `tripId,shipmentId,productCode,offloaded,offloadDate\r${row}\r`.repeat(2), /lone carriage return/],
    ] as const) {
      const res = await post(csv, 'text/csv');
      t.equal(res.statusCode, 400, name);
      assertConforms(t, res, 'POST', ROUTE);
      t.match(res.json(), { error: { code: 400, reason: 'invalid_body' } }, name);
      t.match(res.json().error.details.join(' | '), detail, name);
      t.ok(res.body.length < 4_000, `${name}: a bounded answer (${res.body.length} bytes)`);
    }
    const plain = await post('tripId\n', 'text/plain');
    t.equal(plain.statusCode, 415);
    assertConforms(t, plain, 'POST', ROUTE);
    t.same(await storedAll(), before);
  });

  t.test('past the header, every problem is a row: no rows, a quote never closed, rows past 20,000', async (t) => {
    const header = 'tripId,shipmentId,productCode,offloaded,offloadDate\n';
    const none = await post(header, 'text/csv');
    t.equal(none.statusCode, 200);
    t.same(none.json().summary, { rows: 0, legs: 0, applied: 0, unchanged: 0, rejected: 0 });
    const unclosed = (
      await post(
        'tripId,shipmentId,productCode,offloaded,offloadDate,ticket\nTGO-T1,S1-1,15101505,19950,2026-03-10 09:00,TK-101\n"TGO-T2,S2-1,15101505,29000,2026-03-12 08:00\n',
        'text/csv',
      )
    ).json();
    t.same(
      outcome(unclosed).map((r: unknown[]) => r.slice(0, 2)),
      [
        [2, 'unchanged'],
        [3, 'rejected'],
      ],
    );
    t.match(unclosed.rows[1].reason, /^a quoted field opened on line 3 is never closed/);
    const before = await storedAll();
    const row = 'TGO-T2,S2-1,15101505,29000,2026-03-12 08:00\n';
    const many = await post(`${header}${row.repeat(20_001)}`, 'text/csv');
    t.equal(many.statusCode, 400, 'more rows than one request holds: the file refused whole, as JSON past 20,000 rows is');
    t.match(many.json().error, {
      code: 400,
      reason: 'invalid_body',
      details: ['more than 20000 lines after the header (line 20002 is past them): one request holds at most 20000; send the rest in another file'],
    });
    // A line each of `,` to 4 MiB: the answer is the one 400, not a row per line (265–338 MB before).
    const commas = await post(`${header}${',\n'.repeat(2_000_000)}`, 'text/csv');
    t.equal(commas.statusCode, 400);
    t.ok(commas.body.length < 2_000, `a small answer (${commas.body.length} bytes)`);
    t.same(await storedAll(), before);
  });

  t.test('20,000 rows of one leg: each reason names a bounded number of other lines (issue 33: the answer grew with rows²)', async (t) => {
    const header = 'tripId,shipmentId,productCode,offloaded,offloadDate\n';
    const n = 20_000;
    const before = await storedAll();
    const bounded = (report: Json, what: string) => {
      t.equal(report.rows.length, n, `${what}: one result per row`);
      const longest = Math.max(...report.rows.map((r: Json) => (r.reason ?? '').length));
      t.ok(longest <= 400, `${what}: the longest reason is ${longest} characters`);
    };
    // Every row a different date: the leg's rows disagree.
    const dates = Array.from(
      { length: n },
      (_, i) =>
        `TGO-T2,S2-1,15101505,29000,2026-03-${String(10 + (i % 18)).padStart(2, '0')} ${String(i % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')}\n`,
    );
    const disagree = await post(header + dates.join(''), 'text/csv');
    t.equal(disagree.statusCode, 200);
    bounded(disagree.json(), 'dates that disagree');
    t.equal(disagree.json().rows[0].reason.split(' disagree on ')[0], 'the rows of this leg (lines 2, 3, 4, 5, 6 (and 19,995 more))');
    t.match(
      disagree.json().rows[0].reason,
      /offloadDate \(([^,]+, ){4}[^,]+ \(and 355 more\)\)/,
      'day, hour and minute repeat every lcm(18, 24, 60) = 360 rows: 360 distinct dates, five named',
    );
    // Every other row unreadable: the readable ones name the unreadable ones.
    const alternate = Array.from({ length: n }, (_, i) => `TGO-T2,S2-1,15101505,${i % 2 ? 'x' : '29000'},2026-03-12 08:00\n`);
    const half = (await post(header + alternate.join(''), 'text/csv')).json();
    bounded(half, 'every other row unreadable');
    t.equal(half.rows[0].reason, 'leg not recorded: line 3, 5, 7, 9, 11 (and 9,995 more) of the same leg are rejected');
    // The same as JSON rows, and a product given 20,000 times to a leg that carries it once.
    const row = { tripId: 'TGO-T2', shipmentId: 'S2-1', productCode: '15101505', offloaded: 29_000, offloadDate: '2026-03-12 08:00' };
    const repeated = await post({ rows: Array.from({ length: n }, () => row) }, 'application/json');
    t.equal(repeated.statusCode, 200);
    bounded(repeated.json(), 'one product 20,000 times');
    t.equal(repeated.json().rows[1].reason, 'product 15101505 is given 20000 times; leg S2-1 carries it once');
    const oneGood = await post({ rows: [row, ...Array.from({ length: n - 1 }, () => ({ ...row, productCode: '15101514' }))] }, 'application/json');
    bounded(oneGood.json(), 'one good row among 19,999 foreign products');
    t.equal(oneGood.json().rows[0].reason, 'leg not recorded: line 2, 3, 4, 5, 6 (and 19,994 more) of the same leg are rejected');
    t.same(await storedAll(), before, 'nothing recorded');
    t.equal((await h.app.inject({ method: 'GET', url: '/api/shipments', headers: { 'x-api-key': KEY_A } })).statusCode, 200, 'the service answers after them');
  });

  t.test('a date that is not on the calendar is rejected, with an offset or without (2026 has no February 29)', async (t) => {
    const before = await storedAll();
    const dates = [
      '2026-02-30T10:00Z',
      '2026-02-29 10:00-06:00',
      '2026-02-31T10:00:00+00:00',
      '2026-03-10 24:00Z',
      '2026-03-10 10:60-06:00',
      '2026-02-29 10:00',
    ];
    const reason = (d: string) => `offloadDate "${d}" is not a date and time (YYYY-MM-DD HH:mm, Mexico City, or with Z/±hh:mm)`;
    const csv = await post(
      `tripId,shipmentId,productCode,offloaded,offloadDate\n${dates.map((d) => `TGO-T2,S2-1,15101505,29000,${d}\n`).join('')}`,
      'text/csv',
    );
    t.equal(csv.statusCode, 200);
    t.same(
      csv.json().rows.map((r: Json) => r.reason),
      dates.map(reason),
    );
    const rows = dates.map((offloadDate) => ({ tripId: 'TGO-T2', shipmentId: 'S2-1', productCode: '15101505', offloaded: 29_000, offloadDate }));
    const json = await post({ rows }, 'application/json');
    t.equal(json.statusCode, 200);
    t.same(
      json.json().rows.map((r: Json) => r.reason),
      dates.map(reason),
    );
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const tool = await client.callTool({ name: 'importDeliveries', arguments: { body: { rows: [rows[0]] } } });
    t.match(tool.structuredContent, { summary: { applied: 0, rejected: 1 }, rows: [{ status: 'rejected', reason: reason(dates[0]!) }] });
    t.same(await storedAll(), before, 'nothing recorded');
  });

  t.test('the same rows as JSON, and through the MCP tool', async (t) => {
    const rows = [
      { tripId: 'TGO-T2', shipmentId: 'S2-1', productCode: '15101505', offloaded: 29_950, offloadDate: '2026-03-12T08:00:00-06:00', ticket: 'TK-103' },
      { tripId: 'TGO-T2', shipmentId: 'S2-1', productCode: '15101514', offloaded: 1, offloadDate: '2026-03-12T08:00:00-06:00', ticket: 'TK-103' },
    ];
    const res = await post({ rows }, 'application/json');
    assertConforms(t, res, 'POST', ROUTE);
    t.same(
      outcome(res.json()),
      [
        [1, 'rejected', 'leg not recorded: line 2 of the same leg is rejected'],
        [2, 'rejected', 'leg S2-1 does not carry product 15101514 (it carries 15101505)'],
      ],
      'JSON rows are numbered from 1',
    );
    const invalid = await post({ rows: [{ ...rows[0], offloaded: '29950' }] }, 'application/json');
    t.equal(invalid.statusCode, 400, 'a JSON body is validated as a whole');
    t.match(invalid.json().error, { reason: 'invalid_body', fields: [{ in: 'body', name: 'rows.0.offloaded' }] });

    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const first = await client.callTool({ name: 'importDeliveries', arguments: { body: { rows: [rows[0]] } } });
    t.notOk(first.isError);
    t.match(first.structuredContent, { tenant: TENANT_A, summary: { applied: 1, rejected: 0 }, rows: [{ line: 1, status: 'applied' }] });
    const again = await client.callTool({ name: 'importDeliveries', arguments: { body: { rows: [rows[0]] } } });
    t.match(again.structuredContent, { summary: { unchanged: 1 } });
    t.match(await leg0('TGO-T2', 'S2-1'), { status: 4, products: [{ offloaded: 29_950 }], delivery: { ticket: 'TK-103' } });
    const foreign = await client.callTool({ name: 'importDeliveries', arguments: { body: { rows: [{ ...rows[0], tripId: 'FNO-T1', shipmentId: 'SB-1' }] } } });
    t.match(foreign.structuredContent, { rows: [{ status: 'rejected', reason: 'no shipment FNO-T1 for this tenant' }] });
  });

  t.test('keys: write scope needed; the tenant is always the key', async (t) => {
    const { key } = await createApiKey(h.db, TENANT_A, 'read only', ['read']);
    const ro = await post(CSV, 'text/csv', key);
    t.equal(ro.statusCode, 403);
    const b = (
      await post(
        'tripId,shipmentId,productCode,offloaded,offloadDate\nTGO-T1,S1-1,15101505,1,2026-03-10 09:00\nFNO-T1,SB-1,15101505,9990,2026-03-10 09:00\n',
        'text/csv',
        KEY_B,
      )
    ).json();
    t.equal(b.tenant, TENANT_B);
    t.same(
      outcome(b),
      [
        [2, 'rejected', 'no shipment TGO-T1 for this tenant'],
        [3, 'applied', ''],
      ],
      "B records its own trip and never A's",
    );
  });

  t.test("a tenant whose RFC holds '&' or 'Ñ' records the deliveries of its imported trips (their ids start with it)", async (t) => {
    const tenant = 'Ñ&A850101AB1';
    const key = (await createApiKey(h.db, tenant, 'ampersand')).key;
    // As an import names a trip: `${tenant}-CP-${uuid}`.
    const ids = ['put', 'csv', 'json'].map((_, i) => `${tenant}-CP-1A2B3C4D-0011-4000-8000-00000000000${i}`);
    await insertTrips(
      h.db,
      ids.map((_id) => makeTrip({ _id, tenant, legs: [onTheRoad('CCC-1', diesel(20_000, null))] })),
    );
    const url = `/api/shipments/${encodeURIComponent(ids[0]!)}`;
    t.equal((await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } })).statusCode, 200, 'the trip is read by its id');
    const put = await h.app.inject({
      method: 'PUT',
      url: `${url}/legs/CCC-1/delivery`,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: JSON.stringify({ offloadDate: '2026-03-10T09:00:00-06:00', products: [{ code: '15101505', offloaded: 19_950 }] }),
    });
    t.equal(put.statusCode, 200, put.body);
    assertConforms(t, put, 'PUT', '/api/shipments/:id/legs/:shipmentId/delivery');
    const csv = (await post(`tripId,shipmentId,productCode,offloaded,offloadDate\n${ids[1]},CCC-1,15101505,19950,2026-03-10 09:00\n`, 'text/csv', key)).json();
    t.same(outcome(csv), [[2, 'applied', '']], 'CSV');
    const json = await post(
      { rows: [{ tripId: ids[2], shipmentId: 'CCC-1', productCode: '15101505', offloaded: 19_950, offloadDate: '2026-03-10 09:00' }] },
      'application/json',
      key,
    );
    t.equal(json.statusCode, 200, json.body);
    t.same(outcome(json.json()), [[1, 'applied', '']], 'JSON rows');
    for (const id of ids) t.match(await leg0(id, 'CCC-1'), { status: 4, products: [{ offloaded: 19_950 }] }, `${id} delivered`);
  });

  t.test('a body over DELIVERIES_BODY_LIMIT_BYTES is 413', async (t) => {
    const app = await h.rebuild({ env: { DELIVERIES_BODY_LIMIT_BYTES: '2048' } });
    const res = await app.inject({
      method: 'POST',
      url: ROUTE,
      headers: { 'x-api-key': KEY_A, 'content-type': 'text/csv' },
      payload: `tripId,shipmentId,productCode,offloaded,offloadDate\n${'TGO-T2,S2-1,15101505,29000,2026-03-12 08:00\n'.repeat(100)}`,
    });
    t.equal(res.statusCode, 413);
    assertConforms(t, res, 'POST', ROUTE);
  });
}
