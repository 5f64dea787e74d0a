/**
 * The webhook delivery worker: its own Agenda instance on the service's
 * database (collection `webhookJobs`), beside the alert worker wherever that
 * runs (in the service unless ALERT_WORKER=false, or `npm run worker`).
 *
 * A job is one delivery (job _id = delivery _id). Each run makes one attempt,
 * records it on the delivery, and on failure sets the job's own next run
 * (retryDelayMs doubling up to retryMaxDelayMs, within retryWindowMs of the
 * event; then the delivery is `failed`). A secret that cannot be decrypted (the
 * key changed) is such a failed attempt, with its reason. A run that throws (a
 * database error) is run again by Agenda's backoff within the same window, and
 * after it the delivery is `failed` too: nothing retries without end. The
 * delivery document, not Agenda's counters, is the record: a run finding it no
 * longer pending does nothing.
 * Agenda's lock keeps two workers off one delivery; a worker that dies
 * mid-attempt leaves a lock that expires (lockLifetimeMs) and the attempt is
 * made again: receivers de-duplicate by the event id. A pending delivery whose job was never stored
 * (its request failed between the two inserts) is queued again at start and, while the worker runs,
 * once it is overdue by a lock lifetime. The Agenda plumbing
 * (locks, start, drain) is lib/jobs/agenda-worker.ts, shared with the alert worker.
 */
import type { Tracer } from '@opentelemetry/api';
import { ObjectId, type Db } from 'mongodb';
import type { Agenda, Job } from 'agenda';
import { createAgendaWorker, silentLogger, workerInstanceName, type JobLogger, type StopResult } from '../jobs/agenda-worker.ts';
import type { WebhookSettings } from '../config.ts';
import { COLLECTIONS } from '../db/collections.ts';
import {
  DELIVERY_JOB_NAME,
  deleteOrphanDelivery,
  ensureWebhookIndexes,
  getDelivery,
  getWebhookById,
  recordDeliveryAttempt,
  releaseIdleDeliveryLocks,
  requeueDeliveriesWithoutJob,
  requeueOverdueDeliveriesWithoutJob,
} from './webhooks-repo.ts';
import { nextAttemptAt, type DeliveryJobData, type WebhookDocument } from './model.ts';
import { decryptSecret } from './secret-box.ts';
import { SIGNATURE_HEADER, signatureHeader } from './signature.ts';
import { attemptDelivery } from './deliver.ts';
import { NO_METRICS, type ServiceMetrics } from '../metrics/service-metrics.ts';
import { throttledErrorLog } from '../jobs/throttled-errors.ts';

export type WebhookLogger = JobLogger;

export interface WebhookWorker {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<StopResult>;
  running(): number;
}

export interface WebhookWorkerOptions {
  db: Db;
  settings: WebhookSettings;
  name?: string;
  logger?: WebhookLogger;
  /** How long stop() waits for attempts on the wire (default timeoutMs + 1 s). */
  drainTimeoutMs?: number;
  /** Where attempts are counted (GET /metrics; default: nowhere). */
  metrics?: ServiceMetrics;
  /** Each delivery job a span (lib/jobs/agenda-worker.ts). Default: none. */
  tracer?: Tracer;
}

export function createWebhookWorker(opts: WebhookWorkerOptions): WebhookWorker {
  const { db, settings } = opts;
  const name = opts.name ?? workerInstanceName('webhooks');
  const log = opts.logger ?? silentLogger;
  const metrics = opts.metrics ?? NO_METRICS;

  /** The signing secret, or why there is none: an error retrying will not cure, recorded as the attempt's (nothing secret in it). */
  function signingSecret(webhook: WebhookDocument): { secret: string } | { error: string } {
    const key = settings.encryptionKey;
    if (!key) return { error: 'the service has no encryption key to sign deliveries with (WEBHOOK_ENCRYPTION_KEY)' };
    try {
      return { secret: decryptSecret(key, webhook.secret, webhook._id.toHexString()) };
    } catch {
      // Another WEBHOOK_ENCRYPTION_KEY than the one that encrypted it, or an altered box.
      return { error: 'signing secret cannot be decrypted: rotate the secret' };
    }
  }

  async function deliver(job: Job<DeliveryJobData>): Promise<void> {
    const id = new ObjectId(job.attrs.data.deliveryId);
    const delivery = await getDelivery(db, id);
    if (!delivery || delivery.status !== 'pending') return;
    const webhook = await getWebhookById(db, delivery.tenant, delivery.webhookId);
    if (!webhook) {
      // Deleted meanwhile: its deliveries go with it, this one too (queued while the delete ran).
      await deleteOrphanDelivery(db, id);
      return;
    }
    const signing = signingSecret(webhook);
    const attempt = delivery.attempts.length + 1;
    const at = new Date();
    const result =
      'error' in signing
        ? { statusCode: null, error: signing.error, durationMs: 0 }
        : await attemptDelivery({
            url: webhook.url,
            body: delivery.body,
            timeoutMs: settings.timeoutMs,
            allowPrivate: settings.allowPrivate,
            allowedPorts: settings.allowedPorts,
            headers: {
              'user-agent': 'freight-webhooks/1',
              'x-freight-event-id': delivery.eventId,
              'x-freight-event-type': delivery.eventType,
              'x-freight-delivery-attempt': String(attempt),
              [SIGNATURE_HEADER]: signatureHeader(signing.secret, delivery.body, Math.floor(Date.now() / 1000)),
            },
          });
    const ended = new Date();
    const ok = result.error === null;
    const next = ok ? null : nextAttemptAt(attempt, delivery.createdAt, ended, settings);
    const status = ok ? 'succeeded' : next ? 'pending' : 'failed';
    await recordDeliveryAttempt(
      db,
      id,
      { attempt, at, durationMs: result.durationMs, statusCode: result.statusCode, error: result.error },
      { status, nextAttemptAt: next, completedAt: status === 'pending' ? null : ended },
    );
    metrics.webhookAttempt(status === 'pending' ? 'retrying' : status);
    // Agenda saves nextRunAt after the run: a one-time job that runs again at `next`.
    if (next) job.attrs.nextRunAt = next;
    const fields = {
      deliveryId: id.toHexString(),
      webhookId: delivery.webhookId,
      tenant: delivery.tenant,
      eventId: delivery.eventId,
      attempt,
      statusCode: result.statusCode,
    };
    if (ok) log.info(fields, 'webhook delivered');
    else log.warn({ ...fields, error: result.error, nextAttemptAt: next }, status === 'failed' ? 'webhook delivery failed for good' : 'webhook attempt failed');
  }

  /**
   * A run that threw (a database error): thrown again, so Agenda runs it again shortly (the backoff
   * below), while the delivery's retry window lasts: nothing acknowledged is lost to a transient
   * error. Once even the shortest retry would fall outside the window, the delivery is `failed`
   * with the reason as its last attempt and the run ends, so no job is retried without end. The
   * error's own text stays in the log (the deliveries list is the tenant's).
   */
  async function deliverOrGiveUp(job: Job<DeliveryJobData>): Promise<void> {
    try {
      await deliver(job);
    } catch (err) {
      const id = new ObjectId(job.attrs.data.deliveryId);
      const delivery = await getDelivery(db, id).catch(() => null);
      const now = new Date();
      if (!delivery || delivery.status !== 'pending' || nextAttemptAt(1, delivery.createdAt, now, settings)) throw err;
      const attempt = delivery.attempts.length + 1;
      const error = 'the service could not process the delivery (internal error) before its retry window ended';
      await recordDeliveryAttempt(
        db,
        id,
        { attempt, at: now, durationMs: 0, statusCode: null, error },
        { status: 'failed', nextAttemptAt: null, completedAt: now },
      );
      metrics.webhookAttempt('failed');
      log.error(
        {
          deliveryId: id.toHexString(),
          webhookId: delivery.webhookId,
          tenant: delivery.tenant,
          eventId: delivery.eventId,
          attempt,
          err: { message: err instanceof Error ? err.message : String(err) },
        },
        'webhook delivery failed for good: its runs kept failing until the retry window ended',
      );
    }
  }

  // Failed polls repeat every poll while the database is down: logged at most once a minute per kind.
  const pollErrors = throttledErrorLog(log, 'webhook worker');
  const worker = createAgendaWorker<DeliveryJobData>({
    db,
    collection: COLLECTIONS.webhookJobs,
    name,
    label: 'webhook worker',
    log,
    jobName: DELIVERY_JOB_NAME,
    run: deliverOrGiveUp,
    tracer: opts.tracer,
    processEveryMs: settings.processEveryMs,
    concurrency: settings.concurrency,
    lockLifetimeMs: settings.lockLifetimeMs,
    // A run that throws (database down) is tried again shortly, within the delivery's retry window (deliverOrGiveUp);
    // the delivery's own schedule is set by deliver().
    backoff: (ctx) => Math.min(settings.retryDelayMs * 2 ** Math.min(ctx.attempt - 1, 20), settings.retryMaxDelayMs),
    drainTimeoutMs: opts.drainTimeoutMs ?? settings.timeoutMs + 1000,
    ensureIndexes: ensureWebhookIndexes,
    releaseIdleLocks: releaseIdleDeliveryLocks,
    onError: (err: Error) => {
      // Deleting a webhook removes its queued deliveries (deleteWebhookCascade); one that was
      // running meanwhile cannot be saved afterwards. Expected, nothing is lost: not an error.
      if (/cannot be updated in the database, maybe it does not exist anymore/.test(err.message))
        log.info({ err: { message: err.message } }, 'delivery job removed while running (its webhook was deleted)');
      else pollErrors(err);
    },
    listen: (a: Agenda) =>
      a.on('fail', (err: Error, job: Job) => log.error({ jobId: String(job.attrs._id), err: { message: err.message } }, 'webhook delivery job error')),
  });

  /**
   * While running, every lock lifetime: a pending delivery overdue by more than that whose job is
   * missing (its request failed between the two inserts) is queued again, not only at the next start.
   */
  let sweep: NodeJS.Timeout | null = null;
  let sweeping: Promise<void> | null = null;
  function sweepOrphans(): void {
    if (sweeping) return;
    const now = new Date();
    sweeping = requeueOverdueDeliveriesWithoutJob(db, new Date(now.getTime() - settings.lockLifetimeMs), now, 1000)
      .then((requeued) => {
        if (requeued) log.info({ requeued }, 'webhook deliveries whose job was never stored are queued again');
      }, pollErrors)
      .finally(() => {
        sweeping = null;
      });
  }

  async function start(): Promise<void> {
    const requeued = await requeueDeliveriesWithoutJob(db, new Date());
    if (requeued) log.info({ requeued }, 'webhook deliveries whose job was never stored are queued again');
    await worker.start();
    if (!sweep) {
      sweep = setInterval(sweepOrphans, settings.lockLifetimeMs);
      sweep.unref();
    }
  }
  async function stop(): Promise<StopResult> {
    if (sweep) clearInterval(sweep);
    sweep = null;
    await sweeping;
    return worker.stop();
  }
  return { name, start, stop, running: worker.running };
}
