import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { COLLECTIONS } from './collections.ts';
import { isDuplicateKeyError } from './duplicate-key.ts';

interface SecretDoc {
  _id: string;
  value: string;
  createdAt: Date;
}

const cache = new WeakMap<Db, Map<string, Promise<string>>>();

/**
 * A random 32-byte secret created once per database and shared by every
 * instance using it, so what one instance signs (pagination cursors) another
 * accepts, across restarts, with nothing to configure.
 */
export async function serviceSecret(db: Db, name: string): Promise<Buffer> {
  return Buffer.from(await serviceValue(db, name, () => randomBytes(32).toString('base64')), 'base64');
}

/**
 * A secret value made by `create` once per database (the first instance to ask stores it, every
 * other reads that one): the OAuth server's signing key (a private JWK) as well as the random secrets above.
 */
export function serviceValue(db: Db, name: string, create: () => string): Promise<string> {
  let byName = cache.get(db);
  if (!byName) cache.set(db, (byName = new Map<string, Promise<string>>()));
  let secret = byName.get(name);
  if (!secret) {
    secret = loadValue(db, name, create);
    byName.set(name, secret);
    secret.catch(() => byName.delete(name)); // a failed read is retried on the next request
  }
  return secret;
}

async function loadValue(db: Db, name: string, create: () => string): Promise<string> {
  const coll = db.collection<SecretDoc>(COLLECTIONS.serviceSecrets);
  try {
    await coll.updateOne({ _id: name }, { $setOnInsert: { value: create(), createdAt: new Date() } }, { upsert: true });
  } catch (err) {
    // Two instances creating it at once: one insert wins, the other reads it.
    if (!isDuplicateKeyError(err)) throw err;
  }
  const doc = await coll.findOne({ _id: name });
  if (!doc) throw new Error(`service secret ${name} missing after upsert`);
  return doc.value;
}
