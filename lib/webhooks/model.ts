/**
 * Webhook endpoints (`webhooks`), deliveries (`webhookDeliveries`: one per
 * endpoint and event, with every attempt) and the Agenda jobs that carry
 * them out (`webhookJobs`, job _id = delivery _id).
 */
import { createHash } from 'node:crypto';
import { ObjectId } from 'mongodb';
import type { EncryptedSecret } from './secret-box.ts';
import type { AgendaJobDocument } from '../jobs/agenda-job.ts';

export const WEBHOOK_EVENT_TYPES = ['alert.triggered', 'alert.cleared', 'export.ready', 'export.failed'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];
export type DeliveryEventType = WebhookEventType | 'webhook.test';
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookDocument {
  _id: ObjectId;
  tenant: string;
  /** 0 .. maxEndpoints-1, unique per tenant: the endpoint limit holds under concurrent creates. */
  slot: number;
  url: string;
  events: WebhookEventType[];
  description: string;
  secret: EncryptedSecret;
  secretHint: string;
  createdAt: Date;
  secretRotatedAt: Date;
}

export interface WebhookView {
  id: string;
  tenant: string;
  url: string;
  events: WebhookEventType[];
  description: string;
  secretHint: string;
  createdAt: string;
  secretRotatedAt: string;
}

export const webhookView = (doc: WebhookDocument): WebhookView => ({
  id: doc._id.toHexString(),
  tenant: doc.tenant,
  url: doc.url,
  events: doc.events,
  description: doc.description,
  secretHint: doc.secretHint,
  createdAt: doc.createdAt.toISOString(),
  secretRotatedAt: doc.secretRotatedAt.toISOString(),
});

export interface DeliveryAttempt {
  attempt: number;
  at: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

export interface DeliveryDocument {
  _id: ObjectId;
  tenant: string;
  /** Hex id of the endpoint. */
  webhookId: string;
  eventId: string;
  eventType: DeliveryEventType;
  /** The exact bytes sent on every attempt (the signature covers them). */
  body: string;
  status: DeliveryStatus;
  attempts: DeliveryAttempt[];
  createdAt: Date;
  nextAttemptAt: Date | null;
  completedAt: Date | null;
}

/** The same endpoint and event always give the same delivery id: enqueueing twice is harmless. */
export function deliveryId(webhookId: string, eventId: string): ObjectId {
  return new ObjectId(createHash('sha256').update(`${webhookId}\n${eventId}`, 'utf8').digest('hex').slice(0, 24));
}

export interface DeliveryView {
  id: string;
  webhookId: string;
  eventId: string;
  eventType: DeliveryEventType;
  status: DeliveryStatus;
  createdAt: string;
  nextAttemptAt: string | null;
  completedAt: string | null;
  attempts: { attempt: number; at: string; durationMs: number; statusCode: number | null; error: string | null }[];
}

export const deliveryView = (doc: DeliveryDocument): DeliveryView => ({
  id: doc._id.toHexString(),
  webhookId: doc.webhookId,
  eventId: doc.eventId,
  eventType: doc.eventType,
  status: doc.status,
  createdAt: doc.createdAt.toISOString(),
  nextAttemptAt: doc.nextAttemptAt ? doc.nextAttemptAt.toISOString() : null,
  completedAt: doc.completedAt ? doc.completedAt.toISOString() : null,
  attempts: doc.attempts.map((a) => ({ attempt: a.attempt, at: a.at.toISOString(), durationMs: a.durationMs, statusCode: a.statusCode, error: a.error })),
});

export interface DeliveryJobData {
  tenant: string;
  webhookId: string;
  deliveryId: string;
}

/** Agenda's job document in `webhookJobs`. */
export type DeliveryJobDocument = AgendaJobDocument<DeliveryJobData>;

/**
 * When the next attempt is due after `attempt` failed ones, or null when the
 * retries are over: `retryDelayMs` doubling per attempt up to `retryMaxDelayMs`,
 * as long as the next attempt falls within `retryWindowMs` of the event.
 */
export function nextAttemptAt(
  attempt: number,
  createdAt: Date,
  now: Date,
  s: { retryDelayMs: number; retryMaxDelayMs: number; retryWindowMs: number },
): Date | null {
  const delay = Math.min(s.retryDelayMs * 2 ** Math.min(attempt - 1, 40), s.retryMaxDelayMs);
  const at = now.getTime() + delay;
  return at - createdAt.getTime() > s.retryWindowMs ? null : new Date(at);
}
