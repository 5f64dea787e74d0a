/**
 * The ledger (lib/finance/ledger): facts → financial documents. lib/imports maps each CFDI to
 * facts (lib/imports/financial-mapping.ts) and hands them here; the SAT status service's answer
 * (PUT /api/financial-docs/{id}/cancellation) arrives here too. The ledger stores the facts
 * (facts-repo.ts: `importFacts`, `importLinks`) and rebuilds each affected invoice's document
 * from all the facts about it (documents.ts `buildFinancialDocument`): the one writer of
 * financial documents from facts.
 *
 * Facts are written first and documents rebuilt from the stored facts after (`rebuildInvoices`,
 * which the caller runs once its other writes of the batch — the import's trips — are done),
 * also for skipped files: a batch cut by a crash converges when the same files are imported again.
 */
import { createHash } from 'node:crypto';
import type { Db } from 'mongodb';
import type { ServiceContext } from '../../context.ts';
import type { StoredFinancialDocument } from '../../model/financial-document.ts';
import { addTo } from '../../shared/add-to.ts';
import { ensureStatusLabels } from '../../settings/settings-repo.ts';
import { withDerivedFields } from '../derived-fields.ts';
import { buildFinancialDocument } from './documents.ts';
import {
  IMPORT_STATUS_LABELS,
  KEPT_ACKNOWLEDGEMENT_REASON,
  keepsStoredAcknowledgement,
  type CancellationInfoFact,
  type CancellationMetadataFact,
  type CancellationStatusFact,
  type CreditNoteFact,
  type FactKind,
  type FinancialFact,
  type InvoiceFact,
  type PaymentFact,
} from './facts.ts';
import {
  CANCELLATION_FACT_KINDS,
  backfillLinks,
  cancellationsOf,
  factId,
  factsOfInvoices,
  findFacts,
  insertNewFacts,
  linkFacts,
  putFinancialDocuments,
  replaceFactIfUnchanged,
  saveFacts,
  type ImportFactRecord,
} from './facts-repo.ts';

export type WriteOutcome = 'created' | 'updated' | 'skipped';

const isCancellationKind = (kind: FactKind): boolean => (CANCELLATION_FACT_KINDS as readonly FactKind[]).includes(kind);

/** One fact a file states, and the invoices whose document it changes (cancellations: resolved here). */
export interface PlannedFact {
  kind: FactKind;
  uuid: string;
  fact: FinancialFact | null;
  invoices: string[];
}

/** The facts of one file, and the SHA-256 of its bytes (same UUID and bytes: skipped). */
export interface FileFacts {
  facts: readonly PlannedFact[];
  sha256: string;
}

/** What recording one file's facts did, and the invoices whose documents they change. */
export interface RecordedFile {
  outcome: WriteOutcome;
  affected: string[];
  /** Why it was skipped, when not for its same content. */
  reason?: string;
}

/**
 * Once per import, before its first facts: the tenant's status labels name the codes imported
 * documents carry, and facts imported before `importLinks` existed are linked.
 */
export async function prepareLedger(db: Db, tenant: string): Promise<void> {
  await ensureStatusLabels(db, tenant, IMPORT_STATUS_LABELS);
  await backfillLinks(db, tenant);
}

/**
 * Stores the facts of a batch of files in a few bulk operations instead of several round trips
 * per file. Outcomes are decided in file order, as if the files were written one by one (a UUID
 * twice in a batch: created, then skipped or updated). Returns, per file in order, its outcome
 * and the invoices it changes (its own, or for a cancellation those of the cancelled CFDI);
 * the caller rebuilds them with `rebuildInvoices`.
 */
export async function recordFacts(ctx: ServiceContext, tenant: string, files: readonly FileFacts[], now: Date): Promise<RecordedFile[]> {
  // What is stored already: the batch's facts, and the CFDI that cancellations refer to.
  const ids = files.flatMap((p) =>
    p.facts.flatMap((f) =>
      isCancellationKind(f.kind) ? [factId(tenant, f.kind, f.uuid), factId(tenant, 'invoice', f.uuid)] : [factId(tenant, f.kind, f.uuid)],
    ),
  );
  const known = await findFacts(ctx.db, tenant, ids);
  const toWrite = new Map<string, ImportFactRecord>();
  // Facts not stored when read are inserted (a concurrent import of the same file may win); the others replaced.
  const fresh = new Set<string>();
  // Acknowledgements that left the stored one in place (keepsStoredAcknowledgement).
  const kept = new Set<string>();
  const perFile: { id: string; outcome: WriteOutcome }[][] = [];
  for (const p of files) {
    const mine: { id: string; outcome: WriteOutcome }[] = [];
    for (const f of p.facts) {
      const record: ImportFactRecord = {
        _id: factId(tenant, f.kind, f.uuid),
        tenant,
        uuid: f.uuid,
        kind: f.kind,
        sha256: p.sha256,
        invoices: f.invoices,
        fact: f.fact,
        importedAt: now,
      };
      const prev = known.get(record._id);
      if (prev && prev.sha256 === record.sha256 && prev.kind === record.kind && !predatesCurrency(prev.fact)) mine.push({ id: record._id, outcome: 'skipped' });
      else if (keepsStoredAcknowledgement(prev?.fact, record.fact)) {
        mine.push({ id: record._id, outcome: 'skipped' });
        kept.add(record._id);
      } else {
        if (!prev) fresh.add(record._id);
        mine.push({ id: record._id, outcome: prev ? 'updated' : 'created' });
        known.set(record._id, record);
        toWrite.set(record._id, record);
      }
    }
    perFile.push(mine);
  }
  // Links before facts (a crash in between leaves links to facts not stored yet, which reads
  // ignore), and for skipped files too: a re-import repairs any link that is missing.
  await linkFacts(
    ctx.db,
    tenant,
    files.flatMap((p) => p.facts.map((f) => ({ _id: factId(tenant, f.kind, f.uuid), invoices: f.invoices }))),
  );
  const lost = await insertNewFacts(
    ctx.db,
    [...fresh].map((id) => toWrite.get(id)!),
  );
  await saveFacts(
    ctx.db,
    [...toWrite.values()].filter((r) => !fresh.has(r._id)),
  );
  // Stored by another import meanwhile: the same content was not created by this one; other content is replaced.
  const settled = new Map<string, WriteOutcome>();
  if (lost.size) {
    const stored = await findFacts(ctx.db, tenant, [...lost]);
    const replace = [...lost]
      .map((id) => toWrite.get(id)!)
      .filter((r) => stored.get(r._id)?.sha256 !== r.sha256 && !keepsStoredAcknowledgement(stored.get(r._id)?.fact, r.fact));
    await saveFacts(ctx.db, replace);
    for (const id of lost) {
      settled.set(id, replace.some((r) => r._id === id) ? 'updated' : 'skipped');
      if (keepsStoredAcknowledgement(stored.get(id)?.fact, toWrite.get(id)!.fact)) kept.add(id);
    }
  }
  return files.map((p, i) => {
    const final = perFile[i]!.map(({ id, outcome }) => (outcome === 'created' ? (settled.get(id) ?? outcome) : outcome));
    const outcome: WriteOutcome = final.includes('created') ? 'created' : final.includes('updated') ? 'updated' : 'skipped';
    // Invoices each file touches: its own, or for a cancellation those of the cancelled CFDI.
    const inv: string[] = [];
    for (const f of p.facts) {
      if (!isCancellationKind(f.kind)) inv.push(...f.invoices);
      else {
        const target = known.get(factId(tenant, 'invoice', f.uuid));
        if (target) inv.push(...(target.kind === 'invoice' ? [f.uuid] : target.invoices));
      }
    }
    const keptAck = outcome === 'skipped' && perFile[i]!.some(({ id }) => kept.has(id));
    return { outcome, affected: [...new Set(inv)], ...(keptAck ? { reason: KEPT_ACKNOWLEDGEMENT_REASON } : {}) };
  });
}

const REBUILD_ATTEMPTS = 5;

const factKey = (r: ImportFactRecord): string => `${r._id}:${r.sha256}`;
const factsKeyOf = (records: readonly ImportFactRecord[]): string => records.map(factKey).sort().join(',');

/**
 * Rebuilds the stored documents of these invoices from all their facts, in
 * bulk (one read of the facts, one of the cancellations, one of the stored
 * documents, one bulk write). After writing, the facts are read again: the
 * invoices another import added a fact to meanwhile are rebuilt, so
 * concurrent imports cannot leave a stale document behind. Returns the
 * invoices that exist (the others are not imported yet).
 */
export async function rebuildInvoices(ctx: ServiceContext, tenant: string, invoiceUuids: readonly string[], now: Date): Promise<Set<string>> {
  const existing = new Set<string>();
  const read = async (uuids: readonly string[]) => {
    const records = await factsOfInvoices(ctx.db, tenant, uuids);
    const cancels = await cancellationsOf(ctx.db, tenant, [...uuids, ...records.filter((r) => r.kind !== 'invoice').map((r) => r.uuid)]);
    const cancelBy = new Map<string, ImportFactRecord[]>();
    for (const c of cancels) addTo(cancelBy, c.uuid, c);
    const per = new Map<string, { records: ImportFactRecord[]; cancels: ImportFactRecord[] }>();
    for (const u of uuids) per.set(u, { records: [], cancels: [] });
    for (const r of records) for (const u of r.invoices) per.get(u)?.records.push(r);
    for (const [u, f] of per) {
      for (const uuid of new Set([u, ...f.records.filter((r) => r.kind !== 'invoice').map((r) => r.uuid)])) {
        f.cancels.push(...(cancelBy.get(uuid) ?? []));
      }
    }
    return per;
  };
  let todo = [...new Set(invoiceUuids)];
  const facts = await read(todo);
  for (let attempt = 0; attempt < REBUILD_ATTEMPTS && todo.length; attempt++) {
    const docs: StoredFinancialDocument[] = [];
    for (const uuid of todo) {
      const f = facts.get(uuid)!;
      const invoice = f.records.find((r) => r.kind === 'invoice' && r.uuid === uuid)?.fact as InvoiceFact | undefined;
      if (!invoice) continue;
      existing.add(uuid);
      const payments = f.records.filter((r) => r.kind === 'payment').map((r) => r.fact as PaymentFact);
      const credits = f.records.filter((r) => r.kind === 'creditNote').map((r) => r.fact as CreditNoteFact);
      // Derived fields before the write's "changed?" comparison (a re-import compares equal).
      docs.push(
        withDerivedFields(
          buildFinancialDocument(
            invoice,
            payments,
            credits,
            f.cancels.map((r) => r.fact as CancellationInfoFact),
          ),
        ),
      );
    }
    await putFinancialDocuments(ctx.db, tenant, docs, now);
    const again = await read(todo);
    const stale = todo.filter((u) => {
      const a = facts.get(u)!;
      const b = again.get(u)!;
      return factsKeyOf(a.records) !== factsKeyOf(b.records) || factsKeyOf(a.cancels) !== factsKeyOf(b.cancels);
    });
    for (const u of stale) facts.set(u, again.get(u)!);
    todo = stale;
  }
  return existing;
}

/** Whether this invoice was imported (the ledger holds its invoice fact): its document is the ledger's to rebuild. */
export async function isImportedInvoice(db: Db, tenant: string, uuid: string): Promise<boolean> {
  return (await findFacts(db, tenant, [factId(tenant, 'invoice', uuid)])).size > 0;
}

/**
 * Records the SAT status service's answer about an imported invoice as a fact beside its
 * request and acknowledgement, then rebuilds the invoice's document: importing the files again
 * keeps it. Writes only over the answer read (false: another answer was recorded meanwhile).
 */
export async function recordStatusAnswer(ctx: ServiceContext, tenant: string, fact: CancellationStatusFact, now: Date): Promise<boolean> {
  const uuid = fact.uuid;
  const sha256 = createHash('sha256').update(JSON.stringify(fact)).digest('hex');
  const id = factId(tenant, 'cancellationStatus', uuid);
  const stored = (await findFacts(ctx.db, tenant, [id])).get(id);
  if (stored?.sha256 !== sha256) {
    const written = await replaceFactIfUnchanged(
      ctx.db,
      { _id: id, tenant, uuid, kind: 'cancellationStatus', sha256, invoices: [], fact, importedAt: now },
      stored?.sha256 ?? null,
    );
    if (!written) return false;
  }
  await rebuildInvoices(ctx, tenant, [uuid], now);
  return true;
}

/** Which of these CFDIs were imported (the ledger holds their own fact: an invoice, payment complement, credit note or transfer). */
export async function importedCfdis(db: Db, tenant: string, uuids: readonly string[]): Promise<Set<string>> {
  const found = await findFacts(
    db,
    tenant,
    uuids.map((u) => factId(tenant, 'invoice', u)),
  );
  return new Set([...found.values()].map((r) => r.uuid));
}

/**
 * Records the SAT bulk-download metadata's cancellations (lines with Estatus 0) of CFDIs that
 * were imported, each as a fact beside the CFDI's other cancellation facts, and rebuilds the
 * invoices they change. Returns each fact's outcome, in order (same line again: skipped).
 */
export async function recordMetadataCancellations(
  ctx: ServiceContext,
  tenant: string,
  facts: readonly CancellationMetadataFact[],
  now: Date,
): Promise<WriteOutcome[]> {
  if (!facts.length) return [];
  const recorded = await recordFacts(
    ctx,
    tenant,
    facts.map((fact) => ({
      facts: [{ kind: fact.kind, uuid: fact.uuid, fact, invoices: [] }],
      sha256: createHash('sha256').update(JSON.stringify(fact)).digest('hex'),
    })),
    now,
  );
  await rebuildInvoices(ctx, tenant, [...new Set(recorded.flatMap((r) => r.affected))], now);
  return recorded.map((r) => r.outcome);
}

/** A credit note's fact recorded before its currency or its own taxes were kept: importing its file again records it anew. */
const predatesCurrency = (fact: ImportFactRecord['fact']): boolean => fact?.kind === 'creditNote' && (fact.currency === undefined || fact.taxes === undefined);

/** What a CFDI of each kind is called in a refusal. */
const KIND_NAMES: Partial<Record<FactKind, string>> = {
  invoice: 'an invoice',
  payment: 'a payment complement',
  creditNote: 'a credit note',
  transfer: 'a transfer',
};

/**
 * The files (by index) that would store a CFDI under a UUID the tenant's books hold as a CFDI of another kind — or
 * that an earlier file of the same list does — with why: a UUID names one CFDI, so one of another type is a
 * refusal, not a replacement (a payment complement replacing an invoice's fact left the invoice's document behind).
 */
export async function kindClashes(db: Db, tenant: string, files: readonly { facts: readonly PlannedFact[] }[]): Promise<Map<number, string>> {
  const cfdiFacts = files.map((f) => f.facts.filter((x) => !isCancellationKind(x.kind)));
  const stored = await findFacts(
    db,
    tenant,
    cfdiFacts.flatMap((facts) => facts.map((x) => factId(tenant, x.kind, x.uuid))),
  );
  const kindOf = new Map<string, FactKind>([...stored.values()].map((r) => [r._id, r.kind]));
  const out = new Map<number, string>();
  cfdiFacts.forEach((facts, i) => {
    for (const x of facts) {
      const id = factId(tenant, x.kind, x.uuid);
      const known = kindOf.get(id);
      if (known !== undefined && known !== x.kind) {
        out.set(
          i,
          `UUID ${x.uuid} is already ${KIND_NAMES[known] ?? known} in this tenant's books, and this file makes it ${KIND_NAMES[x.kind] ?? x.kind}: a UUID names one CFDI, nothing of this file is written`,
        );
        return;
      }
    }
    for (const x of facts) kindOf.set(factId(tenant, x.kind, x.uuid), x.kind);
  });
  return out;
}
