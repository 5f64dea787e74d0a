/**
 * The addresses of kept originals (docs/domain.md, "The original XML"): the authenticated
 * download `GET /api/cfdi-originals/{uuid}` and the signed link `GET /api/shared-originals/{token}`,
 * both under DOCUMENT_BASE_URL (the service's address as clients reach it). Pure.
 */
import { isOriginalKey } from './original-record.ts';

export const originalPath = (uuid: string): string => `/api/cfdi-originals/${encodeURIComponent(uuid.toUpperCase())}`;
export const sharedOriginalPath = (token: string): string => `/api/shared-originals/${encodeURIComponent(token)}`;

/**
 * The `xml` link of a document: its original's download when the stored key says it is kept,
 * else null (generated demo data, documents imported before originals were kept) — never a dead link.
 */
export const originalLinkResolver =
  (baseUrl: string) =>
  (uuid: string, key: string | null | undefined): string | null =>
    isOriginalKey(key) ? `${baseUrl}${originalPath(uuid)}` : null;
