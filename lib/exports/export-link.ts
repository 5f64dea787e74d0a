/**
 * Signed, expiring links to an export's file (`GET /api/shared-exports/{token}`), as the links to
 * original XML files are signed (lib/originals/signed-link.ts): `<payload>.<signature>`, both
 * base64url; the payload the export's 12-byte id, the expiry (Unix seconds, 4 bytes) and the
 * tenant's RFC; the signature HMAC-SHA256 over it with a secret of the service of its own. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface ExportLinkClaims {
  tenant: string;
  exportId: string;
  expiresAt: number;
}

export const EXPORT_LINK_SECRET = 'export-links';

const ID_BYTES = 12;
const HEAD_BYTES = ID_BYTES + 4;
const sign = (secret: Buffer, body: string): string => createHmac('sha256', secret).update(body).digest('base64url');

export function signExportLink(secret: Buffer, claims: ExportLinkClaims): string {
  const head = Buffer.alloc(HEAD_BYTES);
  Buffer.from(claims.exportId, 'hex').copy(head, 0);
  head.writeUInt32BE(claims.expiresAt, ID_BYTES);
  const body = Buffer.concat([head, Buffer.from(claims.tenant, 'utf8')]).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

/** The claims of an unexpired token this service signed; null otherwise, whatever the reason. */
export function verifyExportLink(secret: Buffer, token: string, nowSeconds: number): ExportLinkClaims | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const body = token.slice(0, dot);
  // The signature's text is compared, not its decoded bytes: base64url of 32 bytes leaves 2 bits of its last character
  // unused, which a decoder ignores, so four spellings of one signature would otherwise open the same file.
  const given = Buffer.from(token.slice(dot + 1), 'utf8');
  const expected = Buffer.from(sign(secret, body), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const payload = Buffer.from(body, 'base64url');
  if (payload.length <= HEAD_BYTES) return null;
  const expiresAt = payload.readUInt32BE(ID_BYTES);
  if (nowSeconds >= expiresAt) return null;
  return { tenant: payload.subarray(HEAD_BYTES).toString('utf8'), exportId: payload.subarray(0, ID_BYTES).toString('hex'), expiresAt };
}
