/**
 * Small statistics helpers for the audits. Empty inputs give null, never NaN,
 * so a JSON response can say "no data" instead of serialising NaN as null by
 * accident.
 */

export type PercentileMethod = 'linear' | 'nearest-rank';

/** The finite values, ascending, in a typed array (its native numeric sort: a year of lags sorts in tens of milliseconds). */
export function finiteSorted(values: readonly number[]): Float64Array {
  // Non-finite values (missing dates turned NaN upstream) are ignored rather than poisoning the result.
  const out = new Float64Array(values.length);
  let n = 0;
  for (const v of values) if (Number.isFinite(v)) out[n++] = v;
  return out.subarray(0, n).sort();
}

/**
 * p-th percentile (0 ≤ p ≤ 100) of the finite values; null when there are none.
 *  - 'linear' (default): interpolation between closest ranks, rank = p/100 × (n − 1)
 *    — Excel PERCENTILE.INC, NumPy's default, Hyndman–Fan type 7. p50 is the usual median.
 *  - 'nearest-rank': the smallest value with at least p% of values ≤ it,
 *    rank = ⌈p/100 × n⌉ (1-based) — always an observed value.
 */
export function percentile(values: readonly number[], p: number, method: PercentileMethod = 'linear'): number | null {
  return percentileOfSorted(finiteSorted(values), p, method);
}

/** The same of values already sorted ascending and finite (finiteSorted): several percentiles of one sort. */
export function percentileOfSorted(s: ArrayLike<number>, p: number, method: PercentileMethod = 'linear'): number | null {
  if (!Number.isFinite(p) || p < 0 || p > 100) throw new RangeError(`percentile must be within 0..100, got ${p}`);
  const n = s.length;
  if (n === 0) return null;
  if (method === 'nearest-rank') {
    const rank = Math.max(1, Math.ceil((p / 100) * n));
    return s[rank - 1] ?? null;
  }
  const pos = (p / 100) * (n - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  const a = s[lo];
  const b = s[hi];
  if (a === undefined || b === undefined) return null;
  return a + (b - a) * (pos - lo);
}

/** Median (linear percentile 50: mean of the two middle values for even n); null when empty. */
export function median(values: readonly number[]): number | null {
  return percentile(values, 50, 'linear');
}

export interface Ratio {
  value: number | null;
  /** Why value is null (division by zero, missing data); absent when value is a number. */
  reason?: string;
}

export interface RatioOptions {
  /** Names the denominator in the reason: `no ${denominatorLabel}`. */
  denominatorLabel?: string;
  /** Round the value to this many decimals. */
  decimals?: number;
}

/** a ÷ b that never yields NaN or Infinity: null plus a reason instead. */
export function ratio(a: number, b: number, options: RatioOptions = {}): Ratio {
  if (!Number.isFinite(a) || !Number.isFinite(b)) return { value: null, reason: 'non-finite input' };
  if (b === 0) {
    return { value: null, reason: options.denominatorLabel ? `no ${options.denominatorLabel} (division by zero)` : 'division by zero' };
  }
  const v = a / b;
  if (options.decimals === undefined) return { value: v };
  const f = 10 ** options.decimals;
  return { value: Math.round(v * f) / f + 0 };
}

/** Round to n decimals, dropping float noise (0.1 + 0.2 → 0.3). */
export function roundTo(x: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(Number((x * f).toPrecision(15))) / f + 0;
}
