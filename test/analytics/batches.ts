/**
 * The audits fold their rows as they arrive, AUDIT_BATCH_SIZE per round trip
 * (an aggregation cursor; the launcher's engine batches it as MongoDB does):
 * a period with more trips than two batches,
 * through HTTP, must count every trip exactly once — a row dropped or
 * repeated at a batch boundary changes the totals — and the capped lists
 * (worst legs, unbilled trips) must be the first `limit` of all of them.
 * The cash-inflow forecast's payment history is batched the same way.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeFinancialDoc, makeTrip, leg, diesel, payment, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { AUDIT_BATCH_SIZE } from '../../lib/db/pipeline.ts';
import { streamShrinkageRows } from '../../lib/analytics/trip-audits-repo.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { parseMxDateTime } from '../../lib/time/mexico-city.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function batchesTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const get = (path: string) => h.app.inject({ method: 'GET', url: path, headers: { 'x-api-key': KEY_A } });
  const MARCH = 'startDate=2026-03-01&endDate=2026-03-31';

  // N trips delivered in March (2 batches and a partial third), one leg each: 10,000 L loaded, 9,900 offloaded (1 %,
  // beyond the 0 % default tolerance), on 5 vehicles and 2 clients; 3 of 4 billed an hour after delivery.
  const N = 2 * AUDIT_BATCH_SIZE + 17;
  const day = (k: number) => String(1 + (k % 28)).padStart(2, '0');
  const marchTrips = Array.from({ length: N }, (_, k) => {
    const client = k % 3 === 0 ? CLIENT_COMPANY_2 : CLIENT_COMPANY;
    // Every billed trip's invoice has one partial payment two hours later (the payment history of the cash-inflow forecast).
    const invoice =
      k % 4 === 0 ? null : makeFinancialDoc({ tenant: TENANT_A, client, date: `2026-03-${day(k)}T18:00`, payments: [payment(100, `2026-03-${day(k)}T20:00`)] });
    const trip = makeTrip({
      tenant: TENANT_A,
      client,
      idFinan: invoice?.id ?? null,
      vehicle: { id: `VEH-${k % 5}`, plate: `P-${k % 5}` },
      legs: [
        leg({
          loadDate: `2026-03-${day(k)}T06:00`,
          unloadDate: `2026-03-${day(k)}T17:00`,
          distanceKm: 100,
          products: [diesel(10_000, 9_900)],
          pricing: { billedFreight: 1_000 },
        }),
      ],
    });
    return { trip, invoice };
  });
  // Outside the period (April) and another tenant's March trips: never counted.
  const april = Array.from({ length: 10 }, () =>
    makeTrip({ tenant: TENANT_A, legs: [leg({ loadDate: '2026-04-05T06:00', unloadDate: '2026-04-05T17:00', products: [diesel(10_000, 9_000)] })] }),
  );
  const other = Array.from({ length: 30 }, () =>
    makeTrip({ tenant: TENANT_B, legs: [leg({ loadDate: '2026-03-05T06:00', unloadDate: '2026-03-05T17:00', products: [diesel(10_000, 9_000)] })] }),
  );
  await insertTrips(h.db, [...marchTrips.map((x) => x.trip), ...april, ...other]);
  await financialDocs(h.db).insertMany(marchTrips.flatMap((x) => (x.invoice ? [withDerivedFields(x.invoice)] : [])));

  const billed = marchTrips.filter((x) => x.invoice).length;
  const unbilled = N - billed;

  t.test('the rows reach the service in several round trips', async (t) => {
    const { client, db } = await connectMongo(h.engine.uri, h.db.databaseName, { driver: { monitorCommands: true } });
    t.teardown(() => client.close());
    const commands: string[] = [];
    const batches: number[] = [];
    client.on('commandStarted', (e) => commands.push(e.commandName));
    client.on('commandSucceeded', (e) => {
      const cursor = (e.reply as { cursor?: { firstBatch?: unknown[]; nextBatch?: unknown[] } }).cursor;
      const batch = cursor?.firstBatch ?? cursor?.nextBatch;
      if (batch) batches.push(batch.length);
    });
    const start = parseMxDateTime('2026-03-01T00:00');
    const end = parseMxDateTime('2026-03-31T23:59');
    let rows = 0;
    for await (const _ of streamShrinkageRows(db, TENANT_A, { start, end }, 10_000)) rows += 1;
    t.equal(rows, N);
    t.equal(commands.filter((c) => c === 'aggregate').length, 1, 'one pipeline run');
    t.same(batches, [AUDIT_BATCH_SIZE, AUDIT_BATCH_SIZE, N - 2 * AUDIT_BATCH_SIZE], 'rows in batches of AUDIT_BATCH_SIZE (getMore)');
  });

  t.test('shrinkage: every trip and leg once, worst legs the first of all', async (t) => {
    const res = await get(`/api/analytics/discounts-and-shrinkage?${MARCH}&limit=7`);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', '/api/analytics/discounts-and-shrinkage');
    const s = res.json().shrinkage;
    t.match(s.totals, {
      trips: N,
      legs: N,
      loadedLitres: N * 10_000,
      offloadedLitres: N * 9_900,
      shrinkageLitres: N * 100,
      legsOutOfTolerance: N,
      excessLitres: N * 100,
    });
    t.same(s.byClient.data.map((c: { client: string; trips: number }) => [c.client, c.trips]).sort(), [
      [CLIENT_COMPANY, marchTrips.filter((x) => x.trip.client === CLIENT_COMPANY).length],
      [CLIENT_COMPANY_2, marchTrips.filter((x) => x.trip.client === CLIENT_COMPANY_2).length],
    ]);
    // Equal value and percent everywhere: the list is by leg id.
    const legIds = marchTrips.map((x) => x.trip.shipments[0]!.id).sort();
    t.same({ total: s.worstLegs.total, listed: s.worstLegs.listed }, { total: N, listed: 7 });
    t.same(
      s.worstLegs.data.map((l: { legId: string }) => l.legId),
      legIds.slice(0, 7),
    );
  });

  t.test('dispatch-to-bill: every delivered trip once, unbilled the oldest of all', async (t) => {
    const res = await get(`/api/analytics/dispatch-to-bill?${MARCH}&limit=100`);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', '/api/analytics/dispatch-to-bill');
    const body = res.json();
    t.match(body.summary, {
      deliveredTrips: N,
      billedTrips: billed,
      unbilledCount: unbilled,
      unbilledValue: unbilled * 1_000,
      medianLagDays: 0.04,
      preBilledCount: 0,
    });
    t.equal(
      body.byClient.data.reduce((s: number, c: { deliveredTrips: number }) => s + c.deliveredTrips, 0),
      N,
    );
    const expected = marchTrips
      .filter((x) => !x.invoice)
      .map((x) => ({ id: String(x.trip._id), at: new Date(x.trip.shipments[0]!.unloadDate!).toISOString() }))
      .sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : 1))
      .slice(0, 100)
      .map((x) => x.id);
    t.same({ total: body.unbilledTrips.total, listed: body.unbilledTrips.listed }, { total: unbilled, listed: 100 });
    t.same(
      body.unbilledTrips.data.map((u: { tripId: string }) => u.tripId),
      expected,
    );
  });

  t.test('fleet utilization: every trip once per vehicle', async (t) => {
    const res = await get(`/api/analytics/fleet-utilization?${MARCH}`);
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.equal(body.totals.trips, N);
    t.equal(body.totals.legs, N);
    t.same(
      body.rows.map((r: { key: string; trips: number; km: number }) => [r.key, r.trips, r.km]),
      [0, 1, 2, 3, 4].map((v) => {
        const n = marchTrips.filter((x) => x.trip.vehicle.id === `VEH-${v}`).length;
        return [`VEH-${v}`, n, n * 100];
      }),
    );
  });

  t.test('cash-inflow: every payment of the history once', async (t) => {
    const res = await get('/api/analytics/cash-inflow-forecast?startDate=2026-03-01&endDate=2026-04-19');
    t.equal(res.statusCode, 200, res.body);
    const body = res.json();
    t.equal(body.parameters.paymentDelay.paymentsInHistory, billed, 'one payment per billed trip, all in the window');
    t.equal(body.receivables.openInvoices, billed, 'each still owes the rest');
  });
}
