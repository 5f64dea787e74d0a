import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { COLLECTIONS } from './collections.ts';
import { isDuplicateKeyError } from './duplicate-key.ts';

interface SecretDoc {
  _id: string;
  value: string;
  createdAt: Date;
}

const cache = new WeakMap<Db, Map<string, Promise<Buffer>>>();

/**
 * A random 32-byte secret created once per database and shared by every
 * instance using it, so what one instance signs (pagination cursors) another
 * accepts, across restarts, with nothing to configure.
 */
export function serviceSecret(db: Db, name: string): Promise<Buffer> {
  let byName = cache.get(db);
  if (!byName) cache.set(db, (byName = new Map<string, Promise<Buffer>>()));
  let secret = byName.get(name);
  if (!secret) {
    secret = loadSecret(db, name);
    byName.set(name, secret);
    secret.catch(() => byName.delete(name)); // a failed read is retried on the next request
  }
  return secret;
}

async function loadSecret(db: Db, name: string): Promise<Buffer> {
  const coll = db.collection<SecretDoc>(COLLECTIONS.serviceSecrets);
  try {
    await coll.updateOne({ _id: name }, { $setOnInsert: { value: randomBytes(32).toString('base64'), createdAt: new Date() } }, { upsert: true });
  } catch (err) {
    // Two instances creating it at once: one insert wins, the other reads it.
    if (!isDuplicateKeyError(err)) throw err;
  }
  const doc = await coll.findOne({ _id: name });
  if (!doc) throw new Error(`service secret ${name} missing after upsert`);
  return Buffer.from(doc.value, 'base64');
}
