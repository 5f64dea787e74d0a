/**
 * One run of an export's job (lib/exports/worker.ts): builds the file from scratch into
 * `exportChunks` (whatever an earlier run of a dead worker left is deleted first), records the
 * progress as it goes, marks the export ready with its expiry (or failed, with why) and raises
 * `export.ready` / `export.failed`. The same job runs again at the expiry and deletes the file.
 * A run that throws for another reason than the export's own (the database away) is retried by
 * Agenda up to EXPORT_MAX_ATTEMPTS runs, then the export is failed.
 */
import type { Writable } from 'node:stream';
import type { ObjectId } from 'mongodb';
import type { ServiceContext } from '../context.ts';
import type { ExportSettings } from '../config.ts';
import { ApiError } from '../http/api-error.ts';
import { enqueueEvent } from '../webhooks/events.ts';
import { datasetNamed } from './datasets.ts';
import type { ExportContext } from './export-dataset.ts';
import { CONTENT_TYPES, statusAt, type ExportDocument, type ExportFile } from './export-record.ts';
import { exportView } from './export-view.ts';
import { chunkSink } from './chunk-sink.ts';
import { releaseExportSlot } from './export-slots-repo.ts';
import { NO_METRICS, type ServiceMetrics } from '../metrics/service-metrics.ts';
import { deleteExportChunks, expireExport, exportsCollection, finishExport, recordExportProgress, startExportRun } from './exports-repo.ts';
import { ORIGINALS_DATASET, originalsQuery, writeOriginalsZip } from './originals-zip.ts';
import { writeCsv, writeXlsx, type RowCounter } from './table-writers.ts';

export const EXPORT_MAX_ATTEMPTS = 3;
/** Progress is written every this many rows, or this often, whichever comes first. */
const PROGRESS_ROWS = 1000;
const PROGRESS_MS = 2000;

export interface ExportRunContext extends ServiceContext {
  exports: ExportSettings;
}

/** What the run asks of Agenda: when to run the job again (the expiry), or never. */
export type RunOutcome = { nextRunInMs: number | null };

class ExportRefused extends Error {}

/** Writes the file; resolves with its row count and the total the dataset announced (null: none). */
async function build(ctx: ExportRunContext, doc: ExportDocument, sink: Writable): Promise<{ rows: number; total: number | null; syncFrom: Date | null }> {
  let rows = 0;
  let total: number | null = null;
  let syncFrom: Date | null = null;
  let written = Date.now();
  const exportCtx: ExportContext = {
    db: ctx.db,
    tenant: doc.tenant,
    now: ctx.now(),
    config: ctx.config,
    onTotal: (_table, n) => {
      total = (total ?? 0) + n;
    },
    onSyncFrom: (at) => {
      syncFrom = new Date(at);
    },
  };
  const counted: RowCounter = async () => {
    rows++;
    if (rows % PROGRESS_ROWS === 0 || Date.now() - written >= PROGRESS_MS) {
      written = Date.now();
      await recordExportProgress(ctx.db, doc.tenant, doc._id, rows, total);
    }
  };
  if (doc.dataset === ORIGINALS_DATASET) {
    await writeOriginalsZip(exportCtx, originalsQuery(doc.query), sink, counted);
    return { rows, total, syncFrom };
  }
  const dataset = datasetNamed(doc.dataset);
  if (!dataset) throw new ExportRefused(`the dataset ${doc.dataset} is no longer exported by this service`);
  const tables = await dataset.tables(exportCtx, doc.query);
  if (doc.format === 'xlsx') {
    await writeXlsx(tables, sink, counted);
    return { rows, total, syncFrom };
  }
  const table = doc.table === null ? tables[0] : tables.find((t) => t.name === doc.table);
  if (!table) throw new ExportRefused(`table ${doc.table ?? ''} is not one of the dataset's tables: ${tables.map((t) => t.name).join(', ')}`);
  await writeCsv(table, sink, counted);
  return { rows, total, syncFrom };
}

const fileName = (doc: ExportDocument): string =>
  doc.dataset === ORIGINALS_DATASET
    ? `originals-${String(doc.query.startDate)}-${String(doc.query.endDate)}.zip`
    : `${doc.dataset}${doc.table ? `-${doc.table}` : ''}-${doc._id.toHexString()}.${doc.format}`;

async function raise(ctx: ExportRunContext, doc: ExportDocument): Promise<void> {
  const type = doc.status === 'ready' ? 'export.ready' : 'export.failed';
  await enqueueEvent(
    ctx.db,
    // One event per export and outcome: a run repeated after a crash queues no second delivery.
    {
      id: `evt_${type.replace('.', '_')}_${doc._id.toHexString()}`,
      type,
      createdAt: ctx.now().toISOString(),
      tenant: doc.tenant,
      data: { ...(await exportView(ctx, doc)) },
    },
    ctx.now(),
  );
}

const untilExpiry = (ctx: ExportRunContext, doc: ExportDocument): number => Math.max(0, (doc.expiresAt?.getTime() ?? 0) - ctx.now().getTime());

/**
 * Every run that returns leaves the export ended (ready, failed, expired, gone) or never to be
 * built: its slot of EXPORT_MAX_ACTIVE is released (again, harmlessly, on the expiry run: that
 * covers a worker that died between the outcome and the release). A run that throws to be retried
 * keeps it.
 */
export async function runExport(ctx: ExportRunContext, tenant: string, _id: ObjectId, metrics: ServiceMetrics = NO_METRICS): Promise<RunOutcome> {
  const outcome = await runOnce(ctx, tenant, _id, metrics);
  await releaseExportSlot(ctx.db, tenant, _id);
  return outcome;
}

async function runOnce(ctx: ExportRunContext, tenant: string, _id: ObjectId, metrics: ServiceMetrics): Promise<RunOutcome> {
  const doc = await exportsCollection(ctx.db).findOne({ tenant, _id });
  if (!doc) return { nextRunInMs: null };
  // A run repeated after the process died between an outcome and its event raises the event again (one per export and
  // outcome: a delivery already queued is not queued twice); the expiry's run raises nothing.
  if (doc.status === 'ready') {
    if (statusAt(doc, ctx.now()) !== 'expired') {
      await raise(ctx, doc);
      return { nextRunInMs: untilExpiry(ctx, doc) };
    }
    await expireExport(ctx.db, tenant, _id);
    return { nextRunInMs: null };
  }
  if (doc.status === 'failed') await raise(ctx, doc);
  if (doc.status !== 'queued' && doc.status !== 'running') return { nextRunInMs: null };
  const started = await startExportRun(ctx.db, tenant, _id, ctx.now());
  if (!started) return { nextRunInMs: null };
  await deleteExportChunks(ctx.db, tenant, _id);
  let rows: number;
  let total: number | null;
  let syncFrom: Date | null;
  let file: ExportFile;
  try {
    const sink = chunkSink(ctx.db, tenant, _id);
    ({ rows, total, syncFrom } = await build(ctx, started, sink));
    file = { name: fileName(started), contentType: CONTENT_TYPES[started.format], ...sink.summary() };
  } catch (err) {
    const own = err instanceof ExportRefused || err instanceof ApiError;
    if (!own && started.attempts < EXPORT_MAX_ATTEMPTS) {
      metrics.exportRun('retrying');
      throw err;
    }
    const why = own
      ? err instanceof ApiError
        ? [err.message, ...err.details].join(': ')
        : err.message
      : 'the export could not be written (see the service log)';
    await deleteExportChunks(ctx.db, tenant, _id);
    const failed = await finishExport(ctx.db, tenant, _id, { status: 'failed', error: why }, ctx.now());
    if (failed) {
      metrics.exportRun('failed');
      await raise(ctx, failed);
    }
    if (!own) {
      await releaseExportSlot(ctx.db, tenant, _id);
      throw err;
    }
    return { nextRunInMs: null };
  }
  // Whole seconds: the signed link's expiry is in seconds.
  const expiresAt = new Date((Math.floor(ctx.now().getTime() / 1000) + ctx.exports.ttlSeconds) * 1000);
  const ready = await finishExport(ctx.db, tenant, _id, { status: 'ready', file, rows, total: total ?? rows, expiresAt, syncFrom }, ctx.now());
  if (!ready) return { nextRunInMs: null };
  metrics.exportRun('ready');
  await raise(ctx, ready);
  return { nextRunInMs: untilExpiry(ctx, ready) };
}
