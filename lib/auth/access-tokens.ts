/**
 * OAuth access tokens as credentials of the MCP endpoints (docs/mcp.md, "Hosted clients: OAuth").
 * A token is issued by the service's authorization server (lib/oauth) after a carrier authorised a
 * client with one of its API keys: it stands for that key, limited to the scopes granted. So a
 * token resolves to what the key resolves to (tenant, key id, scopes), with the scopes the
 * intersection of the grant's and the key's own; the key revoked, its tokens stop working too.
 * A token counts only for the resources this server serves (RFC 8707 audience: the MCP URL): one
 * issued for another resource is refused like an unknown one.
 *
 * Tokens are looked up by the hash of their id (lib/auth/oauth-records-repo.ts) and the answer is
 * kept as long as a resolved API key is (API_KEY_CACHE_TTL_MS), never beyond the token's expiry,
 * and used only while the database's revocation count is the one read before it was resolved: a
 * key, token or grant revoked by any process (another instance, `npm run apikey -- revoke`) bumps
 * it, so every instance refuses the token on its next request, for one read by id per request.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Db } from 'mongodb';
import { perDb } from '../db/per-db.ts';
import { ExpiringSet } from '../shared/expiring-set.ts';
import { API_SCOPES, type ApiScope } from './api-key-record.ts';
import { apiKeyCache, type ResolvedKey } from './api-key-cache.ts';
import { apiKeys } from './api-keys.ts';
import { findOAuthRecord, revocationCount } from './oauth-records-repo.ts';

/** The kind oidc-provider stores access tokens under. */
export const ACCESS_TOKEN_KIND = 'AccessToken';

/** oidc-provider's opaque tokens: 256 random bits in base64url. Only such a credential is looked up as a token. */
export const looksLikeAccessToken = (presented: string): boolean => /^[A-Za-z0-9_-]{43}$/.test(presented);

/** A token resolved: the key it stands for, and the key's hash (its rate-limit budget is the key's). */
export interface ResolvedToken {
  key: ResolvedKey;
  keyHash: string;
  grantId: string;
  /** The revocation count read before it was resolved: the answer holds while the count is unchanged. */
  revocations: number;
}

const MAX_ENTRIES = 10_000;
const tokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

class AccessTokenCache {
  readonly valid = new LRUCache<string, ResolvedToken>({ max: MAX_ENTRIES });
  readonly unknown = new ExpiringSet(MAX_ENTRIES);

  forget(predicate: (entry: ResolvedToken) => boolean): void {
    for (const [hash, entry] of this.valid.entries()) if (predicate(entry)) this.valid.delete(hash);
  }
}

const caches = perDb(() => new AccessTokenCache());

function cacheOf(db: Db): AccessTokenCache {
  const fresh = !subscribed.has(db);
  const cache = caches(db);
  if (fresh) {
    subscribed.add(db);
    // A key revoked through this process takes its tokens with it at once.
    apiKeyCache(db).onRevoked((keyId) => cache.forget((e) => e.key.keyId === keyId));
  }
  return cache;
}
const subscribed = new WeakSet<Db>();

/** Forgets the cached answers for a grant's tokens (revoked through this process: lib/oauth's adapter calls it). */
export function forgetAccessTokens(db: Db, by: { token?: string; grantId?: string }): void {
  const cache = cacheOf(db);
  if (by.token !== undefined) cache.valid.delete(tokenHash(by.token));
  if (by.grantId !== undefined) cache.forget((e) => e.grantId === by.grantId);
}

const audiencesOf = (aud: unknown): string[] =>
  typeof aud === 'string' ? [aud] : Array.isArray(aud) ? aud.filter((a): a is string => typeof a === 'string') : [];

/**
 * The key a presented access token stands for, or null when it is unknown, expired, revoked, issued
 * for another resource than `audiences`, or its key is revoked.
 */
export async function resolveAccessToken(db: Db, presented: string, audiences: readonly string[], now = Date.now()): Promise<ResolvedToken | null> {
  const hash = tokenHash(presented);
  const cache = cacheOf(db);
  // Read first: a revocation written after it bumps the count past it, one written before is seen by the lookups below.
  const revocations = await revocationCount(db);
  const cached = cache.valid.get(hash);
  if (cached && cached.revocations === revocations) return cached;
  if (cache.unknown.has(hash)) return null;
  const refuse = () => {
    cache.unknown.add(hash, apiKeyCache(db).negativeTtlMs);
    return null;
  };
  const payload = await findOAuthRecord(db, ACCESS_TOKEN_KIND, presented, new Date(now));
  const expiresAtMs = typeof payload?.exp === 'number' ? payload.exp * 1000 : 0;
  if (!payload || expiresAtMs <= now) return refuse();
  if (!audiencesOf(payload.aud).some((a) => audiences.includes(a))) return refuse();
  const keyId = payload.accountId;
  if (typeof keyId !== 'string') return refuse();
  const record = await apiKeys(db).findOne({ _id: keyId, revokedAt: null });
  if (!record) return refuse();
  const granted = new Set(typeof payload.scope === 'string' ? payload.scope.split(' ') : []);
  const keyScopes = record.scopes ?? [...API_SCOPES];
  const scopes = API_SCOPES.filter((s): s is ApiScope => granted.has(s) && keyScopes.includes(s));
  if (scopes.length === 0) return refuse();
  const resolved: ResolvedToken = {
    key: { tenant: record.tenant, keyId: record._id, scopes },
    keyHash: record.hash,
    grantId: typeof payload.grantId === 'string' ? payload.grantId : '',
    revocations,
  };
  const ttl = Math.min(apiKeyCache(db).ttlMs, expiresAtMs - now);
  if (ttl > 0) cache.valid.set(hash, resolved, { ttl });
  return resolved;
}
