/** POST /api/webhooks/{id}/rotate-secret: a new secret, effective for every attempt from now on. */
import { replaceWebhookSecret } from './webhooks-repo.ts';
import { notFound } from '../http/api-error.ts';
import { encryptionKeyOf, type WebhookContext } from './context.ts';
import { webhookView, type WebhookView } from './model.ts';
import { encryptSecret, generateSecret, secretHint } from './secret-box.ts';

export async function rotateWebhookSecret(ctx: WebhookContext, tenant: string, id: string): Promise<WebhookView & { secret: string }> {
  const key = encryptionKeyOf(ctx);
  const secret = generateSecret();
  const updated = /^[0-9a-fA-F]{24}$/.test(id)
    ? await replaceWebhookSecret(ctx.db, tenant, id, encryptSecret(key, secret, id.toLowerCase()), secretHint(secret), ctx.now())
    : null;
  if (!updated) throw notFound(`no webhook endpoint with id ${id}`);
  return { ...webhookView(updated), secret };
}
