/** GET /api/webhooks: the tenant's endpoints, newest first, never their secrets. */
import { findWebhooks } from './webhooks-repo.ts';
import { pageMeta, pageWindow, type PageMeta } from '../shared/pagination.ts';
import { encryptionKeyOf, type WebhookContext } from './context.ts';
import { webhookView, type WebhookView } from './model.ts';

export async function listWebhooks(
  ctx: WebhookContext,
  tenant: string,
  input: { page: number; limit: number },
): Promise<{ meta: PageMeta & { tenant: string }; data: WebhookView[] }> {
  encryptionKeyOf(ctx);
  const { total, docs } = await findWebhooks(ctx.db, tenant, pageWindow(input), ctx.config.queryTimeoutMs);
  return { meta: { ...pageMeta(total, input), tenant }, data: docs.map(webhookView) };
}
