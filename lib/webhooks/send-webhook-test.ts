/** POST /api/webhooks/{id}/test: queues a signed `webhook.test` event for the endpoint. */
import { enqueueTestEvent } from './events.ts';
import { requireWebhook } from './get-webhook.ts';
import type { WebhookContext } from './context.ts';
import { countPendingTestDeliveries } from './webhooks-repo.ts';
import { quotaExceeded } from '../http/api-error.ts';
import { quotaLease, withLease } from '../db/lease.ts';

/**
 * At most WEBHOOK_MAX_PENDING_TESTS test deliveries of a tenant wait in the queue (a receiver
 * that is down keeps them there up to the retry window): beyond that 429 `quota_exceeded`, with
 * `retry-after` one delivery attempt's time limit, as they free up by themselves.
 */
export async function sendWebhookTest(ctx: WebhookContext, tenant: string, id: string): Promise<{ queued: true; eventId: string; deliveryId: string }> {
  const webhook = await requireWebhook(ctx, tenant, id);
  const delivery = await withLease(ctx.db, `webhookTests:${tenant}`, quotaLease(ctx.config.queryTimeoutMs, 'test deliveries'), async () => {
    const pending = await countPendingTestDeliveries(ctx.db, tenant, ctx.config.queryTimeoutMs);
    if (pending >= ctx.webhooks.maxPendingTests) {
      throw quotaExceeded(
        429,
        `the tenant has ${pending} test deliveries waiting to be delivered, at most ${ctx.webhooks.maxPendingTests} (WEBHOOK_MAX_PENDING_TESTS); retry once some are delivered or failed (GET /api/webhooks/{id}/deliveries)`,
        Math.ceil(ctx.webhooks.timeoutMs / 1000),
      );
    }
    return enqueueTestEvent(ctx.db, webhook, ctx.now());
  });
  return { queued: true, eventId: delivery.eventId, deliveryId: delivery._id.toHexString() };
}
