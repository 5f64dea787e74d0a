/**
 * The addresses of kept originals (docs/domain.md, "The original XML") and of their printed form
 * ("The printed form"): the authenticated downloads `GET /api/cfdi-originals/{uuid}` and
 * `.../{uuid}/pdf`, the signed links `GET /api/shared-originals/{token}` and `.../{token}/pdf`,
 * all under DOCUMENT_BASE_URL (the service's address as clients reach it). Pure.
 */
import { isOriginalKey } from './original-record.ts';

export const originalPath = (uuid: string): string => `/api/cfdi-originals/${encodeURIComponent(uuid.toUpperCase())}`;
export const sharedOriginalPath = (token: string): string => `/api/shared-originals/${encodeURIComponent(token)}`;
/** What turns an original's address (authenticated or signed) into its printed form's. */
export const SHARED_PRINTED_FORM_SUFFIX = '/pdf';
export const printedFormPath = (uuid: string): string => `${originalPath(uuid)}${SHARED_PRINTED_FORM_SUFFIX}`;

/**
 * The `xml` link of a document: its original's download when the stored key says it is kept,
 * else null (generated demo data, documents imported before originals were kept) — never a dead link.
 */
export const originalLinkResolver =
  (baseUrl: string) =>
  (uuid: string, key: string | null | undefined): string | null =>
    isOriginalKey(key) ? `${baseUrl}${originalPath(uuid)}` : null;

/** The `pdf` link of a document: its printed form, rendered from the kept original; null exactly when `xml` is. */
export const printedFormLinkResolver =
  (baseUrl: string) =>
  (uuid: string, key: string | null | undefined): string | null =>
    isOriginalKey(key) ? `${baseUrl}${printedFormPath(uuid)}` : null;
