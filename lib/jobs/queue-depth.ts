import type { Db } from 'mongodb';

/** Jobs of one Agenda job name: due and waiting for a worker, and running (locked by one). */
export interface QueueDepth {
  due: number;
  running: number;
}

/**
 * How many jobs named `jobName` in `collection` are due (next run reached, not locked, not
 * disabled) and running (locked), each counted up to `cap` (a gauge that reads `cap` means "at
 * least"), within `maxTimeMS`: the work of a scrape is bounded however long the queue grows. The
 * due count follows the lock index's prefix (name, nextRunAt: lib/jobs/agenda-lock-index.ts).
 */
export async function queueDepth(db: Db, collection: string, jobName: string, now: Date, opts: { cap: number; maxTimeMS: number }): Promise<QueueDepth> {
  const jobs = db.collection(collection);
  const [due, running] = await Promise.all([
    jobs.countDocuments({ name: jobName, nextRunAt: { $lte: now }, lockedAt: null, disabled: { $ne: true } }, { limit: opts.cap, maxTimeMS: opts.maxTimeMS }),
    jobs.countDocuments({ name: jobName, lockedAt: { $ne: null } }, { limit: opts.cap, maxTimeMS: opts.maxTimeMS }),
  ]);
  return { due, running };
}
