import t from 'tap';
import { shrinkageRecovery, type ShrinkageTrip } from '../../lib/analytics/shrinkage-recovery.ts';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';
import { parseMxDateTime as at } from '../../lib/time/mexico-city.ts';
import { diesel } from '../fixtures/documents.ts';

// 0.1 % tolerance, only litres beyond it recoverable, diesel at 24.50 MXN/L.
const settings = { ...DEFAULT_SETTINGS, shrinkageTolerancePct: 0.1, shrinkageRecoveryMode: 'excess' as const };
const march = { start: at('2026-03-01T00:00'), end: at('2026-03-31T23:59') };
const leg = (id: string, unload: string, ...products: ShrinkageTrip['legs'][number]['products']) => ({
  id,
  shipment: `S-${id}`,
  unloadDate: at(unload),
  products,
});
const invoice = (id: string, cancelled = false) => ({ _id: id, cancelled, shortageC: 300_00, shortageLines: 1, shortageLitres: 12 });

const trips: ShrinkageTrip[] = [
  // 40 L of 20,000 = 0.2 %: 20 L beyond the 20 L tolerance = 490 MXN; the second leg gains 10 L.
  {
    _id: 'T1',
    client: 'A',
    idFinan: 'I1',
    legs: [leg('L1', '2026-03-05T10:00', diesel(20_000, 19_960)), leg('L2', '2026-03-06T10:00', diesel(10_000, 10_010))],
    inv: [invoice('I1')],
  },
  // 5 L of 10,000 = 0.05 %: within tolerance. Same invoice as T1: its recovery counts once.
  { _id: 'T2', client: 'A', idFinan: 'I1', legs: [leg('L3', '2026-03-07T10:00', diesel(10_000, 9995))], inv: [invoice('I1')] },
  // Delivered in April: out of the period.
  { _id: 'T3', client: 'B', idFinan: null, legs: [leg('L4', '2026-04-02T10:00', diesel(10_000, 9000))], inv: [] },
  // 30 L of 10,000 = 0.3 %: 20 L beyond 10 L = 490 MXN; an unpriced product; a cancelled invoice recovers nothing.
  {
    _id: 'T4',
    client: 'B',
    idFinan: 'I4',
    legs: [
      leg('L5', '2026-03-08T10:00', diesel(10_000, 9970)),
      leg('L6', '2026-03-08T12:00', { desc: 'Otro', code: '99999999', unit: 'LTR', loaded: 1000, offloaded: 1000 }),
    ],
    inv: [invoice('I4', true)],
  },
  // Its second leg is in transit (no delivery instant, offloaded unknown): not delivered, no shrinkage yet, not even for the first leg.
  {
    _id: 'T5',
    client: 'A',
    idFinan: null,
    legs: [leg('L7', '2026-03-09T10:00', diesel(10_000, 9000)), { id: 'L8', shipment: 'S-L8', unloadDate: null, products: [diesel(10_000, null)] }],
    inv: [],
  },
];

t.test('recoverable against recovered, per client', async (t) => {
  const r = shrinkageRecovery(trips, settings, march);
  t.same(r.totals, {
    trips: 3,
    legs: 5,
    loadedLitres: 51_000,
    offloadedLitres: 50_935,
    shrinkageLitres: 65, // 40 − 10 + 5 + 30
    legsOutOfTolerance: 2,
    legsWithGain: 1,
    excessLitres: 40,
    recoverableLitres: 40,
    recoverableValue: 980,
    recovered: { invoices: 1, lines: 1, litres: 12, value: 300 },
    recoveryRatePct: { value: 30.61 }, // 300 / 980
    unpricedProductCodes: ['99999999'],
  });
  t.same(
    r.byClient.map((c) => [c.client, c.trips, c.recoverableValue, c.recovered.value]),
    [
      ['A', 2, 490, 300],
      ['B', 1, 490, 0],
    ],
  );
  // Equal value (490): the larger shrinkage % first.
  t.same(
    r.worstLegs.map((w) => [w.legId, w.shrinkagePercent, w.tolerancePct, w.recoverableValue, w.invoiceId]),
    [
      ['L5', 0.3, 0.1, 490, null],
      ['L1', 0.2, 0.1, 490, 'I1'],
    ],
  );
});

t.test('no delivered trip', async (t) => {
  const r = shrinkageRecovery([], settings, march);
  t.equal(r.totals.trips, 0);
  t.same(r.totals.recoveryRatePct, { value: null, reason: 'no recoverable shrinkage value (division by zero)' });
});
