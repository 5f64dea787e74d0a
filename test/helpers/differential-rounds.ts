/**
 * The rounds a differential test of the totals kept on write goes through (test/*-rollups-differential.test.ts,
 * docs/rollups.md): random writes with the answers compared every few steps, then writes that
 * bypass the marks, which both the kind's verification and the answers must see, then repair.
 */
import type { Test } from 'tap';
import type { Db } from 'mongodb';
import type { RollupKind, VerifyOutcome } from '../../lib/rollups/rollup-kind.ts';
import { BYPASS } from './differential.ts';
import { TENANT_A } from './harness.ts';

/** One write (or worker step) of a test: answers what it did, for the log of a failing seed. */
export type WriteStep = () => Promise<string>;

/** Compares `n` random answers with the documents' under `label`; answers how many differ. */
export type Check = (label: string, n: number) => Promise<number>;

export interface RandomWrites {
  steps: number;
  /** Every `every` steps, `answers` random answers are compared (and must all agree). */
  every: number;
  answers: number;
  writes: readonly WriteStep[];
  pick: <T>(xs: readonly T[]) => T;
  check: Check;
  /** What agrees, in the assertion's name: "reports", "audits"... */
  what: string;
}

/** `steps` writes picked at random into `done`, the answers compared every `every` steps (one assertion each). */
export async function randomWrites(t: Test, done: string[], o: RandomWrites): Promise<string[]> {
  for (let step = 0; step < o.steps; step++) {
    done.push(await o.pick(o.writes)());
    if (step % o.every === o.every - 1)
      t.equal(await o.check(`after step ${step} (${done.slice(-3).join('; ')})`, o.answers), 0, `${o.what} agree after step ${step}`);
  }
  return done;
}

/** Each write once, in order, into `done`. */
export async function eachWrite(done: string[], writes: readonly WriteStep[]): Promise<string[]> {
  for (const w of writes) done.push(await w());
  return done;
}

/** A kind's verification of tenant A's kept totals (`repair` rewrites those that differ). */
export const verifier =
  (kind: Pick<RollupKind, 'verify'>, db: Db) =>
  (opts?: { repair?: boolean }): Promise<VerifyOutcome> =>
    kind.verify(db, TENANT_A, opts);

export interface BypassCheck {
  verify: (opts?: { repair?: boolean }) => Promise<VerifyOutcome>;
  check: Check;
  /** Answers compared while the kept totals are off, and after the repair. */
  bypassed: number;
  repaired: number;
  /** What the kind keeps (default "days") and what is compared (default "reports"), for the assertions' names. */
  units?: string;
  answers?: string;
  /** What the answers are computed from ("documents", "trips"). */
  from?: string;
  /** How the first verification must see the bypass (default: some key differs). */
  sees?: (mismatched: string[]) => boolean;
  /** Whether the repair must rewrite the same keys (default: as many). */
  sameKeys?: boolean;
}

/**
 * After writes that bypassed the marks: the verification finds keys that differ, some answer
 * differs, repair rewrites them, then everything agrees again (five assertions).
 */
export async function bypassCaught(t: Test, o: BypassCheck): Promise<void> {
  const units = o.units ?? 'days';
  const answers = o.answers ?? 'reports';
  const unit = units.replace(/s$/, '');
  const answer = answers.replace(/(ies|s)$/, (m) => (m === 'ies' ? 'y' : ''));
  const v = await o.verify();
  t.ok(o.sees ? o.sees(v.mismatched) : v.mismatched.length > 0, `verification finds the unmarked ${units} (${v.mismatched.length})`);
  t.ok((await o.check(BYPASS, o.bypassed)) > 0, `some ${answer} differs from the ${o.from ?? 'documents'}`);
  const repaired = await o.verify({ repair: true });
  if (o.sameKeys) t.same(repaired.mismatched, v.mismatched, `repair rewrites the ${units} that differ`);
  else t.equal(repaired.mismatched.length, v.mismatched.length, `repair rewrites the ${units} that differ`);
  t.same((await o.verify()).mismatched, [], `after repair every ${unit} is equal`);
  t.equal(await o.check('after repair', o.repaired), 0, `and the ${answers} agree again`);
}
