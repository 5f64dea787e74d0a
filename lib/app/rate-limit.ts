import type { onRequestAsyncHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import { limitRequests, registerRateLimit } from '../http/rate-limit.ts';

declare module 'fastify' {
  interface FastifyInstance {
    /** The general rate limit as an onRequest hook, listed first on secured routes: the budget is counted before the key is looked up. */
    limitRequests: onRequestAsyncHookHandler;
  }
}

/**
 * The general budget per key, and per address for requests without a valid key (RATE_LIMIT_*,
 * REDIS_URL to share it between instances): registered before the routes it counts.
 */
export const rateLimitPlugin = fp(
  async function requestRateLimit(app) {
    const { config, db } = app;
    await registerRateLimit(app, { ...config.rateLimit, redisUrl: config.redisUrl, db });
    app.decorate('limitRequests', limitRequests(app));
  },
  { name: 'rate-limit', dependencies: ['config', 'database', 'caches'], fastify: '5.x' },
);
