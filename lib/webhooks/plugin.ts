/**
 * Runs the webhook delivery worker inside the service, next to the alert
 * worker and under the same switch (ALERT_WORKER, default true):
 *
 *   buildApp({ config, db, plugins: [alertsPlugin(), webhooksPlugin()] })
 *
 * Starts when the app is ready, drains on app.close().
 */
import type { FastifyInstance } from 'fastify';
import type { HandlerDeps } from '../../handlers/types.ts';
import { createWebhookWorker, type WebhookWorker } from './worker.ts';

declare module 'fastify' {
  interface FastifyInstance {
    webhookWorker: WebhookWorker | null;
  }
}

export function webhooksPlugin(options: { worker?: boolean; name?: string } = {}): (app: FastifyInstance, deps: HandlerDeps) => Promise<void> {
  return async function registerWebhooks(app, deps) {
    const enabled = options.worker ?? (deps.config as { worker?: boolean }).worker ?? true;
    const worker = enabled ? createWebhookWorker({ db: deps.db, settings: deps.webhooks, name: options.name, logger: app.log.child({ component: 'webhook-worker' }) }) : null;
    app.decorate('webhookWorker', worker);
    if (!worker) return;
    app.addHook('onReady', async () => {
      await worker.start();
    });
    app.addHook('onClose', async () => {
      await worker.stop();
    });
  };
}
