/**
 * Events and their deliveries: what is sent, to whom, once per endpoint and event. The
 * areas that raise events build them (lib/alerts/alert-events.ts, lib/exports/export-events.ts); webhooks know none of them.
 * The body is built once and stored, so every retry sends the same bytes.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { enqueueDelivery, ensureWebhookIndexes, findSubscribedWebhooks } from './webhooks-repo.ts';
import { deliveryId, type DeliveryDocument, type DeliveryEventType, type WebhookDocument, type WebhookEventType } from './model.ts';

export interface WebhookEvent {
  id: string;
  type: DeliveryEventType;
  createdAt: string;
  tenant: string;
  data: Record<string, unknown>;
}

function deliveryFor(webhook: Pick<WebhookDocument, '_id' | 'tenant'>, event: WebhookEvent, now: Date): DeliveryDocument {
  const webhookId = webhook._id.toHexString();
  return {
    _id: deliveryId(webhookId, event.id),
    tenant: webhook.tenant,
    webhookId,
    eventId: event.id,
    eventType: event.type,
    body: JSON.stringify(event),
    status: 'pending',
    attempts: [],
    createdAt: now,
    nextAttemptAt: now,
    completedAt: null,
  };
}

/** Queues an event for each of the tenant's endpoints subscribed to its type; returns how many deliveries were new. */
export async function enqueueEvent(db: Db, event: WebhookEvent & { type: WebhookEventType }, now: Date = new Date()): Promise<number> {
  await ensureWebhookIndexes(db);
  const targets = await findSubscribedWebhooks(db, event.tenant, event.type);
  let created = 0;
  for (const webhook of targets) if (await enqueueDelivery(db, deliveryFor(webhook, event, now))) created++;
  return created;
}

/** A `webhook.test` event for one endpoint. */
export async function enqueueTestEvent(db: Db, webhook: WebhookDocument, now: Date): Promise<DeliveryDocument> {
  const event: WebhookEvent = {
    id: `evt_test_${randomBytes(12).toString('hex')}`,
    type: 'webhook.test',
    createdAt: now.toISOString(),
    tenant: webhook.tenant,
    data: { webhookId: webhook._id.toHexString() },
  };
  const delivery = deliveryFor(webhook, event, now);
  await ensureWebhookIndexes(db);
  await enqueueDelivery(db, delivery);
  return delivery;
}
