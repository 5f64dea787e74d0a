import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

export interface WorkersPluginOptions {
  /** The extra plugins (the alerts and webhooks workers), each bound to the service's dependencies by the composition root. */
  plugins: readonly ((app: FastifyInstance) => Promise<void>)[];
}

/** Background workers and other extras, after every route: they start when the app is ready and drain on close. */
export const workersPlugin = fp<WorkersPluginOptions>(
  async function workers(app, options) {
    for (const plugin of options.plugins) await plugin(app);
  },
  { name: 'workers', dependencies: ['api'], fastify: '5.x' },
);
