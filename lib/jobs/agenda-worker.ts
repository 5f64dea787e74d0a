/**
 * The Agenda 6 plumbing shared by the alert worker (lib/alerts/worker.ts) and
 * the webhook delivery worker (lib/webhooks/worker.ts): one Agenda instance on
 * the service's database and one job definition, started once and stopped by
 * draining.
 *
 * - Each worker locks only the jobs it can start at once (lock limit =
 *   concurrency), leaving the rest to the other workers sharing the
 *   collection. A job locked to wait in Agenda's local queue would start with
 *   part of its lock lifetime spent (another worker may take it before the
 *   first refresh), and Agenda 6 drops one whose lock expired there without
 *   freeing its slot. The cost: a worker takes at most `concurrency` new jobs
 *   per poll (processEveryMs).
 * - A running job's lock is refreshed every lockLifetimeMs / 3, so only a dead
 *   worker's locks expire. Agenda cancels a run whose lock expired but cannot
 *   stop it: the run went on beside its re-run, and under load such runs piled
 *   up until nothing finished.
 * - start() is idempotent and concurrent calls share one start.
 * - stop() drains: waits for running jobs (up to drainTimeoutMs), then
 *   releases the jobs it locked but never started, so another worker takes
 *   them at once instead of after lockLifetimeMs. Call it before closing the
 *   database client.
 */
import { context, trace, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Tracer } from '@opentelemetry/api';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ObjectId, type Db } from 'mongodb';
import { Agenda, type BackoffStrategy, type Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import { throttledErrorLog } from './throttled-errors.ts';
import type { JobLogger } from './job-logger.ts';

export type { JobLogger };

export const silentLogger: JobLogger = { info() {}, warn() {}, error() {} };

/** `<kind>@host:pid:random`, stored as Agenda's lastModifiedBy on the jobs a worker locks. */
export function workerInstanceName(kind: string): string {
  return `${kind}@${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export interface StopResult {
  timedOut: boolean;
  /** Jobs still running when the drain timed out. */
  running: number;
  /** Locked but never started jobs handed back. */
  released: number;
}

export interface AgendaWorkerSpec<D> {
  db: Db;
  /** Agenda's job collection. */
  collection: string;
  /** Instance name (see workerInstanceName). */
  name: string;
  /** For log messages: "<label> started", "<label> stopped", "<label> error". */
  label: string;
  log: JobLogger;
  jobName: string;
  run: (job: Job<D>) => Promise<void>;
  processEveryMs: number;
  concurrency: number;
  lockLifetimeMs: number;
  /** Delay before a run that threw is tried again (null: no more retries). */
  backoff: BackoffStrategy;
  drainTimeoutMs: number;
  /** Indexes the worker's queries need, created before the first poll. */
  ensureIndexes: (db: Db) => Promise<void>;
  /** Unlocks this instance's locked jobs other than `runningIds`; returns how many. */
  releaseIdleLocks: (db: Db, workerName: string, runningIds: ObjectId[]) => Promise<number>;
  /** Agenda's 'error' events (default: logged as "<label> error"). */
  onError?: (err: Error) => void;
  /** A job started in this instance. */
  onJobStart?: (jobId: string) => void;
  /** More listeners (fail, retry exhausted, ...), attached before the job is defined. */
  listen?: (agenda: Agenda) => void;
  /** Each run is a span of its own trace (`job <jobName>`), its database commands its children (lib/tracing). Default: no spans. */
  tracer?: Tracer;
}

export interface AgendaWorker {
  /** Starts polling; idempotent. */
  start: () => Promise<void>;
  /** Drains and stops; idempotent. Resolves with what was still running when the drain timed out. */
  stop: () => Promise<StopResult>;
  /** Jobs running now in this instance. */
  running: () => number;
  /** The underlying Agenda (null before start() and after stop()). */
  agenda: () => Agenda | null;
}

/**
 * Runs a job inside a span of its own trace (a consumer span, as for a message taken off a queue):
 * the job is not part of the poll that found it nor of the request that queued it.
 */
async function inJobSpan<D>(tracer: Tracer | undefined, jobName: string, job: Job<D>, run: () => Promise<void>): Promise<void> {
  if (!tracer) return run();
  const span = tracer.startSpan(
    `job ${jobName}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'agenda',
        'messaging.operation.name': 'process',
        'messaging.destination.name': jobName,
        'freight.job.id': String(job.attrs._id),
      },
    },
    ROOT_CONTEXT,
  );
  try {
    await context.with(trace.setSpan(ROOT_CONTEXT, span), run);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs `run(job)` while refreshing the job's lock (Agenda's touch) every third of its lifetime.
 * Resolves only once no refresh is in flight: a refresh landing after Agenda's final save would
 * lock the finished job again, and its expiry would run it a second time.
 */
export async function runKeepingLock<D>(job: Job<D>, run: (job: Job<D>) => Promise<void>, lockLifetimeMs: number): Promise<void> {
  let refreshing: Promise<void> = Promise.resolve();
  let stopped = false;
  const timer = setInterval(
    () => {
      // touch() sets lockedAt in memory before it saves: Agenda's own expiry check sees it at once.
      // It throws once Agenda has cancelled the run; a failed save is retried at the next tick.
      refreshing = refreshing.then(() => (stopped ? undefined : job.touch().catch(() => undefined)));
    },
    Math.max(100, Math.floor(lockLifetimeMs / 3)),
  );
  try {
    await run(job);
  } finally {
    stopped = true;
    clearInterval(timer);
    await refreshing;
  }
}

export function createAgendaWorker<D>(spec: AgendaWorkerSpec<D>): AgendaWorker {
  const { db, name, label, log } = spec;
  const runningIds = new Map<string, ObjectId>();
  let agenda: Agenda | null = null;
  let starting: Promise<void> | null = null;
  let stopping: Promise<StopResult> | null = null;

  async function start(): Promise<void> {
    if (agenda || stopping) return;
    if (starting) return starting;
    starting = (async () => {
      await spec.ensureIndexes(db);
      // ensureIndex: false — the lock index (lib/jobs/agenda-lock-index.ts) is among the area's indexes
      // ensured above; Agenda's own creation would run unawaited in its constructor, where a failure
      // is an unhandled rejection.
      const a = new Agenda({
        backend: new MongoBackend({ mongo: db, collection: spec.collection, ensureIndex: false }),
        name,
        processEvery: spec.processEveryMs,
        maxConcurrency: spec.concurrency,
        defaultConcurrency: spec.concurrency,
        defaultLockLimit: spec.concurrency,
        defaultLockLifetime: spec.lockLifetimeMs,
      });
      // Failed polls repeat every poll while the database is down: logged at most once a minute per kind.
      a.on('error', spec.onError ?? throttledErrorLog(log, label));
      a.on('start', (job: Job) => {
        if (!job.attrs._id) return;
        const id = String(job.attrs._id);
        runningIds.set(id, new ObjectId(id));
        spec.onJobStart?.(id);
      });
      a.on('complete', (job: Job) => {
        if (job.attrs._id) runningIds.delete(String(job.attrs._id));
      });
      spec.listen?.(a);
      a.define<D>(spec.jobName, (job: Job<D>) => inJobSpan(spec.tracer, spec.jobName, job, () => runKeepingLock(job, spec.run, spec.lockLifetimeMs)), {
        concurrency: spec.concurrency,
        lockLimit: spec.concurrency,
        lockLifetime: spec.lockLifetimeMs,
        backoff: spec.backoff,
      });
      await a.ready;
      await a.start();
      agenda = a;
      log.info({ worker: name, processEveryMs: spec.processEveryMs, concurrency: spec.concurrency }, `${label} started`);
    })();
    try {
      await starting;
    } finally {
      starting = null;
    }
  }

  function stop(): Promise<StopResult> {
    if (stopping) return stopping;
    stopping = (async () => {
      if (starting) await starting.catch(() => {});
      const a = agenda;
      if (!a) return { timedOut: false, running: 0, released: 0 };
      const result = await a.drain({ timeout: spec.drainTimeoutMs, closeConnection: false });
      const released = await spec.releaseIdleLocks(db, name, [...runningIds.values()]).catch((err: Error) => {
        log.warn({ err: { message: err.message } }, 'could not release idle job locks');
        return 0;
      });
      agenda = null;
      log.info({ worker: name, completed: result.completed, running: result.running, timedOut: result.timedOut, released }, `${label} stopped`);
      return { timedOut: result.timedOut, running: result.running, released };
    })();
    return stopping;
  }

  return { start, stop, running: () => runningIds.size, agenda: () => agenda };
}
