import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { hashKey } from '../auth/api-keys.ts';
import { presentedKey } from './auth.ts';
import { ApiError } from './api-error.ts';
import { isInternalDispatch } from './internal-dispatch.ts';
import { failoverStore } from './rate-limit-store.ts';

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  redisUrl: string | null;
}

/**
 * Per API key (hashed, the key itself never becomes a store key), per IP for
 * requests without one. Registered before the routes so it runs first in
 * onRequest and covers every route, MCP included. With REDIS_URL several
 * instances share one budget; while Redis is unreachable each instance counts
 * on its own (lib/http/rate-limit-store.ts) and goes back to the shared
 * counters when Redis answers again, without a restart.
 */
export async function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  // No offline queue and one retry: a counter call never waits for Redis to come back.
  const redis = opts.redisUrl
    ? new Redis(opts.redisUrl, { connectTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false, retryStrategy: (times) => Math.min(times * 200, 2000) })
    : undefined;
  if (redis) {
    redis.on('error', () => {}); // reported once per outage by the store, not per reconnect attempt
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  }
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: opts.windowMs,
    hook: 'onRequest',
    ...(redis ? { store: failoverStore({ redis, nameSpace: 'freight-rl:', log: app.log }) } : {}),
    // A counter error (none expected: the store falls back to memory) lets the request through.
    skipOnError: true,
    // An MCP tool call's inner REST dispatch: its outer MCP request was already counted.
    allowList: (request: FastifyRequest) => isInternalDispatch(request),
    keyGenerator: (request: FastifyRequest) => {
      const key = presentedKey(request);
      return key ? `key:${hashKey(key)}` : `ip:${request.ip}`;
    },
    errorResponseBuilder: (_request, context) =>
      new ApiError(429, 'Too Many Requests', [
        `rate limit of ${context.max} requests per ${context.after} exceeded, retry in ${Math.ceil(context.ttl / 1000)} seconds`,
      ]),
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
  });
}
