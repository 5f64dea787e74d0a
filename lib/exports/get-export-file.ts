/**
 * GET /api/exports/{id}/file: a ready export's file, streamed from its chunks. 404 for another
 * tenant's or an unknown export; 409 while it is not ready (queued, running, failed); 404 once
 * expired (the file is deleted).
 */
import type { Readable } from 'node:stream';
import { Readable as ReadableStream } from 'node:stream';
import type { ServiceContext } from '../context.ts';
import { ApiError, notFound } from '../http/api-error.ts';
import { statusAt, type ExportDocument } from './export-record.ts';
import { findExport, readExportChunks } from './exports-repo.ts';

export interface ServedExportFile {
  stream: Readable;
  fileName: string;
  contentType: string;
  size: number;
}

/** The file of a ready export (the caller checked the tenant). */
export function servedExportFile(ctx: ServiceContext, doc: ExportDocument): ServedExportFile {
  const status = statusAt(doc, ctx.now());
  if (status === 'expired' || !doc.file) throw notFound(`export ${doc._id.toHexString()} has expired: its file is no longer kept`);
  return {
    stream: ReadableStream.from(readExportChunks(ctx.db, doc.tenant, doc._id)),
    fileName: doc.file.name,
    contentType: doc.file.contentType,
    size: doc.file.size,
  };
}

export async function getExportFile(ctx: ServiceContext, tenant: string, input: { id: string }): Promise<ServedExportFile> {
  const doc = await findExport(ctx.db, tenant, input.id);
  if (!doc) throw notFound(`no export ${input.id} for this tenant`);
  const status = statusAt(doc, ctx.now());
  if (status === 'queued' || status === 'running' || status === 'failed')
    throw new ApiError(409, 'Conflict', [`export ${input.id} is ${status}: its file is served once it is ready (GET /api/exports/${input.id})`]);
  return servedExportFile(ctx, doc);
}
