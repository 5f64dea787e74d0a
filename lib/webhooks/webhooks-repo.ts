/**
 * Webhook endpoints, deliveries and delivery jobs. Tenant first in every
 * filter a request can reach; the worker reads deliveries by their id.
 */
import { ObjectId, type Collection, type Db, type Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { ensureIndexesOnce } from '../db/indexes.ts';
import { WEBHOOK_INDEXES } from './webhooks-indexes.ts';
import { releaseIdleJobLocks } from '../jobs/agenda-locks-repo.ts';
import { findPage, findSortedPage, storedDateIdPosition } from '../db/find-page.ts';
import type { PageQuery } from '../shared/keyset.ts';
import { insertUnlessDuplicate } from '../db/duplicate-key.ts';
import { oneTimeJobDocument } from '../jobs/agenda-job.ts';
import type { DeliveryAttempt, DeliveryDocument, DeliveryJobData, DeliveryJobDocument, DeliveryStatus, WebhookDocument, WebhookEventType } from './model.ts';
import type { EncryptedSecret } from './secret-box.ts';

export const webhooks = (db: Db): Collection<WebhookDocument> => db.collection<WebhookDocument>(COLLECTIONS.webhooks);
export const webhookDeliveries = (db: Db): Collection<DeliveryDocument> => db.collection<DeliveryDocument>(COLLECTIONS.webhookDeliveries);
export const webhookJobs = (db: Db): Collection<DeliveryJobDocument> => db.collection<DeliveryJobDocument>(COLLECTIONS.webhookJobs);

/** The Agenda job definition of the delivery worker. */
export const DELIVERY_JOB_NAME = 'webhook:deliver';

/** A one-time job for a delivery, due at `runAt` (inserted directly: no running Agenda needed). */
export function deliveryJobDocument(delivery: Pick<DeliveryDocument, '_id' | 'tenant' | 'webhookId'>, runAt: Date): DeliveryJobDocument {
  const data: DeliveryJobData = { tenant: delivery.tenant, webhookId: delivery.webhookId, deliveryId: delivery._id.toHexString() };
  return oneTimeJobDocument(delivery._id, DELIVERY_JOB_NAME, data, runAt);
}

/** The webhook indexes, once per Db handle: the endpoint limit and delivery uniqueness rest on them. */
export const ensureWebhookIndexes = ensureIndexesOnce(WEBHOOK_INDEXES);

const hexId = (id: string): ObjectId | null => (/^[0-9a-fA-F]{24}$/.test(id) ? new ObjectId(id) : null);

/**
 * Inserts the endpoint into the tenant's first free slot; null when all
 * `maxEndpoints` slots are taken. Creates racing for slots: the unique
 * (tenant, slot) index lets one win each, the others go on to the next slot
 * free in what they read, so each loses at most once per slot another took.
 * A round that lost every free slot reads again (a delete may have freed one);
 * after three, the tenant is at its limit as far as this create can tell.
 */
export async function insertWebhook(db: Db, doc: Omit<WebhookDocument, 'slot'>, maxEndpoints: number): Promise<WebhookDocument | null> {
  for (let round = 0; round < 3; round++) {
    const used = new Set(
      (
        await webhooks(db)
          .find({ tenant: doc.tenant }, { projection: { slot: 1 } })
          .toArray()
      ).map((w) => w.slot),
    );
    if (used.size >= maxEndpoints) return null;
    for (let slot = 0; slot < maxEndpoints; slot++) {
      if (used.has(slot)) continue;
      const full: WebhookDocument = { ...doc, slot };
      if (await insertUnlessDuplicate(webhooks(db), full)) return full;
    }
  }
  return null;
}

export function findWebhooks(db: Db, tenant: string, window: { skip: number; limit: number }, maxTimeMS: number) {
  return findPage(webhooks(db), { tenant }, { createdAt: -1, _id: -1 }, window, maxTimeMS);
}

export async function findWebhook(db: Db, tenant: string, id: string): Promise<WebhookDocument | null> {
  const _id = hexId(id);
  return _id ? webhooks(db).findOne({ tenant, _id }) : null;
}

/** The endpoint, then its pending jobs and its deliveries; null when the tenant has no such endpoint. */
export async function deleteWebhookCascade(db: Db, tenant: string, id: string): Promise<WebhookDocument | null> {
  const _id = hexId(id);
  if (!_id) return null;
  const deleted = await webhooks(db).findOneAndDelete({ tenant, _id });
  if (!deleted) return null;
  const webhookId = _id.toHexString();
  await webhookJobs(db).deleteMany({ 'data.webhookId': webhookId, name: DELIVERY_JOB_NAME });
  await webhookDeliveries(db).deleteMany({ tenant, webhookId });
  return deleted;
}

export async function replaceWebhookSecret(
  db: Db,
  tenant: string,
  id: string,
  secret: EncryptedSecret,
  hint: string,
  at: Date,
): Promise<WebhookDocument | null> {
  const _id = hexId(id);
  if (!_id) return null;
  return webhooks(db).findOneAndUpdate(
    { tenant, _id },
    { $set: { secret, secretHint: hint, secretRotatedAt: at } },
    { returnDocument: 'after', writeConcern: { w: 'majority' } },
  );
}

export function findSubscribedWebhooks(db: Db, tenant: string, eventType: WebhookEventType): Promise<WebhookDocument[]> {
  return webhooks(db).find({ tenant, events: eventType }).toArray();
}

/**
 * Stores the delivery and its job, each at most once (both keyed by the
 * delivery id): a second call for the same endpoint and event changes nothing,
 * and a call after a crash between the two inserts completes the pair.
 */
export async function enqueueDelivery(db: Db, delivery: DeliveryDocument): Promise<boolean> {
  const created = await insertUnlessDuplicate(webhookDeliveries(db), delivery);
  await insertUnlessDuplicate(webhookJobs(db), deliveryJobDocument(delivery, delivery.createdAt));
  return created;
}

/**
 * The pending deliveries whose job is missing (the process died between the delivery and its job):
 * their jobs stored again, due when the delivery is. Once per worker start; a job that exists is
 * left as it is. Answers how many were stored.
 */
export async function requeueDeliveriesWithoutJob(db: Db, now: Date): Promise<number> {
  await ensureWebhookIndexes(db);
  let stored = 0;
  const pending = webhookDeliveries(db).find({ status: 'pending' }, { projection: { _id: 1, tenant: 1, webhookId: 1, nextAttemptAt: 1 } });
  for await (const d of pending) if (await insertUnlessDuplicate(webhookJobs(db), deliveryJobDocument(d, d.nextAttemptAt ?? now))) stored++;
  return stored;
}

/**
 * The same, while a worker runs: pending deliveries overdue since before `overdueBefore` whose job is
 * missing (at most `limit` a sweep) get it back, due now. A delivery is stored before its job, so a
 * request that stored the one and failed on the other (a database error: the client was answered
 * 5xx) left a delivery no job would ever run, shown `pending` past its retry window and counted
 * against the tenant's test quota until some worker restarted. Two reads, then an insert per job
 * missing only: an ordinary backlog (every job there) costs no write. Answers how many were stored.
 */
export async function requeueOverdueDeliveriesWithoutJob(db: Db, overdueBefore: Date, now: Date, limit: number): Promise<number> {
  const overdue = await webhookDeliveries(db)
    .find({ status: 'pending', nextAttemptAt: { $lte: overdueBefore } }, { projection: { _id: 1, tenant: 1, webhookId: 1 }, limit })
    .toArray();
  if (overdue.length === 0) return 0;
  const withJob = new Set(
    (
      await webhookJobs(db)
        .find({ _id: { $in: overdue.map((d) => d._id) } }, { projection: { _id: 1 } })
        .toArray()
    ).map((j) => j._id.toHexString()),
  );
  let stored = 0;
  for (const d of overdue) if (!withJob.has(d._id.toHexString()) && (await insertUnlessDuplicate(webhookJobs(db), deliveryJobDocument(d, now)))) stored++;
  return stored;
}

export function findDeliveries(db: Db, tenant: string, webhookId: string, status: DeliveryStatus | undefined, page: PageQuery, maxTimeMS: number) {
  const q: Filter<DeliveryDocument> = { tenant, webhookId };
  if (status) q.status = status;
  return findSortedPage(webhookDeliveries(db), q, storedDateIdPosition(page), maxTimeMS);
}

/**
 * The tenant's test deliveries not yet delivered or failed for good, of its endpoints: one queued for an endpoint
 * deleted meanwhile (a test send racing the delete) is no longer the tenant's to wait for.
 */
export async function countPendingTestDeliveries(db: Db, tenant: string, maxTimeMS: number): Promise<number> {
  const endpoints = await webhooks(db)
    .find({ tenant }, { projection: { _id: 1 }, maxTimeMS })
    .toArray();
  const webhookId = { $in: endpoints.map((w) => w._id.toHexString()) };
  return webhookDeliveries(db).countDocuments({ tenant, eventType: 'webhook.test', status: 'pending', webhookId }, { maxTimeMS });
}

/** Removes a pending delivery whose endpoint is gone (queued while it was being deleted), as the delete removes the rest. */
export async function deleteOrphanDelivery(db: Db, id: ObjectId): Promise<void> {
  await webhookDeliveries(db).deleteOne({ _id: id, status: 'pending' });
}

export function getDelivery(db: Db, id: ObjectId): Promise<DeliveryDocument | null> {
  return webhookDeliveries(db).findOne({ _id: id });
}

export function getWebhookById(db: Db, tenant: string, webhookId: string): Promise<WebhookDocument | null> {
  const _id = hexId(webhookId);
  return _id ? webhooks(db).findOne({ tenant, _id }) : Promise.resolve(null);
}

/** Appends an attempt and sets the outcome, only while the delivery is still pending. */
export async function recordDeliveryAttempt(
  db: Db,
  id: ObjectId,
  attempt: DeliveryAttempt,
  outcome: { status: DeliveryStatus; nextAttemptAt: Date | null; completedAt: Date | null },
): Promise<void> {
  await webhookDeliveries(db).updateOne({ _id: id, status: 'pending' }, { $push: { attempts: attempt }, $set: outcome }, { writeConcern: { w: 'majority' } });
}

/** Delivery jobs this worker locked but never started go back to the pool (see releaseIdleJobLocks). */
export const releaseIdleDeliveryLocks = (db: Db, workerName: string, runningIds: ObjectId[]): Promise<number> =>
  releaseIdleJobLocks(db, COLLECTIONS.webhookJobs, DELIVERY_JOB_NAME, workerName, runningIds);
