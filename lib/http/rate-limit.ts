import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import type { Db } from 'mongodb';
import rateLimit from '@fastify/rate-limit';
import { identifyCaller, knownCaller } from './auth.ts';
import { ApiError } from './api-error.ts';
import { isInternalDispatch } from './internal-dispatch.ts';
import { failoverStore, localStore } from './rate-limit-store.ts';
import { ADDRESS_PREFIX, spentAddresses, spendingStore } from './spent-addresses.ts';

export interface RateLimitOptions {
  /** Requests per valid API key and window (RATE_LIMIT_MAX). */
  max: number;
  /** Requests without a valid API key per client address and window (RATE_LIMIT_IP_MAX). */
  ipMax: number;
  windowMs: number;
  redisUrl: string | null;
  /** Where presented keys are looked up. */
  db: Db;
}

/** A window as people say it: "minute", "2 minutes", "90 seconds". */
export function windowText(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'day'],
    [3_600_000, 'hour'],
    [60_000, 'minute'],
    [1000, 'second'],
  ];
  for (const [size, name] of units) {
    if (ms % size === 0) {
      const n = ms / size;
      return n === 1 ? name : `${n} ${name}s`;
    }
  }
  return `${ms} ms`;
}

/**
 * The budgets, one counter per window:
 *
 * - a valid API key (known to the key cache or looked up once): RATE_LIMIT_MAX per key (hashed,
 *   the key itself never becomes a store key). On a route that needs no key (/ready, shared links)
 *   a key is not looked up, only taken from the cache: the route never waits on the database for it;
 * - everything else (no key, an unknown or revoked key): RATE_LIMIT_IP_MAX per client address.
 *   Counted before the key is looked up once the address has spent its budget
 *   (lib/http/spent-addresses.ts), and unknown keys are remembered for a few seconds
 *   (lib/auth/api-key-cache.ts), so guessing keys costs the database next to nothing.
 *
 * The hook (`limitRequests`) must run before authentication: each secured route lists it first in
 * its onRequest hooks (handlers/api.ts, lib/mcp/transports.ts); the plugin also appends it to every
 * other route, where it runs once per request whichever comes first. With REDIS_URL several
 * instances share the counters; while Redis is unreachable each instance counts on its own
 * (lib/http/rate-limit-store.ts) and goes back to the shared counters when Redis answers again,
 * without a restart.
 */
export async function registerRateLimit(app: FastifyInstance, opts: RateLimitOptions): Promise<void> {
  // No offline queue and one retry: a counter call never waits for Redis to come back.
  // ioredis is loaded only when Redis is configured: most instances (and most test apps) count in memory.
  const redis = opts.redisUrl
    ? new (await import('ioredis')).Redis(opts.redisUrl, {
        connectTimeout: 1000,
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        retryStrategy: (times) => Math.min(times * 200, 2000),
      })
    : undefined;
  if (redis) {
    redis.on('error', () => {}); // reported once per outage by the store, not per reconnect attempt
    app.addHook('onClose', async () => {
      redis.disconnect();
    });
  }
  const spent = spentAddresses();
  const counters = redis ? failoverStore({ redis, nameSpace: 'freight-rl:', log: app.log }) : localStore();
  const window = windowText(opts.windowMs);
  await app.register(rateLimit, {
    global: true,
    max: (_request: FastifyRequest, key: string) => (key.startsWith(ADDRESS_PREFIX) ? opts.ipMax : opts.max),
    timeWindow: opts.windowMs,
    hook: 'onRequest',
    store: spendingStore(counters, spent),
    // A counter error (none expected: the store falls back to memory) lets the request through.
    skipOnError: true,
    // An MCP tool call's inner REST dispatch: its outer MCP request was already counted.
    allowList: (request: FastifyRequest) => isInternalDispatch(request),
    keyGenerator: async (request: FastifyRequest) => {
      // A key from an address over its budget is not looked up: the request is counted on the address. Nor is
      // one on a route that needs none (/ready answers within its budget whatever the database does: a key
      // lookup waited out the driver's server selection, 5 s, while the database was down): a key this
      // instance knows keeps its own budget there, any other counts on the address.
      const caller = await identifyCaller(opts.db, request, { lookup: request.routeOptions.config.needsNoKey !== true && !spent.has(request.ip) });
      return caller.kind === 'valid' ? `key:${caller.hash}` : `${ADDRESS_PREFIX}${request.ip}`;
    },
    // The window the budget is for, and the time left.
    errorResponseBuilder: (request, context) => budgetSpent(request, context.max, window, Math.ceil(context.ttl / 1000)),
    addHeadersOnExceeding: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true },
    addHeaders: { 'x-ratelimit-limit': true, 'x-ratelimit-remaining': true, 'x-ratelimit-reset': true, 'retry-after': true },
  });
}

/** The 429 of a spent general budget: the window it is for, and the time left. */
function budgetSpent(request: FastifyRequest, max: number, window: string, retryInSeconds: number): ApiError {
  return new ApiError(429, 'Too Many Requests', [
    knownCaller(request)?.kind === 'valid'
      ? `rate limit of ${max} requests per ${window} for this API key exceeded; retry in ${retryInSeconds} seconds`
      : `rate limit of ${max} requests per ${window} without a valid API key (per client address) exceeded; retry in ${retryInSeconds} seconds`,
  ]);
}

/**
 * Charges a request's general budget `units` more requests, after the hook counted it once: a
 * JSON-RPC batch carries several tool calls in one POST, each one REST operation (whose inner
 * dispatch is exempt above). Sets the budget headers to what is left; answers the 429 when the
 * budget does not cover them all (null when it does), having charged one unit then. With `windowMs` the rate limit's window.
 */
export function chargeRequests(
  app: FastifyInstance,
  windowMs: number,
): (request: FastifyRequest, reply: FastifyReply, units: number) => Promise<ApiError | null> {
  // No options: the plugin's own counters, key and allowance, so these units are the key's.
  const limiter = app.createRateLimit();
  const window = windowText(windowMs);
  return async (request, reply, units) => {
    for (let i = 0; i < units; i += 1) {
      const r = await limiter(request);
      if (r.isAllowed) return null; // exempt (an inner dispatch): nothing counts
      reply.header('x-ratelimit-limit', r.max).header('x-ratelimit-remaining', r.remaining).header('x-ratelimit-reset', r.ttlInSeconds);
      // The first unit tells what is left (the store counts up, never back): a batch it cannot cover is refused at
      // once, costing what one refused request costs, not the rest of the budget its calls would have taken.
      if (r.isExceeded) {
        reply.header('retry-after', r.ttlInSeconds);
        return budgetSpent(request, r.max, window, r.ttlInSeconds);
      }
      if (i === 0 && r.remaining < units - 1) {
        reply.header('retry-after', r.ttlInSeconds);
        return new ApiError(429, 'Too Many Requests', [
          `this batch of ${units + 1} tool calls needs ${units + 1} requests of the rate limit (${r.max} per ${window}), and ${r.remaining + 2} were left: none of its calls ran; send fewer calls, or retry in ${r.ttlInSeconds} seconds`,
        ]);
      }
    }
    return null;
  };
}

/** The rate-limit hook, to list before `authenticate` in a route's onRequest hooks (after registerRateLimit). */
export const limitRequests = (app: FastifyInstance): onRequestAsyncHookHandler => app.rateLimit();

/**
 * onRequest hook, after authentication, of the operations marked `x-rate-limit-budget: reports`
 * (the tax summary and the analytic audits: periods of up to 366 days, seconds each): a budget
 * of their own per tenant (REPORT_RATE_LIMIT_MAX per RATE_LIMIT_WINDOW_MS), besides the general
 * one, so a client cannot spend the machine on year-long reports at the pace of list pages. MCP
 * tool calls of these operations count too (their internal dispatch is not exempt here).
 */
export function reportBudget(app: FastifyInstance, opts: { max: number; windowMs: number }): onRequestAsyncHookHandler {
  const window = windowText(opts.windowMs);
  const limiter = app.createRateLimit({
    max: opts.max,
    timeWindow: opts.windowMs,
    allowList: () => false,
    // Per tenant, not per key: a tenant's keys share it (N keys must not get N budgets).
    keyGenerator: (request: FastifyRequest) => `report:${request.tenant ?? request.ip}`,
  });
  return async function limitReports(request, reply) {
    const result = await limiter(request);
    if (result.isAllowed || !result.isExceeded) return;
    reply
      .header('x-ratelimit-limit', result.max)
      .header('x-ratelimit-remaining', 0)
      .header('x-ratelimit-reset', result.ttlInSeconds)
      .header('retry-after', result.ttlInSeconds);
    throw new ApiError(429, 'Too Many Requests', [
      `report budget of ${result.max} reports per ${window} for this tenant exceeded (the tax summary and the analytic audits share it, whatever the key); retry in ${result.ttlInSeconds} seconds`,
    ]);
  };
}
