/**
 * Signed, expiring links to an original XML (POST /api/cfdi-originals/{uuid}/links): a token
 * `<payload>.<signature>`, both base64url, the payload the UUID's 16 bytes, the expiry (Unix
 * seconds, 4 bytes) and the tenant's RFC, the signature HMAC-SHA256 over the payload with a secret
 * of the service (lib/db/service-secrets-repo.ts, shared by every instance). Binary, so the token
 * stays within the 100 characters a path parameter may hold. Nothing is stored: the token alone
 * says whose file, which and until when, and a changed byte breaks the signature. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface LinkClaims {
  tenant: string;
  uuid: string;
  /** Unix seconds after which the link answers 404. */
  expiresAt: number;
}

/** The service secret's name (one secret per purpose). */
export const LINK_SECRET = 'original-links';

const sign = (secret: Buffer, body: string): string => createHmac('sha256', secret).update(body).digest('base64url');

const UUID_BYTES = 16;
const HEAD_BYTES = UUID_BYTES + 4;

export function signLink(secret: Buffer, claims: LinkClaims): string {
  const head = Buffer.alloc(HEAD_BYTES);
  Buffer.from(claims.uuid.replaceAll('-', ''), 'hex').copy(head, 0);
  head.writeUInt32BE(claims.expiresAt, UUID_BYTES);
  const body = Buffer.concat([head, Buffer.from(claims.tenant, 'utf8')]).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

const uuidOf = (bytes: Buffer): string => {
  const hex = bytes.toString('hex').toUpperCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The claims of a token this service signed and that has not expired at `nowSeconds`; null otherwise (whatever the reason). */
export function verifyLink(secret: Buffer, token: string, nowSeconds: number): LinkClaims | null {
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
  const expiresAt = payload.readUInt32BE(UUID_BYTES);
  if (nowSeconds >= expiresAt) return null;
  return { tenant: payload.subarray(HEAD_BYTES).toString('utf8'), uuid: uuidOf(payload.subarray(0, UUID_BYTES)), expiresAt };
}
