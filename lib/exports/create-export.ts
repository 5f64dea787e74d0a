/**
 * POST /api/exports: an export of a list or report (CSV or XLSX) or of a period's originals (zip),
 * queued for the export worker (docs/exports.md). The query is the JSON operation's own query
 * parameters, validated by that operation's validator (the same messages, located at
 * `query.<name>`); the paging parameters are not taken, since the file holds every page. The
 * record and its job are stored before the answer: a restart loses nothing acknowledged.
 */
import { ObjectId } from 'mongodb';
import { validators } from '../../generated/validators.js';
import { badRequest, quotaExceeded } from '../http/api-error.ts';
import { validationProblems } from '../http/validation-details.ts';
import { datasetNamed } from './datasets.ts';
import type { ExportDataset } from './export-dataset.ts';
import type { ExportDocument, ExportFormat } from './export-record.ts';
import { exportView, type ExportView } from './export-view.ts';
import { insertExport } from './exports-repo.ts';
import { claimExportSlot, releaseExportSlot } from './export-slots-repo.ts';
import { LIST_TABLE, PAGING_PARAMETERS } from './list-datasets.ts';
import { ORIGINALS_DATASET, originalsQuery } from './originals-zip.ts';
import type { ExportRunContext } from './run-export.ts';
import { specOperation } from './spec-columns.ts';

export interface CreateExportInput {
  dataset: string;
  format: ExportFormat;
  query?: Record<string, unknown>;
  table?: string;
}

const invalid = (name: string, detail: string) =>
  badRequest('Invalid request body', [detail], { reason: 'invalid_body', fields: [{ in: 'body', name, detail }] });

/** The query as the dataset's operation validates it (coerced, its defaults present); 400 as that operation answers, at `query.<name>`. */
function validatedQuery(dataset: ExportDataset, raw: Record<string, unknown>): Record<string, unknown> {
  for (const name of PAGING_PARAMETERS)
    if (dataset.kind === 'list' && name in raw)
      throw invalid(`query.${name}`, `query.${name}: an export holds every page of the list; ${PAGING_PARAMETERS.join(', ')} are not taken`);
  const op = specOperation(dataset.operationId);
  const validate = validators[`GET ${op.route} querystring`];
  if (!validate) throw new Error(`no query validator for ${dataset.operationId}`);
  const query = structuredClone(raw);
  if (!validate(query)) {
    const { details, fields } = validationProblems(validate.errors ?? [], 'querystring');
    throw badRequest('Invalid request body', details, {
      reason: 'invalid_body',
      fields: fields.map((f) => ({ in: 'body' as const, name: `query.${f.name}`, detail: f.detail })),
    });
  }
  if ('detail' in query && query.detail !== 'summary') throw invalid('query.detail', 'query.detail: an export holds the summary items (detail=summary)');
  return query;
}

export async function createExport(ctx: ExportRunContext, tenant: string, input: CreateExportInput): Promise<ExportView> {
  const raw = input.query ?? {};
  let query: Record<string, unknown>;
  let table: string | null = input.table ?? null;
  if (input.dataset === ORIGINALS_DATASET) {
    if (input.format !== 'zip') throw invalid('format', `format: the ${ORIGINALS_DATASET} dataset is a zip of files (format zip)`);
    if (table !== null) throw invalid('table', `table: the ${ORIGINALS_DATASET} dataset has no tables`);
    query = { ...originalsQuery(raw) };
  } else {
    const dataset = datasetNamed(input.dataset);
    if (!dataset) throw invalid('dataset', `dataset: unknown dataset ${input.dataset}`);
    if (input.format === 'zip') throw invalid('format', `format: zip is the ${ORIGINALS_DATASET} dataset's; a list or report is csv or xlsx`);
    if (table !== null && input.format === 'xlsx') throw invalid('table', 'table: an XLSX holds every table, one sheet each; table chooses the table of a CSV');
    if (table !== null && dataset.kind === 'list' && table !== LIST_TABLE) throw invalid('table', `table: a list has one table, ${LIST_TABLE}`);
    query = validatedQuery(dataset, raw);
  }
  if (input.format !== 'csv') table = null;
  const _id = new ObjectId();
  // A slot of the tenant's EXPORT_MAX_ACTIVE, taken atomically (export-slot.ts): concurrent requests never pass the cap together.
  if (!(await claimExportSlot(ctx.db, tenant, _id, ctx.exports.maxActive)))
    throw quotaExceeded(429, `this tenant has ${ctx.exports.maxActive} exports queued or running (EXPORT_MAX_ACTIVE); try again when one is ready`, 10);
  const now = ctx.now();
  const doc: ExportDocument = {
    _id,
    tenant,
    dataset: input.dataset,
    format: input.format,
    table,
    query,
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
  try {
    await insertExport(ctx.db, doc, new Date());
  } catch (err) {
    // Not acknowledged: the slot is free again (if this fails too, the next request over the cap reclaims it).
    await releaseExportSlot(ctx.db, tenant, _id).catch(() => undefined);
    throw err;
  }
  return exportView(ctx, doc);
}
