/** POST /api/webhooks/{id}/test: queues a signed `webhook.test` event for the endpoint. */
import { enqueueTestEvent } from './events.ts';
import { requireWebhook } from './get-webhook.ts';
import type { WebhookContext } from './context.ts';

export async function sendWebhookTest(ctx: WebhookContext, tenant: string, id: string): Promise<{ queued: true; eventId: string; deliveryId: string }> {
  const webhook = await requireWebhook(ctx, tenant, id);
  const delivery = await enqueueTestEvent(ctx.db, webhook, ctx.now());
  return { queued: true, eventId: delivery.eventId, deliveryId: delivery._id.toHexString() };
}
