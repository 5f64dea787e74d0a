/**
 * The ledger's store (lib/finance/ledger). Collection `importFacts`: one record per imported CFDI (by UUID) or
 * cancelled UUID, holding the mapped fact and the SHA-256 of the file it came
 * from. It makes the import idempotent (same UUID and bytes = skipped) and
 * lets documents be rebuilt from every fact about an invoice, whatever order
 * the files arrived in. Writes are whole-document upserts, in bulk per batch of files.
 */
import { readAll } from '../../db/read-all.ts';
import { writeMarkingDays } from '../financial-doc-days.ts';
import { MongoBulkWriteError, type Collection, type Db, type Filter, type WithId } from 'mongodb';
import { COLLECTIONS, financialDocs } from '../../db/collections.ts';
import type { StoredFinancialDocument } from '../../model/financial-document.ts';
import { sameContent } from '../../shared/same-content.ts';
import { DUPLICATE_KEY, insertUnlessDuplicate } from '../../db/duplicate-key.ts';
import type { FactKind, FinancialFact } from './facts.ts';

export interface ImportFactRecord {
  _id: string;
  tenant: string;
  /** The CFDI's UUID, or for a cancellation request, acknowledgement or status answer the UUID it is about. */
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

/** The kinds of fact about a CFDI's cancellation (each kept apart: a request, the SAT's acknowledgement, the status service's answer). */
export const CANCELLATION_FACT_KINDS = ['cancellation', 'cancellationRequest', 'cancellationStatus', 'cancellationMetadata'] as const;
const FACT_ID_TAG: Partial<Record<FactKind, string>> = {
  cancellation: 'cancel',
  cancellationRequest: 'cancel-request',
  cancellationStatus: 'cancel-status',
  cancellationMetadata: 'cancel-metadata',
};

export const factId = (tenant: string, kind: FactKind, uuid: string): string => `${tenant}|${FACT_ID_TAG[kind] ?? 'cfdi'}|${uuid}`;

/** The stored facts with these ids (one query), by id. */
export async function findFacts(db: Db, tenant: string, ids: readonly string[]): Promise<Map<string, ImportFactRecord>> {
  if (!ids.length) return new Map();
  const found = await importFacts(db)
    .find({ _id: { $in: [...new Set(ids)] }, tenant })
    .toArray();
  return new Map(found.map((r) => [r._id, r]));
}

/** A CFDI the tenant issued, as its own fact names it (the exports read its kept original by UUID). */
export interface IssuedCfdiRef {
  uuid: string;
  kind: FactKind;
}

/** Facts read per round trip while a period's CFDIs are streamed (each is then read whole and zipped). */
const PERIOD_BATCH = 100;
const REF_PROJECTION = { _id: 0, uuid: 1, kind: 1 } as const;

/**
 * The issued CFDIs whose fact keeps their Fecha (epoch ms): the invoices (I, `fact.base.date`), then the credit
 * notes (E, `fact.date`), each with its Fecha in [from, to], oldest first (`tenant_invoice_date`, `tenant_fact_date`;
 * the cancellation facts that also have a `fact.date` are passed over).
 */
export async function* issuedCfdisDated(db: Db, tenant: string, from: number, to: number, maxTimeMS: number): AsyncGenerator<IssuedCfdiRef> {
  if (from > to) return;
  const find = (field: 'fact.base.date' | 'fact.date') =>
    importFacts(db).find<IssuedCfdiRef>(
      { tenant, [field]: { $gte: from, $lte: to } },
      { projection: REF_PROJECTION, sort: { [field]: 1, _id: 1 }, maxTimeMS, batchSize: PERIOD_BATCH },
    );
  for await (const r of find('fact.base.date')) if (r.kind === 'invoice') yield r;
  for await (const r of find('fact.date')) if (r.kind === 'creditNote') yield r;
}

/**
 * The issued CFDIs whose fact does not keep their Fecha — the payment complements (P: each payment's FechaPago
 * only) and the transfers (T: no fact) — imported at or after `since`, in order of import (`tenant_kind_imported`).
 * A CFDI is imported after it was issued, so these hold every one dated since then; the caller reads the Fecha.
 */
export async function* issuedUndatedCfdisSince(db: Db, tenant: string, since: Date, maxTimeMS: number): AsyncGenerator<IssuedCfdiRef> {
  for (const kind of ['payment', 'transfer'] as const)
    yield* importFacts(db).find<IssuedCfdiRef>(
      { tenant, kind, importedAt: { $gte: since } },
      { projection: REF_PROJECTION, sort: { importedAt: 1, _id: 1 }, maxTimeMS, batchSize: PERIOD_BATCH },
    );
}

/** Stores facts in one unordered bulk write of whole-document upserts (each record is written whole or not at all). */
export async function saveFacts(db: Db, records: readonly ImportFactRecord[]): Promise<void> {
  if (!records.length) return;
  await importFacts(db).bulkWrite(
    records.map((r) => ({ replaceOne: { filter: { _id: r._id, tenant: r.tenant }, replacement: r, upsert: true } })),
    { ordered: false },
  );
}

/**
 * Inserts facts that were not stored when read; returns the ids another writer stored first
 * (a concurrent import of the same files), which the caller reads again to say what it did.
 */
export async function insertNewFacts(db: Db, records: readonly ImportFactRecord[]): Promise<Set<string>> {
  const lost = new Set<string>();
  if (!records.length) return lost;
  try {
    await importFacts(db).insertMany([...records], { ordered: false });
  } catch (err) {
    if (!(err instanceof MongoBulkWriteError)) throw err;
    const writeErrors = [err.writeErrors].flat();
    if (writeErrors.some((w) => w.code !== DUPLICATE_KEY)) throw err;
    for (const w of writeErrors) lost.add(records[w.index]!._id);
  }
  return lost;
}

/**
 * Writes one fact only if the stored one is still the one read (by its sha256; null: none was
 * stored): false when another write came first. What keeps a later answer from being overwritten
 * by an earlier one that was checked against the same state.
 */
export async function replaceFactIfUnchanged(db: Db, record: ImportFactRecord, readSha256: string | null): Promise<boolean> {
  if (readSha256 === null) return insertUnlessDuplicate(importFacts(db), record);
  const res = await importFacts(db).replaceOne({ _id: record._id, tenant: record.tenant, sha256: readSha256 }, record);
  return res.matchedCount === 1;
}

/**
 * Collection `importLinks`: per invoice (`_id` = tenant|UUID), the ids of the facts that
 * contribute to its document. The rebuild reads facts by `_id` through it instead of querying
 * `importFacts` by the `invoices` array (a scan of every fact on engines without that index).
 * Links are only ever added; a fact that no longer names the invoice is ignored when read.
 */
export interface ImportLinkRecord {
  _id: string;
  tenant: string;
  invoice: string;
  facts: string[];
}

export const importLinks = (db: Db): Collection<ImportLinkRecord> => db.collection<ImportLinkRecord>(COLLECTIONS.importLinks);
const linkId = (tenant: string, invoiceUuid: string): string => `${tenant}|${invoiceUuid}`;

/** Adds facts to their invoices' links (idempotent: `$addToSet` upserts, one unordered bulk write). */
export async function linkFacts(db: Db, tenant: string, records: readonly Pick<ImportFactRecord, '_id' | 'invoices'>[]): Promise<void> {
  const byInvoice = new Map<string, Set<string>>();
  for (const r of records) for (const u of r.invoices) (byInvoice.get(u) ?? byInvoice.set(u, new Set()).get(u)!).add(r._id);
  if (!byInvoice.size) return;
  await importLinks(db).bulkWrite(
    [...byInvoice].map(([invoice, ids]) => ({
      updateOne: {
        filter: { _id: linkId(tenant, invoice), tenant },
        update: { $setOnInsert: { invoice }, $addToSet: { facts: { $each: [...ids] } } },
        upsert: true,
      },
    })),
    { ordered: false },
  );
}

/**
 * Links of facts imported before `importLinks` existed: built once per tenant from the facts
 * (one scan), the first time an import finds no link for a tenant that has facts.
 */
export async function backfillLinks(db: Db, tenant: string): Promise<void> {
  if (await importLinks(db).findOne({ tenant }, { projection: { _id: 1 } })) return;
  const facts = await readAll(importFacts(db).find({ tenant, kind: { $nin: [...CANCELLATION_FACT_KINDS] } }, { projection: { _id: 1, invoices: 1 } }));
  for (let i = 0; i < facts.length; i += 1000) await linkFacts(db, tenant, facts.slice(i, i + 1000));
}

/** Every fact (invoice, payments, credit notes) that contributes to these invoices' documents. */
export async function factsOfInvoices(db: Db, tenant: string, invoiceUuids: readonly string[]): Promise<ImportFactRecord[]> {
  if (!invoiceUuids.length) return [];
  const links = await importLinks(db)
    .find({ _id: { $in: [...new Set(invoiceUuids)].map((u) => linkId(tenant, u)) }, tenant })
    .toArray();
  const ids = [...new Set(links.flatMap((l) => l.facts))];
  if (!ids.length) return [];
  const wanted = new Set(invoiceUuids);
  const facts = await importFacts(db)
    .find({ _id: { $in: ids }, tenant })
    .toArray();
  // A fact re-imported with other content may no longer name an invoice it was linked to.
  return facts.filter((f) => f.invoices.some((u) => wanted.has(u)));
}

/** Every cancellation fact (request, acknowledgement, status answer) about these UUIDs. */
export async function cancellationsOf(db: Db, tenant: string, uuids: readonly string[]): Promise<ImportFactRecord[]> {
  if (!uuids.length) return [];
  const ids = [...new Set(uuids)].flatMap((u) => CANCELLATION_FACT_KINDS.map((k) => factId(tenant, k, u)));
  return importFacts(db)
    .find({ _id: { $in: ids }, tenant })
    .toArray();
}

/**
 * Writes the documents that differ from the stored ones (so a re-import writes
 * nothing), stamping `lastUpdate` with the write time so incremental sync
 * (`updatedSince`) sees every created or changed document. Returns the ids written.
 */
async function putChanged<T extends { _id: string; company: string; lastUpdate?: string }>(
  coll: Collection<T>,
  tenant: string,
  docs: readonly T[],
  now: Date,
  around: (stored: readonly WithId<T>[], changed: readonly T[], write: () => Promise<unknown>) => Promise<unknown> = (_s, _c, write) => write(),
): Promise<Set<string>> {
  if (!docs.length) return new Set();
  const stored = await coll.find({ _id: { $in: docs.map((d) => d._id) }, company: tenant } as Filter<T>).toArray();
  const byId = new Map(stored.map((d) => [String(d._id), d]));
  const changed = docs.filter((d) => {
    const s = byId.get(d._id);
    return !s || !sameContent(s, d);
  });
  if (!changed.length) return new Set();
  const lastUpdate = now.toISOString();
  const changedIds = new Set(changed.map((d) => d._id));
  await around(
    stored.filter((d) => changedIds.has(String(d._id))),
    changed,
    () =>
      coll.bulkWrite(
        changed.map((d) => ({
          replaceOne: { filter: { _id: d._id, company: tenant } as Filter<T>, replacement: { ...d, lastUpdate }, upsert: true },
        })),
        { ordered: false },
      ),
  );
  return new Set(changed.map((d) => d._id));
}

/**
 * Documents come with their derived fields (lib/finance/derived-fields.ts), so they are part
 * of the comparison: a document rebuilt from the same facts equals the stored one and a
 * re-import stays a no-op, while a new payment that moves the state is written.
 */
export const putFinancialDocuments = (db: Db, tenant: string, docs: readonly StoredFinancialDocument[], now: Date): Promise<Set<string>> =>
  putChanged(financialDocs(db), tenant, docs, now, (stored, changed, write) => writeMarkingDays(db, tenant, [...stored, ...changed], write));
