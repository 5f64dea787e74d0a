import type { Db } from 'mongodb';
import type { TenantSettings } from '../model/tenant-settings.ts';

/** Default time a tenant's stored settings are reused without reading the database (SETTINGS_CACHE_TTL_MS). */
export const DEFAULT_SETTINGS_CACHE_TTL_MS = 30_000;

/**
 * Per-Db cache of each tenant's stored settings document (null = none stored), so list pages
 * and audits do not read `tenantSettings` on every request. saveTenantSettings in this process
 * refreshes it at once; a change written by another process is seen within the TTL.
 */
export class SettingsCache {
  private readonly entries = new Map<string, { stored: Partial<TenantSettings> | null; expiresAt: number }>();

  constructor(public ttlMs: number = DEFAULT_SETTINGS_CACHE_TTL_MS, private readonly now: () => number = Date.now) {}

  async get(tenant: string, load: () => Promise<Partial<TenantSettings> | null>): Promise<Partial<TenantSettings> | null> {
    const entry = this.entries.get(tenant);
    if (entry && entry.expiresAt > this.now()) return structuredClone(entry.stored);
    const stored = await load();
    if (this.ttlMs > 0) this.entries.set(tenant, { stored, expiresAt: this.now() + this.ttlMs });
    return structuredClone(stored);
  }

  forget(tenant: string): void {
    this.entries.delete(tenant);
  }
}

const caches = new WeakMap<Db, SettingsCache>();

export function settingsCache(db: Db): SettingsCache {
  let cache = caches.get(db);
  if (!cache) {
    cache = new SettingsCache();
    caches.set(db, cache);
  }
  return cache;
}
