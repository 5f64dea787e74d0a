/**
 * PUT /api/financial-docs/{id}/cancellation: the SAT status service's answer about an
 * invoice's cancellation (Estado + EstatusCancelacion) moves its cancellation status
 * (lib/model CancellationStatus): the receiver's acceptance, its rejection, tacit acceptance
 * after 3 business days.
 *
 * An imported invoice is rebuilt from its facts (the ledger, lib/finance/ledger), so the answer is stored as a
 * fact beside its request and acknowledgement and the document rebuilt: importing the files
 * again keeps it. A document that was not imported (the demo data, another writer) is updated
 * in place, only if nobody wrote it since it was read.
 *
 * The status moves forward only: a cancellation in effect (Cancelado) is final, and an answer
 * consulted before the one recorded does not replace it (409, saying why). Both are checked
 * against the state read and written only if it is still that state, so two answers racing
 * each other cannot leave the older one stored.
 */
import type { ServiceContext } from '../context.ts';
import { findFinancialDocById, replaceFinancialDocIfUnchanged } from './financial-docs-repo.ts';
import { ApiError, invalidBody, notFound } from '../http/api-error.ts';
import { financialDocId, SAT_ANSWERS, type CancellationStatusFact, type SatEstado, type SatEstatusCancelacion } from './ledger/facts.ts';
import { isImportedInvoice, recordStatusAnswer } from './ledger/record-facts.ts';
import type { CanceledRecord, FinancialDocument } from '../model/financial-document.ts';
import { receiverDeadline } from '../time/business-days.ts';
import { documentBalance } from './balance.ts';
import { effectiveSince, invoiceCancellationRecord, isInEffect, recordStatus } from './cancellation.ts';
import { withDerivedFields } from './derived-fields.ts';
import { financialSummary, type FinancialSummary } from './summary.ts';
import { loadSummaryContext } from './summary-context.ts';
import { withSyncStamp } from '../db/writes-in-flight.ts';
import { parseDateTime } from '../time/date-time.ts';

export interface RecordCancellationStatusInput {
  id: string;
  estado: SatEstado;
  estatusCancelacion: SatEstatusCancelacion;
  /** ISO date-time of the SAT's answer; default now. */
  consultedAt?: string;
}

/** Status codes a cancelled document carries, and those it returns to when a cancellation is undone. */
const STATUS_CODE = { cancelled: 9, paid: 6, invoiced: 4 } as const;

const conflict = (detail: string): ApiError => new ApiError(409, 'Conflict', [detail]);

/** The answer checked against the SAT's own pairs and the request it is about. */
function checkAnswer(input: RecordCancellationStatusInput, record: CanceledRecord | null, uuid: string, at: number, now: number): CanceledRecord {
  const meaning = SAT_ANSWERS[input.estatusCancelacion];
  if (meaning.estado !== input.estado) {
    throw invalidBody([`estatusCancelacion: ${input.estatusCancelacion} goes with estado ${meaning.estado}, not ${input.estado}`]);
  }
  // A schema-valid instant that conflicts with the clock, like the two checks below: 409, not 400.
  if (at > now + 60_000)
    throw conflict(
      `consultedAt ${new Date(at).toISOString()} is later than the service's clock (${new Date(now).toISOString()}): the SAT cannot have answered yet`,
    );
  if (record === null) {
    throw conflict(
      `no cancellation request or SAT acknowledgement of invoice ${uuid} was imported: import it first (POST /api/imports); the answer needs the request's motive`,
    );
  }
  const requestedAt = record.requestedAt ?? record.date;
  if (at < requestedAt)
    throw conflict(`consultedAt ${new Date(at).toISOString()} is before the cancellation was requested (${new Date(requestedAt).toISOString()})`);
  if (meaning.status === 'expired' && at < receiverDeadline(requestedAt)) {
    throw conflict(
      `Plazo vencido (tacit acceptance) cannot come before the receiver's 3 business days end (CFF art. 12 and 29-A): requested ${new Date(requestedAt).toISOString()}, the receiver may answer until ${new Date(receiverDeadline(requestedAt)).toISOString()}`,
    );
  }
  const moved: CanceledRecord = {
    ...record,
    status: meaning.status,
    date: effectiveSince(meaning.status, at, requestedAt),
    requestedAt,
    statusSource: 'status-service',
    satStatus: input.estatusCancelacion,
  };
  checkForward(record, moved, uuid, at);
  return moved;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * A status that would move backwards: from a cancellation in effect, or to an answer older than the recorded one. A
 * record not in effect is dated when it was consulted, so `consultedAt` is compared with its date; one in effect is final.
 */
function checkForward(record: CanceledRecord, moved: CanceledRecord, uuid: string, consultedAt: number): void {
  const recorded = `${record.satStatus ?? recordStatus(record)} (recorded from ${record.statusSource ?? 'a cancellation record'}, dated ${iso(record.date)})`;
  if (isInEffect(record) && !isInEffect(moved)) {
    throw conflict(
      `invoice ${uuid} is cancelled: ${recorded}; a cancellation in effect is final (the SAT cannot undo it), so ${moved.satStatus} is not recorded`,
    );
  }
  if (record.statusSource !== 'status-service') return;
  const same = record.satStatus === moved.satStatus;
  if (consultedAt < record.date || (consultedAt === record.date && !same)) {
    throw conflict(`the status of invoice ${uuid} is ${recorded}; an answer consulted at ${iso(consultedAt)} is not newer, so it does not replace it`);
  }
}

/** A document that was not imported, with its invoice's record moved; its status code follows the cancellation. */
function movedInPlace(doc: FinancialDocument, record: CanceledRecord, moved: CanceledRecord, now: Date): FinancialDocument {
  const next: FinancialDocument = { ...doc, canceled: doc.canceled.map((c) => (c === record ? moved : c)), lastUpdate: now.toISOString() };
  if (isInEffect(moved)) next.status = STATUS_CODE.cancelled;
  else if (doc.status === STATUS_CODE.cancelled) next.status = documentBalance(next).isFullyPaid ? STATUS_CODE.paid : STATUS_CODE.invoiced;
  return next;
}

export async function recordCancellationStatus(ctx: ServiceContext, tenant: string, input: RecordCancellationStatusInput): Promise<FinancialSummary> {
  // Stamped once registered as a write in flight, until written: a sync meanwhile resumes before it (lib/db/writes-in-flight.ts).
  await withSyncStamp(
    ctx.db,
    tenant,
    () => ctx.now().getTime(),
    (stamp) => recordAnswer(ctx, tenant, input, new Date(stamp)),
  );
  const after = await findFinancialDocById(ctx.db, tenant, input.id, ctx.config.queryTimeoutMs);
  if (!after) throw notFound('no such financial document for this tenant');
  return financialSummary(after, await loadSummaryContext(ctx, tenant));
}

/** Records the answer over the document as read (the ledger's fact, or the document in place), stamped `now`. */
async function recordAnswer(ctx: ServiceContext, tenant: string, input: RecordCancellationStatusInput, now: Date): Promise<void> {
  const timeout = ctx.config.queryTimeoutMs;
  const at = input.consultedAt === undefined ? now.getTime() : parseDateTime(input.consultedAt);
  const doc = await findFinancialDocById(ctx.db, tenant, input.id, timeout);
  if (!doc) throw notFound('no such financial document for this tenant');
  const uuid = doc.invoice.uuid;
  const record = invoiceCancellationRecord(doc);
  const moved = checkAnswer(input, record, uuid, at, now.getTime());

  const imported = doc._id === financialDocId(tenant, uuid) && (await isImportedInvoice(ctx.db, tenant, uuid));
  if (imported) {
    const fact: CancellationStatusFact = { kind: 'cancellationStatus', uuid, estado: input.estado, estatusCancelacion: input.estatusCancelacion, date: at };
    if (!(await recordStatusAnswer(ctx, tenant, fact, now)))
      throw conflict(`another answer about invoice ${uuid} was recorded meanwhile: read it again and retry`);
  } else {
    const same =
      record!.status === moved.status && record!.date === moved.date && record!.satStatus === moved.satStatus && record!.statusSource === moved.statusSource;
    if (!same) {
      const next = withDerivedFields(movedInPlace(doc, record!, moved, now));
      if (!(await replaceFinancialDocIfUnchanged(ctx.db, next, doc.lastUpdate, timeout))) {
        throw conflict(`financial document ${doc.id} was changed by another write meanwhile: read it again and retry`);
      }
    }
  }
}
