import type { Db, IndexDescription } from 'mongodb';
import { COLLECTIONS } from './collections.ts';

/**
 * Every index the queries need on real MongoDB: tenant first, then equality,
 * sort, range (ESR). The embedded engine's on-disk backend implements them
 * (scripts/embedded-mongo SecondaryIndex); its in-memory backend ignores them; real
 * MongoDB needs them to avoid collection scans.
 */
export const INDEXES: Record<string, IndexDescription[]> = {
  [COLLECTIONS.financialDocs]: [
    { key: { company: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_date' },
    // Incremental sync (updatedSince + cursor): lastUpdate then id, keyset on both.
    { key: { company: 1, lastUpdate: 1, _id: 1 }, name: 'tenant_updated' },
    { key: { company: 1, client: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_client_date' },
    { key: { company: 1, status: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_status_date' },
    // ?paymentStatus= / ?cancelled= on the stored payment state, newest first. Missing states sort
    // first (null), so the start-up backfill finds a tenant's unrepaired documents at its head.
    { key: { company: 1, derivedPaymentStatus: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_payment_status_date' },
    // ?cancellationStatus= on the stored cancellation status of the invoice, newest first (missing first: the backfill's probe).
    { key: { company: 1, derivedCancellationStatus: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_cancellation_status_date' },
    // Look-ups by UUID or folio, sorted like every list (the sort keys make it an index walk, not a sort).
    { key: { company: 1, 'invoice.uuid': 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_uuid_date' },
    { key: { company: 1, 'invoice.num': 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_folio_date' },
    { key: { company: 1, 'payments.date': 1 }, name: 'tenant_payment_date' },
  ],
  [COLLECTIONS.trips]: [
    { key: { company: 1, createdAt: -1, _id: -1 }, name: 'tenant_created' },
    { key: { company: 1, lastUpdate: 1, _id: 1 }, name: 'tenant_updated' },
    { key: { company: 1, client: 1, createdAt: -1, _id: -1 }, name: 'tenant_client_created' },
    { key: { company: 1, 'shipments.shipment': 1, createdAt: -1, _id: -1 }, name: 'tenant_shipment_created' },
    // Trips with a leg in a given status (?status=), newest first.
    { key: { company: 1, 'shipments.status': 1, createdAt: -1, _id: -1 }, name: 'tenant_leg_status_created' },
    { key: { company: 1, 'shipments.date': 1 }, name: 'tenant_leg_date' },
    { key: { company: 1, 'shipments.loadDate': 1 }, name: 'tenant_leg_load' },
    { key: { company: 1, 'shipments.unloadDate': 1 }, name: 'tenant_leg_unload' },
    // Audits of one client's deliveries (dispatch-to-bill, shrinkage, unit economics with ?client=).
    { key: { company: 1, client: 1, 'shipments.unloadDate': 1 }, name: 'tenant_client_leg_unload' },
    { key: { company: 1, idFinan: 1 }, name: 'tenant_idfinan' },
    { key: { company: 1, 'vehicle.id': 1, createdAt: -1 }, name: 'tenant_vehicle' },
    // Unit economics of one vehicle, optionally of one client: deliveries in the period.
    { key: { company: 1, 'vehicle.id': 1, client: 1, 'shipments.unloadDate': 1 }, name: 'tenant_vehicle_client_leg_unload' },
    { key: { company: 1, 'driver.id': 1, createdAt: -1 }, name: 'tenant_driver' },
  ],
  [COLLECTIONS.apiKeys]: [
    { key: { hash: 1 }, name: 'hash_unique', unique: true },
    { key: { tenant: 1, createdAt: 1 }, name: 'tenant_created' },
  ],
  // --- alerts (lib/alerts) ---
  [COLLECTIONS.alertJobs]: [
    // One job per (tenant, ruleId, cycleKey, userId): concurrent identical schedules cannot duplicate.
    // Partial on real MongoDB (only alert jobs carry a key); the embedded engine ignores the filter.
    { key: { 'data.jobKey': 1 }, name: 'alert_job_key_unique', unique: true, partialFilterExpression: { 'data.jobKey': { $type: 'string' } } },
    // Which of a request's users are scheduled already (the quota counts only new jobs), tenant first.
    { key: { 'data.tenant': 1, 'data.jobKey': 1 }, name: 'tenant_job_key' },
    // Listing a tenant's alert jobs (`name` tells them from other Agenda jobs), newest first, by user or rule+cycle.
    { key: { 'data.tenant': 1, name: 1, 'data.createdAt': -1, _id: -1 }, name: 'tenant_name_created' },
    { key: { 'data.tenant': 1, name: 1, 'data.userId': 1, 'data.createdAt': -1, _id: -1 }, name: 'tenant_name_user_created' },
    { key: { 'data.tenant': 1, name: 1, 'data.ruleId': 1, 'data.cycleKey': 1, 'data.createdAt': -1, _id: -1 }, name: 'tenant_name_rule_cycle_created' },
    // Agenda's lock query (MongoBackend is created with ensureIndex: false).
    { key: { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 }, name: 'findAndLockNextJobIndex' },
  ],
  [COLLECTIONS.alerts]: [
    { key: { tenant: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_evaluated' },
    { key: { tenant: 1, userId: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_user_evaluated_id' },
    { key: { tenant: 1, ruleId: 1, cycleKey: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_rule_cycle_evaluated_id' },
    { key: { tenant: 1, status: 1, evaluatedAt: -1, _id: -1 }, name: 'tenant_status_evaluated' },
  ],
  // --- CFDI import (lib/imports): the facts behind each imported financial document.
  [COLLECTIONS.importFacts]: [{ key: { tenant: 1, invoices: 1 }, name: 'tenant_invoices' }],
  // "Has this tenant any link yet?" (the one-off backfill check of lib/finance/ledger/facts-repo.ts).
  [COLLECTIONS.importLinks]: [{ key: { tenant: 1 }, name: 'tenant' }],
  // --- received CFDIs (lib/received): the facts of each received invoice, its cancellations by UUID.
  [COLLECTIONS.receivedFacts]: [{ key: { tenant: 1, invoices: 1 }, name: 'tenant_invoices' }],
  // The list's filters (supplier, category, payment state, cancellation), each then newest issue date first.
  [COLLECTIONS.receivedDocs]: [
    { key: { tenant: 1, date: -1, _id: -1 }, name: 'tenant_date' },
    { key: { tenant: 1, 'supplier.rfc': 1, date: -1, _id: -1 }, name: 'tenant_supplier_date' },
    { key: { tenant: 1, category: 1, date: -1, _id: -1 }, name: 'tenant_category_date' },
    { key: { tenant: 1, paymentState: 1, date: -1, _id: -1 }, name: 'tenant_payment_state_date' },
    // Re-categorizing a tenant's documents when its rules change: by the code each follows.
    { key: { tenant: 1, mainCode: 1 }, name: 'tenant_main_code' },
  ],
  // --- webhooks (lib/webhooks) ---
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
    // The tenant's queued test deliveries (WEBHOOK_MAX_PENDING_TESTS).
    { key: { tenant: 1, eventType: 1, status: 1 }, name: 'tenant_type_status' },
  ],
  [COLLECTIONS.webhookJobs]: [
    { key: { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 }, name: 'findAndLockNextJobIndex' },
    { key: { 'data.webhookId': 1 }, name: 'webhook' },
  ],
  [COLLECTIONS.idempotency]: [{ key: { expiresAt: 1 }, name: 'expires_ttl', expireAfterSeconds: 0 }],
};

export async function ensureIndexes(db: Db): Promise<void> {
  for (const [collection, indexes] of Object.entries(INDEXES)) {
    if (indexes.length) await db.collection(collection).createIndexes(indexes);
  }
}

/**
 * An `ensure(db)` that creates the indexes of `collections` once per Db handle
 * (idempotent on the server); a failed attempt is forgotten, so the next call
 * tries again. For areas whose writes rest on a unique index even where
 * `ensureIndexes` was never run.
 */
export function ensureIndexesOnce(collections: readonly string[]): (db: Db) => Promise<void> {
  const ensured = new WeakMap<Db, Promise<void>>();
  return (db) => {
    let p = ensured.get(db);
    if (!p) {
      p = (async () => {
        for (const name of collections) {
          const indexes = INDEXES[name];
          if (indexes?.length) await db.collection(name).createIndexes(indexes);
        }
      })();
      p.catch(() => ensured.delete(db));
      ensured.set(db, p);
    }
    return p;
  };
}
