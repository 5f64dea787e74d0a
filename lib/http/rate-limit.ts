import type { FastifyInstance, FastifyRequest } from 'fastify';
import rateLimit from '@fastify/rate-limit';
import { Redis } from 'ioredis';
import { hashKey } from '../auth/api-keys.ts';
import { presentedKey } from './auth.ts';
import { ApiError } from './api-error.ts';
import { isInternalDispatch } from './internal-dispatch.ts';

export interface RateLimitOptions {
  max: number;
  windowMs: number;
  redisUrl: string | null;
}

/**
 * Per API key (hashed, the key itself never becomes a store key), per IP for
 * requests without one. Registered before the routes so it runs first in
 * onRequest and covers every route, MCP included. With REDIS_URL several
 * instances share one budget.
 */
export async function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  const redis = opts.redisUrl ? new Redis(opts.redisUrl, { connectTimeout: 1000, maxRetriesPerRequest: 1, enableOfflineQueue: false }) : undefined;
  if (redis) app.addHook('onClose', async () => { redis.disconnect(); });
  await app.register(rateLimit, {
    global: true,
    max: opts.max,
    timeWindow: opts.windowMs,
    hook: 'onRequest',
    ...(redis ? { redis, nameSpace: 'freight-rl:' } : {}),
    // Skip the counter when Redis is down rather than failing every request.
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
