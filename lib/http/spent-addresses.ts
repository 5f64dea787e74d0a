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
import { ExpiringSet } from '../shared/expiring-set.ts';

/** Addresses over their budget, until their window resets (at most 10,000 remembered). */
export const spentAddresses = (): ExpiringSet => new ExpiringSet(10_000);

/** The rate limiter's key for requests counted on the client address. */
export const ADDRESS_PREFIX = 'ip:';

/** `Base` (a counter store class) reporting every address counter found over its maximum to `spent`. */
export function spendingStore(Base: StoreClass, spent: ExpiringSet): StoreClass {
  const wrap = (inner: CounterStore): CounterStore => ({
    incr(key: string, cb: IncrCallback, timeWindow?: number, max?: number) {
      inner.incr(
        key,
        (err, res) => {
          if (!err && res && max !== undefined && res.current > max && key.startsWith(ADDRESS_PREFIX)) spent.add(key.slice(ADDRESS_PREFIX.length), res.ttl);
          cb(err, res);
        },
        timeWindow,
        max,
      );
    },
    child(routeOptions: object) {
      return wrap(inner.child(routeOptions));
    },
  });
  return class {
    constructor(params: StoreParams) {
      return wrap(new Base(params));
    }
  } as unknown as StoreClass;
}
