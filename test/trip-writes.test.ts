/**
 * Writes of trips that must not lose each other's changes (issue 21): a
 * delivery recorded while another delivery or an import writes the same trip.
 * Writes are conditional on the version read (`lastUpdate`, which every write
 * moves); the loser reads again and applies its change on the new version.
 */
import t from 'tap';
import { startHarness, KEY_A, TENANT_A, TENANT_B } from './helpers/harness.ts';
import { makeTrip, leg, diesel } from './fixtures/documents.ts';
import { trips } from '../lib/db/collections.ts';
import { insertTripsIfAbsent, replaceTripsIfUnchanged } from '../lib/trips/trips-repo.ts';
import { putImportedTrips } from '../lib/trips/put-imported-trips.ts';
import { nextLastUpdate } from '../lib/trips/leg-delivery.ts';
import { importDeliveries } from '../lib/trips/import-deliveries.ts';
import { OFFLOAD_MONTHS_STATE } from '../lib/trips/offload-months-backfill.ts';
import { deleteRollupState } from '../lib/db/rollup-state.ts';
import { prepareDatabase } from '../lib/prepare-database.ts';
import type { StoredTripDocument } from '../lib/model/trip-document.ts';
import { insertTrips } from './fixtures/stored-trips.ts';

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
  await insertTrips(h.db, [trip]);
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
  await insertTrips(h.db, [trip]);
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
  await insertTrips(h.db, [trip]);
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
  await insertTrips(h.db, many);
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

t.test("every write keeps the trip's offload months: the month's list finds it", async (t) => {
  const august = (query = '') =>
    h.app.inject({
      method: 'GET',
      url: `/api/shipments?dateFilterBy=offload&startDate=2026-08-01&endDate=2026-08-31${query}`,
      headers: { 'x-api-key': KEY_A },
    });
  const months = async (id: string) => (await trips(h.db).findOne({ _id: id }, { projection: { offloadMonths: 1 } }))?.offloadMonths;
  const ids = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((d) => d.id);
  const road = (shipment: string) => leg({ shipment, loadDate: '2026-07-31T20:00', unloadDate: null, status: 2, products: [diesel(10_000, null)] });
  const [first, second] = [makeTrip({ tenant: TENANT_A, legs: [road('AUG-1-1')] }), makeTrip({ tenant: TENANT_A, legs: [road('AUG-2-1'), road('AUG-2-2')] })];
  t.same([...(await putImportedTrips(ctx, TENANT_A, [first, second], new Date()))].sort(), [first._id, second._id].sort(), 'imported');
  t.same([await months(first._id), await months(second._id)], [[], []], 'on the road: no month');
  t.same(ids(await august()), []);

  // Recorded through the API: 2026-08-01T00:30 in Mexico City is still 2026-08-01T06:30Z, the first day of August.
  const delivered = await h.app.inject({
    method: 'PUT',
    url: `/api/shipments/${first._id}/legs/AUG-1-1/delivery`,
    headers: { 'x-api-key': KEY_A },
    payload: { offloadDate: '2026-08-01T00:30:00-06:00', products: [{ code: '15101505', offloaded: 9_990 }] },
  });
  t.equal(delivered.statusCode, 200, delivered.body);
  t.same(await months(first._id), ['2026-08']);
  // A deliveries file: one leg on the last instant of July, the other in September.
  const rows = [
    { tripId: second._id, shipmentId: 'AUG-2-1', productCode: '15101505', offloaded: 9_990, offloadDate: '2026-07-31T23:59:59-06:00' },
    { tripId: second._id, shipmentId: 'AUG-2-2', productCode: '15101505', offloaded: 9_990, offloadDate: '2026-09-02T10:00:00-06:00' },
  ];
  t.match((await importDeliveries(ctx, TENANT_A, { rows })).summary, { applied: 2, rejected: 0 });
  t.same(await months(second._id), ['2026-07', '2026-09']);
  t.same(ids(await august()), [first._id], "August: the delivery recorded, not the file's July and September");
  t.equal((await august()).json().meta.total, 1);

  // Imported again (a new version of the trip): the delivered legs stay delivered, and so do their months.
  t.same([...(await putImportedTrips(ctx, TENANT_A, [{ ...first, nRel: 'REL-AGAIN' }], new Date()))], [first._id]);
  t.same(await months(first._id), ['2026-08']);
  t.same(ids(await august('&detail=full')), [first._id]);
});

t.test('a store written before trips kept their months: the start-up backfill writes them, once', async (t) => {
  const old = [
    makeTrip({
      tenant: TENANT_A,
      legs: [leg({ shipment: 'OLD-1-1', unloadDate: '2026-10-31T23:00' }), leg({ shipment: 'OLD-1-2', unloadDate: '2026-11-01T01:00' })],
    }),
    makeTrip({ tenant: TENANT_B, legs: [leg({ shipment: 'OLD-2-1', unloadDate: '2026-10-05T10:00' })] }),
    makeTrip({ tenant: TENANT_A, legs: [leg({ shipment: 'OLD-3-1', unloadDate: null, status: 2, products: [diesel(1_000, null)] })] }),
  ];
  // As an earlier version wrote them: no `offloadMonths`, and no record of a finished backfill.
  await trips(h.db).insertMany(old as StoredTripDocument[]);
  await deleteRollupState(h.db, OFFLOAD_MONTHS_STATE);
  const logs: string[] = [];
  await prepareDatabase(h.db, { log: (m) => logs.push(m) });
  const stored = await trips(h.db)
    .find({ _id: { $in: old.map((o) => o._id) } }, { projection: { offloadMonths: 1 } })
    .sort({ _id: 1 })
    .toArray();
  t.same(
    stored.map((s) => s.offloadMonths),
    [['2026-10', '2026-11'], ['2026-10'], []],
    'each trip its Mexico City months',
  );
  t.match(logs.join('\n'), /offload months written on 2 trips stored without them/);
  const october = await h.app.inject({
    method: 'GET',
    url: '/api/shipments?dateFilterBy=offload&startDate=2026-10-01&endDate=2026-10-31',
    headers: { 'x-api-key': KEY_A },
  });
  t.same(
    october.json().data.map((d: { id: string }) => d.id),
    [old[0]!._id],
  );

  // Recorded as finished: a later start reads one record, not the trips (a trip written without the field now stays so).
  const late = makeTrip({ tenant: TENANT_A, legs: [leg({ shipment: 'OLD-4-1' })] });
  await trips(h.db).insertOne(late as StoredTripDocument);
  await prepareDatabase(h.db);
  t.equal((await trips(h.db).findOne({ _id: late._id }))?.offloadMonths, undefined);
  await trips(h.db).deleteOne({ _id: late._id });
});
