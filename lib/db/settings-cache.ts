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

  /** The stored settings, shared and deeply frozen: read on every list page, so not copied each time (a caller that tried to change them would throw). */
  async get(tenant: string, load: () => Promise<Partial<TenantSettings> | null>): Promise<Readonly<Partial<TenantSettings>> | null> {
    const entry = this.entries.get(tenant);
    if (entry && entry.expiresAt > this.now()) return entry.stored;
    const stored = deepFreeze(await load());
    if (this.ttlMs > 0) this.entries.set(tenant, { stored, expiresAt: this.now() + this.ttlMs });
    return stored;
  }

  forget(tenant: string): void {
    this.entries.delete(tenant);
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
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
