/**
 * GET /api/analytics/fleet-utilization through HTTP on the embedded engine:
 * per-vehicle and per-driver utilization and idle vehicles, hand-computed.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeTrip, leg, diesel, gasoline, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import { fleetUtilizationRollups } from '../../lib/analytics/fleet-utilization-rollup-kind.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';
import { connect, listen } from '../helpers/mcp.ts';

export default async function fleetUtilizationTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/fleet-utilization';
  const get = (query: string, key = KEY_A) => h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
  const PERIOD = '?startDate=2026-03-01&endDate=2026-03-10'; // 10 days; asOf = end of 03-10

  const veh = (id: string) => ({ id, plate: `P-${id}` });
  const drv = (id: string) => ({ id, name: `Driver ${id}` });
  const A = { tenant: TENANT_A };
  const hauls = [
    // VEH-A: active 03-02, 03-03 (a two-day leg), 03-05, 03-06.
    makeTrip({
      ...A,
      client: CLIENT_COMPANY,
      vehicle: veh('VEH-A'),
      driver: drv('DRV-1'),
      legs: [
        leg({
          loadDate: '2026-03-02T08:00',
          unloadDate: '2026-03-03T10:00',
          distanceKm: 300,
          products: [diesel(20_000, 19_990)],
          pricing: { billedFreight: 10_000, toll: 700 },
        }),
      ],
    }),
    makeTrip({
      ...A,
      client: CLIENT_COMPANY_2,
      vehicle: veh('VEH-A'),
      driver: drv('DRV-2'),
      legs: [
        leg({
          loadDate: '2026-03-05T08:00',
          unloadDate: '2026-03-05T18:00',
          distanceKm: 200,
          products: [diesel(10_000, 10_000)],
          pricing: { billedFreight: 5_000 },
        }),
        leg({
          loadDate: '2026-03-06T08:00',
          unloadDate: '2026-03-06T12:00',
          distanceKm: 100,
          products: [gasoline(5_000, 4_990)],
          pricing: { billedFreight: 2_500 },
        }),
      ],
    }),
    // VEH-B: a leg from 02-27 to 03-01 counts one active day in the period; its 03-12 trip is after the period (and asOf).
    makeTrip({
      ...A,
      client: CLIENT_COMPANY,
      vehicle: veh('VEH-B'),
      driver: drv('DRV-1'),
      legs: [
        leg({
          loadDate: '2026-02-27T08:00',
          unloadDate: '2026-03-01T10:00',
          distanceKm: 500,
          products: [diesel(30_000, 29_950)],
          pricing: { billedFreight: 8_000 },
        }),
      ],
    }),
    makeTrip({
      ...A,
      client: CLIENT_COMPANY,
      vehicle: veh('VEH-B'),
      driver: drv('DRV-2'),
      legs: [leg({ loadDate: '2026-03-12T08:00', unloadDate: '2026-03-12T18:00', distanceKm: 400 })],
    }),
    // VEH-C: last seen 02-01 → idle as of 03-10 (37 days ≥ 14).
    makeTrip({
      ...A,
      client: CLIENT_COMPANY,
      vehicle: veh('VEH-C'),
      driver: drv('DRV-1'),
      legs: [leg({ loadDate: '2026-02-01T08:00', unloadDate: '2026-02-01T18:00' })],
    }),
    // VEH-D: a leg without km: revenue per km is null with a reason.
    makeTrip({
      ...A,
      client: CLIENT_COMPANY,
      vehicle: veh('VEH-D'),
      driver: drv('DRV-3'),
      legs: [leg({ loadDate: '2026-03-08T08:00', unloadDate: '2026-03-08T18:00', distanceKm: 0, pricing: { billedFreight: 1_000 } })],
    }),
    // Another tenant, same vehicle id and period.
    makeTrip({
      tenant: TENANT_B,
      client: CLIENT_COMPANY,
      vehicle: veh('VEH-A'),
      driver: drv('DRV-1'),
      legs: [leg({ loadDate: '2026-03-01T08:00', unloadDate: '2026-03-09T18:00', distanceKm: 9_999 })],
    }),
  ];
  await insertTrips(h.db, hauls);

  t.test('per vehicle', async (t) => {
    const res = await get(PERIOD);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body, { tenant: TENANT_A, groupBy: 'vehicle', asOf: { date: '2026-03-10' }, filters: { client: null, vehicle: null, driver: null } });
    t.match(body.parameters, { litresBasis: 'loaded', idleVehicleDays: 14, idleVehicleDaysSource: 'default', fleetLookbackDays: 365 });
    t.same(body.rows, [
      {
        key: 'VEH-A',
        label: 'P-VEH-A',
        trips: 2,
        legs: 3,
        legsInTransit: 0,
        activeDays: 4,
        daysInPeriod: 10,
        utilization: { value: 0.4 },
        litres: 35_000,
        litresBasis: 'loaded',
        km: 600,
        revenue: 17_500,
        revenuePerKm: { value: 29.17 },
      },
      {
        key: 'VEH-B',
        label: 'P-VEH-B',
        trips: 1,
        legs: 1,
        legsInTransit: 0,
        activeDays: 1,
        daysInPeriod: 10,
        utilization: { value: 0.1 },
        litres: 30_000,
        litresBasis: 'loaded',
        km: 500,
        revenue: 8_000,
        revenuePerKm: { value: 16 },
      },
      {
        key: 'VEH-D',
        label: 'P-VEH-D',
        trips: 1,
        legs: 1,
        legsInTransit: 0,
        activeDays: 1,
        daysInPeriod: 10,
        utilization: { value: 0.1 },
        litres: 20_000,
        litresBasis: 'loaded',
        km: 0,
        revenue: 1_000,
        revenuePerKm: { value: null, reason: 'no km (division by zero)' },
      },
    ]);
    t.same(body.totals, {
      units: 3,
      trips: 4,
      legs: 5,
      legsInTransit: 0,
      activeUnitDays: 6,
      unitDaysInPeriod: 30,
      utilization: { value: 0.2 },
      litres: 85_000,
      km: 1_100,
      revenue: 26_500,
      revenuePerKm: { value: 24.09 },
    });
    t.same(body.idleVehicles, {
      fleetSize: 4,
      idleCount: 1,
      data: [{ vehicle: 'VEH-C', plate: 'P-VEH-C', lastActivity: new Date('2026-02-01T18:00:00-06:00').toISOString(), daysSinceLastActivity: 37 }],
    });
  });

  t.test('per driver, offloaded litres, filters', async (t) => {
    const res = await get(`${PERIOD}&groupBy=driver&litresBasis=offloaded`);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.same(
      body.rows.map((r: { key: string; label: string; trips: number; activeDays: number; litres: number }) => [
        r.key,
        r.label,
        r.trips,
        r.activeDays,
        r.litres,
      ]),
      [
        ['DRV-1', 'Driver DRV-1', 2, 3, 19_990 + 29_950],
        ['DRV-2', 'Driver DRV-2', 1, 2, 10_000 + 4_990],
        ['DRV-3', 'Driver DRV-3', 1, 1, 19_980],
      ],
    );
    const one = (await get(`${PERIOD}&vehicle=VEH-A`)).json();
    t.same(
      one.rows.map((r: { key: string }) => r.key),
      ['VEH-A'],
    );
    t.match(one.idleVehicles, { fleetSize: 1, idleCount: 0, data: [] });
    const byClient = (await get(`${PERIOD}&client=${CLIENT_COMPANY_2}`)).json();
    t.match(byClient.totals, { units: 1, trips: 1, legs: 2, revenue: 7_500 });
    const empty = await get('?startDate=2025-03-01&endDate=2025-03-10');
    assertConforms(t, empty, 'GET', ROUTE);
    t.match(empty.json().totals, { units: 0, utilization: { value: null, reason: /division by zero/ }, revenuePerKm: { value: null } });
  });

  t.test('a leg in transit: activity and loaded litres, but no offloaded litres', async (t) => {
    // VEH-E: a delivered leg (03-02, 20,000 → 19,900 L) and the next one loaded on 03-09, still on the road.
    await insertTrips(h.db, [
      makeTrip({
        ...A,
        client: CLIENT_COMPANY,
        vehicle: veh('VEH-E'),
        driver: drv('DRV-9'),
        legs: [
          leg({
            loadDate: '2026-03-02T08:00',
            unloadDate: '2026-03-02T18:00',
            distanceKm: 100,
            products: [diesel(20_000, 19_900)],
            pricing: { billedFreight: 4_000 },
          }),
          leg({
            loadDate: '2026-03-09T08:00',
            unloadDate: null,
            distanceKm: 150,
            products: [diesel(30_000, null)],
            status: 2,
            pricing: { billedFreight: 6_000 },
          }),
        ],
      }),
    ]);
    const loaded = await get(`${PERIOD}&vehicle=VEH-E`);
    assertConforms(t, loaded, 'GET', ROUTE);
    t.match(
      loaded.json().rows,
      [{ key: 'VEH-E', trips: 1, legs: 2, legsInTransit: 1, activeDays: 2, litres: 50_000, litresBasis: 'loaded', km: 250, revenue: 10_000 }],
      'loaded basis: both legs',
    );
    const offloaded = (await get(`${PERIOD}&vehicle=VEH-E&litresBasis=offloaded`)).json();
    t.match(
      offloaded.rows,
      [{ key: 'VEH-E', legs: 2, legsInTransit: 1, litres: 19_900, litresBasis: 'offloaded' }],
      'offloaded basis: only the delivered leg, never 0 L for the one on the road',
    );
    t.match(offloaded.totals, { legs: 2, legsInTransit: 1, litres: 19_900 });
  });

  // A fleet of thousands is a bounded answer: `limit` rows of page `page`, by id, and at most `limit` idle vehicles;
  // the totals and idleCount still count every unit (the three rows and the totals above, by hand).
  t.test('rows and idle vehicles are paged by limit and page', async (t) => {
    // With VEH-E (the leg in transit above) the period's units by id: VEH-A, VEH-B, VEH-D, VEH-E (VEH-C is idle).
    const all = (await get(PERIOD)).json();
    t.same(
      all.rows.map((r: { key: string }) => r.key),
      ['VEH-A', 'VEH-B', 'VEH-D', 'VEH-E'],
    );
    const first = await get(`${PERIOD}&limit=3`);
    t.equal(first.statusCode, 200, first.body);
    assertConforms(t, first, 'GET', ROUTE);
    t.same(first.json().rows, all.rows.slice(0, 3), 'page 1: the first three rows');
    t.same(first.json().totals, all.totals, 'totals of every unit, whatever the page');
    t.equal(first.json().totals.units, 4);
    const second = (await get(`${PERIOD}&limit=3&page=2`)).json();
    t.same(
      second.rows.map((r: { key: string }) => r.key),
      ['VEH-E'],
    );
    t.same((await get(`${PERIOD}&limit=3&page=3`)).json().rows, [], 'past the last row: none');
    // As of 03-31 every unit is idle (14 days or more): VEH-C longest (last seen 02-01: 58 days), then the others.
    const idle = (await get('?startDate=2026-03-22&endDate=2026-03-31&limit=1')).json().idleVehicles;
    t.match(idle, { fleetSize: 5, idleCount: 5, data: [{ vehicle: 'VEH-C', daysSinceLastActivity: 58 }] });
    t.equal(idle.data.length, 1, 'at most limit idle vehicles');
  });

  t.test('tenant isolation', async (t) => {
    const b = await get(PERIOD, KEY_B);
    assertConforms(t, b, 'GET', ROUTE);
    t.match(b.json(), { tenant: TENANT_B, totals: { units: 1, km: 9_999 }, rows: [{ key: 'VEH-A', activeDays: 9 }] });
    const a = (await get(PERIOD)).json();
    t.equal(a.rows[0].km, 600, "B's trip on the same vehicle id never reaches A");
  });

  t.test('parameter validation', async (t) => {
    for (const [query, detail] of [
      ['?groupBy=client', /groupBy must be one of: vehicle, driver/],
      ['?litresBasis=gross', /litresBasis must be one of: loaded, offloaded/],
      ['?limit=1001', /limit must be an integer between 1 and 1000/],
      ['?limit=0', /limit must be an integer between 1 and 1000/],
      ['?page=0', /page must be an integer between 1 and 500/],
      ['?size=5', /unknown query parameter 'size'/],
    ] as const) {
      const res = await get(query);
      t.equal(res.statusCode, 400, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(res.json().error.details.join(' | '), detail, query);
    }
  });

  // Last: the same reports from the days kept on write (docs/rollups.md) once the store is built (the trips above were
  // inserted directly, as a bulk load: a rebuild keeps them). Every answer is the one computed by hand above.
  t.test('a leg with a mistyped unloading date is credited 31 days at most, its loading day the first', async (t) => {
    // Loaded 2026-01-01, "unloaded" 2026-03-15 (a typo): 01-01..01-31, nothing in February.
    await insertTrips(h.db, [
      makeTrip({
        ...A,
        client: CLIENT_COMPANY,
        vehicle: veh('VEH-X'),
        driver: drv('DRV-X'),
        legs: [
          leg({
            loadDate: '2026-01-01T08:00',
            unloadDate: '2026-03-15T08:00',
            distanceKm: 100,
            products: [diesel(1_000, 1_000)],
            pricing: { billedFreight: 1_000 },
          }),
        ],
      }),
    ]);
    const january = await get('?startDate=2026-01-01&endDate=2026-01-31&vehicle=VEH-X');
    assertConforms(t, january, 'GET', ROUTE);
    t.match(january.json().rows, [{ key: 'VEH-X', activeDays: 31 }], 'every day of January');
    const february = (await get('?startDate=2026-02-01&endDate=2026-02-28&vehicle=VEH-X')).json();
    t.same(february.rows, [], 'no activity in February');
    // Nor for the idle check: its activity ended with its last credited day (01-31), not the mistyped 03-15 (which,
    // capped at asOf, made it active on 02-28 and never idle). As of 02-28: 28 days.
    t.same(
      february.idleVehicles,
      {
        fleetSize: 1,
        idleCount: 1,
        data: [{ vehicle: 'VEH-X', plate: 'P-VEH-X', lastActivity: new Date('2026-01-31T23:59:59.999-06:00').toISOString(), daysSinceLastActivity: 28 }],
      },
      'idle since the last day credited to the leg',
    );
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const viaMcp = await client.callTool({ name: 'auditFleetUtilization', arguments: { startDate: '2026-02-01', endDate: '2026-02-28', vehicle: 'VEH-X' } });
    t.same((viaMcp.structuredContent as { rows: unknown[] }).rows, [], 'the same through MCP');
  });

  t.test('the days kept on write answer the same', async (t) => {
    const queries = [
      PERIOD,
      `${PERIOD}&groupBy=driver&litresBasis=offloaded`,
      `${PERIOD}&vehicle=VEH-A`,
      `${PERIOD}&client=${CLIENT_COMPANY_2}`,
      `${PERIOD}&vehicle=VEH-E`,
      `${PERIOD}&vehicle=VEH-E&litresBasis=offloaded`,
      '?startDate=2025-03-01&endDate=2025-03-10',
      '?startDate=2026-02-01&endDate=2026-03-31&groupBy=driver',
      '?startDate=2026-01-01&endDate=2026-01-31&vehicle=VEH-X',
      '?startDate=2026-02-01&endDate=2026-02-28&vehicle=VEH-X',
    ];
    const fromTrips = await Promise.all(queries.map(async (q) => (await get(q)).json<{ computedAt: string }>()));
    await fleetUtilizationRollups.rebuild(h.db);
    t.ok(await fleetUtilizationRollups.ready(h.db), 'the store is built');
    for (const [i, q] of queries.entries()) {
      const { computedAt: _a, ...kept } = (await get(q)).json<{ computedAt: string }>();
      const { computedAt: _b, ...reference } = fromTrips[i]!;
      t.same(kept, reference, q);
    }
  });
}
