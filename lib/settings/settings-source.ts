import type { Db } from 'mongodb';
import { getStoredSettings, getTenantSettings } from './settings-repo.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';

export type SettingSource = 'tenant' | 'default';

export interface TracedSettings {
  settings: TenantSettings;
  /** Whether a setting was stored for the tenant or is the domain default (so a report can say where a parameter came from). */
  sourceOf: (field: keyof TenantSettings) => SettingSource;
}

/** The tenant's effective settings plus, per field, whether the tenant stored it. */
export async function getTracedSettings(db: Db, tenant: string): Promise<TracedSettings> {
  const [settings, stored] = await Promise.all([getTenantSettings(db, tenant), getStoredSettings(db, tenant)]);
  const keys = new Set(Object.keys(stored ?? {}));
  return { settings, sourceOf: (field) => (keys.has(field) ? 'tenant' : 'default') };
}
