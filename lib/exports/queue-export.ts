/**
 * Queues an export (docs/exports.md) for the export worker: what every `POST /api/exports/datasets/<dataset>`
 * operation does once its route has validated its query (the JSON operation's own parameters, so the
 * filters are already valid, their defaults present). The record and its job are stored before the
 * answer: a restart loses nothing acknowledged.
 */
import { ObjectId } from 'mongodb';
import { quotaExceeded } from '../http/api-error.ts';
import type { ExportDocument, ExportFormat } from './export-record.ts';
import { exportView, type ExportView } from './export-view.ts';
import { insertExport } from './exports-repo.ts';
import { claimExportSlot, releaseExportSlot } from './export-slots-repo.ts';
import type { ExportRunContext } from './run-export.ts';

export interface QueuedExport {
  dataset: string;
  format: ExportFormat;
  /** The table a CSV holds (null: the dataset's first; an XLSX or zip has no choice). */
  table: string | null;
  /** The dataset's filters as validated: what the run hands its domain function. */
  query: Record<string, unknown>;
}

/** The record of an export just queued: nothing run yet, no file. */
export function queuedExportDocument(_id: ObjectId, tenant: string, input: QueuedExport, now: Date): ExportDocument {
  return {
    _id,
    tenant,
    dataset: input.dataset,
    format: input.format,
    table: input.table,
    query: input.query,
    status: 'queued',
    createdAt: now,
    startedAt: null,
    finishedAt: null,
    rows: 0,
    total: null,
    attempts: 0,
    file: null,
    expiresAt: null,
    error: null,
  };
}

export async function queueExport(ctx: ExportRunContext, tenant: string, input: QueuedExport): Promise<ExportView> {
  const _id = new ObjectId();
  // A slot of the tenant's EXPORT_MAX_ACTIVE, taken atomically (export-slot.ts): concurrent requests never pass the cap together.
  if (!(await claimExportSlot(ctx.db, tenant, _id, ctx.exports.maxActive)))
    throw quotaExceeded(429, `this tenant has ${ctx.exports.maxActive} exports queued or running (EXPORT_MAX_ACTIVE); try again when one is ready`, 10);
  const now = ctx.now();
  const doc = queuedExportDocument(_id, tenant, input, now);
  try {
    await insertExport(ctx.db, doc, new Date());
  } catch (err) {
    // Not acknowledged: the slot is free again (if this fails too, the next request over the cap reclaims it).
    await releaseExportSlot(ctx.db, tenant, _id).catch(() => undefined);
    throw err;
  }
  return exportView(ctx, doc);
}

/** What a list's or report's export operation takes: its JSON operation's query, plus the file's format and (a report's) table. */
export interface TableExportQuery {
  readonly format: 'csv' | 'xlsx';
  readonly table?: string;
}

/**
 * A list or report as CSV or XLSX: `format` and `table` are the export's, every other parameter the
 * JSON operation's. `table` matters only to a CSV (an XLSX holds every table, so it is not kept there).
 */
export function queueTableExport(ctx: ExportRunContext, tenant: string, dataset: string, query: TableExportQuery): Promise<ExportView> {
  const { format, table, ...filters } = query;
  return queueExport(ctx, tenant, { dataset, format, table: format === 'csv' ? (table ?? null) : null, query: filters });
}
