/**
 * A bounded set whose members expire: `add(key, ttlMs)`, `has(key)` until then. Beyond
 * `maxEntries` the oldest additions go first, so a flood of distinct keys cannot grow memory.
 * Used for the unknown API keys of the key cache and the client addresses over their budget.
 */
export class ExpiringSet {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly now: () => number = Date.now,
  ) {}

  has(key: string): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until <= this.now()) {
      this.until.delete(key);
      return false;
    }
    return true;
  }

  add(key: string, ttlMs: number): void {
    this.until.delete(key);
    this.until.set(key, this.now() + Math.max(0, ttlMs));
    if (this.until.size > this.maxEntries) this.until.delete(this.until.keys().next().value!);
  }

  delete(key: string): void {
    this.until.delete(key);
  }

  clear(): void {
    this.until.clear();
  }
}
