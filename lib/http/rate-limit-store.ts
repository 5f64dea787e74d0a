/**
 * The rate-limit counter store with REDIS_URL: counts in Redis, shared by every
 * instance, while Redis answers; counts in this instance's memory while it
 * does not (each instance then allows RATE_LIMIT_MAX on its own: degraded, but
 * never unlimited and never an error). ioredis reconnects by itself; once it is
 * ready again the shared counters are used at once, without a restart (a
 * window's count restarts in Redis: what was counted in memory meanwhile is
 * not carried over).
 */
import type { Redis } from 'ioredis';
import type { FastifyBaseLogger } from 'fastify';
// The plugin's own stores (CommonJS, not in its export map's types).
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
export type IncrCallback = (err: Error | null, res?: { current: number; ttl: number }) => void;
// @fastify/rate-limit calls incr(key, cb, timeWindow, max); its public type names only the first two.
export interface CounterStore {
  incr(key: string, cb: IncrCallback, timeWindow?: number, max?: number): void;
  child(routeOptions: unknown): CounterStore;
}
/** How @fastify/rate-limit builds a `store` class: `new Store(globalParams)`. */
export type StoreParams = { continueExceeding?: boolean; exponentialBackoff?: boolean };
export type StoreClass = new (params: StoreParams) => CounterStore;
type StoreCtor = new (...args: unknown[]) => CounterStore;
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreCtor;

/** Counters in this instance's memory (the plugin's own store), as a `store` class. */
export function localStore(entries = 10_000): StoreClass {
  return class {
    constructor(params: StoreParams) {
      return new LocalStore(params.continueExceeding, params.exponentialBackoff, entries);
    }
  } as unknown as StoreClass;
}
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreCtor;

export interface FailoverStoreOptions {
  redis: Redis;
  nameSpace: string;
  log: Pick<FastifyBaseLogger, 'warn' | 'info'>;
}

/** A store class for @fastify/rate-limit's `store` option (it instantiates it with its global params). */
export function failoverStore(opts: FailoverStoreOptions): StoreClass {
  let degraded = false;
  const report = (down: boolean, why?: string) => {
    if (down === degraded) return;
    degraded = down;
    if (down) opts.log.warn({ reason: why }, 'rate limit: Redis unavailable, counting per instance until it is back');
    else opts.log.info('rate limit: Redis is back, counting shared again');
  };
  opts.redis.on('ready', () => report(false));
  opts.redis.on('error', (err: Error) => report(true, err.message));
  opts.redis.on('end', () => report(true, 'connection closed'));

  class FailoverStore implements CounterStore {
    private readonly shared: CounterStore;
    private readonly local: CounterStore;
    constructor(params: { continueExceeding?: boolean; exponentialBackoff?: boolean }, stores?: { shared: CounterStore; local: CounterStore }) {
      this.shared = stores?.shared ?? new RedisStore(params.continueExceeding, params.exponentialBackoff, opts.redis, opts.nameSpace);
      this.local = stores?.local ?? new LocalStore(params.continueExceeding, params.exponentialBackoff, 10_000);
    }
    incr(key: string, cb: IncrCallback, timeWindow?: number, max?: number): void {
      if (opts.redis.status !== 'ready') {
        report(true, `redis ${opts.redis.status}`);
        this.local.incr(key, cb, timeWindow, max);
        return;
      }
      this.shared.incr(
        key,
        (err, res) => {
          if (!err) return cb(null, res);
          report(true, err.message);
          this.local.incr(key, cb, timeWindow, max);
        },
        timeWindow,
        max,
      );
    }
    child(routeOptions: unknown): CounterStore {
      return new FailoverStore({}, { shared: this.shared.child(routeOptions), local: this.local.child(routeOptions) });
    }
  }
  return FailoverStore;
}
