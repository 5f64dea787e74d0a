/**
 * Reads that several kinds of kept totals make alike during one rebuild of them all (the days a
 * tenant's history touches, docs/rollups.md): inside `withSharedReads`, the first read of a key is
 * kept and handed to every later caller of the same key, so a rebuild of every kind reads a
 * tenant's documents for their days once per collection, not once per kind. Outside it (a verify,
 * a report, one kind's rebuild) every call reads. What is shared must be treated as read-only.
 * A write meanwhile marks its own days, so a day set read a little earlier loses nothing.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

const scope = new AsyncLocalStorage<Map<string, Promise<unknown>>>();

/** Runs `fn` with reads shared by key until it returns. */
export function withSharedReads<T>(fn: () => Promise<T>): Promise<T> {
  return scope.run(new Map(), fn);
}

/** `read()`, or within `withSharedReads` the promise of the first read of `key` (a failed read is not kept). */
export function sharedRead<T>(key: string, read: () => Promise<T>): Promise<T> {
  const memo = scope.getStore();
  if (!memo) return read();
  const known = memo.get(key) as Promise<T> | undefined;
  if (known) return known;
  const p = read();
  memo.set(key, p);
  p.catch(() => memo.delete(key));
  return p;
}
