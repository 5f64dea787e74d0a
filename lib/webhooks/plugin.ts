/**
 * Runs the webhook delivery worker inside the service, next to the alert
 * worker and under the same switch (ALERT_WORKER, default true):
 *
 *   buildApp({ config, db, plugins: [alertsPlugin(), webhooksPlugin()] })
 *
 * Starts when the app is ready, drains on app.close().
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Db } from 'mongodb';
import type { WebhookSettings } from '../config.ts';
import { createWebhookWorker, type WebhookWorker } from './worker.ts';

declare module 'fastify' {
  interface FastifyInstance {
    webhookWorker: WebhookWorker | null;
  }
}

export interface WebhooksPluginOptions {
  /** Run the worker in this process (default: the service's setting, env ALERT_WORKER). */
  worker?: boolean;
  name?: string;
}

/** What the worker takes from the service, passed in by the composition root (handlers/app.ts). */
export interface WebhooksPluginDeps {
  db: Db;
  /** The service's setting (ALERT_WORKER), when the options do not say. */
  worker: boolean;
  webhooks: WebhookSettings;
}

/** The worker as a Fastify plugin, not encapsulated (fastify-plugin): `app.webhookWorker` and its hooks are the app's. */
export const webhooksWorkerPlugin = fp<WebhooksPluginOptions & WebhooksPluginDeps>(
  async function webhooksWorker(app, options) {
    const worker = options.worker
      ? createWebhookWorker({
          db: options.db,
          settings: options.webhooks,
          name: options.name,
          logger: app.log.child({ component: 'webhook-worker' }),
          metrics: app.serviceMetrics,
          tracer: app.tracing.tracer,
        })
      : null;
    app.decorate('webhookWorker', worker);
    if (!worker) return;
    app.addHook('onReady', async () => {
      await worker.start();
    });
    app.addHook('onClose', async () => {
      await worker.stop();
    });
  },
  { name: 'webhooks-worker', dependencies: ['metrics', 'tracing'], fastify: '5.x' },
);

/** Registers the worker plugin with the service's dependencies (what `buildApp({ plugins })` takes). */
export function webhooksPlugin(options: WebhooksPluginOptions = {}): (app: FastifyInstance, deps: WebhooksPluginDeps) => Promise<void> {
  return async (app, deps) => {
    await app.register(webhooksWorkerPlugin, { ...options, db: deps.db, webhooks: deps.webhooks, worker: options.worker ?? deps.worker });
  };
}
