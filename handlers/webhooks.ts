import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { createWebhook } from '../lib/webhooks/create-webhook.ts';
import { listWebhooks } from '../lib/webhooks/list-webhooks.ts';
import { getWebhook } from '../lib/webhooks/get-webhook.ts';
import { deleteWebhook } from '../lib/webhooks/delete-webhook.ts';
import { rotateWebhookSecret } from '../lib/webhooks/rotate-webhook-secret.ts';
import { sendWebhookTest } from '../lib/webhooks/send-webhook-test.ts';
import { listWebhookDeliveries } from '../lib/webhooks/list-webhook-deliveries.ts';

type WebhookOperations =
  'createWebhook' | 'listWebhooks' | 'getWebhook' | 'deleteWebhook' | 'rotateWebhookSecret' | 'sendWebhookTest' | 'listWebhookDeliveries';

export function webhooksHandlers(deps: HandlerDeps): Pick<HandlerMap, WebhookOperations> {
  return {
    async createWebhook(request, reply) {
      const created = await createWebhook(deps, tenantOf(request), request.body);
      reply.code(201);
      return created;
    },
    async listWebhooks(request) {
      return listWebhooks(deps, tenantOf(request), request.query);
    },
    async getWebhook(request) {
      return getWebhook(deps, tenantOf(request), request.params.id);
    },
    async deleteWebhook(request) {
      return deleteWebhook(deps, tenantOf(request), request.params.id);
    },
    async rotateWebhookSecret(request) {
      return rotateWebhookSecret(deps, tenantOf(request), request.params.id);
    },
    async sendWebhookTest(request, reply) {
      const queued = await sendWebhookTest(deps, tenantOf(request), request.params.id);
      reply.code(202);
      return queued;
    },
    async listWebhookDeliveries(request) {
      return listWebhookDeliveries(deps, tenantOf(request), request.params.id, request.query);
    },
  };
}
