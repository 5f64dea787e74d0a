/**
 * importDocuments (POST /api/imports, `npm run import`): a carrier's own CFDI
 * 4.0 XML — invoices, credit notes, payment complements, cancellation
 * acknowledgements, Carta Porte trips — into the stored shapes every other
 * operation reads.
 *
 * Per file: stream-parse (lib/imports/xml-tree.ts), read and check
 * (cfdi.ts), route it by the tenant's place in it — its issuer (Emisor): issued, mapped here
 * (financial-mapping.ts, trip-mapping.ts); its receiver (Receptor): received, mapped and
 * written by lib/received (docs/domain.md, "Received CFDIs"); neither: refused — and only then write, in batches of files (applyBatch): the
 * facts (the ledger, lib/finance/ledger/record-facts.ts), the trips, and each
 * affected invoice's document rebuilt by the ledger from all its facts. Every write is a whole-document upsert (bulk, unordered) skipped when
 * nothing changed; documents and trips that do change get `lastUpdate` = the batch's
 * time, taken once the batch is registered as a write in flight (lib/db/writes-in-flight.ts),
 * so incremental sync (`updatedSince` from the lists' `meta.syncFrom`) sees them. Hence:
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
import { boundedChunks, expandInputs, ImportBudget, maxBytesOf, SizeExceeded, type ImportInput } from './import-sources.ts';
import { cancellationFacts, cancellationRequestFacts, creditNoteFact, invoiceFact, paymentFact } from './financial-mapping.ts';
import { cfdiInMxn } from './cfdi-currency.ts';
import { tripFromCfdi } from './trip-mapping.ts';
import { importMetadata, type MetadataResult } from './import-metadata.ts';
import { receivedCancellationFacts, receivedFactOf } from '../received/received-mapping.ts';
import { recordReceivedFiles, type ReceivedFilePlan } from '../received/record-received.ts';
import { putImportedTrips } from '../trips/put-imported-trips.ts';
import { keepOriginals } from '../originals/originals-repo.ts';
import { originalKey, type OriginalFile } from '../originals/original-record.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { financialDocId, invoicesOf, type CancellationInfoFact, type FactKind, type FinancialFact } from '../finance/ledger/facts.ts';
import { kindClashes, prepareLedger, rebuildInvoices, recordFacts, type PlannedFact, type WriteOutcome } from '../finance/ledger/record-facts.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { withSyncStamp } from '../db/writes-in-flight.ts';

export type ImportFileStatus = WriteOutcome | 'rejected';
export type ImportFileKind = 'invoice' | 'creditNote' | 'payment' | 'cancellation' | 'cancellationRequest' | 'transfer' | 'satMetadata';

export interface ImportFileResult {
  name: string;
  status: ImportFileStatus;
  kind?: ImportFileKind;
  /** Whether the tenant issued the file (its revenue side) or received it (a supplier's CFDI: lib/received). */
  direction?: 'issued' | 'received';
  /** UUID of the CFDI (for a cancellation acknowledgement or request: the first UUID it names). */
  uuid?: string;
  reason?: string;
  /** Financial documents this file created or changed (ids as listed by GET /api/financial-docs). */
  financialDocIds?: string[];
  /** Received documents this file created or changed (ids as listed by GET /api/received-docs). */
  receivedDocIds?: string[];
  tripId?: string;
  /** Invoices this file refers to that are not imported yet: it is applied when they arrive. */
  pendingInvoices?: string[];
  /** The SAT bulk-download metadata file: what its lines did. */
  metadata?: MetadataResult;
}

export interface ImportReport {
  tenant: string;
  summary: { files: number; created: number; updated: number; skipped: number; rejected: number; ignored: number; rejectedLines: number };
  files: ImportFileResult[];
  /** Files that are not CFDI (a PDF, an image…): the first LISTED_IGNORED names, and how many more. */
  ignored: { names: string[]; more: number };
}

/** Names of ignored files listed in the report (the others are counted): it stays bounded whatever an archive holds. */
export const LISTED_IGNORED = 100;

/** Why a file is skipped, unless its write says otherwise. */
const SAME_CONTENT = 'already imported (same UUID, same content)';

const KIND_OF_TYPE = { I: 'invoice', E: 'creditNote', P: 'payment', T: 'transfer' } as const;

/** Parses one file's bytes as they stream in, keeping them as they came (lib/originals); rejections carry the reason. */
async function parseEntry(source: Readable | Buffer, maxBytes: number): Promise<{ file: ReturnType<typeof readImportFile>; sha256: string; bytes: Buffer }> {
  const hash = createHash('sha256');
  const builder = new XmlTreeBuilder(keepNamespace);
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of boundedChunks(source, maxBytes)) {
      hash.update(chunk);
      chunks.push(chunk);
      builder.write(chunk);
    }
  } catch (err) {
    if (err instanceof ImportRejection) throw err;
    if (err instanceof SizeExceeded) throw new ImportRejection(`file is ${err.message}`);
    throw new ImportRejection(`cannot read the file: ${(err as Error).message}`);
  }
  return { file: readImportFile(builder.end()), sha256: hash.digest('hex'), bytes: Buffer.concat(chunks) };
}

interface Planned {
  kind: ImportFileKind;
  uuid: string;
  facts: PlannedFact[];
  trip: TripDocument | null;
  /** A received file: what lib/received writes instead of the facts above. */
  received?: Omit<ReceivedFilePlan, 'sha256'>;
  /** What the kept original XML is about (lib/originals). */
  original: Pick<OriginalFile, 'kind' | 'uuids'>;
}

/** A file the tenant received (Receptor = tenant), or a supplier's cancellation: lib/received maps it. */
function planReceived(cfdi: Cfdi): Planned {
  const mapped = receivedFactOf(cfdi);
  if ('refusal' in mapped) throw new ImportRejection(mapped.refusal);
  const fact = mapped.fact.kind === 'invoice' ? { ...mapped, fact: { ...mapped.fact, xml: originalKey(cfdi.uuid) } } : mapped;
  return {
    kind: KIND_OF_TYPE[cfdi.type],
    uuid: cfdi.uuid,
    facts: [],
    trip: null,
    received: { issuer: cfdi.issuer.rfc, facts: [fact] },
    original: { kind: 'cfdi', uuids: [cfdi.uuid] },
  };
}

/** Everything a file will write, computed before any write (a rejection here writes nothing). */
function plan(tenant: string, file: ReturnType<typeof readImportFile>, sha256: string): Planned {
  if (file.file === 'cancellation' || file.file === 'cancellationRequest') {
    // Another RFC's cancellation can only be of a CFDI it issued to the tenant (lib/received checks that when writing).
    if (file.issuerRfc !== tenant) {
      const facts = receivedCancellationFacts(file);
      return {
        kind: file.file,
        uuid: facts[0]!.uuid,
        facts: [],
        trip: null,
        received: { issuer: file.issuerRfc, facts: facts.map((fact) => ({ fact, invoices: [] })) },
        original: { kind: 'cancellation', uuids: facts.map((f) => f.uuid) },
      };
    }
    // A request is kept as a request (the invoice's cancellation becomes pending); only the SAT's answers move it further.
    const facts: CancellationInfoFact[] =
      file.file === 'cancellation' ? cancellationFacts(file.folios, file.date) : cancellationRequestFacts(file.folios, file.date);
    return {
      kind: file.file,
      uuid: facts[0]!.uuid,
      facts: facts.map((f) => ({ kind: f.kind, uuid: f.uuid, fact: f, invoices: [] })),
      trip: null,
      original: { kind: 'cancellation', uuids: facts.map((f) => f.uuid) },
    };
  }
  const cfdi: Cfdi = file;
  if (cfdi.issuer.rfc !== tenant) {
    if (cfdi.receiver.rfc === tenant) return planReceived(cfdi);
    throw new ImportRejection(
      `Emisor Rfc ${cfdi.issuer.rfc} is not the tenant's RFC (${tenant}), nor is Receptor Rfc ${cfdi.receiver.rfc}: another taxpayer's document`,
    );
  }
  const kind = KIND_OF_TYPE[cfdi.type];
  // Trips carry MXN prices (they have no currency): a freight invoice in another currency at its TipoCambio.
  const trip = tripFromCfdi(tenant, cfdiInMxn(cfdi));
  let fact: FinancialFact | null = null;
  if (cfdi.type === 'I') fact = invoiceFact(tenant, cfdi, sha256);
  else if (cfdi.type === 'E') fact = creditNoteFact(cfdi);
  else if (cfdi.type === 'P') fact = paymentFact(cfdi);
  else if (!trip) throw new ImportRejection('transfer CFDI (T) without a Carta Porte complement: nothing to import');
  const factKind: FactKind = fact ? fact.kind : 'transfer';
  return {
    kind,
    uuid: cfdi.uuid,
    facts: [{ kind: factKind, uuid: cfdi.uuid, fact, invoices: fact ? invoicesOf(fact) : [] }],
    trip,
    original: { kind: 'cfdi', uuids: [cfdi.uuid] },
  };
}

/** A file of the batch being written: its plan, or its result when already decided (rejected). */
type BatchItem = { name: string; planned: Planned; sha256: string; bytes: Buffer } | { name: string; result: ImportFileResult };

/**
 * Writes one batch of planned files: every fact, trip and affected invoice
 * document of the batch in a few bulk operations instead of several round
 * trips per file. Outcomes are decided in file order, as if the files were
 * written one by one (a UUID twice in a batch: created, then skipped or updated).
 * Facts are written first and documents rebuilt from the stored facts after,
 * also for skipped files: a batch cut by a crash converges when the same
 * files are imported again.
 */
async function applyBatch(ctx: ServiceContext, tenant: string, batch: readonly BatchItem[]): Promise<ImportFileResult[]> {
  // The batch's stamp is taken once it is registered as a write in flight, and the entry stays until
  // its last document is written: a sync that reads meanwhile resumes before it (lib/db/writes-in-flight.ts).
  return withSyncStamp(
    ctx.db,
    tenant,
    () => ctx.now().getTime(),
    (stamp) => writeBatch(ctx, tenant, batch, new Date(stamp)),
  );
}

async function writeBatch(ctx: ServiceContext, tenant: string, batch: readonly BatchItem[], now: Date): Promise<ImportFileResult[]> {
  const items = await refuseKindClashes(ctx, tenant, batch);
  const all = items.filter((i): i is Extract<BatchItem, { planned: Planned }> => 'planned' in i);
  const planned = all.filter((p) => !p.planned.received);
  const receivedItems = all.filter((p) => p.planned.received);
  type Written = (typeof all)[number];
  const keep = (files: Written[]) =>
    keepOriginals(
      ctx.db,
      tenant,
      files.map((p) => ({ ...p.planned.original, sha256: p.sha256, bytes: p.bytes, name: p.name })),
      now,
    );
  // The original XML of every file written, before anything else of the batch: a document never
  // names an original that is not kept yet. A supplier's cancellation is kept after lib/received
  // accepts it (it refuses one about a CFDI not received from that supplier: nothing of it is written).
  const deferred = (p: Written) => p.planned.received !== undefined && p.planned.original.kind === 'cancellation';
  await keep(all.filter((p) => !deferred(p)));
  const receivedOutcomes = new Map(
    (
      await recordReceivedFiles(
        ctx,
        tenant,
        receivedItems.map((p) => ({ ...p.planned.received!, sha256: p.sha256 })),
        now,
      )
    ).map((o, i) => [receivedItems[i] as BatchItem, o]),
  );
  await keep(all.filter((p) => deferred(p) && !('refusal' in receivedOutcomes.get(p)!)));
  // The facts first (the ledger), then the trips, then the documents rebuilt from the stored facts.
  const recorded = await recordFacts(
    ctx,
    tenant,
    planned.map((p) => ({ facts: p.planned.facts, sha256: p.sha256 })),
    now,
  );
  const outcomes = new Map<BatchItem, WriteOutcome>(planned.map((p, i) => [p, recorded[i]!.outcome]));
  const reasons = new Map<BatchItem, string | undefined>(planned.map((p, i) => [p, recorded[i]!.reason]));
  const affectedOf = new Map<BatchItem, string[]>(planned.map((p, i) => [p, recorded[i]!.affected]));
  const tripsOf = new Map<string, TripDocument>();
  for (const p of planned) if (p.planned.trip) tripsOf.set(p.planned.trip._id, p.planned.trip);
  await putImportedTrips(ctx, tenant, [...tripsOf.values()], now);

  const existing = await rebuildInvoices(ctx, tenant, [...new Set([...affectedOf.values()].flat())], now);

  return items.map((item) => {
    if ('result' in item) return item.result;
    const rec = receivedOutcomes.get(item);
    if (rec) {
      if ('refusal' in rec) return { name: item.name, status: 'rejected', reason: rec.refusal };
      const result: ImportFileResult = { name: item.name, status: rec.outcome, kind: item.planned.kind, direction: 'received', uuid: item.planned.uuid };
      if (rec.outcome === 'skipped') result.reason = rec.reason ?? SAME_CONTENT;
      if (rec.receivedDocIds.length) result.receivedDocIds = rec.receivedDocIds;
      if (rec.pendingInvoices.length) result.pendingInvoices = rec.pendingInvoices;
      return result;
    }
    const status = outcomes.get(item)!;
    const affected = affectedOf.get(item)!;
    const result: ImportFileResult = { name: item.name, status, kind: item.planned.kind, direction: 'issued', uuid: item.planned.uuid };
    if (status === 'skipped') result.reason = reasons.get(item) ?? SAME_CONTENT;
    const docIds = affected.filter((u) => existing.has(u)).map((u) => financialDocId(tenant, u));
    const pending = affected.filter((u) => !existing.has(u));
    if ((item.planned.kind === 'cancellation' || item.planned.kind === 'cancellationRequest') && !affected.length)
      pending.push(...item.planned.facts.map((f) => f.uuid));
    if (docIds.length) result.financialDocIds = docIds;
    if (item.planned.trip) result.tripId = item.planned.trip._id;
    if (pending.length) result.pendingInvoices = [...new Set(pending)];
    return result;
  });
}

/**
 * The batch with every issued file that would give a UUID of the tenant's books another CFDI type rejected before
 * anything of it is written (its original XML included): kindClashes.
 */
async function refuseKindClashes(ctx: ServiceContext, tenant: string, batch: readonly BatchItem[]): Promise<BatchItem[]> {
  const issued = batch.flatMap((item, i) => ('planned' in item && !item.planned.received ? [{ i, facts: item.planned.facts }] : []));
  const clashes = await kindClashes(ctx.db, tenant, issued);
  if (!clashes.size) return [...batch];
  const refused = new Map([...clashes].map(([k, reason]) => [issued[k]!.i, reason]));
  return batch.map((item, i) => {
    const reason = refused.get(i);
    return reason === undefined ? item : { name: item.name, result: { name: item.name, status: 'rejected', reason } };
  });
}

/** One SAT metadata file's result in the report (null: a text file that is not the metadata, ignored). */
async function metadataFile(
  ctx: ServiceContext,
  tenant: string,
  name: string,
  open: () => Promise<Readable | Buffer>,
  maxBytes: number,
  checkAbort: () => void,
): Promise<ImportFileResult | null> {
  let metadata: MetadataResult | null;
  try {
    // Its writes stamp documents with ctx.now() after registering (lib/db/writes-in-flight.ts).
    const source = await open();
    metadata = await withSyncStamp(
      ctx.db,
      tenant,
      () => ctx.now().getTime(),
      () => importMetadata(ctx, tenant, source, maxBytes, { checkAbort }),
    );
  } catch (err) {
    if (!(err instanceof ImportRejection)) throw err;
    return { name, status: 'rejected', kind: 'satMetadata', reason: err.reason };
  }
  if (metadata === null) return null;
  const status = metadata.cancelled ? 'updated' : 'skipped';
  const result: ImportFileResult = { name, status, kind: 'satMetadata', metadata };
  if (status === 'skipped') result.reason = 'no cancellation to record: every line was recorded before, vigente, or about a CFDI not imported';
  return result;
}

/** Thrown when the caller gave up (the HTTP deadline answered 503, or the client left): files written so far are whole. */
export class ImportAborted extends Error {
  constructor() {
    super('import aborted');
    this.name = 'ImportAborted';
  }
}

/** Files parsed while the previous batch is written; bounds memory to about two batches of parsed files. */
export const IMPORT_BATCH_FILES = 250;
/** A batch is written once its files' bytes (kept as originals) reach this, whatever their number: memory stays bounded with large files. */
export const IMPORT_BATCH_BYTES = 16 * 1024 * 1024;

/**
 * Imports files for `tenant` (always the authenticated tenant, never read
 * from a file). Each file is streamed and parsed in order; parsed files are
 * written in batches (bulk writes), the next batch parsed while the previous
 * one is written, so memory stays bounded by two batches whatever the archive
 * holds. `signal` stops the import between files (ImportAborted).
 */
export async function importDocuments(
  ctx: ServiceContext,
  tenant: string,
  inputs: Iterable<ImportInput> | AsyncIterable<ImportInput>,
  opts: { limits?: ImportLimits; signal?: AbortSignal; batchFiles?: number; onFile?: (result: ImportFileResult, done: number) => void } = {},
): Promise<ImportReport> {
  const limits = opts.limits ?? ctx.config.imports;
  const batchFiles = opts.batchFiles ?? IMPORT_BATCH_FILES;
  const report: ImportReport = {
    tenant,
    summary: { files: 0, created: 0, updated: 0, skipped: 0, rejected: 0, ignored: 0, rejectedLines: 0 },
    files: [],
    ignored: { names: [], more: 0 },
  };
  const ignore = (name: string) => {
    report.summary.ignored += 1;
    if (report.ignored.names.length < LISTED_IGNORED) report.ignored.names.push(name);
    else report.ignored.more += 1;
  };
  let labelsEnsured = false;
  const record = (results: ImportFileResult[]) => {
    for (const result of results) {
      report.summary.files += 1;
      report.summary[result.status] += 1;
      report.summary.rejectedLines += (result.metadata?.rejectedLines.length ?? 0) + (result.metadata?.moreRejectedLines ?? 0);
      report.files.push(result);
      opts.onFile?.(result, report.summary.files);
    }
  };
  const checkAbort = () => {
    if (opts.signal?.aborted) throw new ImportAborted();
  };
  let writing: Promise<void> = Promise.resolve();
  const flush = async (batch: BatchItem[]) => {
    await writing;
    checkAbort();
    if (!labelsEnsured && batch.some((i) => 'planned' in i && !i.planned.received)) {
      await prepareLedger(ctx.db, tenant);
      labelsEnsured = true;
    }
    writing = applyBatch(ctx, tenant, batch).then(record);
    // Awaited by the next flush or at the end; until then a failure must not count as unhandled.
    writing.catch(() => undefined);
  };
  let batch: BatchItem[] = [];
  let batchBytes = 0;
  for await (const entry of expandInputs(inputs, new ImportBudget(limits))) {
    checkAbort();
    if ('rejection' in entry) batch.push({ name: entry.name, result: { name: entry.name, status: 'rejected', reason: entry.rejection } });
    else if ('ignored' in entry) ignore(entry.name);
    else if (entry.format === 'text') {
      // The metadata moves CFDIs imported before it, in this import too: what is parsed so far is written first.
      if (batch.length) await flush(batch);
      batch = [];
      batchBytes = 0;
      await writing;
      const result = await metadataFile(ctx, tenant, entry.name, entry.open, maxBytesOf('text', limits).bytes, checkAbort);
      if (result === null) ignore(entry.name);
      else record([result]);
      continue;
    } else {
      try {
        const { file, sha256, bytes } = await parseEntry(await entry.open(), limits.maxFileBytes);
        batch.push({ name: entry.name, planned: plan(tenant, file, sha256), sha256, bytes });
        batchBytes += bytes.length;
      } catch (err) {
        if (!(err instanceof ImportRejection)) throw err;
        batch.push({ name: entry.name, result: { name: entry.name, status: 'rejected', reason: err.reason } });
      }
    }
    if (batch.length >= batchFiles || batchBytes >= IMPORT_BATCH_BYTES) {
      await flush(batch);
      batch = [];
      batchBytes = 0;
    }
  }
  if (batch.length) await flush(batch);
  await writing;
  return report;
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type ImportReportCheck = Conforms<ImportReport, components['schemas']['ImportReport']>;
