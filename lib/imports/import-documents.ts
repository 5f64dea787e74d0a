/**
 * importDocuments (POST /api/imports, `npm run import`): a carrier's own CFDI
 * 4.0 XML — invoices, credit notes, payment complements, cancellation
 * acknowledgements, Carta Porte trips — into the stored shapes every other
 * operation reads.
 *
 * Per file: stream-parse (lib/imports/xml-tree.ts), read and check
 * (cfdi.ts), check the issuer is the tenant, map (financial-mapping.ts,
 * trip-mapping.ts), and only then write: the fact, the trip, and each affected
 * invoice's document rebuilt from all its facts. Every write is one
 * single-document upsert that is a no-op when nothing changed, so:
 * - importing the same file again changes nothing (reported `skipped`);
 * - a payment complement or cancellation that arrives before its invoice is
 *   kept and applied when the invoice arrives;
 * - an import killed midway leaves whole documents only, and importing the
 *   same files again converges to the complete result.
 * A file that fails any check is `rejected` with its reason; nothing of it is written.
 */
import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ServiceContext } from '../context.ts';
import type { ImportLimits } from '../config.ts';
import { XmlTreeBuilder } from './xml-tree.ts';
import { keepNamespace, readImportFile, type Cfdi } from './cfdi.ts';
import { ImportRejection } from './rejection.ts';
import { boundedChunks, expandInputs, ImportBudget, SizeExceeded, type ImportInput } from './import-sources.ts';
import {
  buildFinancialDocument,
  cancellationFacts,
  creditNoteFact,
  financialDocId,
  invoiceFact,
  invoicesOf,
  paymentFact,
  type CancellationFact,
  type CreditNoteFact,
  type FinancialFact,
  type InvoiceFact,
  type PaymentFact,
} from './financial-mapping.ts';
import { tripFromCfdi } from './trip-mapping.ts';
import type { TripDocument } from '../model/trip-document.ts';
import {
  cancellationsOf,
  ensureImportStatusLabels,
  factId,
  factsOfInvoice,
  findFact,
  putFinancialDocument,
  putTrip,
  saveFact,
  type FactKind,
  type ImportFactRecord,
  type WriteOutcome,
} from '../db/import-facts-repo.ts';

export type ImportFileStatus = WriteOutcome | 'rejected';
export type ImportFileKind = 'invoice' | 'creditNote' | 'payment' | 'cancellation' | 'transfer';

export interface ImportFileResult {
  name: string;
  status: ImportFileStatus;
  kind?: ImportFileKind;
  /** UUID of the CFDI (for a cancellation acknowledgement: the first cancelled UUID). */
  uuid?: string;
  reason?: string;
  /** Financial documents this file created or changed (ids as listed by GET /api/financial-docs). */
  financialDocIds?: string[];
  tripId?: string;
  /** Invoices this file refers to that are not imported yet: it is applied when they arrive. */
  pendingInvoices?: string[];
}

export interface ImportReport {
  tenant: string;
  summary: { files: number; created: number; updated: number; skipped: number; rejected: number };
  files: ImportFileResult[];
}

export const IMPORT_STATUS_LABELS: Readonly<Record<string, string>> = { '4': 'Facturado', '6': 'Pagado', '9': 'Cancelado' };

const KIND_OF_TYPE = { I: 'invoice', E: 'creditNote', P: 'payment', T: 'transfer' } as const;

/** Parses one file's bytes as they stream in; rejections carry the reason. */
async function parseEntry(source: Readable | Buffer, maxBytes: number): Promise<{ file: ReturnType<typeof readImportFile>; sha256: string }> {
  const hash = createHash('sha256');
  const builder = new XmlTreeBuilder(keepNamespace);
  try {
    for await (const chunk of boundedChunks(source, maxBytes)) {
      hash.update(chunk);
      builder.write(chunk);
    }
  } catch (err) {
    if (err instanceof ImportRejection) throw err;
    if (err instanceof SizeExceeded) throw new ImportRejection(`file is ${err.message}`);
    throw new ImportRejection(`cannot read the file: ${(err as Error).message}`);
  }
  return { file: readImportFile(builder.end()), sha256: hash.digest('hex') };
}

interface Planned {
  kind: ImportFileKind;
  uuid: string;
  facts: { kind: FactKind; uuid: string; fact: FinancialFact | null; invoices: string[] }[];
  trip: TripDocument | null;
}

/** Everything a file will write, computed before any write (a rejection here writes nothing). */
function plan(tenant: string, file: ReturnType<typeof readImportFile>): Planned {
  if (file.file === 'cancellation') {
    if (file.issuerRfc !== tenant) throw new ImportRejection(`RfcEmisor ${file.issuerRfc} is not the tenant's RFC (${tenant})`);
    const facts = cancellationFacts(file.folios, file.date);
    return { kind: 'cancellation', uuid: facts[0]!.uuid, facts: facts.map((f) => ({ kind: 'cancellation', uuid: f.uuid, fact: f, invoices: [] })), trip: null };
  }
  const cfdi: Cfdi = file;
  if (cfdi.issuer.rfc !== tenant) throw new ImportRejection(`Emisor Rfc ${cfdi.issuer.rfc} is not the tenant's RFC (${tenant})`);
  const kind = KIND_OF_TYPE[cfdi.type];
  const trip = tripFromCfdi(tenant, cfdi);
  let fact: FinancialFact | null = null;
  if (cfdi.type === 'I') fact = invoiceFact(tenant, cfdi);
  else if (cfdi.type === 'E') fact = creditNoteFact(cfdi);
  else if (cfdi.type === 'P') fact = paymentFact(cfdi);
  else if (!trip) throw new ImportRejection('transfer CFDI (T) without a Carta Porte complement: nothing to import');
  const factKind: FactKind = fact ? fact.kind : 'transfer';
  return { kind, uuid: cfdi.uuid, facts: [{ kind: factKind, uuid: cfdi.uuid, fact, invoices: fact ? invoicesOf(fact) : [] }], trip };
}

const REBUILD_ATTEMPTS = 5;

/**
 * Rebuilds one invoice's stored document from its facts. After writing, the
 * facts are read again: if another import added one meanwhile, the document
 * is rebuilt, so concurrent imports cannot leave a stale document behind.
 * Returns false when the invoice itself is not imported yet.
 */
async function rebuildInvoice(ctx: ServiceContext, tenant: string, invoiceUuid: string): Promise<{ exists: boolean; changed: boolean }> {
  let changed = false;
  const read = async () => {
    const records = await factsOfInvoice(ctx.db, tenant, invoiceUuid);
    const cancels = await cancellationsOf(ctx.db, tenant, [invoiceUuid, ...records.filter((r) => r.kind !== 'invoice').map((r) => r.uuid)]);
    return { records, cancels };
  };
  let facts = await read();
  for (let attempt = 0; attempt < REBUILD_ATTEMPTS; attempt++) {
    const invoice = facts.records.find((r) => r.kind === 'invoice' && r.uuid === invoiceUuid)?.fact as InvoiceFact | undefined;
    if (!invoice) return { exists: false, changed };
    const payments = facts.records.filter((r) => r.kind === 'payment').map((r) => r.fact as PaymentFact);
    const credits = facts.records.filter((r) => r.kind === 'creditNote').map((r) => r.fact as CreditNoteFact);
    const doc = buildFinancialDocument(invoice, payments, credits, facts.cancels.map((r) => r.fact as CancellationFact));
    if (await putFinancialDocument(ctx.db, doc)) changed = true;
    const again = await read();
    if (sameFacts(facts.records, again.records) && sameFacts(facts.cancels, again.cancels)) break;
    facts = again;
  }
  return { exists: true, changed };
}

const factKey = (r: ImportFactRecord): string => `${r._id}:${r.sha256}`;
const sameFacts = (a: ImportFactRecord[], b: ImportFactRecord[]): boolean => {
  const x = a.map(factKey).sort();
  const y = b.map(factKey).sort();
  return x.length === y.length && x.every((k, i) => k === y[i]);
};

/** Invoices a cancellation touches: the cancelled invoice, or the invoices of a cancelled payment or credit note. */
async function invoicesOfCancelled(ctx: ServiceContext, tenant: string, uuid: string): Promise<string[]> {
  const target = await findFact(ctx.db, tenant, 'invoice', uuid);
  if (!target) return [];
  return target.kind === 'invoice' ? [uuid] : target.invoices;
}

async function apply(ctx: ServiceContext, tenant: string, planned: Planned, sha256: string, name: string): Promise<ImportFileResult> {
  const now = ctx.now();
  const outcomes: WriteOutcome[] = [];
  const affected = new Set<string>();
  for (const f of planned.facts) {
    outcomes.push(
      await saveFact(ctx.db, { _id: factId(tenant, f.kind, f.uuid), tenant, uuid: f.uuid, kind: f.kind, sha256, invoices: f.invoices, fact: f.fact, importedAt: now }),
    );
    const invoices = f.kind === 'cancellation' ? await invoicesOfCancelled(ctx, tenant, f.uuid) : f.invoices;
    for (const i of invoices) affected.add(i);
  }
  if (planned.trip) await putTrip(ctx.db, planned.trip);
  const docIds: string[] = [];
  const pending: string[] = [];
  for (const invoiceUuid of affected) {
    const { exists } = await rebuildInvoice(ctx, tenant, invoiceUuid);
    if (exists) docIds.push(financialDocId(tenant, invoiceUuid));
    else pending.push(invoiceUuid);
  }
  if (planned.kind === 'cancellation') {
    for (const f of planned.facts) if (!affected.size) pending.push(f.uuid);
  }
  const status: WriteOutcome = outcomes.includes('created') ? 'created' : outcomes.includes('updated') ? 'updated' : 'skipped';
  const result: ImportFileResult = { name, status, kind: planned.kind, uuid: planned.uuid };
  if (status === 'skipped') result.reason = 'already imported (same UUID, same content)';
  if (docIds.length) result.financialDocIds = docIds;
  if (planned.trip) result.tripId = planned.trip._id;
  if (pending.length) result.pendingInvoices = [...new Set(pending)];
  return result;
}

/**
 * Imports files for `tenant` (always the authenticated tenant, never read
 * from a file). Files are processed one at a time in order, each streamed,
 * so memory stays bounded by one file whatever the archive holds.
 */
export async function importDocuments(
  ctx: ServiceContext,
  tenant: string,
  inputs: Iterable<ImportInput> | AsyncIterable<ImportInput>,
  opts: { limits?: ImportLimits; onFile?: (result: ImportFileResult, done: number) => void } = {},
): Promise<ImportReport> {
  const limits = opts.limits ?? ctx.config.imports;
  const report: ImportReport = { tenant, summary: { files: 0, created: 0, updated: 0, skipped: 0, rejected: 0 }, files: [] };
  let labelsEnsured = false;
  for await (const entry of expandInputs(inputs, new ImportBudget(limits))) {
    let result: ImportFileResult;
    if ('rejection' in entry) result = { name: entry.name, status: 'rejected', reason: entry.rejection };
    else {
      try {
        const { file, sha256 } = await parseEntry(await entry.open(), limits.maxFileBytes);
        const planned = plan(tenant, file);
        if (!labelsEnsured) {
          await ensureImportStatusLabels(ctx.db, tenant, IMPORT_STATUS_LABELS);
          labelsEnsured = true;
        }
        result = await apply(ctx, tenant, planned, sha256, entry.name);
      } catch (err) {
        if (!(err instanceof ImportRejection)) throw err;
        result = { name: entry.name, status: 'rejected', reason: err.reason };
      }
    }
    report.summary.files += 1;
    report.summary[result.status] += 1;
    report.files.push(result);
    opts.onFile?.(result, report.summary.files);
  }
  return report;
}
