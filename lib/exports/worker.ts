/**
 * The export worker: its own Agenda instance on the service's database (collection `exportJobs`,
 * job _id = export _id), beside the alert and webhook workers and under the same switch
 * (ALERT_WORKER). A job builds its export (run-export.ts) and then waits for the file's expiry to
 * delete it. The lock is refreshed while a run goes on (lib/jobs/agenda-worker.ts), so a long
 * export is never taken by a second worker; a worker that dies leaves a lock that expires
 * (EXPORT_LOCK_LIFETIME_MS) and the export is built again from scratch elsewhere.
 */
import type { Tracer } from '@opentelemetry/api';
import { ObjectId } from 'mongodb';
import type { Agenda, Job } from 'agenda';
import { createAgendaWorker, silentLogger, workerInstanceName, type JobLogger, type StopResult } from '../jobs/agenda-worker.ts';
import { COLLECTIONS } from '../db/collections.ts';
import { EXPORT_JOB_NAME, ensureExportIndexes, releaseIdleExportLocks, requeueExportsWithoutJob, type ExportJobData } from './exports-repo.ts';
import { runExport, type ExportRunContext } from './run-export.ts';
import type { ServiceMetrics } from '../metrics/service-metrics.ts';

export interface ExportWorker {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<StopResult>;
  running(): number;
}

export function createExportWorker(opts: {
  ctx: ExportRunContext;
  name?: string;
  logger?: JobLogger;
  tracer?: Tracer;
  /** Where the runs' outcomes are counted (GET /metrics; default: nowhere). */
  metrics?: ServiceMetrics;
}): ExportWorker {
  const { ctx } = opts;
  const settings = ctx.exports;
  const name = opts.name ?? workerInstanceName('exports');
  const log = opts.logger ?? silentLogger;

  async function run(job: Job<ExportJobData>): Promise<void> {
    const { tenant, exportId } = job.attrs.data;
    const { nextRunInMs } = await runExport(ctx, tenant, new ObjectId(exportId), opts.metrics);
    // Agenda saves nextRunAt after the run: the same one-time job runs again when the file expires.
    if (nextRunInMs !== null) job.attrs.nextRunAt = new Date(Date.now() + nextRunInMs);
    log.info({ exportId, tenant, next: nextRunInMs === null ? null : 'expiry' }, 'export job ran');
  }

  const worker = createAgendaWorker<ExportJobData>({
    db: ctx.db,
    collection: COLLECTIONS.exportJobs,
    name,
    label: 'export worker',
    log,
    jobName: EXPORT_JOB_NAME,
    run,
    tracer: opts.tracer,
    processEveryMs: settings.processEveryMs,
    concurrency: settings.concurrency,
    lockLifetimeMs: settings.lockLifetimeMs,
    // A run that threw (the database away) is tried again after 5 s, 10 s, ...; run-export.ts fails the export after its attempts.
    backoff: (c) => Math.min(5000 * 2 ** Math.min(c.attempt - 1, 10), 300_000),
    drainTimeoutMs: 10_000,
    ensureIndexes: ensureExportIndexes,
    releaseIdleLocks: releaseIdleExportLocks,
    listen: (a: Agenda) =>
      a.on('fail', (err: Error, job: Job) => log.error({ jobId: String(job.attrs._id), err: { message: err.message } }, 'export job error')),
  });
  async function start(): Promise<void> {
    const requeued = await requeueExportsWithoutJob(ctx.db, ctx.now());
    if (requeued) log.info({ requeued }, 'exports whose job was never stored are queued again');
    await worker.start();
  }
  return { name, start, stop: worker.stop, running: worker.running };
}
