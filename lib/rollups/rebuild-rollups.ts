/** Every kind of kept totals at once: what the demo loader, the bench and start-up do. */
import type { Db } from 'mongodb';
import { withSharedReads } from '../db/shared-reads.ts';
import { ROLLUP_KINDS } from './kinds.ts';
import type { RebuildOptions, RebuildOutcome } from './rollup-kind.ts';

/**
 * Rebuilds every kind, one after the other, the days a tenant's history touches read once for all
 * (lib/db/shared-reads.ts); stops early when `opts.stopped()` says so.
 */
export function rebuildRollups(db: Db, opts: RebuildOptions = {}): Promise<Record<string, RebuildOutcome>> {
  return withSharedReads(async () => {
    const out: Record<string, RebuildOutcome> = {};
    for (const kind of ROLLUP_KINDS) {
      out[kind.name] = await kind.rebuild(db, opts);
      if (out[kind.name]!.stopped) break;
    }
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
