/** DELETE /api/webhooks/{id}: the endpoint, its queued deliveries and their history. */
import { deleteWebhookCascade } from './webhooks-repo.ts';
import { notFound } from '../http/api-error.ts';
import { encryptionKeyOf, type WebhookContext } from './context.ts';
import { webhookView, type WebhookView } from './model.ts';

export async function deleteWebhook(ctx: WebhookContext, tenant: string, id: string): Promise<{ deleted: true; webhook: WebhookView }> {
  encryptionKeyOf(ctx);
  const deleted = await deleteWebhookCascade(ctx.db, tenant, id);
  if (!deleted) throw notFound(`no webhook endpoint with id ${id}`);
  return { deleted: true, webhook: webhookView(deleted) };
}
