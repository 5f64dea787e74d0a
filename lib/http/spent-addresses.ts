/**
 * Client addresses that have spent their budget for requests without a valid API key
 * (RATE_LIMIT_IP_MAX per RATE_LIMIT_WINDOW_MS), until their window resets. The rate limiter
 * asks before it looks a presented key up: a key from a spent address that this instance does
 * not already know as valid is not looked up at all, the request is counted on the address
 * (429). Guessing keys therefore costs at most RATE_LIMIT_IP_MAX database reads per address
 * and window, whatever the number of distinct keys tried.
 *
 * Learnt from the counter store's answers (`spendingStore`), so with REDIS_URL an address
 * spent on another instance is known here from its next request on.
 */
import type { CounterStore, IncrCallback, StoreClass, StoreParams } from './rate-limit-store.ts';

const MAX_ENTRIES = 10_000;

export class SpentAddresses {
  private readonly until = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Whether `ip` is over its budget now. */
  has(ip: string): boolean {
    const until = this.until.get(ip);
    if (until === undefined) return false;
    if (until <= this.now()) {
      this.until.delete(ip);
      return false;
    }
    return true;
  }

  /** `ip` is over its budget for `ttlMs` more. */
  mark(ip: string, ttlMs: number): void {
    this.until.delete(ip);
    this.until.set(ip, this.now() + Math.max(0, ttlMs));
    if (this.until.size > MAX_ENTRIES) this.until.delete(this.until.keys().next().value!);
  }
}

/** The rate limiter's key for requests counted on the client address. */
export const ADDRESS_PREFIX = 'ip:';

/** `Base` (a counter store class) reporting every address counter found over its maximum to `spent`. */
export function spendingStore(Base: StoreClass, spent: SpentAddresses): StoreClass {
  const wrap = (inner: CounterStore): CounterStore => ({
    incr(key: string, cb: IncrCallback, timeWindow?: number, max?: number) {
      inner.incr(
        key,
        (err, res) => {
          if (!err && res && max !== undefined && res.current > max && key.startsWith(ADDRESS_PREFIX)) spent.mark(key.slice(ADDRESS_PREFIX.length), res.ttl);
          cb(err, res);
        },
        timeWindow,
        max,
      );
    },
    child(routeOptions: unknown) {
      return wrap(inner.child(routeOptions));
    },
  });
  return class {
    constructor(params: StoreParams) {
      return wrap(new Base(params));
    }
  } as unknown as StoreClass;
}
