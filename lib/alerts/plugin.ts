/**
 * Hooks the alerts worker into the app:
 *
 *   const app = await buildApp({ config, db, plugins: [alertsPlugin()] });
 *
 * - Worker on when `options.worker ?? config.worker` (env ALERT_WORKER, default
 *   true); with it off the instance only serves the API (jobs are still
 *   scheduled, listed and cancelled: that needs no worker).
 * - Starts polling when the app is ready (`listen()` / `ready()`), drains on
 *   `app.close()` (onClose), i.e. before the caller closes the database client.
 * - Settings: the service's configuration (ALERT_PROCESS_EVERY_MS,
 *   ALERT_CONCURRENCY, ...: `config.alerts.workerSettings`, handed over with
 *   the plugin's deps), overridden by `options.settings`.
 * - `app.alertWorker` is the worker, or null when off.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Db } from 'mongodb';
import type { AppConfig } from '../config.ts';
import { createAlertWorker, type AlertWorker, type AlertWorkerOptions, type AlertWorkerSettings } from './worker.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The in-process alerts worker; null when this instance runs without one. */
    alertWorker: AlertWorker | null;
  }
}

export interface AlertsPluginOptions {
  /** Run the worker in this process (default: the service's setting, env ALERT_WORKER). */
  worker?: boolean;
  settings?: Partial<AlertWorkerSettings>;
  name?: string;
  now?: AlertWorkerOptions['now'];
  hooks?: AlertWorkerOptions['hooks'];
}

/** What the worker takes from the service, passed in by the composition root (handlers/app.ts). */
export interface AlertsPluginDeps {
  db: Db;
  /** The service's setting (ALERT_WORKER), when the options do not say. */
  worker: boolean;
  /** The service's alert settings: the worker's tunables (ALERT_* variables) under the options' `settings`. */
  alerts: Pick<AppConfig['alerts'], 'workerSettings'>;
}

/** The worker as a Fastify plugin, not encapsulated (fastify-plugin): `app.alertWorker` and its hooks are the app's. */
export const alertsWorkerPlugin = fp<AlertsPluginOptions & AlertsPluginDeps>(
  async function alertsWorker(app, options) {
    const worker = options.worker
      ? createAlertWorker({
          db: options.db,
          ...options.alerts.workerSettings,
          ...options.settings,
          name: options.name,
          logger: app.log.child({ component: 'alert-worker' }),
          tracer: app.tracing.tracer,
          now: options.now,
          hooks: options.hooks,
        })
      : null;
    app.decorate('alertWorker', worker);
    if (!worker) return;
    app.addHook('onReady', async () => {
      await worker.start();
    });
    app.addHook('onClose', async () => {
      await worker.stop();
    });
  },
  { name: 'alerts-worker', dependencies: ['tracing'], fastify: '5.x' },
);

/** Registers the worker plugin with the service's dependencies (what `buildApp({ plugins })` takes). */
export function alertsPlugin(options: AlertsPluginOptions = {}): (app: FastifyInstance, deps: AlertsPluginDeps) => Promise<void> {
  return async (app, deps) => {
    await app.register(alertsWorkerPlugin, { ...options, db: deps.db, worker: options.worker ?? deps.worker, alerts: deps.alerts });
  };
}
