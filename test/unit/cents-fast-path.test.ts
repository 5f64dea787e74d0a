/** toCents' fast path must give exactly what the toPrecision(15) reference gives. */
import t from 'tap';
import fc from 'fast-check';
import { exactSumCents, toCents } from '../../lib/money/cents.ts';

const reference = (pesos: number): number => {
  const cents = Math.round(Number((Math.abs(pesos) * 100).toPrecision(15)));
  return cents === 0 ? 0 : pesos < 0 ? -cents : cents;
};

t.test('agrees with the reference on two-decimal amounts, half cents and arbitrary floats', async (t) => {
  fc.assert(
    fc.property(fc.integer({ min: -1e12, max: 1e12 }), (c) => toCents(c / 100) === reference(c / 100)),
    { numRuns: 20_000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: -1e11, max: 1e11 }), (c) => toCents((c + 0.5) / 100) === reference((c + 0.5) / 100)),
    { numRuns: 20_000 },
  );
  fc.assert(
    fc.property(fc.double({ min: -1e9, max: 1e9, noNaN: true }), (x) => toCents(x) === reference(x)),
    { numRuns: 20_000 },
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1e7 }), fc.constantFrom(0.16, 0.08, 0.04), (c, rate) => toCents((c / 100) * rate) === reference((c / 100) * rate)),
    { numRuns: 20_000 },
  );
  for (const x of [1.005, 2.675, 1.004999, 0.285, 1.255, 8.345, 1e9 + 0.005, 0.1 + 0.2, -1.005, (4.35 * 100) / 100])
    t.equal(toCents(x), reference(x), String(x));
});

t.test("exactSumCents' fast path gives what the toPrecision(15) reference gives", async (t) => {
  const exactReference = (amounts: number[]): number => {
    let micros = 0;
    for (const a of amounts) micros += Math.round(Number((a * 1_000_000).toPrecision(15)));
    return toCents(micros / 1_000_000);
  };
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -1e13, max: 1e13 }), { maxLength: 8 }), (ms) => {
      const amounts = ms.map((m) => m / 1_000_000);
      return exactSumCents(amounts) === exactReference(amounts);
    }),
    { numRuns: 20_000 },
  );
  fc.assert(
    fc.property(fc.array(fc.double({ min: -1e9, max: 1e9, noNaN: true }), { maxLength: 8 }), (xs) => exactSumCents(xs) === exactReference(xs)),
    { numRuns: 20_000 },
  );
  for (const x of [1.653333, 0.0000005, 1.0000005, -0.0000005, 160.0048, 0.105, 2.675]) t.equal(exactSumCents([x, x, x]), exactReference([x, x, x]), String(x));
});
