import fp from 'fastify-plugin';
import { registerCors } from '../http/compression-and-cors.ts';

/**
 * CORS for CORS_ORIGINS: registered before the route index, the rate limit and authentication,
 * so its preflight answers before them and its catch-all OPTIONS route is not in the index.
 */
export const corsPlugin = fp(
  async function corsOrigins(app) {
    await registerCors(app, app.config.corsOrigins);
  },
  { name: 'cors', dependencies: ['config'], fastify: '5.x' },
);
