/**
 * What a scrape reads from the database (the gauges of lib/metrics/prometheus.ts): a ping and the
 * depth of every Agenda queue of the service's workers, one reading reused for `cacheMs`. Shared
 * by the service's `/metrics` (lib/app/metrics.ts) and `npm run worker`'s (worker-metrics.ts).
 */
import type { Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { queueDepth } from '../jobs/queue-depth.ts';
import { ALERT_JOB_NAME } from '../alerts/jobs.ts';
import { DELIVERY_JOB_NAME } from '../webhooks/webhooks-repo.ts';
import { EXPORT_JOB_NAME } from '../exports/exports-repo.ts';
import type { DatabaseReading } from './prometheus.ts';
import { reuseReading } from './reuse-reading.ts';

/** The Agenda queues whose depth a scrape reads: every job name of the service's workers. */
export const JOB_QUEUES = [
  { collection: COLLECTIONS.alertJobs, job: ALERT_JOB_NAME },
  { collection: COLLECTIONS.webhookJobs, job: DELIVERY_JOB_NAME },
  { collection: COLLECTIONS.exportJobs, job: EXPORT_JOB_NAME },
];
/** Counted up to this many jobs per queue and state: a scrape's work stays bounded. */
const QUEUE_COUNT_CAP = 100_000;

export interface DatabaseReaderOptions {
  db: Db;
  /** A ping's round trip in ms (rejects when the database does not answer in time). */
  ping: () => Promise<number>;
  /** Why the database is known to be away now (the embedded engine restarting), else null: no ping then. */
  problem: () => string | null;
  maxTimeMS: number;
  cacheMs: number;
  warn: (err: unknown, job: string) => void;
}

/** The reading of a scrape (never rejects: a database away reads `up: false`). */
export function databaseReader(opts: DatabaseReaderOptions): () => Promise<DatabaseReading> {
  return reuseReading(async (): Promise<DatabaseReading> => {
    const down: DatabaseReading = { up: false, pingSeconds: null, queues: [] };
    if (opts.problem() !== null) return down;
    let pingMs: number;
    try {
      pingMs = await opts.ping();
    } catch {
      return down;
    }
    const now = new Date();
    const queues = await Promise.all(
      JOB_QUEUES.map(async ({ collection, job }) => {
        try {
          return { job, depth: await queueDepth(opts.db, collection, job, now, { cap: QUEUE_COUNT_CAP, maxTimeMS: opts.maxTimeMS }) };
        } catch (err) {
          opts.warn(err, job);
          return null;
        }
      }),
    );
    return { up: true, pingSeconds: pingMs / 1000, queues: queues.filter((q) => q !== null) };
  }, opts.cacheMs);
}
