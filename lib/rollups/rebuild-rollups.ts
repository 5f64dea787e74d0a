/** Every kind of kept totals at once: what the demo loader, the bench and start-up do. */
import type { Db } from 'mongodb';
import { withSharedReads } from '../db/shared-reads.ts';
import { ROLLUP_KINDS } from './kinds.ts';
import type { RebuildOptions, RebuildOutcome, RollupKind } from './rollup-kind.ts';

export interface RebuildAllOptions extends RebuildOptions {
  /**
   * Kinds rebuilt at once (default 1). Each kind keeps its own collections and marks, so a second
   * lane computes in Node while the first one's writes are in the database (the 100k/100k seed:
   * 243.6 s with one lane, 209.2 s with two, 198.6 s with three; docs/benchmarks.md).
   */
  lanes?: number;
}

/**
 * Rebuilds every kind, `lanes` at a time, the days a tenant's history touches read once for all
 * (lib/db/shared-reads.ts); stops early when `opts.stopped()` says so. A kind that fails lets the
 * others in flight finish, then its error is thrown.
 */
export function rebuildRollups(db: Db, opts: RebuildAllOptions = {}, kinds: readonly RollupKind[] = ROLLUP_KINDS): Promise<Record<string, RebuildOutcome>> {
  const { lanes = 1, ...rebuildOpts } = opts;
  return withSharedReads(async () => {
    const out: Record<string, RebuildOutcome> = {};
    const queue = [...kinds];
    let halt = false;
    async function lane(): Promise<void> {
      for (let kind = queue.shift(); kind && !halt; kind = queue.shift()) {
        const r = await kind.rebuild(db, rebuildOpts).catch((err: unknown) => {
          halt = true;
          throw err;
        });
        out[kind.name] = r;
        if (r.stopped) halt = true;
      }
    }
    const settled = await Promise.allSettled(Array.from({ length: Math.max(1, Math.floor(lanes)) }, lane));
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return out;
  });
}

/** Records every kind as not built (a bulk load bypassed the marks): the rollup worker rebuilds them. */
export async function forgetRollups(db: Db): Promise<void> {
  for (const kind of ROLLUP_KINDS) await kind.forget(db);
}

/** A store without documents is recorded as built for every kind. */
export async function markEmptyStoreBuilt(db: Db): Promise<void> {
  for (const kind of ROLLUP_KINDS) await kind.markEmptyStoreBuilt(db);
}
