import type { Db } from 'mongodb';
import { tenantSettings } from '../db/collections.ts';
import { DEFAULT_SETTINGS, type ReceivedCategoryRule, type TenantSettings } from '../model/tenant-settings.ts';
import { settingsCache } from './settings-cache.ts';

/** The tenant's stored settings document (null when none), through the short-lived cache of lib/settings/settings-cache.ts. */
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

/**
 * Makes sure the tenant's status label table names these codes (the ledger's: the codes imported
 * documents use, 4, 6 and 9), without touching labels the tenant set.
 */
export async function ensureStatusLabels(db: Db, tenant: string, labels: Record<string, string>): Promise<void> {
  const coll = tenantSettings(db);
  const stored = await coll.findOne({ _id: tenant }, { projection: { statusLabels: 1 } });
  if (!stored) {
    await coll.updateOne({ _id: tenant }, { $setOnInsert: { statusLabels: { ...DEFAULT_SETTINGS.statusLabels, ...labels } } }, { upsert: true });
    settingsCache(db).forget(tenant);
    return;
  }
  const current = stored.statusLabels ?? { ...DEFAULT_SETTINGS.statusLabels };
  const missing = Object.entries(labels).filter(([code]) => current[code] === undefined);
  if (!missing.length && stored.statusLabels) return;
  await coll.updateOne({ _id: tenant }, { $set: { statusLabels: { ...current, ...Object.fromEntries(missing) } } });
  settingsCache(db).forget(tenant);
}

export function statusLabel(settings: Pick<TenantSettings, 'statusLabels'>, code: number): string {
  return settings.statusLabels[String(code)] ?? 'Desconocido';
}

/** Replaces the tenant's category rules for received CFDIs (the one setting written alone: the other settings stay as stored). */
export async function saveReceivedCategoryRules(db: Db, tenant: string, rules: ReceivedCategoryRule[]): Promise<void> {
  await tenantSettings(db).updateOne({ _id: tenant }, { $set: { receivedCategoryRules: rules } }, { upsert: true });
  settingsCache(db).forget(tenant);
}
