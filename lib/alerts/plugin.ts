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
 * - Settings: env (ALERT_PROCESS_EVERY_MS, ALERT_CONCURRENCY, ...; see
 *   worker.ts), overridden by `options.settings`.
 * - `app.alertWorker` is the worker, or null when off.
 */
import type { FastifyInstance } from 'fastify';
import type { HandlerDeps } from '../../handlers/types.ts';
import type { AppConfig } from '../config.ts';
import { alertWorkerSettingsFromEnv, createAlertWorker, type AlertWorker, type AlertWorkerOptions, type AlertWorkerSettings } from './worker.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The in-process alerts worker; null when this instance runs without one. */
    alertWorker: AlertWorker | null;
  }
}

export interface AlertsPluginOptions {
  /** Run the worker in this process (default: config.worker, env ALERT_WORKER). */
  worker?: boolean;
  settings?: Partial<AlertWorkerSettings>;
  /** Environment the settings are read from (default process.env). */
  env?: NodeJS.ProcessEnv;
  name?: string;
  now?: AlertWorkerOptions['now'];
  hooks?: AlertWorkerOptions['hooks'];
}

export function alertsPlugin(options: AlertsPluginOptions = {}): (app: FastifyInstance, deps: HandlerDeps) => Promise<void> {
  return async function registerAlerts(app, deps) {
    // buildApp passes the whole AppConfig; HandlerDeps only types the part handlers use.
    const enabled = options.worker ?? (deps.config as Partial<Pick<AppConfig, 'worker'>>).worker ?? true;
    const worker = enabled
      ? createAlertWorker({
          db: deps.db,
          ...alertWorkerSettingsFromEnv(options.env ?? process.env),
          ...options.settings,
          name: options.name,
          logger: app.log.child({ component: 'alert-worker' }),
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
  };
}
