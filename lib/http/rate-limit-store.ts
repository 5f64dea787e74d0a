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
import { LRUCache } from 'lru-cache';

export type IncrCallback = (err: Error | null, res?: { current: number; ttl: number }) => void;
/**
 * @fastify/rate-limit's public custom-store interface (its README, "store"): the plugin builds
 * the store with `new Store(globalParams)`, calls `incr(key, cb, timeWindow, max)` per request
 * and `child(routeOptions)` for a route with its own settings. Our stores implement it
 * themselves: the plugin's own LocalStore/RedisStore are private files.
 */
export interface CounterStore {
  incr(key: string, cb: IncrCallback, timeWindow?: number, max?: number): void;
  /** `routeOptions`: the route's options as the plugin has them (RouteStoreParams are the ones read). */
  child(routeOptions: object): CounterStore;
}
export type StoreParams = { continueExceeding?: boolean; exponentialBackoff?: boolean };
/** A route's own settings as the plugin passes them to `child` (its `cache` size, its method and URL). */
export type RouteStoreParams = StoreParams & { cache?: number; routeInfo?: { method: string; url: string } };
export type StoreClass = new (params: StoreParams) => CounterStore;

/** One window's count: the same rule in memory and in Redis (below). */
interface Window {
  current: number;
  ttl: number;
  startMs: number;
}

/** A window grown past `max` under exponential backoff lasts `timeWindow × 2^(excess − 1)`. */
const backoffTtl = (timeWindow: number, current: number, max: number): number => {
  const ttl = timeWindow * 2 ** (current - max - 1);
  return Number.isSafeInteger(ttl) ? ttl : Number.MAX_SAFE_INTEGER;
};

/** Counters in this instance's memory, the `entries` most recently used keys kept (lru-cache). */
class LocalCounters implements CounterStore {
  private readonly windows: LRUCache<string, Window>;
  constructor(
    private readonly params: StoreParams,
    entries: number,
  ) {
    this.windows = new LRUCache({ max: entries });
  }
  incr(key: string, cb: IncrCallback, timeWindow = 60_000, max = Infinity): void {
    const now = Date.now();
    let w = this.windows.get(key);
    if (!w || w.startMs + timeWindow <= now) {
      w = { current: 1, ttl: timeWindow, startMs: now };
    } else {
      w.current += 1;
      if (this.params.continueExceeding && w.current > max) Object.assign(w, { ttl: timeWindow, startMs: now });
      else if (this.params.exponentialBackoff && w.current > max) Object.assign(w, { ttl: backoffTtl(timeWindow, w.current, max), startMs: now });
      else w.ttl = timeWindow - (now - w.startMs);
    }
    this.windows.set(key, w);
    cb(null, { current: w.current, ttl: w.ttl });
  }
  child(routeOptions: object): CounterStore {
    const route: RouteStoreParams = routeOptions;
    return new LocalCounters(route, route.cache ?? 5000);
  }
}

/** Counters in this instance's memory, as a `store` class. */
export function localStore(entries = 10_000): StoreClass {
  return class extends LocalCounters {
    constructor(params: StoreParams) {
      super(params, entries);
    }
  };
}

// The same window rule, run atomically in Redis: one round trip per request.
const REDIS_INCR = `
local current = redis.call('INCR', KEYS[1])
local timeWindow = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
if current == 1 or (ARGV[3] == 'true' and current > max) then
  redis.call('PEXPIRE', KEYS[1], timeWindow)
elseif ARGV[4] == 'true' and current > max then
  timeWindow = math.min(timeWindow * (2 ^ (current - max - 1)), (2^53) - 1)
  redis.call('PEXPIRE', KEYS[1], timeWindow)
else
  timeWindow = redis.call('PTTL', KEYS[1])
end
return {current, timeWindow}
`;

type RedisWithRateLimit = Redis & {
  freightRateLimit(
    key: string,
    timeWindow: number,
    max: number,
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    cb: (err: Error | null, res?: [number, number]) => void,
  ): void;
};

/** Counters in Redis, shared by every instance; keys `prefix` + key (a route's own settings add its method and URL). */
class RedisCounters implements CounterStore {
  private readonly redis: RedisWithRateLimit;
  constructor(
    private readonly params: StoreParams,
    redis: Redis,
    private readonly prefix: string,
  ) {
    if (!('freightRateLimit' in redis)) redis.defineCommand('freightRateLimit', { numberOfKeys: 1, lua: REDIS_INCR });
    this.redis = redis as RedisWithRateLimit;
  }
  incr(key: string, cb: IncrCallback, timeWindow = 60_000, max = Number.MAX_SAFE_INTEGER): void {
    this.redis.freightRateLimit(
      this.prefix + key,
      timeWindow,
      max,
      this.params.continueExceeding === true,
      this.params.exponentialBackoff === true,
      (err, res) => {
        if (err || !res) cb(err ?? new Error('rate limit: no answer from Redis'));
        else cb(null, { current: res[0], ttl: res[1] });
      },
    );
  }
  child(routeOptions: object): CounterStore {
    const route: RouteStoreParams = routeOptions;
    return new RedisCounters(route, this.redis, this.prefix + (route.routeInfo ? `${route.routeInfo.method}${route.routeInfo.url}-` : ''));
  }
}

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
    constructor(params: StoreParams, stores?: { shared: CounterStore; local: CounterStore }) {
      this.shared = stores?.shared ?? new RedisCounters(params, opts.redis, opts.nameSpace);
      this.local = stores?.local ?? new LocalCounters(params, 10_000);
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
    child(routeOptions: object): CounterStore {
      return new FailoverStore({}, { shared: this.shared.child(routeOptions), local: this.local.child(routeOptions) });
    }
  }
  return FailoverStore;
}
