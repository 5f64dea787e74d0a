/**
 * Writes the received CFDIs of one import batch (lib/imports/import-documents.ts routes here the
 * files whose Receptor is the tenant, and the cancellations a supplier made of CFDI it issued
 * to the tenant): their facts first, then every affected received invoice rebuilt from all its
 * facts (received-document.ts), so arrival order does not matter and a re-import changes nothing.
 */
import type { ServiceContext } from '../context.ts';
import { readReceivedCategoryRules } from '../settings/settings-repo.ts';
import { sameRules } from './apply-category-rules.ts';
import { addTo } from '../shared/add-to.ts';
import { buildReceivedDocument } from './received-document.ts';
import { KEPT_ACKNOWLEDGEMENT_REASON, keepsStoredAcknowledgement } from '../finance/ledger/facts.ts';
import {
  CANCEL_KINDS,
  factsOfReceivedInvoices,
  findReceivedFacts,
  insertNewReceivedFacts,
  putReceivedDocs,
  receivedCancellationsOf,
  receivedFactId,
  saveReceivedFacts,
} from './received-repo.ts';
import {
  receivedDocId,
  type ReceivedCreditNoteFact,
  type ReceivedDocRow,
  type ReceivedFact,
  type ReceivedFactRecord,
  type ReceivedInvoiceFact,
  type ReceivedPaymentFact,
  type ReceivedCancelFact,
} from './received-rows.ts';

/** What one received file states: its facts, and the supplier (the CFDI's Emisor, the acknowledgement's RfcEmisor). */
export interface ReceivedFilePlan {
  issuer: string;
  facts: { fact: ReceivedFact; invoices: string[] }[];
  sha256: string;
}

type Outcome = 'created' | 'updated' | 'skipped';
export type ReceivedFileOutcome =
  | { outcome: Outcome; receivedDocIds: string[]; pendingInvoices: string[]; /** Why it was skipped, when not for its same content. */ reason?: string }
  | { refusal: string };

const isCancel = (kind: ReceivedFact['kind']): boolean => (CANCEL_KINDS as readonly string[]).includes(kind);
/** Invoices, payments and credit notes share one id per UUID: what a cancellation is about. */
const cfdiId = (tenant: string, uuid: string): string => receivedFactId(tenant, 'invoice', uuid);

export async function recordReceivedFiles(ctx: ServiceContext, tenant: string, files: readonly ReceivedFilePlan[], now: Date): Promise<ReceivedFileOutcome[]> {
  if (!files.length) return [];
  const ids = files.flatMap((p) =>
    p.facts.flatMap((f) => [receivedFactId(tenant, f.fact.kind, f.fact.uuid), ...(isCancel(f.fact.kind) ? [cfdiId(tenant, f.fact.uuid)] : [])]),
  );
  const known = await findReceivedFacts(ctx.db, tenant, ids);
  const toWrite = new Map<string, ReceivedFactRecord>();
  // Facts not stored when read are inserted (a concurrent import of the same file may win); the others replaced.
  const fresh = new Set<string>();
  // Acknowledgements that left the stored one in place (keepsStoredAcknowledgement).
  const kept = new Set<string>();
  const decided: (ReceivedFileOutcome | { facts: { id: string; outcome: Outcome }[]; affected: string[] })[] = [];
  for (const p of files) {
    // A cancellation applies to a CFDI this supplier issued to the tenant, imported before it or earlier in the same import.
    const stranger = p.facts.find((f) => isCancel(f.fact.kind) && known.get(cfdiId(tenant, f.fact.uuid))?.issuer !== p.issuer);
    if (stranger) {
      decided.push({
        refusal: `RfcEmisor ${p.issuer} is not the tenant's RFC (${tenant}), and no CFDI of ${p.issuer} received by the tenant has UUID ${stranger.fact.uuid} (import the received CFDI first)`,
      });
      continue;
    }
    const outcomes: { id: string; outcome: Outcome }[] = [];
    const affected: string[] = [];
    for (const f of p.facts) {
      const record: ReceivedFactRecord = {
        _id: receivedFactId(tenant, f.fact.kind, f.fact.uuid),
        tenant,
        uuid: f.fact.uuid,
        kind: f.fact.kind,
        issuer: p.issuer,
        sha256: p.sha256,
        invoices: f.invoices,
        fact: f.fact,
        importedAt: now,
      };
      const prev = known.get(record._id);
      if (prev && prev.sha256 === record.sha256 && prev.kind === record.kind && !predatesCurrency(prev.fact))
        outcomes.push({ id: record._id, outcome: 'skipped' });
      else if (keepsStoredAcknowledgement(prev?.fact, record.fact)) {
        outcomes.push({ id: record._id, outcome: 'skipped' });
        kept.add(record._id);
      } else {
        // A fact stored first earlier in this batch stays an insert (written once, as its last version).
        if (!prev) fresh.add(record._id);
        outcomes.push({ id: record._id, outcome: prev ? 'updated' : 'created' });
        known.set(record._id, record);
        toWrite.set(record._id, record);
      }
      if (!isCancel(f.fact.kind)) affected.push(...f.invoices);
      else {
        const target = known.get(cfdiId(tenant, f.fact.uuid))!;
        affected.push(...(target.kind === 'invoice' ? [target.uuid] : target.invoices));
      }
    }
    decided.push({ facts: outcomes, affected: [...new Set(affected)] });
  }
  const lost = await insertNewReceivedFacts(
    ctx.db,
    [...fresh].map((id) => toWrite.get(id)!),
  );
  await saveReceivedFacts(
    ctx.db,
    [...toWrite.values()].filter((r) => !fresh.has(r._id)),
  );
  // Stored by another import meanwhile: the same content was not created by this one; other content is replaced.
  const settled = new Map<string, Outcome>();
  if (lost.size) {
    const stored = await findReceivedFacts(ctx.db, tenant, [...lost]);
    const replace = [...lost]
      .map((id) => toWrite.get(id)!)
      .filter((r) => stored.get(r._id)?.sha256 !== r.sha256 && !keepsStoredAcknowledgement(stored.get(r._id)?.fact, r.fact));
    await saveReceivedFacts(ctx.db, replace);
    for (const id of lost) {
      settled.set(id, replace.some((r) => r._id === id) ? 'updated' : 'skipped');
      if (keepsStoredAcknowledgement(stored.get(id)?.fact, toWrite.get(id)!.fact)) kept.add(id);
    }
  }
  const all = [...new Set(decided.flatMap((d) => ('affected' in d ? d.affected : [])))];
  const existing = await rebuildReceivedInvoices(ctx, tenant, all, now);
  return decided.map((d) => {
    if (!('affected' in d)) return d;
    const final = d.facts.map(({ id, outcome }) => (outcome === 'created' ? (settled.get(id) ?? outcome) : outcome));
    const outcome = final.includes('created') ? 'created' : final.includes('updated') ? 'updated' : 'skipped';
    return {
      outcome,
      ...(outcome === 'skipped' && d.facts.some(({ id }) => kept.has(id)) ? { reason: KEPT_ACKNOWLEDGEMENT_REASON } : {}),
      receivedDocIds: d.affected.filter((u) => existing.has(u)).map((u) => receivedDocId(tenant, u)),
      pendingInvoices: d.affected.filter((u) => !existing.has(u)),
    };
  });
}

const REBUILD_ATTEMPTS = 5;

interface InvoiceFacts {
  records: ReceivedFactRecord[];
  cancels: Map<string, ReceivedCancelFact[]>;
  /** What the document was built from (ids and file hashes): another import's fact meanwhile changes it. */
  key: string;
}

/** The facts of each of these invoices, with the cancellations of it and of its payments and credit notes by their supplier. */
async function readInvoiceFacts(ctx: ServiceContext, tenant: string, uuids: readonly string[]): Promise<Map<string, InvoiceFacts>> {
  const records = await factsOfReceivedInvoices(ctx.db, tenant, uuids);
  const cancels = await receivedCancellationsOf(ctx.db, tenant, [...uuids, ...records.filter((r) => r.kind !== 'invoice').map((r) => r.uuid)]);
  const per = new Map<string, InvoiceFacts>();
  for (const uuid of uuids) {
    const mine = records.filter((r) => r.invoices.includes(uuid));
    const byUuid = new Map<string, ReceivedCancelFact[]>();
    const used: ReceivedFactRecord[] = [...mine];
    for (const c of cancels) {
      // Only the issuer of the cancelled CFDI can cancel it.
      const target = mine.find((r) => r.uuid === c.uuid);
      if (target && target.issuer === c.issuer) {
        addTo(byUuid, c.uuid, c.fact as ReceivedCancelFact);
        used.push(c);
      }
    }
    const key = used
      .map((r) => `${r._id}:${r.sha256}`)
      .sort()
      .join(',');
    per.set(uuid, { records: mine, cancels: byUuid, key });
  }
  return per;
}

/**
 * Rebuilds the stored documents of these received invoices from all their facts; returns those
 * that exist (their invoice is imported). After writing, the facts are read again: an invoice
 * another import added a fact to meanwhile is rebuilt, so concurrent imports leave no stale document.
 */
export async function rebuildReceivedInvoices(ctx: ServiceContext, tenant: string, uuids: readonly string[], now: Date): Promise<Set<string>> {
  const existing = new Set<string>();
  let todo = [...new Set(uuids)];
  if (!todo.length) return existing;
  // The rules as stored now, not as cached: a stored category must follow them. Read again after
  // writing, so a change saved meanwhile (here or elsewhere) is followed too (apply-category-rules.ts).
  let { rules: receivedCategoryRules } = await readReceivedCategoryRules(ctx.db, tenant);
  const facts = await readInvoiceFacts(ctx, tenant, todo);
  for (let attempt = 0; attempt < REBUILD_ATTEMPTS && todo.length; attempt++) {
    const docs: ReceivedDocRow[] = [];
    for (const uuid of todo) {
      const { records, cancels } = facts.get(uuid)!;
      const invoice = records.find((r) => r.kind === 'invoice' && r.uuid === uuid);
      if (!invoice) continue;
      existing.add(uuid);
      // A payment or credit note counts only from the invoice's own supplier.
      const fromSupplier = records.filter((r) => r.issuer === invoice.issuer);
      docs.push(
        buildReceivedDocument(
          tenant,
          invoice.fact as ReceivedInvoiceFact,
          fromSupplier.filter((r) => r.kind === 'payment').map((r) => r.fact as ReceivedPaymentFact),
          fromSupplier.filter((r) => r.kind === 'creditNote').map((r) => r.fact as ReceivedCreditNoteFact),
          cancels,
          receivedCategoryRules,
        ),
      );
    }
    await putReceivedDocs(ctx.db, tenant, docs, now);
    const again = await readInvoiceFacts(ctx, tenant, todo);
    const { rules } = await readReceivedCategoryRules(ctx.db, tenant);
    const rulesMoved = !sameRules(rules, receivedCategoryRules);
    receivedCategoryRules = rules;
    todo = todo.filter((u) => rulesMoved || again.get(u)!.key !== facts.get(u)!.key);
    for (const u of todo) facts.set(u, again.get(u)!);
  }
  return existing;
}

/** A credit note's fact recorded before its currency or its own taxes were kept: importing its file again records it anew. */
const predatesCurrency = (fact: ReceivedFactRecord['fact']): boolean => fact.kind === 'creditNote' && (fact.currency === undefined || fact.taxes === undefined);
