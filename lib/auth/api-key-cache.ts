import type { Db } from 'mongodb';
import type { ApiScope } from './api-key-record.ts';

/** What a valid key resolves to. */
export interface ResolvedKey {
  tenant: string;
  keyId: string;
  scopes: ApiScope[];
}

/** Default time a resolved key is trusted without asking the database (API_KEY_CACHE_TTL_MS). */
export const DEFAULT_API_KEY_CACHE_TTL_MS = 10_000;
const MAX_ENTRIES = 10_000;

/**
 * Short-lived cache of resolved API keys, keyed by the key's SHA-256 hash (the clear key is
 * never kept), so a request does not read the database to authenticate. Only valid keys are
 * cached: a new key works at once, and unknown keys cannot fill the cache.
 *
 * Revocation: a key revoked through this process (revokeApiKey on the same Db) is dropped at
 * once; revoked elsewhere (`npm run apikey -- revoke` on another process, another instance), it
 * stops working within the TTL. Bounded: beyond MAX_ENTRIES the oldest entries go first.
 */
export class ApiKeyCache {
  private readonly entries = new Map<string, { key: ResolvedKey; expiresAt: number }>();

  constructor(public ttlMs: number = DEFAULT_API_KEY_CACHE_TTL_MS, private readonly now: () => number = Date.now) {}

  get(hash: string): ResolvedKey | undefined {
    const entry = this.entries.get(hash);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.now()) {
      this.entries.delete(hash);
      return undefined;
    }
    return entry.key;
  }

  set(hash: string, key: ResolvedKey): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(hash);
    this.entries.set(hash, { key, expiresAt: this.now() + this.ttlMs });
    if (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
  }

  /** Drops the key with this public id (a revocation in this process). */
  forgetKeyId(keyId: string): void {
    for (const [hash, entry] of this.entries) if (entry.key.keyId === keyId) this.entries.delete(hash);
  }

  clear(): void {
    this.entries.clear();
  }
}

const caches = new WeakMap<Db, ApiKeyCache>();

/** The cache of the keys stored in this database (one per Db handle, shared by the app, MCP and revocations). */
export function apiKeyCache(db: Db): ApiKeyCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = new ApiKeyCache();
    caches.set(db, cache);
  }
  return cache;
}
