/**
 * Signed, expiring links to an export's file (`GET /api/shared-exports/{token}`), signed as the
 * links to original XML files are (lib/shared/signed-token.ts), the id the export's 12 bytes. Pure.
 */
import { signToken, verifyToken } from '../shared/signed-token.ts';

export interface ExportLinkClaims {
  tenant: string;
  exportId: string;
  expiresAt: number;
}

export const EXPORT_LINK_SECRET = 'export-links';

const ID_BYTES = 12;

export const signExportLink = (secret: Buffer, claims: ExportLinkClaims): string =>
  signToken(secret, { tenant: claims.tenant, id: Buffer.from(claims.exportId, 'hex'), expiresAt: claims.expiresAt });

/** The claims of an unexpired token this service signed; null otherwise, whatever the reason. */
export function verifyExportLink(secret: Buffer, token: string, nowSeconds: number): ExportLinkClaims | null {
  const claims = verifyToken(secret, token, ID_BYTES, nowSeconds);
  return claims && { tenant: claims.tenant, exportId: claims.id.toString('hex'), expiresAt: claims.expiresAt };
}
