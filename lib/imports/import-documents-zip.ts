/**
 * importDocumentsZip (POST /api/imports/zip): a zip archive as the body, its entries read exactly
 * as importDocuments reads them (its own operation so that each request body has one media type).
 */
import type { ServiceContext } from '../context.ts';
import { importDocuments, type ImportReport } from './import-documents.ts';

export function importDocumentsZip(ctx: ServiceContext, tenant: string, zip: Buffer, opts: { signal?: AbortSignal } = {}): Promise<ImportReport> {
  return importDocuments(ctx, tenant, [{ name: 'upload.zip', data: zip, zip: true }], opts);
}
