import type { Db } from 'mongodb';
import { tenantSettings } from './collections.ts';
import { DEFAULT_SETTINGS, type TenantSettings } from '../model/tenant-settings.ts';

/** A tenant's settings with the domain defaults filled in for anything not stored. */
export async function getTenantSettings(db: Db, tenant: string): Promise<TenantSettings> {
  const stored = await tenantSettings(db).findOne({ _id: tenant });
  return { ...DEFAULT_SETTINGS, name: tenant, ...(stored ?? {}), _id: tenant, hhiBands: { ...DEFAULT_SETTINGS.hhiBands, ...(stored?.hhiBands ?? {}) } };
}

export async function saveTenantSettings(db: Db, settings: TenantSettings): Promise<void> {
  await tenantSettings(db).replaceOne({ _id: settings._id }, settings, { upsert: true });
}

export function statusLabel(settings: Pick<TenantSettings, 'statusLabels'>, code: number): string {
  return settings.statusLabels[String(code)] ?? 'Desconocido';
}
