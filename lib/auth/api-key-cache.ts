import { LRUCache } from 'lru-cache';
import type { ApiScope } from './api-key-record.ts';
import { ExpiringSet } from '../shared/expiring-set.ts';
import { perDb } from '../db/per-db.ts';

/** What a valid key resolves to. */
export interface ResolvedKey {
  tenant: string;
  keyId: string;
  scopes: ApiScope[];
}

/** Default time a resolved key is trusted without asking the database (API_KEY_CACHE_TTL_MS). */
export const DEFAULT_API_KEY_CACHE_TTL_MS = 10_000;
/** Default time an unknown or revoked key is refused without asking the database (API_KEY_NEGATIVE_CACHE_TTL_MS). */
export const DEFAULT_API_KEY_NEGATIVE_CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/**
 * Short-lived cache of presented API keys, keyed by the key's SHA-256 hash (the clear key is
 * never kept), so a request does not read the database to authenticate:
 *
 * - valid keys for `ttlMs` (API_KEY_CACHE_TTL_MS);
 * - unknown or revoked keys for the shorter `negativeTtlMs` (API_KEY_NEGATIVE_CACHE_TTL_MS), so
 *   the same wrong key sent again and again costs no database read. Both are bounded lru-caches
 *   (beyond MAX_ENTRIES the least recently used go first): a flood of distinct unknown keys cannot
 *   grow memory, and it is stopped earlier anyway by the per-address budget for requests
 *   without a valid key (lib/http/rate-limit.ts). A key stored through this process
 *   (storeApiKey) is forgotten as unknown at once.
 *
 * Revocation: a key revoked through this process (revokeApiKey on the same Db) is dropped at
 * once and `onRevoked` listeners hear of it (MCP closes its sessions); revoked elsewhere
 * (`npm run apikey -- revoke` on another process, another instance), it stops working within
 * the TTL.
 */
export class ApiKeyCache {
  private readonly entries: LRUCache<string, ResolvedKey>;
  private readonly unknown: ExpiringSet;
  private readonly revokedListeners = new Set<(keyId: string) => void>();
  public negativeTtlMs: number = DEFAULT_API_KEY_NEGATIVE_CACHE_TTL_MS;

  constructor(
    public ttlMs: number = DEFAULT_API_KEY_CACHE_TTL_MS,
    now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ max: MAX_ENTRIES, perf: { now } });
    this.unknown = new ExpiringSet(MAX_ENTRIES, now);
  }

  get(hash: string): ResolvedKey | undefined {
    return this.entries.get(hash);
  }

  set(hash: string, key: ResolvedKey): void {
    this.unknown.delete(hash);
    // The TTL as configured now (the app's caches plugin, lib/app/caches.ts, sets it after the cache exists); 0 caches nothing.
    if (this.ttlMs > 0) this.entries.set(hash, key, { ttl: this.ttlMs });
  }

  /** Whether this hash was found unknown or revoked within the negative TTL. */
  isUnknown(hash: string): boolean {
    return this.unknown.has(hash);
  }

  setUnknown(hash: string): void {
    if (this.negativeTtlMs > 0) this.unknown.add(hash, this.negativeTtlMs);
  }

  /** A key just stored: no longer unknown. */
  forgetUnknown(hash: string): void {
    this.unknown.delete(hash);
  }

  /** Drops the key with this public id (a revocation in this process) and tells the listeners. */
  forgetKeyId(keyId: string): void {
    const revoked = [...this.entries.entries()].filter(([, key]) => key.keyId === keyId);
    for (const [hash] of revoked) this.entries.delete(hash);
    for (const listener of this.revokedListeners) listener(keyId);
  }

  /** Calls `listener` with the id of each key revoked through this process; returns the unsubscribe. */
  onRevoked(listener: (keyId: string) => void): () => void {
    this.revokedListeners.add(listener);
    return () => this.revokedListeners.delete(listener);
  }

  clear(): void {
    this.entries.clear();
    this.unknown.clear();
  }
}

/** The cache of the keys stored in this database (one per Db handle, shared by the app, MCP and revocations). */
export const apiKeyCache = perDb(() => new ApiKeyCache());
