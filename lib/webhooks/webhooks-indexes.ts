/** The indexes of `webhooks`, `webhookDeliveries` and `webhookJobs` (lib/webhooks/webhooks-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs, RetiredIndexes } from '../db/indexes.ts';
import { AGENDA_LOCK_INDEX } from '../jobs/agenda-lock-index.ts';

export const WEBHOOK_INDEXES: IndexSpecs = {
  [COLLECTIONS.webhooks]: [
    // One slot per endpoint, at most WEBHOOK_MAX_ENDPOINTS per tenant: concurrent creates cannot exceed it.
    { key: { tenant: 1, slot: 1 }, name: 'tenant_slot_unique', unique: true },
    { key: { tenant: 1, createdAt: -1, _id: -1 }, name: 'tenant_created' },
    // The endpoints an alert event goes to.
    { key: { tenant: 1, events: 1 }, name: 'tenant_events' },
  ],
  [COLLECTIONS.webhookDeliveries]: [
    // One delivery per endpoint and event (the _id is derived from both; this states it).
    { key: { webhookId: 1, eventId: 1 }, name: 'webhook_event_unique', unique: true },
    { key: { tenant: 1, webhookId: 1, createdAt: -1, _id: -1 }, name: 'tenant_webhook_created' },
    { key: { tenant: 1, webhookId: 1, status: 1, createdAt: -1, _id: -1 }, name: 'tenant_webhook_status_created' },
    // The tenant's queued test deliveries of its endpoints (WEBHOOK_MAX_PENDING_TESTS).
    { key: { tenant: 1, eventType: 1, status: 1, webhookId: 1 }, name: 'tenant_type_status_webhook' },
    // The pending deliveries, every tenant's, found when a worker starts (their jobs stored again if missing).
    { key: { status: 1, nextAttemptAt: 1 }, name: 'status_next_attempt' },
  ],
  [COLLECTIONS.webhookJobs]: [AGENDA_LOCK_INDEX, { key: { 'data.webhookId': 1 }, name: 'webhook' }],
};

/** Replaced by tenant_type_status_webhook (the test quota counts only the deliveries of the tenant's endpoints). */
export const RETIRED_WEBHOOK_INDEXES: RetiredIndexes = {
  [COLLECTIONS.webhookDeliveries]: ['tenant_type_status'],
};
