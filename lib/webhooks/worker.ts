/**
 * The webhook delivery worker: its own Agenda instance on the service's
 * database (collection `webhookJobs`), beside the alert worker wherever that
 * runs (in the service unless ALERT_WORKER=false, or `npm run worker`).
 *
 * A job is one delivery (job _id = delivery _id). Each run makes one attempt,
 * records it on the delivery, and on failure sets the job's own next run
 * (retryDelayMs doubling up to retryMaxDelayMs, within retryWindowMs of the
 * event; then the delivery is `failed`). The delivery document, not Agenda's
 * counters, is the record: a run finding it no longer pending does nothing.
 * Agenda's lock keeps two workers off one delivery; a worker that dies
 * mid-attempt leaves a lock that expires (lockLifetimeMs) and the attempt is
 * made again: receivers de-duplicate by the event id.
 */
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { ObjectId, type Db } from 'mongodb';
import { Agenda, type Job } from 'agenda';
import { MongoBackend } from '@agendajs/mongo-backend';
import type { WebhookSettings } from '../config.ts';
import { COLLECTIONS } from '../db/collections.ts';
import { ensureWebhookIndexes, getDelivery, getWebhookById, recordDeliveryAttempt, releaseIdleDeliveryLocks } from '../db/webhooks-repo.ts';
import { DELIVERY_JOB_NAME, nextAttemptAt, type DeliveryJobData } from './model.ts';
import { decryptSecret } from './secret-box.ts';
import { SIGNATURE_HEADER, signatureHeader } from './signature.ts';
import { attemptDelivery } from './deliver.ts';

export interface WebhookLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
const silent: WebhookLogger = { info() {}, warn() {}, error() {} };

export interface WebhookWorker {
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<{ timedOut: boolean; running: number; released: number }>;
  running(): number;
}

export interface WebhookWorkerOptions {
  db: Db;
  settings: WebhookSettings;
  name?: string;
  logger?: WebhookLogger;
  /** How long stop() waits for attempts on the wire (default timeoutMs + 1 s). */
  drainTimeoutMs?: number;
}

export function createWebhookWorker(opts: WebhookWorkerOptions): WebhookWorker {
  const { db, settings } = opts;
  const name = opts.name ?? `webhooks@${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
  const log = opts.logger ?? silent;
  const runningIds = new Map<string, ObjectId>();
  let agenda: Agenda | null = null;
  let starting: Promise<void> | null = null;
  let stopping: Promise<{ timedOut: boolean; running: number; released: number }> | null = null;

  async function deliver(job: Job<DeliveryJobData>): Promise<void> {
    const id = new ObjectId(job.attrs.data.deliveryId);
    const delivery = await getDelivery(db, id);
    if (!delivery || delivery.status !== 'pending') return;
    const webhook = await getWebhookById(db, delivery.tenant, delivery.webhookId);
    if (!webhook) return; // deleted meanwhile: its deliveries go with it
    const key = settings.encryptionKey;
    if (!key) throw new Error('WEBHOOK_ENCRYPTION_KEY is not set: cannot sign deliveries');
    const secret = decryptSecret(key, webhook.secret, webhook._id.toHexString());
    const attempt = delivery.attempts.length + 1;
    const at = new Date();
    const result = await attemptDelivery({
      url: webhook.url,
      body: delivery.body,
      timeoutMs: settings.timeoutMs,
      allowPrivate: settings.allowPrivate,
      headers: {
        'user-agent': 'freight-webhooks/1',
        'x-freight-event-id': delivery.eventId,
        'x-freight-event-type': delivery.eventType,
        'x-freight-delivery-attempt': String(attempt),
        [SIGNATURE_HEADER]: signatureHeader(secret, delivery.body, Math.floor(Date.now() / 1000)),
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
    // Agenda saves nextRunAt after the run: a one-time job that runs again at `next`.
    if (next) job.attrs.nextRunAt = next;
    const fields = { deliveryId: id.toHexString(), webhookId: delivery.webhookId, tenant: delivery.tenant, eventId: delivery.eventId, attempt, statusCode: result.statusCode };
    if (ok) log.info(fields, 'webhook delivered');
    else log.warn({ ...fields, error: result.error, nextAttemptAt: next }, status === 'failed' ? 'webhook delivery failed for good' : 'webhook attempt failed');
  }

  async function start(): Promise<void> {
    if (agenda || stopping) return;
    if (starting) return starting;
    starting = (async () => {
      await ensureWebhookIndexes(db);
      const a = new Agenda({
        backend: new MongoBackend({ mongo: db, collection: COLLECTIONS.webhookJobs, ensureIndex: false }),
        name,
        processEvery: settings.processEveryMs,
        maxConcurrency: settings.concurrency,
        defaultConcurrency: settings.concurrency,
        defaultLockLimit: settings.concurrency * 2,
        defaultLockLifetime: settings.lockLifetimeMs,
      });
      a.on('error', (err: Error) => {
        // Deleting a webhook removes its queued deliveries (deleteWebhookCascade); one that was
        // running meanwhile cannot be saved afterwards. Expected, nothing is lost: not an error.
        if (/cannot be updated in the database, maybe it does not exist anymore/.test(err.message)) log.info({ err: { message: err.message } }, 'delivery job removed while running (its webhook was deleted)');
        else log.error({ err: { message: err.message } }, 'webhook worker error');
      });
      a.on('start', (job: Job) => {
        if (job.attrs._id) runningIds.set(String(job.attrs._id), new ObjectId(String(job.attrs._id)));
      });
      a.on('complete', (job: Job) => {
        if (job.attrs._id) runningIds.delete(String(job.attrs._id));
      });
      a.on('fail', (err: Error, job: Job) => log.error({ jobId: String(job.attrs._id), err: { message: err.message } }, 'webhook delivery job error'));
      a.define<DeliveryJobData>(DELIVERY_JOB_NAME, deliver, {
        concurrency: settings.concurrency,
        lockLimit: settings.concurrency * 2,
        lockLifetime: settings.lockLifetimeMs,
        // A run that throws (database down) is tried again shortly; the delivery's own schedule is set by deliver().
        backoff: (ctx) => Math.min(settings.retryDelayMs * 2 ** Math.min(ctx.attempt - 1, 20), settings.retryMaxDelayMs),
      });
      await a.ready;
      await a.start();
      agenda = a;
      log.info({ worker: name, processEveryMs: settings.processEveryMs, concurrency: settings.concurrency }, 'webhook worker started');
    })();
    try {
      await starting;
    } finally {
      starting = null;
    }
  }

  function stop(): Promise<{ timedOut: boolean; running: number; released: number }> {
    if (stopping) return stopping;
    stopping = (async () => {
      if (starting) await starting.catch(() => {});
      const a = agenda;
      if (!a) return { timedOut: false, running: 0, released: 0 };
      const result = await a.drain({ timeout: opts.drainTimeoutMs ?? settings.timeoutMs + 1000, closeConnection: false });
      const released = await releaseIdleDeliveryLocks(db, name, [...runningIds.values()]).catch(() => 0);
      agenda = null;
      log.info({ worker: name, running: result.running, timedOut: result.timedOut, released }, 'webhook worker stopped');
      return { timedOut: result.timedOut, running: result.running, released };
    })();
    return stopping;
  }

  return { name, start, stop, running: () => runningIds.size };
}
