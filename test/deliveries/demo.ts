/**
 * The demo data in the delivery state (issue 21), as the issue found it: on the
 * demo tenants `GET /api/shipments?status=2` (legs in transit) showed every leg
 * as a total loss. Now a leg on the road has no offloaded volume and no
 * shrinkage, a delivered leg carries its reception ticket, and recording the
 * ticket of a leg on the road delivers it.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms } from '../helpers/harness.ts';
import { loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';

export default async function demoTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  const h = await startHarness(t, { build: { now: () => new Date('2026-11-20T12:00:00-06:00') } });
  // One dense month: a few legs are still on the road when the data ends.
  await loadDemoData(h.db, { invoices: 200, trips: 400, months: 1 });
  const key = DEMO_TENANTS[0]!.apiKey;
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

  t.test('legs in transit (status 2) are not losses; delivered legs carry their ticket', async (t) => {
    const res = await get('/api/shipments?status=2&limit=100');
    assertConforms(t, res, 'GET', '/api/shipments');
    const legs: Json[] = res.json().data.flatMap((trip: Json) => trip.shipments);
    const onTheRoad = legs.filter((l) => l.status === 2);
    t.ok(onTheRoad.length > 0, `${onTheRoad.length} legs on the road`);
    for (const l of onTheRoad) {
      t.match(
        l,
        {
          delivered: false,
          offloadDate: null,
          deliveryTicket: null,
          volumes: { offloaded: null, shrinkageVolume: null, shrinkagePercent: null, exceedsTolerance: false },
        },
        l.shipmentId,
      );
      t.ok(l.volumes.products.every((p: Json) => p.offloaded === null));
    }
    const all: Json[] = (await get('/api/shipments?limit=100')).json().data.flatMap((trip: Json) => trip.shipments);
    const delivered = all.filter((l) => l.status === 4);
    t.ok(delivered.length > 50);
    t.ok(
      delivered.every((l) => l.delivered === true && /^REC-\d{6}-\d$/.test(l.deliveryTicket) && typeof l.volumes.shrinkagePercent === 'number'),
      'every delivered leg has its ticket and its shrinkage',
    );
  });

  t.test("recording a demo leg's ticket delivers it", async (t) => {
    const trip = (await get('/api/shipments?status=2&limit=1')).json().data[0];
    const leg = trip.shipments.find((l: Json) => l.status === 2);
    const body = {
      offloadDate: new Date(Date.parse(leg.loadDate) + 6 * 3_600_000).toISOString(),
      ticket: 'REC-NUEVO-1',
      products: leg.volumes.products.map((p: Json) => ({ code: p.code, offloaded: p.loaded - 10 })),
    };
    const res = await h.app.inject({
      method: 'PUT',
      url: `/api/shipments/${trip.id}/legs/${leg.shipmentId}/delivery`,
      headers: { 'x-api-key': key },
      payload: body,
    });
    t.equal(res.statusCode, 200, res.body);
    const after = res.json().shipments.find((l: Json) => l.shipmentId === leg.shipmentId);
    const n = leg.volumes.products.length;
    t.match(after, {
      delivered: true,
      status: 4,
      deliveryTicket: 'REC-NUEVO-1',
      volumes: { loaded: leg.volumes.loaded, offloaded: leg.volumes.loaded - 10 * n, shrinkageVolume: 10 * n },
    });
  });
}
