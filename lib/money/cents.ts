/**
 * Money arithmetic in integer cents. Amounts are MXN pesos with two decimals;
 * binary floats cannot represent most of them exactly (0.1 + 0.2), so every
 * sum or difference that feeds a comparison or a report goes through cents.
 */

/**
 * Pesos → integer cents, rounding half away from zero (the usual commercial and
 * SAT rounding). `toPrecision(15)` strips binary noise first, so 1.005 (stored
 * as 1.00499999…) becomes 101 cents, not 100.
 * @throws RangeError on NaN or ±Infinity: a silent NaN would poison every total.
 */
export function toCents(pesos: number): number {
  if (!Number.isFinite(pesos)) throw new RangeError(`toCents: not a finite amount: ${pesos}`);
  const raw = Math.abs(pesos) * 100;
  // Fast path (same result): toPrecision(15) moves `raw` by at most 5e-15 × raw, which can only change
  // Math.round when raw sits that close to a half cent. Away from it, skip the (slow) string round trip;
  // reports sum tens of thousands of amounts per request.
  const frac = raw - Math.floor(raw);
  const cents = Math.abs(frac - 0.5) > raw * 1e-14 + 1e-9 ? Math.round(raw) : Math.round(Number(raw.toPrecision(15)));
  if (cents === 0) return 0; // never -0
  return pesos < 0 ? -cents : cents;
}

/** Integer cents → pesos. */
export function fromCents(cents: number): number {
  const pesos = cents / 100;
  return pesos === 0 ? 0 : pesos;
}

/** Round a peso amount to two decimals (half away from zero, noise-free). */
export function round2(pesos: number): number {
  return fromCents(toCents(pesos));
}

/** Σ of peso amounts, added as integer cents; result in pesos. */
export function sumCents(amounts: readonly number[]): number {
  let cents = 0;
  for (const a of amounts) cents += toCents(a);
  return fromCents(cents);
}

/** An amount of at most 6 decimals (a CFDI tax line, Anexo 20) in integer millionths, exactly (noise-free, as toCents). */
export function toMicros(amount: number): number {
  const raw = amount * 1_000_000;
  // As toCents: the (slow) toPrecision(15) round trip only matters within float noise of a half millionth.
  const frac = raw - Math.floor(raw);
  return Math.abs(frac - 0.5) > Math.abs(raw) * 1e-14 + 1e-9 ? Math.round(raw) : Math.round(Number(raw.toPrecision(15)));
}

/** Integer millionths → integer cents, rounding half away from zero once. */
export function microsToCents(micros: number): number {
  return toCents(micros / 1_000_000);
}

/**
 * Σ of amounts of at most 6 decimals (a CFDI concept's tax lines, Anexo 20), added exactly in integer millionths and
 * rounded once to cents, half away from zero: a CFDI states the total of its concepts' lines as "el redondeo de la
 * suma", which a sum of lines each rounded first can miss by cents.
 */
export function exactSumCents(amounts: Iterable<number>): number {
  let micros = 0;
  for (const a of amounts) micros += toMicros(a);
  return microsToCents(micros);
}

/** a − b in pesos, computed in cents (for declared − expected differences). */
export function diffCents(a: number, b: number): number {
  return fromCents(toCents(a) - toCents(b));
}

/** round2(base × rate): a tax amount on a base, as a CFDI computes it per concept. */
export function taxOn(base: number, rate: number): number {
  return round2(base * rate);
}

/**
 * round2(a × b) in integer cents, exactly (half away from zero, as toCents),
 * for non-negative a with ≤ aDecimals decimals and b with ≤ bDecimals decimals.
 * Integer arithmetic: no float noise, and ~10× faster than toCents where
 * millions of amounts are made (the demo generator).
 */
export function productCents(a: number, aDecimals: number, b: number, bDecimals: number): number {
  const ai = Math.round(a * 10 ** aDecimals);
  const bi = Math.round(b * 10 ** bDecimals);
  const shift = aDecimals + bDecimals - 2;
  if (shift <= 0) return ai * bi * 10 ** -shift;
  const scale = 10 ** shift;
  return Math.floor((ai * bi + scale / 2) / scale);
}

/** round2(base × rate) in cents, for a non-negative base in cents and a rate with ≤ 4 decimals (= taxOn in cents). */
export function rateOfCents(baseC: number, rate: number): number {
  return Math.floor((baseC * Math.round(rate * 10_000) + 5_000) / 10_000);
}

/**
 * |a − b| > tolerance, compared in cents so that 100.01 vs 100.00 with a 0.01
 * tolerance is NOT over (the float difference is 0.010000000000005).
 */
export function differsBeyond(a: number, b: number, tolerance: number): boolean {
  return Math.abs(toCents(a) - toCents(b)) > toCents(tolerance);
}
