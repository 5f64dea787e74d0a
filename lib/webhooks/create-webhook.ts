/** POST /api/webhooks: a new endpoint for the tenant, with its secret shown once. */
import { ObjectId } from 'mongodb';
import { ensureWebhookIndexes, insertWebhook } from './webhooks-repo.ts';
import { invalidBody, quotaExceeded } from '../http/api-error.ts';
import { encryptionKeyOf, type WebhookContext } from './context.ts';
import { webhookView, type WebhookEventType, type WebhookView } from './model.ts';
import { encryptSecret, generateSecret, secretHint } from './secret-box.ts';
import { webhookUrlProblems } from './url-policy.ts';
import { hasLoneSurrogate, loneSurrogateProblem } from '../shared/lone-surrogate.ts';

export interface CreateWebhookInput {
  url: string;
  events: WebhookEventType[];
  description?: string;
}

export async function createWebhook(ctx: WebhookContext, tenant: string, input: CreateWebhookInput): Promise<WebhookView & { secret: string }> {
  const key = encryptionKeyOf(ctx);
  const problems = webhookUrlProblems(input.url, ctx.webhooks);
  if (input.description !== undefined && hasLoneSurrogate(input.description)) problems.push(loneSurrogateProblem('description'));
  if (problems.length) throw invalidBody(problems);
  await ensureWebhookIndexes(ctx.db);
  const _id = new ObjectId();
  const secret = generateSecret();
  const now = ctx.now();
  const doc = await insertWebhook(
    ctx.db,
    {
      _id,
      tenant,
      url: input.url,
      events: input.events,
      description: input.description ?? '',
      secret: encryptSecret(key, secret, _id.toHexString()),
      secretHint: secretHint(secret),
      createdAt: now,
      secretRotatedAt: now,
    },
    ctx.webhooks.maxEndpoints,
  );
  if (!doc) throw quotaExceeded(409, `a tenant may have at most ${ctx.webhooks.maxEndpoints} webhook endpoints (WEBHOOK_MAX_ENDPOINTS); delete one first`);
  return { ...webhookView(doc), secret };
}
