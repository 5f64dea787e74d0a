/**
 * Delivery state and recording a delivery, through HTTP and MCP (issue 21):
 * a leg in transit is flagged nowhere (lists, get-by-id, audits, alert
 * records); recording its reception ticket makes its shrinkage appear against
 * the tenant's tolerance; the same delivery again changes nothing; a
 * correction replaces it and moves `lastUpdate`; other tenants' trips are 404;
 * bad volumes and products are 400 in the error shape, and nothing is stored.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { makeTrip, leg, diesel, gasoline, CLIENT_COMPANY } from '../fixtures/documents.ts';
import { trips } from '../../lib/db/collections.ts';
import { alertRecords } from '../../lib/alerts/alert-jobs-repo.ts';
import { alertsPlugin } from '../../lib/alerts/plugin.ts';
import { getTenantSettings, saveTenantSettings } from '../../lib/settings/settings-repo.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function deliveriesTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  const NOW = new Date('2026-03-20T12:00:00-06:00');
  const FAST = { processEveryMs: 150, retryDelayMs: 100, maxRetries: 0, lockLifetimeMs: 4000, drainTimeoutMs: 10_000 };
  const h = await startHarness(t, { build: { now: () => NOW, plugins: [alertsPlugin({ worker: true, settings: FAST, now: () => NOW, name: 'deliveries' })] } });
  await h.app.ready();
  const base = await listen(h.app);
  const ROUTE = '/api/shipments/:id/legs/:shipmentId/delivery';
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  // The tenant's tolerance: 0.25% of the loaded litres.
  await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, TENANT_A)), shrinkageTolerancePct: 0.25 });

  // A trip whose first leg is delivered (0.05%, within tolerance) and whose second, loaded on 03-09, is on the road.
  const road = {
    ...makeTrip({
      tenant: TENANT_A,
      client: CLIENT_COMPANY,
      createdAt: '2026-03-05T06:00',
      legs: [
        leg({ shipment: 'EM-R-1', loadDate: '2026-03-05T08:00', unloadDate: '2026-03-05T18:00', products: [diesel(20_000, 19_990)] }),
        leg({ shipment: 'EM-R-2', loadDate: '2026-03-09T08:00', unloadDate: null, status: 2, products: [diesel(30_000, null), gasoline(10_000, null)] }),
      ],
    }),
    lastUpdate: '2026-03-09T14:00:00.000Z',
  };
  // A leg in transit as versions before the delivery state stored it: offloaded 0 (no lastUpdate either).
  const legacy = makeTrip({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    createdAt: '2026-03-10T06:00',
    legs: [leg({ shipment: 'EM-L-1', loadDate: '2026-03-10T08:00', unloadDate: null, status: 2, products: [diesel(25_000, 0)] })],
  });
  const other = makeTrip({
    tenant: TENANT_B,
    client: CLIENT_COMPANY,
    legs: [leg({ shipment: 'EM-B-1', loadDate: '2026-03-09T08:00', unloadDate: null, status: 2, products: [diesel(10_000, null)] })],
  });
  await insertTrips(h.db, [road, legacy, other]);

  const inject = (method: 'GET' | 'PUT', url: string, opts: { key?: string; body?: unknown } = {}) =>
    h.app.inject({
      method,
      url,
      headers: { 'x-api-key': opts.key ?? KEY_A, ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(opts.body !== undefined ? { payload: JSON.stringify(opts.body) } : {}),
    });
  const deliveryUrl = (trip: string, shipment: string) => `/api/shipments/${trip}/legs/${shipment}/delivery`;
  const put = (trip: string, shipment: string, body: unknown, key = KEY_A) => inject('PUT', deliveryUrl(trip, shipment), { key, body });
  const stored = async (id: string) => (await trips(h.db).findOne({ _id: id }))!;
  const legOf = (summary: Json, shipment: string) => summary.shipments.find((l: Json) => l.shipmentId === shipment);

  const MARCH = 'startDate=2026-03-01&endDate=2026-03-31';
  const audit = async () => {
    const res = await inject('GET', `/api/analytics/discounts-and-shrinkage?${MARCH}`);
    assertConforms(t, res, 'GET', '/api/analytics/discounts-and-shrinkage');
    return res.json().shrinkage;
  };

  /** Schedules a shrinkage alert for March, due now, and waits for its record. */
  let users = 0;
  async function shrinkageAlert(t: Test): Promise<Json> {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: { 'x-api-key': KEY_A },
      payload: { userIds: [`clerk-${++users}`], ruleId: 'shrinkage-over-tolerance', cycleKey: '2026-03', nameAlert: 'Merma' },
    });
    t.equal(res.statusCode, 200, res.body);
    const jobId = res.json().jobs[0].jobId;
    for (let i = 0; i < 200 && !(await alertRecords(h.db).findOne({ _id: jobId })); i++) await sleep(100);
    const list = await inject('GET', `/api/alerts?ruleId=shrinkage-over-tolerance&cycleKey=2026-03&userId=clerk-${users}`);
    assertConforms(t, list, 'GET', '/api/alerts');
    const record = list.json().data[0];
    t.ok(record, 'the alert record exists');
    return record;
  }

  const IN_TRANSIT_VOLUMES = {
    loaded: 40_000,
    offloaded: null,
    shrinkageVolume: null,
    shrinkagePercent: null,
    tolerancePercent: 0.25,
    exceedsTolerance: false,
  };

  t.test('a leg in transit is flagged nowhere', async (t) => {
    const list = await inject('GET', '/api/shipments?limit=10');
    assertConforms(t, list, 'GET', '/api/shipments');
    const [sLegacy, sRoad] = list.json().data;
    t.match(legOf(sRoad, 'EM-R-2'), { delivered: false, offloadDate: null, deliveryTicket: null, status: 2, volumes: IN_TRANSIT_VOLUMES });
    t.same(
      legOf(sRoad, 'EM-R-2').volumes.products.map((p: Json) => p.offloaded),
      [null, null],
      'no product offloaded yet',
    );
    t.match(legOf(sRoad, 'EM-R-1'), { delivered: true, volumes: { shrinkagePercent: 0.05, exceedsTolerance: false } });
    t.match(
      legOf(sLegacy, 'EM-L-1'),
      { delivered: false, volumes: { loaded: 25_000, offloaded: null, shrinkagePercent: null, exceedsTolerance: false, products: [{ offloaded: null }] } },
      'stored as 0 by an older version: still in transit, not a 100% loss',
    );

    const one = await inject('GET', `/api/shipments/${legacy._id}`);
    assertConforms(t, one, 'GET', '/api/shipments/:id');
    t.match(legOf(one.json(), 'EM-L-1'), { delivered: false, volumes: { shrinkageVolume: null, exceedsTolerance: false } });

    const byOffload = await inject('GET', `/api/shipments?${MARCH}&dateFilterBy=offload`);
    t.same(
      byOffload.json().data.map((s: Json) => s.id),
      [road._id],
      'an offload range never matches a leg without an offload',
    );

    const shrinkage = await audit();
    t.match(
      shrinkage.totals,
      { trips: 0, legs: 0, legsOutOfTolerance: 0, shrinkageLitres: 0, recoverableValue: 0 },
      'a trip with a leg on the road is not delivered yet',
    );
    t.equal(shrinkage.worstLegs.total, 0);

    const dtb = await inject('GET', `/api/analytics/dispatch-to-bill?${MARCH}`);
    assertConforms(t, dtb, 'GET', '/api/analytics/dispatch-to-bill');
    t.match(dtb.json().summary, { deliveredTrips: 0, notDeliveredCount: 1 });

    const unit = await inject('GET', `/api/analytics/unit-economics?${MARCH}&litresBasis=offloaded`);
    assertConforms(t, unit, 'GET', '/api/analytics/unit-economics');
    t.match(unit.json().totals, { legs: 1, loadedLitres: 20_000, offloadedLitres: 19_990 }, 'only the delivered leg');

    const alert = await shrinkageAlert(t);
    t.match(alert, { status: 'clear', summary: { findings: 0 } }, 'no alert for a leg on the road');
  });

  let recorded: Json;
  const DELIVERY = {
    offloadDate: '2026-03-10T09:00:00-06:00',
    ticket: 'TK-0001',
    products: [
      { code: '15101505', offloaded: 29_880 },
      { code: '15101514', offloaded: 9_990 },
    ],
  };

  t.test("recording the delivery makes its shrinkage appear against the tenant's tolerance", async (t) => {
    const res = await put(road._id, 'EM-R-2', DELIVERY);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'PUT', ROUTE);
    recorded = res.json();
    // 120 L of diesel and 10 L of gasoline: 130 of 40,000 L = 0.325% > 0.25%.
    t.match(legOf(recorded, 'EM-R-2'), {
      delivered: true,
      status: 4,
      deliveryTicket: 'TK-0001',
      offloadDate: new Date('2026-03-10T15:00:00Z').toISOString(),
      volumes: { loaded: 40_000, offloaded: 39_870, shrinkageVolume: 130, shrinkagePercent: 0.325, tolerancePercent: 0.25, exceedsTolerance: true },
    });
    t.same(
      legOf(recorded, 'EM-R-2').volumes.products.map((p: Json) => [p.code, p.offloaded]),
      [
        ['15101505', 29_880],
        ['15101514', 9_990],
      ],
    );
    t.equal(recorded.lastUpdate, NOW.toISOString(), 'lastUpdate moved to the write');
    const doc = await stored(road._id);
    t.match(doc.shipments[1], { unloadDate: Date.parse('2026-03-10T15:00:00Z'), status: 4, delivery: { source: 'recorded', ticket: 'TK-0001' } });

    const sync = await inject('GET', `/api/shipments?updatedSince=${encodeURIComponent('2026-03-09T14:00:00.001Z')}`);
    t.same(
      sync.json().data.map((s: Json) => s.id),
      [road._id],
      'incremental sync sees it',
    );
    const got = await inject('GET', `/api/shipments/${road._id}`);
    t.same(got.json(), recorded, 'get-by-id answers the same summary');

    const shrinkage = await audit();
    t.match(shrinkage.totals, { trips: 1, legs: 2, legsOutOfTolerance: 1, shrinkageLitres: 140, excessLitres: 30 }, 'the trip is delivered: both legs count');
    // Excess 130 − 0.25% × 40,000 = 30 L at the loaded-weighted price (30,000 × 24.5 + 10,000 × 23.9) / 40,000 = 24.35.
    t.match(shrinkage.worstLegs.data, [
      { tripId: road._id, shipmentId: 'EM-R-2', shrinkagePercent: 0.325, tolerancePct: 0.25, recoverableLitres: 30, recoverableValue: 730.5 },
    ]);

    const alert = await shrinkageAlert(t);
    t.match(alert, { status: 'triggered', summary: { findings: 1, warning: 1, amount: 730.5 } });
    t.match(alert.findings, [
      {
        code: 'SHRINKAGE_OVER_TOLERANCE',
        ref: `${road._id}/EM-R-2`,
        amount: 730.5,
        date: '2026-03-10T15:00:00.000Z',
        details: { shrinkagePercent: 0.325, tolerancePct: 0.25, excessLitres: 30 },
      },
    ]);
  });

  t.test('recording the same delivery again changes nothing', async (t) => {
    const before = await stored(road._id);
    const again = await put(road._id, 'EM-R-2', DELIVERY);
    t.equal(again.statusCode, 200);
    t.same(again.json(), recorded, 'the same answer');
    t.same(await stored(road._id), before, 'nothing written: lastUpdate unchanged');
    // The same numbers written otherwise (an offset, litres as 29880.0) are the same delivery.
    const same = await put(road._id, 'EM-R-2', { ...DELIVERY, offloadDate: '2026-03-10T15:00:00Z' });
    t.same(same.json(), recorded);
    // Forms the schema's date-time admits and Date.parse does not: an offset of whole hours (15:00Z at UTC+5 is 20:00).
    const hours = await put(road._id, 'EM-R-2', { ...DELIVERY, offloadDate: '2026-03-10T20:00:00+05' });
    t.equal(hours.statusCode, 200, hours.body);
    t.same(hours.json(), recorded, 'an offset of whole hours: the same instant');
    // The ticket with a trailing space (the spec's pattern admits it) is the same ticket, as the CSV reads it.
    const spaced = await put(road._id, 'EM-R-2', { ...DELIVERY, ticket: 'TK-0001 ' });
    t.same(spaced.json(), recorded, 'trimmed: the same delivery');
    t.same(await stored(road._id), before, 'nothing written');
  });

  t.test('a correction replaces the delivery and moves lastUpdate', async (t) => {
    const before = await stored(road._id);
    const res = await put(road._id, 'EM-R-2', {
      offloadDate: '2026-03-10T09:30:00-06:00',
      products: [
        { code: '15101505', offloaded: 29_960 },
        { code: '15101514', offloaded: 10_000 },
      ],
    });
    t.equal(res.statusCode, 200, res.body);
    const corrected = res.json();
    t.match(
      legOf(corrected, 'EM-R-2'),
      {
        deliveryTicket: null,
        offloadDate: '2026-03-10T15:30:00.000Z',
        volumes: { offloaded: 39_960, shrinkageVolume: 40, shrinkagePercent: 0.1, exceedsTolerance: false },
      },
      'the ticket omitted is cleared',
    );
    t.ok(corrected.lastUpdate > before.lastUpdate!, `lastUpdate moves (${before.lastUpdate} → ${corrected.lastUpdate}) even within the same millisecond`);
    const sync = await inject('GET', `/api/shipments?updatedSince=${encodeURIComponent(corrected.lastUpdate)}`);
    t.same(
      sync.json().data.map((s: Json) => s.id),
      [road._id],
      'updatedSince sees the correction',
    );
    t.match((await audit()).totals, { trips: 1, legsOutOfTolerance: 0, shrinkageLitres: 50 });
    t.match(await shrinkageAlert(t), { status: 'clear', summary: { findings: 0 } });
  });

  t.test("another tenant's trip, an unknown trip or leg: 404", async (t) => {
    const body = { offloadDate: '2026-03-10T09:00:00-06:00', products: [{ code: '15101505', offloaded: 9_990 }] };
    for (const [trip, shipment, detail] of [
      [other._id, 'EM-B-1', 'no such shipment for this tenant'],
      ['NO-SUCH-TRIP', 'EM-B-1', 'no such shipment for this tenant'],
      [road._id, 'EM-NOPE-1', `shipment ${road._id} has no leg EM-NOPE-1`],
    ] as const) {
      const res = await put(trip, shipment, body);
      t.equal(res.statusCode, 404, `${trip}/${shipment}`);
      assertConforms(t, res, 'PUT', ROUTE);
      t.match(res.json(), { error: { code: 404, reason: 'not_found', details: [detail] } });
    }
    t.equal((await stored(other._id)).shipments[0]!.unloadDate, null, "B's leg untouched");
    const own = await put(other._id, 'EM-B-1', body, KEY_B);
    t.equal(own.statusCode, 200, 'its own tenant records it');
  });

  t.test('bad volumes, dates and products are 400 in the error shape; nothing is stored', async (t) => {
    const before = await stored(legacy._id);
    const at = '2026-03-11T09:00:00-06:00';
    const cases: [string, unknown, RegExp[], string[]][] = [
      [
        'a product the leg does not carry',
        { offloadDate: at, products: [{ code: '15101514', offloaded: 24_900 }] },
        [/^products\.0\.code: leg EM-L-1 does not carry product 15101514 \(it carries 15101505\)$/, /^products: product 15101505 of leg EM-L-1 is missing/],
        ['products.0.code', 'products'],
      ],
      [
        'far above the loaded volume',
        { offloadDate: at, products: [{ code: '15101505', offloaded: 250_000 }] },
        [/^products\.0\.offloaded: offloaded 250000 L of product 15101505 is more than 5% above the 25000 L loaded \(at most 26250 L\)$/],
        ['products.0.offloaded'],
      ],
      [
        'a product given twice',
        {
          offloadDate: at,
          products: [
            { code: '15101505', offloaded: 24_900 },
            { code: '15101505', offloaded: 1 },
          ],
        },
        [/^products\.1\.code: product 15101505 is given 2 times; leg EM-L-1 carries it once$/],
        ['products.1.code'],
      ],
      [
        'unloaded before loading',
        { offloadDate: '2026-03-10T07:00:00-06:00', products: [{ code: '15101505', offloaded: 24_900 }] },
        [/^offloadDate: offloadDate 2026-03-10T13:00:00.000Z is before the leg was loaded \(2026-03-10T14:00:00.000Z\)$/],
        ['offloadDate'],
      ],
      [
        'unloaded in the future',
        { offloadDate: '2026-03-21T09:00:00-06:00', products: [{ code: '15101505', offloaded: 24_900 }] },
        [/is in the future$/],
        ['offloadDate'],
      ],
      ['a negative volume', { offloadDate: at, products: [{ code: '15101505', offloaded: -1 }] }, [/offloaded must be >= 0/], ['products.0.offloaded']],
      [
        'a volume as a string',
        { offloadDate: at, products: [{ code: '15101505', offloaded: '24900' }] },
        [/offloaded must be number/],
        ['products.0.offloaded'],
      ],
      ['no products', { offloadDate: at, products: [] }, [/products must NOT have fewer than 1 items/], ['products']],
      ['no date', { products: [{ code: '15101505', offloaded: 24_900 }] }, [/offloadDate/], ['offloadDate']],
      ['an unknown field', { offloadDate: at, products: [{ code: '15101505', offloaded: 24_900 }], tenant: TENANT_B }, [/tenant/], ['tenant']],
    ];
    for (const [name, body, details, fields] of cases) {
      const res = await put(legacy._id, 'EM-L-1', body);
      t.equal(res.statusCode, 400, name);
      assertConforms(t, res, 'PUT', ROUTE);
      const error = res.json().error;
      t.equal(error.reason, 'invalid_body', `${name}: reason`);
      t.match(error.details, details, `${name}: ${error.details.join(' | ')}`);
      t.same(
        error.fields.map((f: Json) => f.name),
        fields,
        `${name}: fields`,
      );
      t.ok(error.fields.every((f: Json) => f.in === 'body'));
    }
    t.same(await stored(legacy._id), before, 'the trip is as it was');
  });

  t.test('recording needs a key with the write scope', async (t) => {
    const body = { offloadDate: '2026-03-11T09:00:00-06:00', products: [{ code: '15101505', offloaded: 24_900 }] };
    const { key } = await createApiKey(h.db, TENANT_A, 'read only', ['read']);
    const ro = await put(legacy._id, 'EM-L-1', body, key);
    t.equal(ro.statusCode, 403);
    t.match(ro.json(), { error: { reason: 'insufficient_scope' } });
    const none = await h.app.inject({
      method: 'PUT',
      url: deliveryUrl(legacy._id, 'EM-L-1'),
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({}),
    });
    t.equal(none.statusCode, 401, 'no key: 401 before the body is looked at');
  });

  t.test('MCP: the recordLegDelivery tool', async (t) => {
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const { tools } = await client.listTools();
    const tool = tools.find((x) => x.name === 'recordLegDelivery');
    t.match(tool, { annotations: { idempotentHint: true, destructiveHint: true } }, 'a write, idempotent, that may correct what a delivery recorded');
    t.notOk(tool?.annotations?.readOnlyHint, 'not read-only');
    const args = {
      id: legacy._id,
      shipmentId: 'EM-L-1',
      // A trailing space, as a spreadsheet cell may carry: trimmed (the ticket is TK-0002).
      body: { offloadDate: '2026-03-11T09:00:00-06:00', ticket: 'TK-0002 ', products: [{ code: '15101505', offloaded: 24_900 }] },
    };
    const first = await client.callTool({ name: 'recordLegDelivery', arguments: args });
    t.notOk(first.isError, JSON.stringify(first.structuredContent));
    const content = first.structuredContent as Json;
    // 100 of 25,000 L = 0.4% > 0.25%.
    t.match(legOf(content, 'EM-L-1'), {
      delivered: true,
      deliveryTicket: 'TK-0002',
      volumes: { offloaded: 24_900, shrinkageVolume: 100, shrinkagePercent: 0.4, exceedsTolerance: true },
    });
    const rest = await inject('GET', `/api/shipments/${legacy._id}`);
    t.same(content, rest.json(), 'the tool answers what REST then shows');
    const again = await client.callTool({ name: 'recordLegDelivery', arguments: args });
    t.same(again.structuredContent, content, 're-recording through MCP is a no-op');
    const bad = await client.callTool({
      name: 'recordLegDelivery',
      arguments: { ...args, body: { ...args.body, products: [{ code: '15101515', offloaded: 24_900 }] } },
    });
    t.equal(bad.isError, true);
    t.match(bad.structuredContent, { error: { code: 400, reason: 'invalid_body', details: [/does not carry product 15101515/, /is missing/] } });
    const foreign = await client.callTool({ name: 'recordLegDelivery', arguments: { ...args, id: other._id, shipmentId: 'EM-B-1' } });
    t.match(foreign, { isError: true, structuredContent: { error: { code: 404, reason: 'not_found' } } });
    const listed = await client.callTool({ name: 'getShipment', arguments: { id: legacy._id } });
    t.same(listed.structuredContent, content);
  });
}
