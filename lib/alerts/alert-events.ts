/**
 * What an alert record tells the tenant's webhooks: its event (`alert.triggered` or
 * `alert.cleared`, the record's API view as data), queued once per subscribed endpoint.
 * Alerts publish to webhooks; webhooks import nothing from alerts.
 */
import type { Db } from 'mongodb';
import { enqueueEvent, type WebhookEvent } from '../webhooks/events.ts';
import { alertRecordView, type AlertRecordDocument } from './records.ts';

/** The event of an alert record: its id derives from the record's, so a re-run enqueues nothing new. */
export function alertEvent(record: AlertRecordDocument): WebhookEvent & { type: 'alert.triggered' | 'alert.cleared' } {
  return {
    id: `evt_${record._id}`,
    type: record.status === 'triggered' ? 'alert.triggered' : 'alert.cleared',
    createdAt: record.evaluatedAt.toISOString(),
    tenant: record.tenant,
    data: { alert: alertRecordView(record) },
  };
}

/** Queues the alert's event for each of the tenant's endpoints subscribed to it; returns how many were new. */
export function enqueueAlertEvent(db: Db, record: AlertRecordDocument, now: Date = new Date()): Promise<number> {
  return enqueueEvent(db, alertEvent(record), now);
}
