/**
 * Signed, expiring tokens that name one stored thing of one tenant: `<payload>.<signature>`, both
 * base64url; the payload the thing's id bytes, the expiry (Unix seconds, 4 bytes) and the tenant's
 * RFC; the signature HMAC-SHA256 over the payload's text with a secret of the service. Binary, so a
 * token stays within the 100 characters a path parameter may hold. Nothing is stored: the token
 * alone says whose thing, which and until when, and a changed byte breaks the signature. Pure.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface TokenClaims {
  tenant: string;
  /** The id's bytes, of the length the kind of token fixes. */
  id: Buffer;
  /** Unix seconds after which the token opens nothing. */
  expiresAt: number;
}

const sign = (secret: Buffer, body: string): string => createHmac('sha256', secret).update(body).digest('base64url');

export function signToken(secret: Buffer, claims: TokenClaims): string {
  const head = Buffer.alloc(claims.id.length + 4);
  claims.id.copy(head, 0);
  head.writeUInt32BE(claims.expiresAt, claims.id.length);
  const body = Buffer.concat([head, Buffer.from(claims.tenant, 'utf8')]).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

/** The claims of an unexpired token this service signed with an id of `idBytes` bytes; null otherwise, whatever the reason. */
export function verifyToken(secret: Buffer, token: string, idBytes: number, nowSeconds: number): TokenClaims | null {
  const dot = token.indexOf('.');
  if (dot <= 0) return null;
  const body = token.slice(0, dot);
  // The signature's text is compared, not its decoded bytes: base64url of 32 bytes leaves 2 bits of its last character
  // unused, which a decoder ignores, so four spellings of one signature would otherwise open the same thing.
  const given = Buffer.from(token.slice(dot + 1), 'utf8');
  const expected = Buffer.from(sign(secret, body), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const payload = Buffer.from(body, 'base64url');
  if (payload.length <= idBytes + 4) return null;
  const expiresAt = payload.readUInt32BE(idBytes);
  if (nowSeconds >= expiresAt) return null;
  return { tenant: payload.subarray(idBytes + 4).toString('utf8'), id: payload.subarray(0, idBytes), expiresAt };
}
