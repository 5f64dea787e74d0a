/**
 * Signed, expiring links to an original XML (POST /api/cfdi-originals/{uuid}/links): a token
 * (lib/shared/signed-token.ts) whose id is the UUID's 16 bytes, signed with a secret of the service
 * (lib/db/service-secrets-repo.ts, shared by every instance). Pure.
 */
import { signToken, verifyToken } from '../shared/signed-token.ts';

export interface LinkClaims {
  tenant: string;
  uuid: string;
  /** Unix seconds after which the link answers 404. */
  expiresAt: number;
}

/** The service secret's name (one secret per purpose). */
export const LINK_SECRET = 'original-links';

const UUID_BYTES = 16;

export const signLink = (secret: Buffer, claims: LinkClaims): string =>
  signToken(secret, { tenant: claims.tenant, id: Buffer.from(claims.uuid.replaceAll('-', ''), 'hex'), expiresAt: claims.expiresAt });

const uuidOf = (bytes: Buffer): string => {
  const hex = bytes.toString('hex').toUpperCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

/** The claims of a token this service signed and that has not expired at `nowSeconds`; null otherwise (whatever the reason). */
export function verifyLink(secret: Buffer, token: string, nowSeconds: number): LinkClaims | null {
  const claims = verifyToken(secret, token, UUID_BYTES, nowSeconds);
  return claims && { tenant: claims.tenant, uuid: uuidOf(claims.id), expiresAt: claims.expiresAt };
}
