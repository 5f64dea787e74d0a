/**
 * What the differential tests of the totals kept on write share (test/*-rollups-differential.test.ts,
 * docs/rollups.md): a seeded generator whose seed is printed (a failing run replays with it), and
 * the tally of answers compared with the same answers computed from the documents.
 */
import type { Test } from 'tap';

/** A small seeded generator of uniform numbers in [0, 1). */
export function mulberry32(a: number): () => number {
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Seeded {
  seed: number;
  rnd: () => number;
  /** One of `xs`, uniformly. */
  pick: <T>(xs: readonly T[]) => T;
  /** An integer in [lo, hi], uniformly. */
  int: (lo: number, hi: number) => number;
}

/** A generator seeded by the environment variable `env` (else `fallback`); the seed is printed: `env=<n>` replays a run. */
export function seeded(t: Test, env: string, fallback: number): Seeded {
  const seed = Number(process.env[env] ?? fallback);
  t.comment(`${env}=${seed}`);
  const rnd = mulberry32(seed);
  return {
    seed,
    rnd,
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T,
    int: (lo, hi) => lo + Math.floor(rnd() * (hi - lo + 1)),
  };
}

/** A value as an answer carries it: a JSON round trip (dates as strings, no undefined). */
export const onTheWire = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

/** An answer as it travels, without `computedAt` (when it was answered, not what). */
export function comparable(x: unknown): Record<string, unknown> {
  const { computedAt: _c, ...rest } = onTheWire(x) as Record<string, unknown>;
  return rest;
}

/** The label of a check after writes that bypassed the marks: differences are expected, counted, not failed. */
export const BYPASS = 'bypass';

export interface Tally {
  /** Compares an answer with its reference (their JSON); a difference counts and, unless the label is BYPASS, fails showing both. */
  differs: (kept: unknown, reference: unknown, what: string) => void;
  readonly count: number;
}

/** Counts, for one round of random reports, the answers that differ from the documents' (`label` names the round). */
export function tally(t: Test, label: string): Tally {
  let count = 0;
  return {
    differs: (kept, reference, what) => {
      if (JSON.stringify(kept) === JSON.stringify(reference)) return;
      count += 1;
      if (label !== BYPASS) t.same(kept, reference, `${label}: ${what}`);
    },
    get count() {
      return count;
    },
  };
}

/** `n` rounds of random answers, each compared through `differs`: answers how many differed (see `tally`). */
export async function compareRounds(t: Test, label: string, n: number, round: (differs: Tally['differs']) => Promise<void>): Promise<number> {
  const answers = tally(t, label);
  for (let i = 0; i < n; i++) await round(answers.differs);
  return answers.count;
}
