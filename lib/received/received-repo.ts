/**
 * The store of received CFDIs: `receivedFacts` (one record per received CFDI, or per cancelled
 * UUID, with the SHA-256 of its file: same UUID and bytes = skipped) and `receivedDocs` (each
 * received invoice rebuilt from its facts). New facts are inserted (a concurrent import of the same file
 * finds its fact taken and says skipped), the others replaced whole, in bulk.
 */
import { MongoBulkWriteError, type Collection, type Db, type Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { isDuplicateKeyError } from '../db/duplicate-key.ts';
import { findSortedPage } from '../db/find-page.ts';
import type { KeysetSort, PageQuery } from '../shared/keyset.ts';
import type { InstantRange } from '../shared/date-range.ts';
import { sameContent } from '../shared/same-content.ts';
import { RECEIVED_CATEGORIES, type ReceivedCategory } from '../model/tenant-settings.ts';
import type { ReceivedDocRow, ReceivedFactKind, ReceivedFactRecord, ReceivedPaymentState } from './received-rows.ts';
import { writeMarkingReceivedDays, type DatedReceivedDocument } from './received-doc-days.ts';

export const receivedFacts = (db: Db): Collection<ReceivedFactRecord> => db.collection<ReceivedFactRecord>(COLLECTIONS.receivedFacts);
export const receivedDocs = (db: Db): Collection<ReceivedDocRow> => db.collection<ReceivedDocRow>(COLLECTIONS.receivedDocs);

export const CANCEL_KINDS = ['cancellation', 'cancellationRequest', 'cancellationMetadata'] as const satisfies readonly ReceivedFactKind[];
const TAG: Partial<Record<ReceivedFactKind, string>> = {
  cancellation: 'cancel',
  cancellationRequest: 'cancel-request',
  cancellationMetadata: 'cancel-metadata',
};
export const receivedFactId = (tenant: string, kind: ReceivedFactKind, uuid: string): string => `${tenant}|${TAG[kind] ?? 'cfdi'}|${uuid}`;

/** The stored facts with these ids (one query), by id. */
export async function findReceivedFacts(db: Db, tenant: string, ids: readonly string[]): Promise<Map<string, ReceivedFactRecord>> {
  if (!ids.length) return new Map();
  const found = await receivedFacts(db)
    .find({ _id: { $in: [...new Set(ids)] }, tenant })
    .toArray();
  return new Map(found.map((r) => [r._id, r]));
}

/** A CFDI the tenant received, as its own fact names it (the exports read its kept original by UUID). */
export interface ReceivedCfdiRef {
  uuid: string;
  kind: ReceivedFactKind;
}

/** Facts read per round trip while a period's CFDIs are streamed (each is then read whole and zipped). */
const PERIOD_BATCH = 100;
const REF_PROJECTION = { _id: 0, uuid: 1, kind: 1 } as const;

/**
 * The received invoices (I) and credit notes (E), whose facts keep their Fecha (`fact.date`, epoch ms), with it in
 * [from, to], oldest first (`tenant_fact_date`; the cancellation facts that also have a `fact.date` are passed over).
 */
export async function* receivedCfdisDated(db: Db, tenant: string, from: number, to: number, maxTimeMS: number): AsyncGenerator<ReceivedCfdiRef> {
  if (from > to) return;
  const cursor = receivedFacts(db).find<ReceivedCfdiRef>(
    { tenant, 'fact.date': { $gte: from, $lte: to } },
    { projection: REF_PROJECTION, sort: { 'fact.date': 1, _id: 1 }, maxTimeMS, batchSize: PERIOD_BATCH },
  );
  for await (const r of cursor) if (r.kind === 'invoice' || r.kind === 'creditNote') yield r;
}

/**
 * The suppliers' payment complements (P), whose facts keep each payment's FechaPago but not their Fecha, imported
 * at or after `since`, in order of import (`tenant_kind_imported`). A CFDI is imported after it was issued, so these
 * hold every one dated since then; the caller reads the Fecha.
 */
export function receivedUndatedCfdisSince(db: Db, tenant: string, since: Date, maxTimeMS: number): AsyncIterable<ReceivedCfdiRef> {
  return receivedFacts(db).find<ReceivedCfdiRef>(
    { tenant, kind: 'payment', importedAt: { $gte: since } },
    { projection: REF_PROJECTION, sort: { importedAt: 1, _id: 1 }, maxTimeMS, batchSize: PERIOD_BATCH },
  );
}

/** Stores facts whole (unordered bulk upserts). */
export async function saveReceivedFacts(db: Db, records: readonly ReceivedFactRecord[]): Promise<void> {
  if (!records.length) return;
  await receivedFacts(db).bulkWrite(
    records.map((r) => ({ replaceOne: { filter: { _id: r._id, tenant: r.tenant }, replacement: r, upsert: true } })),
    { ordered: false },
  );
}

/**
 * Inserts facts that were not stored when read; returns the ids another writer stored first
 * (a concurrent import of the same files), which the caller reads again to say what it did.
 */
export async function insertNewReceivedFacts(db: Db, records: readonly ReceivedFactRecord[]): Promise<Set<string>> {
  const lost = new Set<string>();
  if (!records.length) return lost;
  try {
    await receivedFacts(db).insertMany([...records], { ordered: false });
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const writeErrors = [err.writeErrors].flat();
    if (writeErrors.some((w) => !isDuplicateKeyError(w)) || err.result.getWriteConcernError()) throw err;
    for (const w of writeErrors) lost.add(records[w.index]!._id);
  }
  return lost;
}

/** Every fact (invoice, payments, credit notes) that names one of these invoices. */
export async function factsOfReceivedInvoices(db: Db, tenant: string, uuids: readonly string[]): Promise<ReceivedFactRecord[]> {
  if (!uuids.length) return [];
  return receivedFacts(db)
    .find({ tenant, invoices: { $in: [...new Set(uuids)] } })
    .toArray();
}

/** Every cancellation fact (request, acknowledgement) about these UUIDs. */
export async function receivedCancellationsOf(db: Db, tenant: string, uuids: readonly string[]): Promise<ReceivedFactRecord[]> {
  if (!uuids.length) return [];
  const ids = [...new Set(uuids)].flatMap((u) => CANCEL_KINDS.map((k) => receivedFactId(tenant, k, u)));
  return receivedFacts(db)
    .find({ _id: { $in: ids }, tenant })
    .toArray();
}

/** Writes the documents that differ from the stored ones, stamping `lastUpdate` with the write time. */
export async function putReceivedDocs(db: Db, tenant: string, docs: readonly ReceivedDocRow[], now: Date): Promise<void> {
  if (!docs.length) return;
  const stored = await receivedDocs(db)
    .find({ _id: { $in: docs.map((d) => d._id) }, tenant })
    .toArray();
  const byId = new Map(stored.map((d) => [d._id, d]));
  const changed = docs.filter((d) => {
    const s = byId.get(d._id);
    return !s || !sameContent(s, d);
  });
  if (!changed.length) return;
  const lastUpdate = now.toISOString();
  const changedIds = new Set(changed.map((d) => d._id));
  // The days of the stored versions and of the new ones, marked before and after (received-doc-days.ts).
  await writeMarkingReceivedDays(db, tenant, [...stored.filter((d) => changedIds.has(d._id)), ...changed], () =>
    receivedDocs(db).bulkWrite(
      changed.map((d) => ({ replaceOne: { filter: { _id: d._id, tenant }, replacement: { ...d, lastUpdate }, upsert: true } })),
      { ordered: false },
    ),
  );
}

export interface ReceivedDocFilter {
  supplier?: string;
  category?: ReceivedCategory;
  issued?: InstantRange;
  paymentStatus?: Exclude<ReceivedPaymentState, 'cancelled'>;
  cancelled?: boolean;
}

/** Newest issue date first, id as tie-breaker. */
export const RECEIVED_DOC_SORT = [
  { field: 'date', dir: -1 },
  { field: '_id', dir: -1 },
] as const satisfies KeysetSort;

/** A page of the tenant's received documents (null: the filters exclude each other, nothing is asked). */
export async function findReceivedDocs(
  db: Db,
  tenant: string,
  f: ReceivedDocFilter,
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; docs: ReceivedDocRow[] }> {
  // Tenant first, always.
  const q: Filter<ReceivedDocRow> = { tenant };
  if (f.supplier !== undefined) q['supplier.rfc'] = f.supplier;
  if (f.category !== undefined) q.category = f.category;
  if (f.issued?.from !== undefined || f.issued?.to !== undefined) {
    q.date = { ...(f.issued.from !== undefined ? { $gte: f.issued.from } : {}), ...(f.issued.to !== undefined ? { $lte: f.issued.to } : {}) };
  }
  // paid, partial and unpaid are never cancelled: with cancelled=true they match nothing.
  if (f.paymentStatus !== undefined) {
    if (f.cancelled === true) return { total: page.count ? 0 : null, docs: [] };
    q.paymentState = f.paymentStatus;
  } else if (f.cancelled !== undefined) q.paymentState = f.cancelled ? 'cancelled' : { $ne: 'cancelled' };
  return findSortedPage(receivedDocs(db), q, page, maxTimeMS);
}

export async function findReceivedDocById(db: Db, tenant: string, id: string, maxTimeMS: number): Promise<ReceivedDocRow | null> {
  return receivedDocs(db).findOne({ _id: id, tenant }, { maxTimeMS });
}

/** The product codes the tenant's received documents follow (bounded by the catalogue the tenant buys from). */
export async function receivedMainCodes(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  // One probe of tenant_main_code per code, the strings only ($gte ''): `distinct` read every document on the embedded engine (4.6 s at 66,000).
  const codes: string[] = [];
  for (;;) {
    const last = codes[codes.length - 1];
    const next = await receivedDocs(db)
      .find({ tenant, mainCode: last === undefined ? { $gte: '' } : { $gt: last } }, { projection: { _id: 0, mainCode: 1 }, maxTimeMS })
      .sort({ mainCode: 1 })
      .limit(1)
      .next();
    if (typeof next?.mainCode !== 'string') return codes;
    codes.push(next.mainCode);
  }
}

/** Documents re-categorized per update: their days are marked around each batch. */
const CATEGORY_BATCH = 1000;
/** Codes per query: codes × other categories stay within the embedded engine's 1,000 index points (QueryPlan). */
const CODES_PER_QUERY = 150;

/**
 * Sets the category of the tenant's documents that follow these codes (the stored documents'
 * concepts keep theirs until rebuilt). The category moves the tax position (fuel paid in cash),
 * so the documents to change are read first and updated by id in batches, each between two
 * marks of its documents' days (received-doc-days.ts): a document written meanwhile marks its own.
 */
/** Gives the documents whose largest concept has one of `codes` this category; those it changes get `lastUpdate` = now(). */
export async function setCategoryOfCodes(
  db: Db,
  tenant: string,
  codes: readonly string[],
  category: ReceivedCategory,
  now: () => Date,
  maxTimeMS: number,
): Promise<void> {
  if (!codes.length) return;
  // The other categories by name, not `$ne`: each code × category is an index point of tenant_main_code_category,
  // so unchanged rules read no document (a `$ne` read every document of the codes: 8.3 s at 1M/1M).
  const others = RECEIVED_CATEGORIES.filter((c) => c !== category);
  let batch: (DatedReceivedDocument & { _id: string })[] = [];
  const flush = async (): Promise<void> => {
    const ids = batch.map((d) => d._id);
    await writeMarkingReceivedDays(db, tenant, batch, () =>
      receivedDocs(db).updateMany(
        { tenant, _id: { $in: ids }, category: { $ne: category } },
        { $set: { category, lastUpdate: now().toISOString() } },
        { maxTimeMS },
      ),
    );
    batch = [];
  };
  for (let i = 0; i < codes.length; i += CODES_PER_QUERY) {
    const cursor = receivedDocs(db).find(
      { tenant, mainCode: { $in: codes.slice(i, i + CODES_PER_QUERY) }, category: { $in: others } },
      { projection: { _id: 1, date: 1, 'settlements.date': 1 }, maxTimeMS, batchSize: CATEGORY_BATCH },
    );
    for await (const d of cursor) {
      batch.push(d);
      if (batch.length >= CATEGORY_BATCH) await flush();
    }
  }
  if (batch.length) await flush();
}

/** The days every received document of a tenant touches (marking them all: a rebuild of the totals kept over them). */
export function streamReceivedDocDays(db: Db, tenant: string): AsyncIterable<DatedReceivedDocument> {
  return receivedDocs(db).find({ tenant }, { projection: { _id: 0, date: 1, 'settlements.date': 1 }, batchSize: 5000 });
}

/** Every tenant with received documents, one index probe per tenant (tenant_date; `distinct` would read every document on the embedded engine). */
export async function tenantsWithReceivedDocs(db: Db): Promise<string[]> {
  const tenants: string[] = [];
  for (;;) {
    const next = await receivedDocs(db)
      .find(tenants.length ? { tenant: { $gt: tenants[tenants.length - 1] as string } } : {}, { projection: { _id: 0, tenant: 1 } })
      .sort({ tenant: 1, date: -1, _id: -1 })
      .limit(1)
      .next();
    if (!next) return tenants;
    tenants.push(next.tenant);
  }
}
