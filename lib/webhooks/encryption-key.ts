/**
 * Where the key that encrypts signing secrets comes from:
 * - WEBHOOK_ENCRYPTION_KEY, always preferred;
 * - on the embedded engine (no MONGODB_URI), a key generated once into
 *   DATA_DIR/webhook-encryption.key (mode 0600), beside the data it protects,
 *   shared by `npm start` and `npm run worker` on the same DATA_DIR;
 * - with MONGODB_URI and no key: none. Webhook operations then answer 503:
 *   a production database should not hold secrets whose key lives on one
 *   instance's disk.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import type { AppConfig } from '../config.ts';

export const KEY_FILE = 'webhook-encryption.key';

export async function resolveWebhookEncryptionKey(config: Pick<AppConfig, 'webhooks' | 'mongodbUri' | 'dataDir'>): Promise<Buffer | null> {
  if (config.webhooks.encryptionKey) return config.webhooks.encryptionKey;
  if (config.mongodbUri) return null;
  const file = path.join(path.resolve(config.dataDir), KEY_FILE);
  const existing = await readFile(file, 'utf8').catch(() => null);
  if (existing !== null) {
    const key = Buffer.from(existing.trim(), 'hex');
    if (key.length !== 32) throw new Error(`${file} does not hold a 32-byte hex key`);
    return key;
  }
  await mkdir(path.dirname(file), { recursive: true });
  const key = randomBytes(32);
  // 'wx': two processes starting at once cannot both write one; the loser reads the winner's.
  try {
    await writeFile(file, key.toString('hex') + '\n', { mode: 0o600, flag: 'wx' });
    return key;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
  }
}
