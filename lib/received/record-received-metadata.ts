/**
 * Lines of the SAT's bulk-download metadata about CFDIs the tenant received (RfcReceptor = the
 * tenant; lib/imports/import-metadata.ts reads the file): a line with Estatus 0 about an imported
 * received CFDI of that supplier is a cancellation fact beside the supplier's requests and
 * acknowledgements, and the invoices it touches are rebuilt (received-document.ts: accepted since
 * FechaCancelacion). The same line imported again changes nothing.
 */
import { createHash } from 'node:crypto';
import type { ServiceContext } from '../context.ts';
import { rebuildReceivedInvoices } from './record-received.ts';
import { findReceivedFacts, receivedFactId, saveReceivedFacts } from './received-repo.ts';
import type { ReceivedFactRecord } from './received-rows.ts';

export interface ReceivedMetadataLine {
  uuid: string;
  /** RfcEmisor: the supplier. */
  issuer: string;
  /** FechaCancelacion (epoch ms) of an Estatus 0 line; null for Estatus 1 (vigente). */
  cancelledAt: number | null;
}

/** What became of each line, in order: its cancellation recorded now or before, vigente, or its CFDI not imported. */
export type ReceivedMetadataOutcome = 'created' | 'skipped' | 'vigente' | 'notImported';

export async function recordReceivedMetadata(
  ctx: ServiceContext,
  tenant: string,
  lines: readonly ReceivedMetadataLine[],
  now: Date,
): Promise<ReceivedMetadataOutcome[]> {
  const uuids = [...new Set(lines.map((l) => l.uuid.toUpperCase()))];
  // Invoices, payment complements and credit notes share one fact id per UUID.
  const cfdis = await findReceivedFacts(
    ctx.db,
    tenant,
    uuids.map((u) => receivedFactId(tenant, 'invoice', u)),
  );
  const cfdiOf = (line: ReceivedMetadataLine): ReceivedFactRecord | undefined => {
    const record = cfdis.get(receivedFactId(tenant, 'invoice', line.uuid.toUpperCase()));
    // Only the CFDI's own supplier's line is about it.
    return record && record.issuer === line.issuer ? record : undefined;
  };
  const cancels = lines.filter((l) => l.cancelledAt !== null && cfdiOf(l));
  const stored = await findReceivedFacts(
    ctx.db,
    tenant,
    cancels.map((l) => receivedFactId(tenant, 'cancellationMetadata', l.uuid.toUpperCase())),
  );
  const fresh = new Map<string, ReceivedFactRecord>();
  for (const l of cancels) {
    const uuid = l.uuid.toUpperCase();
    const id = receivedFactId(tenant, 'cancellationMetadata', uuid);
    if (stored.has(id) || fresh.has(id)) continue;
    const fact = { kind: 'cancellationMetadata' as const, uuid, date: l.cancelledAt! };
    fresh.set(id, {
      _id: id,
      tenant,
      uuid,
      kind: 'cancellationMetadata',
      issuer: l.issuer,
      sha256: createHash('sha256').update(JSON.stringify(fact)).digest('hex'),
      invoices: [],
      fact,
      importedAt: now,
    });
  }
  await saveReceivedFacts(ctx.db, [...fresh.values()]);
  const touched = [...fresh.values()].flatMap((r) => {
    const cfdi = cfdis.get(receivedFactId(tenant, 'invoice', r.uuid))!;
    return cfdi.kind === 'invoice' ? [cfdi.uuid] : cfdi.invoices;
  });
  await rebuildReceivedInvoices(ctx, tenant, touched, now);
  const created = new Set(fresh.keys());
  return lines.map((l) => {
    if (!cfdiOf(l)) return 'notImported';
    if (l.cancelledAt === null) return 'vigente';
    const id = receivedFactId(tenant, 'cancellationMetadata', l.uuid.toUpperCase());
    if (created.has(id)) {
      created.delete(id); // a second line about the same CFDI in the file is a repeat
      return 'created';
    }
    return 'skipped';
  });
}
