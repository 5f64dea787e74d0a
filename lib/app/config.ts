import fp from 'fastify-plugin';
import type { AppConfig } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's configuration (lib/config.ts), as buildApp was given it. */
    config: AppConfig;
  }
}

/** The configuration every other plugin reads its settings from. */
export const configPlugin = fp<{ config: AppConfig }>(
  async function config(app, options) {
    app.decorate('config', options.config);
  },
  { name: 'config', fastify: '5.x' },
);
