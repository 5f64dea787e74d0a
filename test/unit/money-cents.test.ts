import t from 'tap';
import { diffCents, differsBeyond, exactSumCents, fromCents, productCents, rateOfCents, round2, sumCents, taxOn, toCents } from '../../lib/money/cents.ts';

t.test('toCents rounds half away from zero without float noise', async (t) => {
  t.equal(toCents(1.005), 101, '1.005 is stored as 1.00499…; still 101 cents');
  t.equal(toCents(2.675), 268);
  t.equal(toCents(0.1 + 0.2), 30);
  t.equal(toCents(-1.005), -101, 'negative: away from zero');
  t.equal(toCents(19.999), 2000);
  t.equal(toCents(1.004999), 100);
  t.ok(Object.is(toCents(-0.004), 0), 'never -0');
  t.equal(toCents(123_456_789.12), 12_345_678_912);
  t.throws(() => toCents(Number.NaN), RangeError);
  t.throws(() => toCents(Number.POSITIVE_INFINITY), RangeError);
});

t.test('fromCents / round2', async (t) => {
  t.equal(fromCents(101), 1.01);
  t.ok(Object.is(fromCents(-0), 0));
  t.equal(round2(1.005), 1.01);
  t.equal(round2(123.455), 123.46);
  t.equal(round2(-2.345), -2.35);
  t.equal(round2(10), 10);
});

t.test('sumCents adds in integer cents', async (t) => {
  t.equal(0.1 + 0.2 + 0.3, 0.6000000000000001, 'the float problem');
  t.equal(sumCents([0.1, 0.2, 0.3]), 0.6);
  t.equal(sumCents(Array.from({ length: 10 }, () => 0.1)), 1);
  t.equal(sumCents([]), 0);
  t.equal(sumCents([11200, -5600.5, -5599.5]), 0);
});

t.test('diffCents, taxOn, differsBeyond', async (t) => {
  t.equal(diffCents(100.01, 100), 0.01);
  t.equal(diffCents(1500, 1600), -100);
  t.equal(taxOn(1234.56, 0.16), 197.53, '197.5296 → 197.53');
  t.equal(taxOn(10_000, 0.04), 400);
  t.equal(taxOn(0.5, 0.16), 0.08);
  t.equal(taxOn(1.25, 0.04), 0.05, '0.05 exactly, not 0.04999…');
  t.equal(differsBeyond(100.01, 100, 0.01), false, '0.01 is within a 0.01 tolerance (float diff is 0.0100000000000051)');
  t.equal(differsBeyond(100.02, 100, 0.01), true);
  t.equal(differsBeyond(99.98, 100, 0.01), true);
  t.equal(differsBeyond(5, 5, 0), false);
});

t.test('productCents and rateOfCents: exact integer forms of round2(a × b) and taxOn', async (t) => {
  t.equal(productCents(31_500, 0, 0.4567, 4), 1_438_605, '31,500 L × 0.4567 = 14,386.05');
  t.equal(productCents(3, 0, 0.005, 4), 2, '0.015 → 0.02: half away from zero');
  t.equal(productCents(125.5, 2, 23.45, 2), 294_298, '125.50 × 23.45 = 2,942.975 → 2,942.98');
  t.equal(productCents(2, 0, 1500, 0), 300_000, 'no decimals: a whole product');
  t.equal(rateOfCents(10_000, 0.16), 1_600);
  t.equal(rateOfCents(12_345, 0.04), 494, '123.45 × 4% = 4.938 → 4.94');
  t.equal(rateOfCents(1_250, 0.16), 200, '12.50 × 16% = 2.00');
  for (const [base, rate] of [
    [1_438_605, 0.16],
    [99_999, 0.04],
    [1, 0.16],
    [87_654_321, 0.0475],
  ] as const) {
    t.equal(rateOfCents(base, rate), toCents(taxOn(fromCents(base), rate)), `rateOfCents(${base}, ${rate}) = taxOn`);
  }
});

t.test('exactSumCents: lines of 6 decimals added exactly, rounded once (Anexo 20: the rounding of the sum)', async (t) => {
  // 3 × 1.653333 = 4.959999 → 4.96; each line rounded first (1.65 × 3) would be 4.95.
  t.equal(exactSumCents([1.653333, 1.653333, 1.653333]), 496);
  // 0.105 + 0.000001 = 0.105001 → 0.11; 0.104999 alone → 0.10.
  t.equal(exactSumCents([0.105, 0.000001]), 11);
  t.equal(exactSumCents([0.104999]), 10);
  // 0.1 + 0.2 in binary is 0.30000000000000004: exactly 0.30.
  t.equal(exactSumCents([0.1, 0.2]), 30);
  t.equal(exactSumCents([]), 0);
});
