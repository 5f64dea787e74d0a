/**
 * A leg exactly at its pooled allowance is within tolerance (docs/domain.md: the loaded-weighted mean "equals pooling
 * each product's allowance in litres"; a leg exceeds it only strictly above): diesel 0.3 % and gasoline 0.5 % for the
 * client, 10,000 L and 20,000 L loaded, 30 L and 100 L lost: 130 L of 130 L allowed. The mean, 0.43333…%, was rounded
 * to 0.4333 % before the leg was judged, so the leg was flagged and charged 0.01 L (0.24 MXN).
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { makeTrip, leg, diesel, gasoline, CLIENT_COMPANY } from '../fixtures/documents.ts';
import { tenantSettings } from '../../lib/db/collections.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function shrinkageAtAllowanceTests(t: Test): Promise<void> {
  const NOW = new Date('2026-04-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });
  await tenantSettings(h.db).updateOne(
    { _id: TENANT_A },
    {
      $set: {
        toleranceRules: [
          { client: CLIENT_COMPANY, productCode: '15101505', pct: 0.3 },
          { client: CLIENT_COMPANY, productCode: '15101514', pct: 0.5 },
        ],
      },
    },
    { upsert: true },
  );
  const trip = makeTrip({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    legs: [leg({ loadDate: '2026-03-04T08:00', unloadDate: '2026-03-04T18:00', products: [diesel(10_000, 9_970), gasoline(20_000, 19_900)] })],
  });
  await insertTrips(h.db, [trip]);
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } });
  const AUDIT = '/api/analytics/discounts-and-shrinkage?startDate=2026-03-01&endDate=2026-03-31';

  t.test('REST: the leg is within tolerance, nothing recoverable', async (t) => {
    const res = await get(`/api/shipments/${trip._id}`);
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    assertConforms(t, res, 'GET', '/api/shipments/:id');
    t.match(res.json().shipments[0].volumes, { shrinkageVolume: 130, tolerancePercent: 0.4333, exceedsTolerance: false });
    const audit = await get(AUDIT);
    t.equal(audit.statusCode, 200);
    t.match(audit.json().shrinkage.totals, { legs: 1, shrinkageLitres: 130, legsOutOfTolerance: 0, excessLitres: 0, recoverableValue: 0 });
  });

  t.test('MCP: the same', async (t) => {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
    const shipment = (await client.callTool({ name: 'getShipment', arguments: { id: trip._id } })) as unknown as {
      structuredContent: { shipments: { volumes: unknown }[] };
    };
    t.match(shipment.structuredContent.shipments[0]!.volumes, { shrinkageVolume: 130, exceedsTolerance: false });
    const audit = (await client.callTool({ name: 'auditDiscountsAndShrinkage', arguments: { startDate: '2026-03-01', endDate: '2026-03-31' } })) as unknown as {
      structuredContent: { shrinkage: { totals: unknown } };
    };
    t.match(audit.structuredContent.shrinkage.totals, { legsOutOfTolerance: 0, excessLitres: 0, recoverableValue: 0 });
  });
}
