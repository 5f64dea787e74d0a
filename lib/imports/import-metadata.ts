/**
 * Importing the SAT bulk download's metadata file (lib/imports/sat-metadata.ts reads it): every
 * line about a CFDI the tenant has moves that CFDI's cancellation status, as the line says
 * (Estatus 0: cancelled since FechaCancelacion; Estatus 1: vigente, nothing to record). Lines
 * about CFDIs not imported are counted, not errors; lines that cannot be read are rejected with
 * their number. Read line by line in batches, so the file's size bounds the work, not memory.
 *
 * Each line is about one side of the tenant's books: a *target*. Issued CFDIs (RfcEmisor = the
 * tenant) are the ledger's (lib/finance/ledger): a cancellation is a fact beside the CFDI's
 * other cancellation facts, and its document is rebuilt. Received CFDIs (RfcReceptor = the
 * tenant) are lib/received's, the same way. Each side is one entry in METADATA_TARGETS: which
 * lines it owns, and how it records them.
 */
import type { Readable } from 'node:stream';
import type { ServiceContext } from '../context.ts';
import type { CancellationMetadataFact } from '../finance/ledger/facts.ts';
import { importedCfdis, prepareLedger, recordMetadataCancellations, type WriteOutcome } from '../finance/ledger/record-facts.ts';
import { boundedChunks, SizeExceeded } from './import-sources.ts';
import { NotMetadata, SatMetadataReader, type MetadataLine, type MetadataRow } from './sat-metadata.ts';
import { ImportRejection } from './rejection.ts';
import { recordReceivedMetadata } from '../received/record-received-metadata.ts';

/** What became of one line: its cancellation recorded (or recorded before), vigente, or its CFDI not imported. */
export type LineOutcome = WriteOutcome | 'vigente' | 'notImported';

/** A side of the tenant's books that metadata lines can be about. */
export interface MetadataTarget {
  /** Whether a line is about this side for the tenant. */
  owns(line: MetadataLine, tenant: string): boolean;
  /** Records what these lines say about the CFDIs the tenant has; one outcome per line, in order. */
  apply(ctx: ServiceContext, tenant: string, lines: readonly MetadataLine[], now: Date): Promise<LineOutcome[]>;
}

/** Issued CFDIs: the ledger's invoices, payment complements and credit notes. */
export const issuedTarget: MetadataTarget = {
  owns: (line, tenant) => line.issuerRfc === tenant,
  async apply(ctx, tenant, lines, now) {
    const imported = await importedCfdis(
      ctx.db,
      tenant,
      lines.map((l) => l.uuid),
    );
    const cancels = lines.filter((l) => l.cancelled && imported.has(l.uuid));
    if (cancels.length) await prepareLedger(ctx.db, tenant);
    const facts: CancellationMetadataFact[] = cancels.map((l) => ({ kind: 'cancellationMetadata', uuid: l.uuid, date: l.cancelledAt! }));
    const outcomes = await recordMetadataCancellations(ctx, tenant, facts, now);
    const byLine = new Map(cancels.map((l, i) => [l, outcomes[i]!]));
    return lines.map((l) => byLine.get(l) ?? (imported.has(l.uuid) ? 'vigente' : 'notImported'));
  },
};

/** Received CFDIs (RfcReceptor = the tenant): lib/received records a supplier's cancellation. */
export const receivedTarget: MetadataTarget = {
  owns: (line, tenant) => line.receiverRfc === tenant && line.issuerRfc !== tenant,
  apply: (ctx, tenant, lines, now) =>
    recordReceivedMetadata(
      ctx,
      tenant,
      lines.map((l) => ({ uuid: l.uuid, issuer: l.issuerRfc, cancelledAt: l.cancelled ? l.cancelledAt : null })),
      now,
    ),
};

/** The sides of the books metadata lines are applied to, in order (the first that owns a line takes it). */
export const METADATA_TARGETS: readonly MetadataTarget[] = [issuedTarget, receivedTarget];

/** Rejected lines listed in the report (the others are counted): the report stays bounded whatever the file holds. */
export const LISTED_REJECTED_LINES = 100;
/** Lines read before they are applied, as one batch of ledger writes. */
const METADATA_BATCH_LINES = 1000;

export interface MetadataResult {
  /** CFDI lines read (the header and blank lines not counted). */
  lines: number;
  /** Estatus 0 lines about imported CFDIs whose cancellation this file recorded. */
  cancelled: number;
  /** Estatus 0 lines whose cancellation was recorded already (the same line imported before). */
  alreadyCancelled: number;
  /** Estatus 1 lines about imported CFDIs: vigente, nothing to record. */
  vigente: number;
  /** Lines about CFDIs of the tenant that are not imported (or whose side of the books is not imported yet). */
  notImported: number;
  /** Lines whose RfcEmisor and RfcReceptor are both other taxpayers. */
  otherTaxpayers: number;
  /** Lines that could not be read: the first LISTED_REJECTED_LINES with their number and reason. */
  rejectedLines: { line: number; reason: string }[];
  /** Rejected lines beyond those listed. */
  moreRejectedLines: number;
}

/**
 * Imports one metadata file. Returns null when the text is not the SAT metadata (its first line
 * is not the header): the caller lists it as ignored. Throws ImportRejection when it cannot be
 * read at all (a header without a needed column, a file over the byte limit).
 */
export async function importMetadata(
  ctx: ServiceContext,
  tenant: string,
  source: Readable | Buffer,
  maxBytes: number,
  opts: { targets?: readonly MetadataTarget[]; checkAbort?: () => void } = {},
): Promise<MetadataResult | null> {
  const targets = opts.targets ?? METADATA_TARGETS;
  const result: MetadataResult = {
    lines: 0,
    cancelled: 0,
    alreadyCancelled: 0,
    vigente: 0,
    notImported: 0,
    otherTaxpayers: 0,
    rejectedLines: [],
    moreRejectedLines: 0,
  };
  const reader = new SatMetadataReader();
  let pending: MetadataLine[] = [];
  const apply = async () => {
    opts.checkAbort?.();
    const now = ctx.now();
    const per = targets.map(() => [] as MetadataLine[]);
    for (const line of pending) {
      const i = targets.findIndex((t) => t.owns(line, tenant));
      // A line of the tenant's that no target takes (its side of the books is not imported here yet) is not imported.
      if (i >= 0) per[i]!.push(line);
      else if (line.issuerRfc === tenant || line.receiverRfc === tenant) result.notImported += 1;
      else result.otherTaxpayers += 1;
    }
    pending = [];
    for (const [i, lines] of per.entries()) {
      if (!lines.length) continue;
      for (const outcome of await targets[i]!.apply(ctx, tenant, lines, now)) {
        if (outcome === 'vigente' || outcome === 'notImported') result[outcome] += 1;
        else if (outcome === 'skipped') result.alreadyCancelled += 1;
        else result.cancelled += 1;
      }
    }
  };
  const take = async (rows: MetadataRow[]) => {
    for (const row of rows) {
      result.lines += 1;
      if ('rejection' in row) {
        if (result.rejectedLines.length < LISTED_REJECTED_LINES) result.rejectedLines.push({ line: row.line, reason: row.rejection });
        else result.moreRejectedLines += 1;
      } else pending.push(row);
    }
    if (pending.length >= METADATA_BATCH_LINES) await apply();
  };
  try {
    for await (const chunk of boundedChunks(source, maxBytes, 'IMPORT_MAX_TOTAL_BYTES')) await take(reader.write(chunk));
    await take(reader.end());
  } catch (err) {
    if (err instanceof NotMetadata) return null;
    if (err instanceof SizeExceeded) throw new ImportRejection(`file is ${err.message}`);
    throw err;
  }
  if (pending.length) await apply();
  return result;
}
