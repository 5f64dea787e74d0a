/**
 * Small, fast, seeded pseudo-random numbers for the demo dataset.
 *
 * - `Rng` is sfc32 (Chris Doty-Humphrey's Small Fast Counting generator, 128-bit
 *   state, passes PractRand to many GB), seeded through splitmix32 so that
 *   nearby seeds give unrelated streams.
 * - `mix32` / `hashString` derive independent sub-streams from (seed, stream,
 *   index) tuples. The generator gives every trip and every document its own
 *   sub-stream, so any record can be regenerated on its own (random access) and
 *   the output never depends on iteration order.
 *
 * Nothing here touches Math.random: the same seed always yields the same data,
 * on every platform (only 32-bit integer ops and IEEE-754 doubles are used).
 */

/** splitmix32 step: a well-mixed 32-bit value from a 32-bit input. */
function splitmix32(x: number): number {
  let z = (x + 0x9e3779b9) | 0;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** Mixes any number of 32-bit integers into one well-distributed 32-bit seed. */
export function mix32(...parts: number[]): number {
  let h = 0x2545f491;
  for (const p of parts) {
    // Fold the high bits of large (≤ 2^53) integers too, so e.g. epoch ms mix fully.
    const lo = p | 0;
    const hi = Math.floor(p / 4294967296) | 0;
    h = splitmix32(h ^ lo);
    if (hi !== 0) h = splitmix32(h ^ hi);
  }
  return h >>> 0;
}

/** FNV-1a 32-bit hash of a string (tenant RFCs, stream names). */
export function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX = '0123456789ABCDEF';

export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  /** Box–Muller keeps its second variate here. */
  private spare: number | null = null;

  constructor(seed: number) {
    const s = seed >>> 0;
    this.a = splitmix32(s);
    this.b = splitmix32(this.a ^ 0x6a09e667);
    this.c = splitmix32(this.b ^ 0xbb67ae85);
    this.d = 1;
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  /** Independent child stream (e.g. one per record) derived from this one's next output. */
  fork(tag = 0): Rng {
    return new Rng(mix32(this.nextUint32(), tag));
  }

  /** Uniform 32-bit unsigned integer. */
  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    if (max < min) throw new RangeError(`Rng.int: max ${max} < min ${min}`);
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** Uniform float in [min, max). */
  float(min: number, max: number): number {
    return min + this.next() * (max - min);
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new RangeError('Rng.pick: empty list');
    return items[Math.floor(this.next() * items.length)] as T;
  }

  /** Index drawn with probability proportional to its weight (linear scan; see WeightedTable for hot paths). */
  weightedIndex(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += w > 0 ? w : 0;
    if (total <= 0) throw new RangeError('Rng.weightedIndex: no positive weight');
    let r = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      const w = weights[i] as number;
      if (w <= 0) continue;
      r -= w;
      if (r < 0) return i;
    }
    // Float slack: the last positive weight.
    for (let i = weights.length - 1; i >= 0; i--) if ((weights[i] as number) > 0) return i;
    return 0;
  }

  /** Element drawn with probability proportional to its weight. */
  weighted<T>(items: readonly T[], weights: readonly number[]): T {
    if (items.length !== weights.length) throw new RangeError('Rng.weighted: items and weights differ in length');
    return items[this.weightedIndex(weights)] as T;
  }

  /** Standard normal variate (Box–Muller), scaled. */
  normal(mean = 0, sd = 1): number {
    if (this.spare !== null) {
      const z = this.spare;
      this.spare = null;
      return mean + sd * z;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return mean + sd * r * Math.cos(2 * Math.PI * v);
  }

  /** Normal variate clamped to [min, max] ("normal-ish" for bounded quantities). */
  normalClamped(mean: number, sd: number, min: number, max: number): number {
    const x = this.normal(mean, sd);
    return x < min ? min : x > max ? max : x;
  }

  /** Exponential variate with the given mean. */
  exponential(mean: number): number {
    let u = 0;
    while (u === 0) u = this.next();
    return -Math.log(u) * mean;
  }

  /** Fisher–Yates shuffle in place; returns the array. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = Math.floor(this.next() * (i + 1));
      const tmp = items[i] as T;
      items[i] = items[j] as T;
      items[j] = tmp;
    }
    return items;
  }

  /** n uppercase hex digits. */
  hex(n: number): string {
    let out = '';
    while (out.length < n) {
      let x = this.nextUint32();
      for (let k = 0; k < 8 && out.length < n; k++) {
        out += HEX[x & 15];
        x >>>= 4;
      }
    }
    return out;
  }

  /** Random-looking UUID (version 4 layout, uppercase as the SAT stamps print it): 8-4-4-4-12. */
  uuid(): string {
    const h = this.hex(32);
    const variant = HEX[8 + (this.nextUint32() & 3)] as string;
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }

  /** Uppercase letters A–Z (n of them). */
  letters(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += String.fromCharCode(65 + Math.floor(this.next() * 26));
    return out;
  }

  /** n decimal digits (leading zeros kept). */
  digits(n: number): string {
    let out = '';
    for (let i = 0; i < n; i++) out += String.fromCharCode(48 + Math.floor(this.next() * 10));
    return out;
  }
}

/**
 * Precomputed cumulative weights for repeated weighted picks (binary search,
 * O(log n) per draw). Zero or negative weights are never drawn.
 */
export class WeightedTable<T> {
  readonly items: readonly T[];
  private readonly cumulative: Float64Array;
  private readonly total: number;

  constructor(items: readonly T[], weights: readonly number[]) {
    if (items.length !== weights.length) throw new RangeError('WeightedTable: items and weights differ in length');
    this.items = items;
    this.cumulative = new Float64Array(weights.length);
    let acc = 0;
    weights.forEach((w, i) => {
      acc += w > 0 ? w : 0;
      this.cumulative[i] = acc;
    });
    if (acc <= 0) throw new RangeError('WeightedTable: no positive weight');
    this.total = acc;
  }

  /** Probability of item i (weight / total). */
  share(i: number): number {
    const prev = i === 0 ? 0 : (this.cumulative[i - 1] as number);
    return ((this.cumulative[i] as number) - prev) / this.total;
  }

  index(rng: Rng): number {
    const r = rng.next() * this.total;
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (r < (this.cumulative[mid] as number)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  pick(rng: Rng): T {
    return this.items[this.index(rng)] as T;
  }
}
