/**
 * Signing secrets: generated here, kept encrypted at rest with AES-256-GCM
 * (random 96-bit IV per encryption, 128-bit tag; the webhook id is bound in as
 * additional data so a ciphertext cannot be moved to another endpoint).
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface EncryptedSecret {
  /** base64 of IV (12) + tag (16) + ciphertext. */
  box: string;
}

export const SECRET_PREFIX = 'whsec_';

/** `whsec_` + 32 random bytes as base64url (43 characters). */
export function generateSecret(): string {
  return SECRET_PREFIX + randomBytes(32).toString('base64url');
}

/** What the API shows of a secret: the prefix and 4 characters. */
export const secretHint = (secret: string): string => secret.slice(0, SECRET_PREFIX.length + 4);

export function encryptSecret(key: Buffer, secret: string, boundTo: string): EncryptedSecret {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(boundTo, 'utf8'));
  const data = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return { box: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64') };
}

/** Throws when the key is not the one that encrypted it or the box was altered. */
export function decryptSecret(key: Buffer, enc: EncryptedSecret, boundTo: string): string {
  const raw = Buffer.from(enc.box, 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAAD(Buffer.from(boundTo, 'utf8'));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
