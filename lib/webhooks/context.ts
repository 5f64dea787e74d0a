import type { ServiceContext } from '../context.ts';
import type { WebhookSettings } from '../config.ts';
import { ApiError } from '../http/api-error.ts';

/** What webhook services need: the service context plus the webhook settings. */
export interface WebhookContext extends ServiceContext {
  webhooks: WebhookSettings;
}

/** The secret-encryption key, or the documented 503 when this service has none. */
export function encryptionKeyOf(ctx: WebhookContext): Buffer {
  const key = ctx.webhooks.encryptionKey;
  if (!key)
    throw new ApiError(503, 'Service Unavailable', ['webhooks are not configured on this service (WEBHOOK_ENCRYPTION_KEY is not set)'], {
      reason: 'not_configured',
    });
  return key;
}
