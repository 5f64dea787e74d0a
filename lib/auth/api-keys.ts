import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { API_SCOPES, type ApiKeyRecord, type ApiScope } from './api-key-record.ts';
import { apiKeyCache, type ResolvedKey } from './api-key-cache.ts';
import { countRevocation } from './oauth-records-repo.ts';

export const apiKeys = (db: Db): Collection<ApiKeyRecord> => db.collection<ApiKeyRecord>(COLLECTIONS.apiKeys);

export const hashKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

/** Public id of a key: derived from its hash, so it identifies the key without revealing it. */
export const keyId = (key: string): string => `key_${hashKey(key).slice(0, 16)}`;
/** First characters of the key, shown in listings to help a human recognise it. */
export const keyPrefix = (key: string): string => key.slice(0, 10);

/** Stores a given key (demo data, CLI). Idempotent on the key's hash. */
export async function storeApiKey(db: Db, input: { key: string; tenant: string; label: string; scopes?: ApiScope[] }): Promise<ApiKeyRecord> {
  const record: ApiKeyRecord = {
    _id: keyId(input.key),
    hash: hashKey(input.key),
    prefix: keyPrefix(input.key),
    tenant: input.tenant,
    label: input.label,
    scopes: input.scopes ?? [...API_SCOPES],
    createdAt: new Date(),
    revokedAt: null,
  };
  await apiKeys(db).updateOne({ hash: record.hash }, { $setOnInsert: record }, { upsert: true });
  apiKeyCache(db).forgetUnknown(record.hash);
  return (await apiKeys(db).findOne({ hash: record.hash })) ?? record;
}

/** Creates a fresh random key for a tenant; the clear key is returned once and never stored. */
export async function createApiKey(db: Db, tenant: string, label: string, scopes?: ApiScope[]): Promise<{ key: string; record: ApiKeyRecord }> {
  const key = `fbo_${randomBytes(24).toString('base64url')}`;
  const record = await storeApiKey(db, { key, tenant, label, scopes });
  return { key, record };
}

/** Revokes by id, or by prefix when the prefix names exactly one active key. */
export async function revokeApiKey(db: Db, idOrPrefix: string): Promise<{ revoked: number; ambiguous: boolean }> {
  const byId = await apiKeys(db).updateOne({ _id: idOrPrefix, revokedAt: null }, { $set: { revokedAt: new Date() } });
  if (byId.modifiedCount) {
    await countRevocation(db);
    apiKeyCache(db).forgetKeyId(idOrPrefix);
    return { revoked: 1, ambiguous: false };
  }
  const matches = await apiKeys(db).find({ prefix: idOrPrefix, revokedAt: null }).limit(2).toArray();
  if (matches.length !== 1 || !matches[0]) return { revoked: 0, ambiguous: matches.length > 1 };
  await apiKeys(db).updateOne({ _id: matches[0]._id }, { $set: { revokedAt: new Date() } });
  await countRevocation(db);
  apiKeyCache(db).forgetKeyId(matches[0]._id);
  return { revoked: 1, ambiguous: false };
}

export async function listApiKeys(db: Db, tenant: string): Promise<ApiKeyRecord[]> {
  return apiKeys(db)
    .find({ tenant }, { projection: { hash: 0 } })
    .sort({ createdAt: 1 })
    .toArray();
}

/** A presented key as far as this process knows it without reading the database. */
export type CachedKey = { state: 'valid'; key: ResolvedKey } | { state: 'unknown' } | { state: 'unchecked' };

/** What the key cache says about a presented key (lib/auth/api-key-cache.ts); never reads the database. */
export function cachedApiKey(db: Db, presented: string): CachedKey {
  if (!plausibleKey(presented)) return { state: 'unknown' };
  const hash = hashKey(presented);
  const cache = apiKeyCache(db);
  const key = cache.get(hash);
  if (key) return { state: 'valid', key };
  return cache.isUnknown(hash) ? { state: 'unknown' } : { state: 'unchecked' };
}

const plausibleKey = (presented: string): boolean => presented.length >= 8 && presented.length <= 256;

/**
 * Resolves a presented key to its tenant. A key the cache knows (valid, or unknown or revoked
 * within the negative TTL) costs no database read; otherwise the lookup is by hash (an index
 * seek), then the hashes are compared in constant time so a near-miss cannot be told from a far
 * miss by timing, and the outcome is cached either way.
 */
export async function resolveApiKey(db: Db, presented: string): Promise<ResolvedKey | null> {
  const known = cachedApiKey(db, presented);
  if (known.state === 'valid') return known.key;
  if (known.state === 'unknown') return null;
  const hash = hashKey(presented);
  const cache = apiKeyCache(db);
  const record = await apiKeys(db).findOne({ hash });
  const a = record ? Buffer.from(record.hash, 'hex') : Buffer.alloc(0);
  const b = Buffer.from(hash, 'hex');
  if (!record || record.revokedAt || a.length !== b.length || !timingSafeEqual(a, b)) {
    cache.setUnknown(hash);
    return null;
  }
  const resolved = { tenant: record.tenant, keyId: record._id, scopes: record.scopes ?? [...API_SCOPES] };
  cache.set(hash, resolved);
  return resolved;
}

/** Which of these key ids are stored and not revoked (the MCP transport closes the sessions of the others). */
export async function activeKeyIds(db: Db, ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await apiKeys(db)
    .find({ _id: { $in: ids }, revokedAt: null }, { projection: { _id: 1 } })
    .toArray();
  return new Set(rows.map((r) => r._id));
}
