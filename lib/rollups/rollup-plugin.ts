/**
 * Runs the rollup worker (rollup-worker.ts) inside the service under the workers' switch
 * (ALERT_WORKER): starts when the app is ready, finishes its pass on close.
 */
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { Db } from 'mongodb';
import { createRollupWorker } from './rollup-worker.ts';

export interface RollupPluginDeps {
  db: Db;
  worker: boolean;
}

export const rollupWorkerPlugin = fp<RollupPluginDeps>(
  async function rollupWorker(app, options) {
    if (!options.worker) return;
    const worker = createRollupWorker({ db: options.db, logger: app.log.child({ component: 'rollup-worker' }) });
    app.addHook('onReady', async () => {
      await worker.start();
    });
    app.addHook('onClose', async () => {
      await worker.stop();
    });
  },
  { name: 'rollup-worker', fastify: '5.x' },
);

/** Registers the worker with the service's dependencies (what `buildApp({ plugins })` takes). */
export function rollupPlugin(): (app: FastifyInstance, deps: RollupPluginDeps) => Promise<void> {
  return async (app, deps) => {
    await app.register(rollupWorkerPlugin, { db: deps.db, worker: deps.worker });
  };
}
