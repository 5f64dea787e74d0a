/**
 * Collection `importFacts`: one record per imported CFDI (by UUID) or
 * cancelled UUID, holding the mapped fact and the SHA-256 of the file it came
 * from. It makes the import idempotent (same UUID and bytes = skipped) and
 * lets documents be rebuilt from every fact about an invoice, whatever order
 * the files arrived in. Each write is a single-document upsert.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Collection, Db } from 'mongodb';
import { COLLECTIONS, financialDocs, tenantSettings, trips } from './collections.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { DEFAULT_SETTINGS } from '../model/tenant-settings.ts';
import { settingsCache } from './settings-cache.ts';
import type { FinancialFact } from '../imports/financial-mapping.ts';

export type FactKind = FinancialFact['kind'] | 'transfer';

export interface ImportFactRecord {
  _id: string;
  tenant: string;
  /** The CFDI's UUID, or for a cancellation the cancelled UUID. */
  uuid: string;
  kind: FactKind;
  sha256: string;
  /** Invoices whose stored document this fact changes. */
  invoices: string[];
  /** null for a transfer CFDI (its trip is the whole result). */
  fact: FinancialFact | null;
  importedAt: Date;
}

export const importFacts = (db: Db): Collection<ImportFactRecord> => db.collection<ImportFactRecord>(COLLECTIONS.importFacts);

export const factId = (tenant: string, kind: FactKind, uuid: string): string => `${tenant}|${kind === 'cancellation' ? 'cancel' : 'cfdi'}|${uuid}`;

export type WriteOutcome = 'created' | 'updated' | 'skipped';

/** Stores a fact unless the same file (by hash) is already there. */
export async function saveFact(db: Db, record: ImportFactRecord): Promise<WriteOutcome> {
  const existing = await importFacts(db).findOne({ _id: record._id, tenant: record.tenant }, { projection: { sha256: 1, kind: 1 } });
  if (existing && existing.sha256 === record.sha256 && existing.kind === record.kind) return 'skipped';
  await importFacts(db).replaceOne({ _id: record._id, tenant: record.tenant }, record, { upsert: true });
  return existing ? 'updated' : 'created';
}

export async function findFact(db: Db, tenant: string, kind: FactKind, uuid: string): Promise<ImportFactRecord | null> {
  return importFacts(db).findOne({ _id: factId(tenant, kind, uuid), tenant });
}

/** Every fact (invoice, payments, credit notes) that contributes to one invoice's document. */
export async function factsOfInvoice(db: Db, tenant: string, invoiceUuid: string): Promise<ImportFactRecord[]> {
  return importFacts(db).find({ tenant, invoices: invoiceUuid }).toArray();
}

export async function cancellationsOf(db: Db, tenant: string, uuids: string[]): Promise<ImportFactRecord[]> {
  if (!uuids.length) return [];
  return importFacts(db).find({ _id: { $in: uuids.map((u) => factId(tenant, 'cancellation', u)) }, tenant }).toArray();
}

/** Writes a document only when it differs from the stored one (so a re-import writes nothing). */
export async function putFinancialDocument(db: Db, doc: FinancialDocument): Promise<boolean> {
  const stored = await financialDocs(db).findOne({ _id: doc._id, company: doc.company });
  if (stored && isDeepStrictEqual({ ...stored }, { ...doc })) return false;
  await financialDocs(db).replaceOne({ _id: doc._id, company: doc.company }, doc, { upsert: true });
  return true;
}

export async function putTrip(db: Db, trip: TripDocument): Promise<boolean> {
  const stored = await trips(db).findOne({ _id: trip._id, company: trip.company });
  if (stored && isDeepStrictEqual({ ...stored }, { ...trip })) return false;
  await trips(db).replaceOne({ _id: trip._id, company: trip.company }, trip, { upsert: true });
  return true;
}

/**
 * Makes sure the tenant's status label table names the codes imported
 * documents use (4, 6 and 9), without touching labels the tenant set.
 */
export async function ensureImportStatusLabels(db: Db, tenant: string, labels: Record<string, string>): Promise<void> {
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
