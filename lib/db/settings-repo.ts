import type { Db } from 'mongodb';
import { tenantSettings } from './collections.ts';
import { DEFAULT_SETTINGS, type TenantSettings } from '../model/tenant-settings.ts';
import { settingsCache } from './settings-cache.ts';

/** The tenant's stored settings document (null when none), through the short-lived cache of lib/db/settings-cache.ts. */
export function getStoredSettings(db: Db, tenant: string): Promise<Partial<TenantSettings> | null> {
  return settingsCache(db).get(tenant, () => tenantSettings(db).findOne({ _id: tenant }));
}

/** A tenant's settings with the domain defaults filled in for anything not stored. */
export async function getTenantSettings(db: Db, tenant: string): Promise<TenantSettings> {
  const stored = await getStoredSettings(db, tenant);
  return { ...DEFAULT_SETTINGS, name: tenant, ...(stored ?? {}), _id: tenant, hhiBands: { ...DEFAULT_SETTINGS.hhiBands, ...(stored?.hhiBands ?? {}) } };
}

export async function saveTenantSettings(db: Db, settings: TenantSettings): Promise<void> {
  await tenantSettings(db).replaceOne({ _id: settings._id }, settings, { upsert: true });
  settingsCache(db).forget(settings._id);
}

export function statusLabel(settings: Pick<TenantSettings, 'statusLabels'>, code: number): string {
  return settings.statusLabels[String(code)] ?? 'Desconocido';
}
