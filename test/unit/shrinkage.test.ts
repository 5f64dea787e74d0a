import t from 'tap';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';
import { legShrinkage, legTolerancePct, legVolumes, recoverableShrinkage, toleranceFor } from '../../lib/trips/shrinkage.ts';
import { diesel, gasoline } from '../fixtures/documents.ts';

// 20,000 L loaded, 19,960 L offloaded: 40 L = 0.2 %.
const leg = { products: [diesel(20_000, 19_960)] };

t.test('leg volumes and the strict tolerance test', async (t) => {
  const at = legVolumes(leg, 0.2);
  t.same(at, { loaded: 20_000, offloaded: 19_960, shrinkageVolume: 40, shrinkagePercent: 0.2, exceedsTolerance: false }, 'exactly at tolerance: not exceeding');
  t.equal(legVolumes(leg, 0.3).exceedsTolerance, false, 'below tolerance');
  t.equal(legVolumes(leg, 0.1).exceedsTolerance, true, 'above tolerance');
  t.equal(legVolumes(leg, 0).exceedsTolerance, true, 'default: anything above 0.00 %');
  t.equal(legVolumes({ products: [diesel(20_000, 20_000)] }, 0).exceedsTolerance, false, 'no shrinkage at 0 % tolerance');
  // 0.2 % of 30,000 = 60 L; float division gives 0.20000000000000004 without the epsilon.
  t.equal(legVolumes({ products: [diesel(30_000, 29_940)] }, 0.2).exceedsTolerance, false);
  t.equal(legVolumes({ products: [diesel(30_000, 29_939.9)] }, 0.2).exceedsTolerance, true, '60.1 L > 60 L');
});

t.test('zero loaded, gains, multi-product', async (t) => {
  t.same(legVolumes({ products: [] }, 0), { loaded: 0, offloaded: 0, shrinkageVolume: 0, shrinkagePercent: 0, exceedsTolerance: false });
  t.same(legVolumes({ products: [diesel(0, 0)] }, 0).shrinkagePercent, 0, 'no division by zero');
  const gain = legVolumes({ products: [diesel(20_000, 20_010)] }, 0);
  t.equal(gain.shrinkageVolume, -10);
  t.equal(gain.shrinkagePercent, -0.05);
  t.equal(gain.exceedsTolerance, false, 'a gain never exceeds');
  const multi = legVolumes({ products: [diesel(10_000, 9990), gasoline(10_000, 9985)] }, 0.1);
  t.same(multi, { loaded: 20_000, offloaded: 19_975, shrinkageVolume: 25, shrinkagePercent: 0.125, exceedsTolerance: true });
});

const settings = {
  ...DEFAULT_SETTINGS,
  shrinkageTolerancePct: 0.1,
  toleranceRules: [
    { productCode: '15101505', pct: 0.3 },
    { client: 'A', pct: 0.4 },
    { client: 'A', productCode: '15101505', pct: 0.5 },
  ],
};

t.test('toleranceFor: most specific rule wins', async (t) => {
  t.equal(toleranceFor(settings, 'A', '15101505'), 0.5, 'client + product');
  t.equal(toleranceFor(settings, 'A', '15101514'), 0.4, 'client');
  t.equal(toleranceFor(settings, 'B', '15101505'), 0.3, 'product');
  t.equal(toleranceFor(settings, 'B', '15101514'), 0.1, 'default');
  t.equal(toleranceFor(settings, 'A', undefined), 0.4);
  t.equal(toleranceFor(settings, undefined, undefined), 0.1);
});

t.test('legTolerancePct: loaded-weighted across products', async (t) => {
  // (15,000 × 0.3 + 5,000 × 0.1) / 20,000 = 0.25
  t.equal(legTolerancePct({ products: [diesel(15_000, 15_000), gasoline(5000, 5000)] }, settings, 'B'), 0.25);
  t.equal(legTolerancePct({ products: [] }, settings, 'A'), 0.4, 'nothing loaded: client tolerance');
});

t.test('a leg exactly at its pooled allowance is not out of tolerance (the mean is not rounded before judging)', async (t) => {
  // Diesel 0.3 %, gasoline 0.5 %: 0.3 % × 10,000 + 0.5 % × 20,000 = 130 L allowed; 30 + 100 = 130 L lost.
  const s = {
    ...DEFAULT_SETTINGS,
    toleranceRules: [
      { productCode: '15101505', pct: 0.3 },
      { productCode: '15101514', pct: 0.5 },
    ],
  };
  const at = { products: [diesel(10_000, 9_970), gasoline(20_000, 19_900)] };
  const r = legShrinkage(at, s, 'X');
  t.match(r, { shrinkageVolume: 130, tolerancePct: 0.4333, exceedsTolerance: false, excessLitres: 0, recoverableLitres: 0, value: 0 });
  // One litre more is out, by that litre.
  const over = legShrinkage({ products: [diesel(10_000, 9_969), gasoline(20_000, 19_900)] }, s, 'X');
  t.match(over, { shrinkageVolume: 131, exceedsTolerance: true, excessLitres: 1 });
});

t.test('recoverable shrinkage', async (t) => {
  const base = { loadedLitres: 20_000, tolerancePct: 0.2, pricePerLitre: 24.5 };
  // 100 L lost, 40 L tolerated: 60 L × 24.50 = 1,470.00
  t.same(recoverableShrinkage({ ...base, shrinkageLitres: 100, mode: 'excess' }), {
    toleranceLitres: 40,
    excessLitres: 60,
    recoverableLitres: 60,
    value: 1470,
    exceedsTolerance: true,
  });
  // all of it once exceeded: 100 × 24.50 = 2,450.00
  t.equal(recoverableShrinkage({ ...base, shrinkageLitres: 100, mode: 'all' }).value, 2450);
  t.same(
    recoverableShrinkage({ ...base, shrinkageLitres: 40, mode: 'all' }),
    { toleranceLitres: 40, excessLitres: 0, recoverableLitres: 0, value: 0, exceedsTolerance: false },
    'at tolerance: nothing',
  );
  t.equal(recoverableShrinkage({ ...base, shrinkageLitres: 30, mode: 'excess' }).value, 0, 'below tolerance');
  t.equal(recoverableShrinkage({ ...base, shrinkageLitres: -10, mode: 'all' }).value, 0, 'gain');
  t.equal(recoverableShrinkage({ ...base, loadedLitres: 0, shrinkageLitres: 0, mode: 'all' }).value, 0);
  t.equal(recoverableShrinkage({ ...base, shrinkageLitres: 40.5, mode: 'excess', pricePerLitre: 23.9 }).value, 11.95, '0.5 L × 23.90');
});

t.test('legShrinkage from settings', async (t) => {
  const s = { ...DEFAULT_SETTINGS, shrinkageTolerancePct: 0.2 };
  const r = legShrinkage({ products: [diesel(20_000, 19_900)] }, s, 'X');
  t.equal(r.tolerancePct, 0.2);
  t.equal(r.shrinkagePercent, 0.5);
  t.equal(r.exceedsTolerance, true);
  t.equal(r.recoverableLitres, 60);
  t.equal(r.pricePerLitre, 24.5);
  t.equal(r.value, 1470);
  t.same(r.unpricedCodes, []);
  const all = legShrinkage({ products: [diesel(20_000, 19_900)] }, { ...s, shrinkageRecoveryMode: 'all' }, 'X');
  t.equal(all.value, 2450);
  const unpriced = legShrinkage({ products: [{ desc: 'Turbosina', code: '15101506', unit: 'LTR', loaded: 1000, offloaded: 990 }] }, s, 'X');
  t.same(unpriced.unpricedCodes, ['15101506']);
  t.equal(unpriced.value, 0);
  // Mixed: diesel 24.50 and regular 23.90, 10,000 L each → 24.20 / L
  const mixed = legShrinkage({ products: [diesel(10_000, 9950), gasoline(10_000, 9950)] }, s, 'X');
  t.equal(mixed.pricePerLitre, 24.2);
  t.equal(mixed.excessLitres, 60, '100 L lost − 40 L allowed');
  t.equal(mixed.value, 1452);
});
