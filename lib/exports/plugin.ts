/**
 * Runs the export worker inside the service, under the workers' switch (ALERT_WORKER):
 * `buildApp({ plugins: [exportsPlugin()] })`. Starts when the app is ready, drains on close.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { createExportWorker, type ExportWorker } from './worker.ts';
import type { ExportRunContext } from './run-export.ts';

declare module 'fastify' {
  interface FastifyInstance {
    exportWorker: ExportWorker | null;
  }
}

export interface ExportsPluginOptions {
  /** Run the worker in this process (default: the service's setting, env ALERT_WORKER). */
  worker?: boolean;
  name?: string;
}

/** What the worker takes from the service, passed in by the composition root. */
export interface ExportsPluginDeps extends Pick<ExportRunContext, 'db' | 'config' | 'now' | 'exports'> {
  worker: boolean;
}

export const exportsWorkerPlugin = fp<ExportsPluginOptions & { deps: ExportsPluginDeps }>(
  async function exportsWorker(app, options) {
    const { deps } = options;
    const run = options.worker ?? deps.worker;
    const worker = run
      ? createExportWorker({
          ctx: { db: deps.db, config: deps.config, now: deps.now, exports: deps.exports },
          name: options.name,
          logger: app.log.child({ component: 'export-worker' }),
          tracer: app.tracing.tracer,
          metrics: app.serviceMetrics,
        })
      : null;
    app.decorate('exportWorker', worker);
    if (!worker) return;
    app.addHook('onReady', async () => {
      await worker.start();
    });
    app.addHook('onClose', async () => {
      await worker.stop();
    });
  },
  { name: 'exports-worker', dependencies: ['metrics', 'tracing'], fastify: '5.x' },
);

/** Registers the worker plugin with the service's dependencies (what `buildApp({ plugins })` takes). */
export function exportsPlugin(options: ExportsPluginOptions = {}): (app: FastifyInstance, deps: ExportsPluginDeps) => Promise<void> {
  return async (app, deps) => {
    await app.register(exportsWorkerPlugin, { ...options, deps });
  };
}
