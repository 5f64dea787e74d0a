/**
 * lib/rollups/rebuild-rollups.ts, the lanes: every kind is rebuilt once, never more at once than
 * the lanes, a kind that stops halts the rest, and a kind that fails lets the one in flight finish
 * before its error is thrown. The kinds are recorders whose rebuilds finish when the test says.
 */
import type { Test } from 'tap';
import type { Db } from 'mongodb';
import { rebuildRollups } from '../../lib/rollups/rebuild-rollups.ts';
import type { RebuildOutcome, RollupKind } from '../../lib/rollups/rollup-kind.ts';

interface Gate {
  kinds: RollupKind[];
  /** Names in the order their rebuilds began. */
  began: string[];
  /** Rebuilds running now, and the most at once. */
  running: Set<string>;
  peak: () => number;
  /** Ends the named kind's rebuild with this outcome (or this error). */
  finish: (name: string, end: Partial<RebuildOutcome> | Error) => void;
}

function gatedKinds(names: readonly string[]): Gate {
  const began: string[] = [];
  const running = new Set<string>();
  let peak = 0;
  const ends = new Map<string, (end: Partial<RebuildOutcome> | Error) => void>();
  const kinds = names.map((name): RollupKind => ({
    name,
    ready: async () => false,
    rebuild: () =>
      new Promise<RebuildOutcome>((resolve, reject) => {
        began.push(name);
        running.add(name);
        peak = Math.max(peak, running.size);
        ends.set(name, (end) => {
          running.delete(name);
          if (end instanceof Error) reject(end);
          else resolve({ tenants: 1, units: 1, stopped: false, ...end });
        });
      }),
    forget: async () => {},
    markEmptyStoreBuilt: async () => false,
    drain: async () => 0,
    verify: async () => ({ checked: 0, mismatched: [] }),
    outstanding: async () => 0,
  }));
  return {
    kinds,
    began,
    running,
    peak: () => peak,
    finish: (name, end) => {
      const f = ends.get(name);
      if (!f) throw new Error(`${name} has not begun`);
      f(end);
    },
  };
}

/** Lets the rebuild's promises move on (each lane awaits one rebuild, then takes the next kind). */
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));
const db = {} as Db;

export default async function rebuildRollupsLanesTests(t: Test): Promise<void> {
  t.test('two lanes: two kinds at once, each next kind as a lane frees, every kind once', async (t) => {
    const g = gatedKinds(['a', 'b', 'c', 'd']);
    const done = rebuildRollups(db, { lanes: 2 }, g.kinds);
    await settle();
    t.same(g.began, ['a', 'b'], 'the first two begin together');
    g.finish('b', {});
    await settle();
    t.same(g.began, ['a', 'b', 'c'], 'the lane that freed takes the next kind');
    g.finish('a', {});
    await settle();
    g.finish('c', {});
    g.finish('d', {});
    const out = await done;
    t.same(Object.keys(out).sort(), ['a', 'b', 'c', 'd']);
    t.equal(g.peak(), 2, 'never more than two at once');
  });

  t.test('one lane (the default): one kind after the other', async (t) => {
    const g = gatedKinds(['a', 'b', 'c']);
    const done = rebuildRollups(db, {}, g.kinds);
    for (const name of ['a', 'b', 'c']) {
      await settle();
      g.finish(name, {});
    }
    await done;
    t.same(g.began, ['a', 'b', 'c']);
    t.equal(g.peak(), 1);
  });

  t.test('a kind that stopped: no further kind begins; the one in flight finishes', async (t) => {
    const g = gatedKinds(['a', 'b', 'c', 'd']);
    const done = rebuildRollups(db, { lanes: 2 }, g.kinds);
    await settle();
    g.finish('a', { stopped: true });
    await settle();
    t.same(g.began, ['a', 'b'], 'c does not begin');
    g.finish('b', {});
    const out = await done;
    t.same(Object.keys(out).sort(), ['a', 'b']);
    t.equal(out.a?.stopped, true);
  });

  t.test("a kind that failed: its error, after the other lane's kind has finished", async (t) => {
    const g = gatedKinds(['a', 'b', 'c']);
    let finished = false;
    const done = rebuildRollups(db, { lanes: 2 }, g.kinds).finally(() => {
      finished = true;
    });
    await settle();
    g.finish('a', new Error('a broke'));
    await settle();
    t.equal(finished, false, 'b is still running: the rebuild waits for it');
    t.same(g.began, ['a', 'b'], 'no further kind begins');
    g.finish('b', {});
    await t.rejects(done, { message: 'a broke' });
  });
}
