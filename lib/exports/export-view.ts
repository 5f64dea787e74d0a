/** An export as the API shows it (spec: Export), and as its webhook events carry it. */
import type { ServiceContext } from '../context.ts';
import { serviceSecret } from '../db/service-secrets-repo.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { statusAt, type ExportDocument, type ExportFormat, type ExportStatus } from './export-record.ts';
import { EXPORT_LINK_SECRET, signExportLink } from './export-link.ts';

export interface ExportView {
  id: string;
  dataset: components['schemas']['Export']['dataset'];
  format: ExportFormat;
  table: string | null;
  query: Record<string, unknown>;
  status: ExportStatus;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  progress: { rows: number; total: number | null };
  file: { name: string; contentType: string; size: number; sha256: string } | null;
  download: { url: string; expiresAt: string } | null;
  /** Why it failed (not `error`: an MCP tool error's structuredContent is the error body). */
  failure: string | null;
  syncFrom: string | null;
}

export const sharedExportPath = (token: string): string => `/api/shared-exports/${token}`;

/** The view at `ctx.now()`: a ready export carries its signed link, valid until the file's expiry. */
export async function exportView(ctx: Pick<ServiceContext, 'db' | 'config' | 'now'>, doc: ExportDocument): Promise<ExportView> {
  const status = statusAt(doc, ctx.now());
  let download: ExportView['download'] = null;
  if (status === 'ready' && doc.expiresAt) {
    const expiresAt = Math.floor(doc.expiresAt.getTime() / 1000);
    const token = signExportLink(await serviceSecret(ctx.db, EXPORT_LINK_SECRET), { tenant: doc.tenant, exportId: doc._id.toHexString(), expiresAt });
    download = { url: `${ctx.config.documentBaseUrl}${sharedExportPath(token)}`, expiresAt: new Date(expiresAt * 1000).toISOString() };
  }
  const file = doc.file && status === 'ready' ? { name: doc.file.name, contentType: doc.file.contentType, size: doc.file.size, sha256: doc.file.sha256 } : null;
  return {
    id: doc._id.toHexString(),
    // The registry's names are the spec's enum (test/exports.test.ts compares them).
    dataset: doc.dataset as ExportView['dataset'],
    format: doc.format,
    table: doc.table,
    query: doc.query,
    status,
    createdAt: doc.createdAt.toISOString(),
    startedAt: doc.startedAt?.toISOString() ?? null,
    finishedAt: doc.finishedAt?.toISOString() ?? null,
    progress: { rows: doc.rows, total: doc.total },
    file,
    download,
    failure: doc.error,
    syncFrom: doc.syncFrom?.toISOString() ?? null,
  };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type ExportViewCheck = Conforms<ExportView, components['schemas']['Export']>;
