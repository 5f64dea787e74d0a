/**
 * GET /api/analytics/unit-economics through HTTP on the embedded engine:
 * revenue per km and per litre overall, per client, vehicle and route, hand-computed.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeTrip, leg, diesel, gasoline, CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON } from '../fixtures/documents.ts';
import type { TripPlace } from '../../lib/model/trip-document.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function unitEconomicsTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const ROUTE = '/api/analytics/unit-economics';
  const get = (query: string, key = KEY_A) => h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key } });
  const MARCH = '?startDate=2026-03-01&endDate=2026-03-31';

  const place = (id: string, city: string, state: string): TripPlace => ({
    id,
    nif: 'PEM000101AAA',
    name: `Terminal ${city}`,
    address: { street: 'Km 1', city, municipality: '001', province: city, state, country: 'MEX', zip: '00000' },
  });
  const TUXPAN = place('OR000001', 'Tuxpan', 'VER');
  const PUEBLA = place('DE000001', 'Puebla', 'PUE');
  const XALAPA = place('DE000002', 'Xalapa', 'VER');
  const day = (d: string) => ({ loadDate: `${d}T06:00`, unloadDate: `${d}T16:00` });
  const A = { tenant: TENANT_A, origin: TUXPAN };
  await insertTrips(h.db, [
    // Tuxpan → Puebla, VEH-A, CLIENT_COMPANY: 3 legs, 700 km, 35,000 L loaded, 17,500 revenue (the 500 toll is excluded).
    makeTrip({
      ...A,
      destination: PUEBLA,
      client: CLIENT_COMPANY,
      vehicle: { id: 'VEH-A', config: 'T3S2' },
      legs: [leg({ ...day('2026-03-05'), distanceKm: 300, products: [diesel(20_000, 19_980)], pricing: { billedFreight: 10_000, toll: 500 } })],
    }),
    makeTrip({
      ...A,
      destination: PUEBLA,
      client: CLIENT_COMPANY,
      vehicle: { id: 'VEH-A', config: 'T3S2' },
      legs: [
        leg({ ...day('2026-03-10'), distanceKm: 300, products: [diesel(10_000, 9_990)], pricing: { billedFreight: 5_000 } }),
        leg({ ...day('2026-03-11'), distanceKm: 100, products: [gasoline(5_000, 5_000)], pricing: { billedFreight: 2_500 } }),
      ],
    }),
    // Tuxpan → Xalapa, VEH-B, CLIENT_COMPANY_2: 250 km, 16,000 L, 8,000.
    makeTrip({
      ...A,
      destination: XALAPA,
      client: CLIENT_COMPANY_2,
      vehicle: { id: 'VEH-B', config: 'T3S2S4' },
      legs: [leg({ ...day('2026-03-20'), distanceKm: 250, products: [diesel(16_000, 16_000)], pricing: { billedFreight: 8_000 } })],
    }),
    // Offloaded in April: outside March.
    makeTrip({
      ...A,
      destination: XALAPA,
      client: CLIENT_COMPANY_2,
      vehicle: { id: 'VEH-B' },
      legs: [leg({ ...day('2026-04-02'), distanceKm: 250, pricing: { billedFreight: 8_000 } })],
    }),
    // No km and no litres: both ratios null with a reason.
    makeTrip({
      tenant: TENANT_A,
      origin: place('OR000002', 'Veracruz', 'VER'),
      destination: place('DE000003', 'Orizaba', 'VER'),
      client: CLIENT_PERSON,
      vehicle: { id: 'VEH-C' },
      legs: [leg({ ...day('2026-03-25'), distanceKm: 0, products: [], pricing: { billedFreight: 1_000 } })],
    }),
    // Another tenant, same route and vehicle id.
    makeTrip({
      tenant: TENANT_B,
      origin: TUXPAN,
      destination: PUEBLA,
      client: CLIENT_COMPANY,
      vehicle: { id: 'VEH-A' },
      legs: [leg({ ...day('2026-03-05'), distanceKm: 1_000, pricing: { billedFreight: 99_000 } })],
    }),
  ]);

  t.test('per km and per litre (loaded), by client, vehicle and route', async (t) => {
    const res = await get(MARCH);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.match(body, {
      tenant: TENANT_A,
      computedAt: NOW.toISOString(),
      period: { startDate: '2026-03-01', endDate: '2026-03-31' },
      parameters: { litresBasis: 'loaded' },
    });
    // 26,500 / 950 km = 27.894…; 26,500 / 51,000 L = 0.51960…
    t.same(body.totals, {
      trips: 4,
      legs: 5,
      revenue: 26_500,
      km: 950,
      litres: 51_000,
      loadedLitres: 51_000,
      offloadedLitres: 50_970,
      revenuePerKm: { value: 27.89 },
      revenuePerLitre: { value: 0.5196 },
      // No received CFDI: the only cost is the first trip's 500 toll, which the client is billed too.
      cost: 500,
      costPerKm: { value: 0.53 }, // 500 / 950
      costPerLitre: { value: 0.0098 }, // 500 / 51,000
      costPerTrip: { value: 125 }, // 500 / 4
      margin: 26_500, // 26,500 + 500 − 500
      marginPerKm: { value: 27.89 },
    });
    // Revenue side here; costs and margins per group in test/analytics/unit-costs.ts.
    t.match(body.byClient, {
      total: 3,
      listed: 3,
      limit: 20,
      data: [
        {
          client: CLIENT_COMPANY,
          trips: 2,
          legs: 3,
          revenue: 17_500,
          km: 700,
          litres: 35_000,
          loadedLitres: 35_000,
          offloadedLitres: 34_970,
          revenuePerKm: { value: 25 },
          revenuePerLitre: { value: 0.5 },
        },
        {
          client: CLIENT_COMPANY_2,
          trips: 1,
          legs: 1,
          revenue: 8_000,
          km: 250,
          litres: 16_000,
          loadedLitres: 16_000,
          offloadedLitres: 16_000,
          revenuePerKm: { value: 32 },
          revenuePerLitre: { value: 0.5 },
        },
        {
          client: CLIENT_PERSON,
          trips: 1,
          legs: 1,
          revenue: 1_000,
          km: 0,
          litres: 0,
          loadedLitres: 0,
          offloadedLitres: 0,
          revenuePerKm: { value: null, reason: 'no km (division by zero)' },
          revenuePerLitre: { value: null, reason: 'no loaded litres (division by zero)' },
        },
      ],
    });
    t.same(
      body.byVehicle.data.map((v: { vehicle: string; config: string; revenue: number }) => [v.vehicle, v.config, v.revenue]),
      [
        ['VEH-A', 'T3S2', 17_500],
        ['VEH-B', 'T3S2S4', 8_000],
        ['VEH-C', 'T3S2', 1_000],
      ],
    );
    t.equal(body.routes.total, 3);
    t.match(body.routes.data[0], {
      routeKey: 'OR000001→DE000001',
      origin: { id: 'OR000001', name: 'Terminal Tuxpan', city: 'Tuxpan', state: 'VER' },
      destination: { id: 'DE000001', name: 'Terminal Puebla', city: 'Puebla', state: 'PUE' },
      distanceKm: 233.3,
      trips: 2,
      legs: 3,
      revenue: 17_500,
      km: 700,
      litres: 35_000,
      loadedLitres: 35_000,
      offloadedLitres: 34_970,
      revenuePerKm: { value: 25 },
      revenuePerLitre: { value: 0.5 },
    });
    t.match(body.routes.data[1], { routeKey: 'OR000001→DE000002', distanceKm: 250, revenuePerKm: { value: 32 } });
    t.match(body.routes.data[2], { routeKey: 'OR000002→DE000003', revenuePerKm: { value: null }, revenuePerLitre: { value: null } });
  });

  t.test('offloaded litres, filters, limit, empty period', async (t) => {
    const off = (await get(`${MARCH}&litresBasis=offloaded`)).json();
    t.match(off.totals, { litres: 50_970, revenuePerLitre: { value: 0.5199 } });
    t.match(off.parameters, { litresBasis: 'offloaded' });
    const veh = (await get(`${MARCH}&vehicle=VEH-B`)).json();
    t.match(veh, { filters: { vehicle: 'VEH-B', client: null }, totals: { trips: 1, revenue: 8_000 } });
    const capped = (await get(`${MARCH}&limit=1`)).json();
    t.match(capped.routes, { total: 3, listed: 1, limit: 1 });
    const empty = await get('?startDate=2025-03-01&endDate=2025-03-31');
    assertConforms(t, empty, 'GET', ROUTE);
    t.same(empty.json().totals, {
      trips: 0,
      legs: 0,
      revenue: 0,
      km: 0,
      litres: 0,
      loadedLitres: 0,
      offloadedLitres: 0,
      revenuePerKm: { value: null, reason: 'no km (division by zero)' },
      revenuePerLitre: { value: null, reason: 'no loaded litres (division by zero)' },
      cost: 0,
      costPerKm: { value: null, reason: 'no km (division by zero)' },
      costPerLitre: { value: null, reason: 'no litres (division by zero)' },
      costPerTrip: { value: null, reason: 'no trips (division by zero)' },
      margin: 0,
      marginPerKm: { value: null, reason: 'no km (division by zero)' },
    });
  });

  t.test('tenant isolation', async (t) => {
    const b = await get(MARCH, KEY_B);
    assertConforms(t, b, 'GET', ROUTE);
    t.match(b.json(), { tenant: TENANT_B, totals: { trips: 1, revenue: 99_000, km: 1_000 } });
  });

  t.test('parameter validation', async (t) => {
    for (const [query, detail] of [
      ['?litresBasis=net', /litresBasis must be one of: loaded, offloaded/],
      ['?driver=DRV-1', /unknown query parameter 'driver'/],
    ] as const) {
      const res = await get(query);
      t.equal(res.statusCode, 400, query);
      assertConforms(t, res, 'GET', ROUTE);
      t.match(res.json().error.details.join(' | '), detail, query);
    }
  });
}
