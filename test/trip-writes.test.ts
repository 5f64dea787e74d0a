/**
 * Writes of trips that must not lose each other's changes (issue 21): a
 * delivery recorded while another delivery or an import writes the same trip.
 * Writes are conditional on the version read (`lastUpdate`, which every write
 * moves); the loser reads again and applies its change on the new version.
 */
import t from 'tap';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { makeTrip, leg, diesel } from './fixtures/documents.ts';
import { trips } from '../lib/db/collections.ts';
import { insertTripsIfAbsent, replaceTripsIfUnchanged } from '../lib/trips/trips-repo.ts';
import { putImportedTrips } from '../lib/trips/put-imported-trips.ts';
import { nextLastUpdate } from '../lib/trips/leg-delivery.ts';
import { importDeliveries } from '../lib/trips/import-deliveries.ts';

const h = await startHarness(t);
const ctx = { db: h.db, config: h.config, now: () => new Date() };
const onTheRoad = (shipment: string) => leg({ shipment, loadDate: '2026-03-09T08:00', unloadDate: null, status: 2, products: [diesel(10_000, null)] });
const put = (id: string, shipment: string, offloaded: number) =>
  h.app.inject({
    method: 'PUT',
    url: `/api/shipments/${id}/legs/${shipment}/delivery`,
    headers: { 'x-api-key': KEY_A },
    payload: { offloadDate: '2026-03-10T09:00:00-06:00', products: [{ code: '15101505', offloaded }] },
  });

t.test('nextLastUpdate always moves forward', async (t) => {
  const now = new Date('2026-03-20T18:00:00.000Z');
  t.equal(nextLastUpdate(undefined, now), now.toISOString());
  t.equal(nextLastUpdate('2026-03-01T00:00:00.000Z', now), now.toISOString());
  t.equal(nextLastUpdate(now.toISOString(), now), '2026-03-20T18:00:00.001Z', 'the same millisecond: one later');
  t.equal(nextLastUpdate('2026-03-21T00:00:00.000Z', now), '2026-03-21T00:00:00.001Z', 'a clock behind the stored version still moves it');
});

t.test('a conditional replace never overwrites a newer version; an insert never overwrites', async (t) => {
  const trip = { ...makeTrip({ tenant: TENANT_A, legs: [onTheRoad('W-1-1')] }), lastUpdate: '2026-03-09T00:00:00.000Z' };
  await trips(h.db).insertOne(trip);
  const newer = { ...trip, nCed: 'CED-NEWER', lastUpdate: '2026-03-10T00:00:00.000Z' };
  t.same(
    [...(await replaceTripsIfUnchanged(h.db, TENANT_A, [{ trip: newer, readLastUpdate: trip.lastUpdate }], 5000))],
    [trip._id],
    'the version read: written',
  );
  const stale = { ...trip, nCed: 'CED-STALE', lastUpdate: '2026-03-11T00:00:00.000Z' };
  t.same(
    [...(await replaceTripsIfUnchanged(h.db, TENANT_A, [{ trip: stale, readLastUpdate: trip.lastUpdate }], 5000))],
    [],
    'read before the newer write: not written',
  );
  t.equal((await trips(h.db).findOne({ _id: trip._id }))!.nCed, 'CED-NEWER');
  t.same([...(await insertTripsIfAbsent(h.db, TENANT_A, [{ ...trip, nCed: 'CED-INSERT' }]))], [], 'exists: not inserted');
  t.equal((await trips(h.db).findOne({ _id: trip._id }))!.nCed, 'CED-NEWER');
});

t.test('deliveries of several legs of one trip recorded at once: none is lost', async (t) => {
  const trip = makeTrip({ tenant: TENANT_A, legs: ['C-1', 'C-2', 'C-3', 'C-4'].map(onTheRoad) });
  await trips(h.db).insertOne(trip);
  const answers = await Promise.all(trip.shipments.map((l, i) => put(trip._id, l.shipment, 9_990 - i)));
  t.same(
    answers.map((a) => a.statusCode),
    [200, 200, 200, 200],
    answers.map((a) => a.body.slice(0, 200)).join('\n'),
  );
  const stored = (await trips(h.db).findOne({ _id: trip._id }))!;
  t.same(
    stored.shipments.map((l) => l.products[0]!.offloaded),
    [9_990, 9_989, 9_988, 9_987],
    'every delivery is stored',
  );
});

t.test('an import of the trip while a delivery is recorded: the delivery is merged, never overwritten', async (t) => {
  const trip = { ...makeTrip({ tenant: TENANT_A, legs: [onTheRoad('I-1-1'), onTheRoad('I-1-2')] }), lastUpdate: '2026-03-09T00:00:00.000Z' };
  await trips(h.db).insertOne(trip);
  const imported = { ...trip, nRel: 'REL-REIMPORTED' };
  delete (imported as { lastUpdate?: string }).lastUpdate;
  const [delivery, written] = await Promise.all([put(trip._id, 'I-1-1', 9_950), putImportedTrips(ctx, TENANT_A, [imported], new Date())]);
  t.equal(delivery.statusCode, 200, delivery.body);
  t.same([...written], [trip._id], 'the import wrote its change');
  const stored = (await trips(h.db).findOne({ _id: trip._id }))!;
  t.equal(stored.nRel, 'REL-REIMPORTED', "the import's change is there");
  t.match(stored.shipments[0], { products: [{ offloaded: 9_950 }], delivery: { source: 'recorded' } }, 'and so is the delivery');
  t.same([...(await putImportedTrips(ctx, TENANT_A, [imported], new Date()))], [], 'importing it again writes nothing');
});

t.test('deliveries stopped midway (deadline, client gone): each trip whole, sending them again completes them', async (t) => {
  const many = Array.from({ length: 1200 }, (_, i) =>
    makeTrip({ _id: `STOP-${String(i).padStart(4, '0')}`, tenant: TENANT_A, legs: [onTheRoad(`ST-${i}-1`), onTheRoad(`ST-${i}-2`)] }),
  );
  await trips(h.db).insertMany(many);
  const rows = many.flatMap((trip) =>
    trip.shipments.map((l) => ({
      tripId: trip._id,
      shipmentId: l.shipment,
      productCode: '15101505',
      offloaded: 9_950,
      offloadDate: '2026-03-10T09:00:00-06:00',
    })),
  );
  // The clock is read once per round of 500 trips: the request is given up during the second round, which still finishes; the third never starts.
  const stop = new AbortController();
  let rounds = 0;
  const stopping = { ...ctx, now: () => (++rounds === 2 && stop.abort(), new Date()) };
  await t.rejects(importDeliveries(stopping, TENANT_A, { rows }, stop.signal), { name: 'DeliveriesAborted' });
  const stored = await trips(h.db)
    .find({ _id: { $in: many.map((m) => m._id) } })
    .toArray();
  const delivered = stored.filter((s) => s.shipments.every((l) => l.unloadDate !== null && l.products.every((p) => p.offloaded === 9_950)));
  const untouched = stored.filter((s) => s.shipments.every((l) => l.unloadDate === null && l.products.every((p) => p.offloaded === null)));
  t.equal(delivered.length + untouched.length, many.length, 'no trip half-written');
  t.ok(delivered.length > 0 && untouched.length > 0, `stopped midway (${delivered.length} trips written, ${untouched.length} not)`);
  const again = await importDeliveries(ctx, TENANT_A, { rows });
  t.same(
    again.summary,
    { rows: 2400, legs: 2400, applied: untouched.length * 2, unchanged: delivered.length * 2, rejected: 0 },
    'the same rows again: the rest is recorded, the written ones unchanged',
  );
});
