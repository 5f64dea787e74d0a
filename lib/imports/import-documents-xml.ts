/**
 * importDocumentsXml (POST /api/imports/xml): one XML file as the body, read exactly as
 * importDocuments reads a file (its own operation so that each request body has one media type).
 */
import type { ServiceContext } from '../context.ts';
import { importDocuments, type ImportReport } from './import-documents.ts';

export function importDocumentsXml(ctx: ServiceContext, tenant: string, xml: Buffer, opts: { signal?: AbortSignal } = {}): Promise<ImportReport> {
  return importDocuments(ctx, tenant, [{ name: 'upload.xml', data: xml }], opts);
}
