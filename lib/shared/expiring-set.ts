/**
 * A bounded set whose members expire: `add(key, ttlMs)`, `has(key)` until then. Beyond
 * `maxEntries` the least recently used go first (lru-cache), so a flood of distinct keys cannot grow memory.
 * Used for the unknown API keys of the key cache and the client addresses over their budget.
 */
import { LRUCache } from 'lru-cache';

export class ExpiringSet {
  private readonly members: LRUCache<string, true>;

  constructor(maxEntries: number, now: () => number = Date.now) {
    this.members = new LRUCache({ max: maxEntries, perf: { now } });
  }

  has(key: string): boolean {
    return this.members.has(key);
  }

  add(key: string, ttlMs: number): void {
    // lru-cache reads a ttl of 0 as "never expires": a member for no time is no member.
    if (ttlMs <= 0) this.members.delete(key);
    else this.members.set(key, true, { ttl: ttlMs });
  }

  delete(key: string): void {
    this.members.delete(key);
  }

  clear(): void {
    this.members.clear();
  }
}
