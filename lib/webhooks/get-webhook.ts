/** GET /api/webhooks/{id}. Another tenant's id is "not found": ids must not leak. */
import { findWebhook } from './webhooks-repo.ts';
import { notFound } from '../http/api-error.ts';
import { encryptionKeyOf, type WebhookContext } from './context.ts';
import { webhookView, type WebhookDocument, type WebhookView } from './model.ts';

export async function requireWebhook(ctx: WebhookContext, tenant: string, id: string): Promise<WebhookDocument> {
  encryptionKeyOf(ctx);
  const doc = await findWebhook(ctx.db, tenant, id);
  if (!doc) throw notFound(`no webhook endpoint with id ${id}`);
  return doc;
}

export async function getWebhook(ctx: WebhookContext, tenant: string, id: string): Promise<WebhookView> {
  return webhookView(await requireWebhook(ctx, tenant, id));
}
