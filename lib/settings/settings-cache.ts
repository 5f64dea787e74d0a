import { LRUCache } from 'lru-cache';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { perDb } from '../db/per-db.ts';

/** Default time a tenant's stored settings are reused without reading the database (SETTINGS_CACHE_TTL_MS). */
export const DEFAULT_SETTINGS_CACHE_TTL_MS = 30_000;

const NONE = Symbol('no stored settings');
/** Tenants whose settings are kept (least recently used dropped first). */
const MAX_TENANTS = 10_000;

/**
 * Per-Db cache of each tenant's stored settings document (null = none stored), so list pages
 * and audits do not read `tenantSettings` on every request. saveTenantSettings in this process
 * refreshes it at once; a change written by another process is seen within the TTL.
 */
export class SettingsCache {
  // lru-cache holds no null: a tenant without stored settings is kept as NONE.
  private readonly entries: LRUCache<string, Readonly<Partial<TenantSettings>> | typeof NONE>;

  constructor(
    public ttlMs: number = DEFAULT_SETTINGS_CACHE_TTL_MS,
    now: () => number = Date.now,
  ) {
    this.entries = new LRUCache({ max: MAX_TENANTS, perf: { now } });
  }

  /** The stored settings, shared and deeply frozen: read on every list page, so not copied each time (a caller that tried to change them would throw). */
  async get(tenant: string, load: () => Promise<Partial<TenantSettings> | null>): Promise<Readonly<Partial<TenantSettings>> | null> {
    const entry = this.entries.get(tenant);
    if (entry !== undefined) return entry === NONE ? null : entry;
    const stored = deepFreeze(await load());
    if (this.ttlMs > 0) this.entries.set(tenant, stored ?? NONE, { ttl: this.ttlMs });
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

export const settingsCache = perDb(() => new SettingsCache());
