/** GET /api/webhooks/{id}/deliveries: newest event first, every attempt of each. */
import { findDeliveries } from './webhooks-repo.ts';
import { pageMeta, pageWindow, type PageMeta } from '../shared/pagination.ts';
import type { WebhookContext } from './context.ts';
import { requireWebhook } from './get-webhook.ts';
import { deliveryView, type DeliveryStatus, type DeliveryView } from './model.ts';

export interface ListWebhookDeliveriesInput {
  page: number;
  limit: number;
  status?: DeliveryStatus;
}

export async function listWebhookDeliveries(
  ctx: WebhookContext,
  tenant: string,
  id: string,
  input: ListWebhookDeliveriesInput,
): Promise<{ meta: PageMeta & { tenant: string }; data: DeliveryView[] }> {
  const webhook = await requireWebhook(ctx, tenant, id);
  const { total, docs } = await findDeliveries(ctx.db, tenant, webhook._id.toHexString(), input.status, pageWindow(input), ctx.config.queryTimeoutMs);
  return { meta: { ...pageMeta(total, input), tenant }, data: docs.map(deliveryView) };
}
