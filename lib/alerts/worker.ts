/**
 * The alerts worker: an Agenda 6 instance on the service's own database
 * (collection `alertJobs`) that evaluates due alert jobs and stores their
 * records.
 *
 * - Runs inside the service (lib/alerts/plugin.ts) unless ALERT_WORKER=false,
 *   or alone with `npm run worker`; any number of workers may share one
 *   database. Agenda locks a job with one atomic findOneAndUpdate, so two
 *   workers never run the same job at once; the record's `_id` is the job id,
 *   so even a re-run after an expired lock stores one record.
 * - The Agenda plumbing (locks, start, drain) is lib/jobs/agenda-worker.ts,
 *   shared with the webhook delivery worker.
 * - A failed evaluation is recorded on the job (`data.failures`, Agenda's
 *   failCount/failReason) and retried with exponential backoff; after the
 *   last retry the job is `failed`.
 * - stop() drains: waits for running evaluations (up to drainTimeoutMs), then
 *   releases jobs it locked but never started. Call it before closing the
 *   database client.
 */
import type { Tracer } from '@opentelemetry/api';
import { readExtraData } from './extra-data.ts';
import { ObjectId, type Db } from 'mongodb';
import { exponential, type Agenda, type Job } from 'agenda';
import { createAgendaWorker, silentLogger, workerInstanceName, type JobLogger, type StopResult } from '../jobs/agenda-worker.ts';
import { COLLECTIONS } from '../db/collections.ts';
import { ensureAlertIndexes, findAlertRecord, insertAlertRecord, recordAlertJobFailure, releaseIdleLocks } from './alert-jobs-repo.ts';
import { ALERT_JOB_NAME, type AlertJobData } from './jobs.ts';
import { evaluateAlertRule } from './evaluate.ts';
import { alertRecordDocument } from './records.ts';
import { enqueueAlertEvent } from './alert-events.ts';

export type AlertLogger = JobLogger;

/** Tunables; the service reads them from the environment (ALERT_* variables: lib/config-schema.ts, AppConfig.alerts.workerSettings). */
export interface AlertWorkerSettings {
  /** ALERT_PROCESS_EVERY_MS: how often due jobs are polled (default 5000). */
  processEveryMs: number;
  /** ALERT_CONCURRENCY: evaluations at once in this worker (default 5). */
  concurrency: number;
  /** ALERT_LOCK_LIFETIME_MS: after this a lock of a dead worker expires and the job runs elsewhere (default 300000). */
  lockLifetimeMs: number;
  /** ALERT_RETRY_DELAY_MS: first retry delay, doubled each time (default 30000). */
  retryDelayMs: number;
  /** ALERT_RETRY_MAX_DELAY_MS (default 1800000). */
  retryMaxDelayMs: number;
  /** ALERT_MAX_RETRIES: retries after the first failure (default 5). */
  maxRetries: number;
  /** ALERT_DRAIN_TIMEOUT_MS: how long stop() waits for running evaluations (default 30000). */
  drainTimeoutMs: number;
  /** ALERT_QUERY_TIMEOUT_MS: server-side limit of each rule query (default 60000). */
  queryTimeoutMs: number;
}

export const DEFAULT_ALERT_WORKER_SETTINGS: AlertWorkerSettings = {
  processEveryMs: 5000,
  concurrency: 5,
  lockLifetimeMs: 300_000,
  retryDelayMs: 30_000,
  retryMaxDelayMs: 1_800_000,
  maxRetries: 5,
  drainTimeoutMs: 30_000,
  queryTimeoutMs: 60_000,
};

export interface AlertJobContext extends Omit<AlertJobData, 'extraData'> {
  id: string;
  extraData: Record<string, unknown>;
  /** 1 for the first try. */
  attempt: number;
}

export interface AlertWorkerOptions extends Partial<AlertWorkerSettings> {
  db: Db;
  /** Instance name, stored as Agenda's lastModifiedBy (default alerts@host:pid:random). */
  name?: string;
  logger?: AlertLogger;
  /** Each evaluation a span (lib/jobs/agenda-worker.ts). Default: none. */
  tracer?: Tracer;
  /** Clock for rule evaluation ("as of"); Agenda's own scheduling uses real time. */
  now?: () => Date;
  /** Test hooks. `beforeEvaluate` may throw to simulate a failure. */
  hooks?: {
    beforeEvaluate?: (job: AlertJobContext) => void | Promise<void>;
    onStart?: (jobId: string, worker: string) => void;
  };
}

export interface AlertWorker {
  readonly name: string;
  readonly settings: AlertWorkerSettings;
  /** Starts polling; idempotent. */
  start(): Promise<void>;
  /** Drains and stops; idempotent. Resolves with what was still running when the drain timed out. */
  stop(): Promise<StopResult>;
  /** Evaluations running now in this worker. */
  running(): number;
  /** The underlying Agenda (null before start()). Events: start, success, fail, complete, retry. */
  agenda(): Agenda | null;
}

export function defaultWorkerName(): string {
  return workerInstanceName('alerts');
}

export function createAlertWorker(opts: AlertWorkerOptions): AlertWorker {
  const settings: AlertWorkerSettings = { ...DEFAULT_ALERT_WORKER_SETTINGS };
  for (const k of Object.keys(DEFAULT_ALERT_WORKER_SETTINGS) as (keyof AlertWorkerSettings)[]) {
    if (opts[k] !== undefined) settings[k] = opts[k]!;
  }
  const { db } = opts;
  const name = opts.name ?? defaultWorkerName();
  const log = opts.logger ?? silentLogger;
  const now = opts.now ?? (() => new Date());

  async function evaluateJob(job: Job<AlertJobData>): Promise<void> {
    const id = String(job.attrs._id);
    const data = job.attrs.data;
    const attempt = (job.attrs.failCount ?? 0) + 1;
    try {
      await opts.hooks?.beforeEvaluate?.({ ...data, extraData: readExtraData(data.extraData), id, attempt });
      const evaluatedAt = now();
      const result = await evaluateAlertRule(
        db,
        { tenant: data.tenant, ruleId: data.ruleId, cycleKey: data.cycleKey, asOf: evaluatedAt },
        settings.queryTimeoutMs,
      );
      const record = alertRecordDocument(id, data, result, { evaluatedAt, attempts: attempt, worker: name });
      const stored = await insertAlertRecord(db, record);
      // Also after a re-run that found the record stored: the crash may have come before the events were queued.
      // Idempotent (delivery ids derive from endpoint and event), and a failure retries the job.
      const webhooksQueued = await enqueueAlertEvent(db, stored ? record : ((await findAlertRecord(db, id)) ?? record));
      log.info(
        {
          jobId: id,
          tenant: data.tenant,
          ruleId: data.ruleId,
          cycleKey: data.cycleKey,
          userId: data.userId,
          status: result.status,
          findings: result.summary.findings,
          stored,
          webhooksQueued,
        },
        stored ? 'alert evaluated' : 'alert already recorded (re-run)',
      );
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      log.warn({ jobId: id, tenant: data.tenant, ruleId: data.ruleId, attempt, err: { message } }, 'alert evaluation failed');
      await recordAlertJobFailure(db, new ObjectId(id), { at: new Date(), attempt, error: message.slice(0, 500) }).catch((e: Error) =>
        log.error({ jobId: id, err: { message: e.message } }, 'could not record the failure'),
      );
      throw err;
    }
  }

  const worker = createAgendaWorker<AlertJobData>({
    db,
    collection: COLLECTIONS.alertJobs,
    name,
    label: 'alert worker',
    log,
    jobName: ALERT_JOB_NAME,
    run: evaluateJob,
    tracer: opts.tracer,
    processEveryMs: settings.processEveryMs,
    concurrency: settings.concurrency,
    lockLifetimeMs: settings.lockLifetimeMs,
    backoff: exponential({ delay: settings.retryDelayMs, factor: 2, maxDelay: settings.retryMaxDelayMs, maxRetries: settings.maxRetries, jitter: 0.1 }),
    drainTimeoutMs: settings.drainTimeoutMs,
    ensureIndexes: ensureAlertIndexes,
    releaseIdleLocks,
    onJobStart: (jobId) => opts.hooks?.onStart?.(jobId, name),
    listen: (a: Agenda) =>
      a.on('retry exhausted', (err: Error, job: Job) =>
        log.error({ jobId: String(job.attrs._id), err: { message: err.message }, failCount: job.attrs.failCount }, 'alert job failed for good'),
      ),
  });

  return { name, settings, ...worker };
}
