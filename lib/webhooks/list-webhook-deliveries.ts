/** GET /api/webhooks/{id}/deliveries: newest event first, every attempt of each, by page or by cursor. */
import { serviceSecret } from '../db/service-secrets-repo.ts';
import { NEWEST_FIRST } from '../db/find-page.ts';
import { filtersFingerprint } from '../shared/cursor.ts';
import { listPage, type ListRequest } from '../shared/list-page.ts';
import type { PageMeta } from '../shared/pagination.ts';
import { findDeliveries } from './webhooks-repo.ts';
import type { WebhookContext } from './context.ts';
import { requireWebhook } from './get-webhook.ts';
import { deliveryView, type DeliveryStatus, type DeliveryView } from './model.ts';

export interface ListWebhookDeliveriesInput extends ListRequest {
  status?: DeliveryStatus;
}

export async function listWebhookDeliveries(
  ctx: WebhookContext,
  tenant: string,
  id: string,
  input: ListWebhookDeliveriesInput,
): Promise<{ meta: PageMeta & { nextCursor: string | null; tenant: string }; data: DeliveryView[] }> {
  const webhook = await requireWebhook(ctx, tenant, id);
  const webhookId = webhook._id.toHexString();
  const { meta, docs } = await listPage({
    secret: await serviceSecret(ctx.db, 'cursor-hmac'),
    // The endpoint is part of the walk: a cursor of one endpoint's deliveries does not continue another's.
    binding: { list: 'webhook-deliveries', tenant, sort: 'default', filters: filtersFingerprint({ webhookId, status: input.status }) },
    sort: NEWEST_FIRST,
    request: { page: input.page, limit: input.limit, cursor: input.cursor },
    fetch: (q) => findDeliveries(ctx.db, tenant, webhookId, input.status, q, ctx.config.queryTimeoutMs),
  });
  return { meta: { ...meta, tenant }, data: docs.map(deliveryView) };
}
