/**
 * Real Carta Porte files (the public corpus, /work/shared/cfdi-corpus/derived:
 * SW sandbox samples with a synthetic stamp, issuer EKU9003173C9) imported
 * through POST /api/imports become trips in transit: no SAT or PAC file carries
 * delivered volumes. Recording the reception ticket through the delivery
 * operation then shows the right shrinkage, in the list, the audit and after a
 * new import of the same file (issue 21).
 *
 * The corpus lives beside the repository (../shared/cfdi-corpus from its root,
 * or /work/shared/cfdi-corpus); without it this test fails, saying where it looked.
 */
import type { Test } from 'tap';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, assertConforms } from '../helpers/harness.ts';
import { ROOT } from '../helpers/service.ts';
import { storeApiKey } from '../../lib/auth/api-keys.ts';
import { getTenantSettings, saveTenantSettings } from '../../lib/settings/settings-repo.ts';
import { trips } from '../../lib/db/collections.ts';

export default async function corpusTests(t: Test): Promise<void> {
  const CANDIDATES = [path.resolve(ROOT, '..', 'shared', 'cfdi-corpus'), '/work/shared/cfdi-corpus'];
  const CORPUS = CANDIDATES.find((dir) => existsSync(path.join(dir, 'derived')));
  if (!CORPUS) throw new Error(`the public CFDI corpus is missing: looked for ${CANDIDATES.map((d) => path.join(d, 'derived')).join(' and ')}`);
  const corpusFile = (name: string): Buffer => readFileSync(path.join(CORPUS, 'derived', name));

  const ISSUER = 'EKU9003173C9';
  const KEY = 'test_key_corpus_eku_000000001';
  const h = await startHarness(t, { build: { now: () => new Date('2026-03-20T12:00:00-06:00') } });
  await storeApiKey(h.db, { key: KEY, tenant: ISSUER, label: 'corpus issuer' });
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Buffer | object, contentType = 'application/json') =>
    h.app.inject({
      method,
      url,
      headers: { 'x-api-key': KEY, ...(payload ? { 'content-type': contentType } : {}) },
      ...(payload ? { payload: payload as never } : {}),
    });

  for (const [file, offloaded, shrinkage] of [
    // One box of goods (Cantidad 1, ClaveUnidad XBX) to one destination; 0.98 received: 0.02 short, 2% > 0.5%.
    ['sw-cp31-ingreso-auto.stamped.xml', 0.98, { offloaded: 0.98, shrinkageVolume: 0.02, shrinkagePercent: 2, tolerancePercent: 0.5, exceedsTolerance: true }],
    // The same goods received whole: no shrinkage.
    ['swdotnet-cp31.stamped.xml', 1, { offloaded: 1, shrinkageVolume: 0, shrinkagePercent: 0, tolerancePercent: 0.5, exceedsTolerance: false }],
  ] as const) {
    t.test(`${file}: imported in transit, then delivered with its ticket`, async (t) => {
      const imported = await call('POST', '/api/imports', corpusFile(file), 'application/xml');
      t.equal(imported.statusCode, 200, imported.body);
      const report = imported.json();
      t.match(report.files, [{ status: 'created', kind: 'invoice' }], JSON.stringify(report.files));
      const tripId: string = report.files[0].tripId;
      t.ok(tripId, 'the Carta Porte became a trip');
      await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, ISSUER)), shrinkageTolerancePct: 0.5 });

      const before = await call('GET', `/api/shipments/${tripId}`);
      assertConforms(t, before, 'GET', '/api/shipments/:id');
      const [leg] = before.json().shipments;
      t.match(
        leg,
        {
          delivered: false,
          status: 2,
          offloadDate: null,
          loadDate: '2023-08-01T06:00:00.000Z',
          volumes: {
            loaded: 1,
            offloaded: null,
            shrinkageVolume: null,
            shrinkagePercent: null,
            exceedsTolerance: false,
            products: [{ code: '11121900', loaded: 1, offloaded: null }],
          },
        },
        'in transit, not a total loss',
      );

      const put = await call('PUT', `/api/shipments/${tripId}/legs/${leg.shipmentId}/delivery`, {
        offloadDate: '2023-08-01T10:00:00-06:00',
        ticket: 'REC-0001',
        products: [{ code: '11121900', offloaded }],
      });
      t.equal(put.statusCode, 200, put.body);
      assertConforms(t, put, 'PUT', '/api/shipments/:id/legs/:shipmentId/delivery');
      t.match(put.json().shipments[0], {
        delivered: true,
        status: 4,
        deliveryTicket: 'REC-0001',
        offloadDate: '2023-08-01T16:00:00.000Z',
        volumes: { loaded: 1, ...shrinkage },
      });

      const audit = await call('GET', '/api/analytics/discounts-and-shrinkage?startDate=2023-08-01&endDate=2023-08-31');
      assertConforms(t, audit, 'GET', '/api/analytics/discounts-and-shrinkage');
      const worst = audit.json().shrinkage.worstLegs.data.filter((w: { tripId: string }) => w.tripId === tripId);
      t.same(
        worst.map((w: { shrinkagePercent: number }) => w.shrinkagePercent),
        shrinkage.exceedsTolerance ? [2] : [],
        'the audit flags it exactly when beyond tolerance',
      );

      const stored = await trips(h.db).findOne({ _id: tripId });
      const again = await call('POST', '/api/imports', corpusFile(file), 'application/xml');
      t.match(again.json().files, [{ status: 'skipped' }]);
      t.same(await trips(h.db).findOne({ _id: tripId }), stored, 'importing the file again keeps the delivery');
    });
  }
}
