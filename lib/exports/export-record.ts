/**
 * An export (docs/exports.md): what was asked (dataset, format, the list's or report's query), where
 * its job stands, and the file once written. Stored in `exports` before the request is answered, so
 * nothing acknowledged is lost; the file's bytes are in `exportChunks`. Pure.
 */
import type { Binary, ObjectId } from 'mongodb';

export const EXPORT_FORMATS = ['csv', 'xlsx', 'zip'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
export type ExportStatus = 'queued' | 'running' | 'ready' | 'failed' | 'expired';

export interface ExportFile {
  name: string;
  contentType: string;
  size: number;
  sha256: string;
  chunks: number;
}

export interface ExportDocument {
  _id: ObjectId;
  tenant: string;
  dataset: string;
  format: ExportFormat;
  /** The table a CSV holds (null: the dataset's first). */
  table: string | null;
  /** The operation's query as validated (defaults present). */
  query: Record<string, unknown>;
  status: Exclude<ExportStatus, 'expired'> | 'expired';
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Rows written so far (a zip: documents). */
  rows: number;
  /** Rows in all, when the dataset knows it before its rows. */
  total: number | null;
  /** Runs started (a run that threw is tried again up to EXPORT_MAX_ATTEMPTS). */
  attempts: number;
  file: ExportFile | null;
  /** When the file and its link stop being served (set when ready). */
  expiresAt: Date | null;
  /** A list read with `updatedSince`: where the next incremental sync resumes (set when ready; absent on older records). */
  syncFrom?: Date | null;
  error: string | null;
}

/** One piece of an export's file, in order `n`. */
export interface ExportChunk {
  _id: ObjectId;
  tenant: string;
  exportId: ObjectId;
  n: number;
  data: Binary;
}

export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  zip: 'application/zip',
};

/** The status a reader sees: a ready export past its expiry is expired even before the cleanup job runs. */
export const statusAt = (doc: Pick<ExportDocument, 'status' | 'expiresAt'>, now: Date): ExportStatus =>
  doc.status === 'ready' && doc.expiresAt !== null && now.getTime() >= doc.expiresAt.getTime() ? 'expired' : doc.status;
