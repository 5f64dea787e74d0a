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

/**
 * Replaces the tenant's category rules for received CFDIs (the one setting written alone: the other
 * settings stay as stored), marked `pending` until the stored documents follow them (a change cut
 * by a failure or a crash is finished at the next start: lib/received/apply-category-rules.ts).
 */
export async function saveReceivedCategoryRules(db: Db, tenant: string, rules: ReceivedCategoryRule[], pending: string): Promise<void> {
  await tenantSettings(db).updateOne({ _id: tenant }, { $set: { receivedCategoryRules: rules, receivedCategoryRulesPending: pending } }, { upsert: true });
  settingsCache(db).forget(tenant);
}

/** The tenant's category rules as stored now, not through the cache (what a document written now follows), and their pending mark. */
export async function readReceivedCategoryRules(db: Db, tenant: string): Promise<{ rules: ReceivedCategoryRule[]; pending: string | null }> {
  const stored = await tenantSettings(db).findOne({ _id: tenant }, { projection: { receivedCategoryRules: 1, receivedCategoryRulesPending: 1 } });
  return { rules: stored?.receivedCategoryRules ?? DEFAULT_SETTINGS.receivedCategoryRules, pending: stored?.receivedCategoryRulesPending ?? null };
}

/** Clears the pending mark if it is still this one (a later change keeps its own). */
export async function clearReceivedCategoryRulesPending(db: Db, tenant: string, pending: string): Promise<void> {
  await tenantSettings(db).updateOne({ _id: tenant, receivedCategoryRulesPending: pending }, { $unset: { receivedCategoryRulesPending: '' } });
}

/** Tenants whose last category rules change was not seen through (one read of the settings: a document per tenant). */
export async function tenantsWithPendingCategoryRules(db: Db): Promise<string[]> {
  const rows = await tenantSettings(db)
    .find({ receivedCategoryRulesPending: { $gt: '' } }, { projection: { _id: 1 } })
    .toArray();
  return rows.map((r) => r._id);
}
