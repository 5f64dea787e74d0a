/**
 * Test harness: a fresh in-memory embedded MongoDB (in an area file, a fresh database on
 * the file's one engine: shareEngineInThisProcess; with `onDisk`, the indexed on-disk store
 * `npm start` uses, in a temporary directory), the real driver over the wire, and the app
 * built exactly as production builds it.
 */
import tap, { type Test } from 'tap';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { Db, MongoClient } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { buildApp, type BuildAppOptions } from '../../handlers/app.ts';
import { loadConfig, type AppConfig } from '../../lib/config.ts';
import { storeApiKey } from '../../lib/auth/api-keys.ts';
import { validators } from '../../generated/validators.js';
import { strictErrors, strictValidator } from './strict-decoder.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

export const TENANT_A = 'TGO850101AB1';
export const TENANT_B = 'FNO900202CD2';
export const KEY_A = 'test_key_tenant_a_0000000001';
export const KEY_B = 'test_key_tenant_b_0000000002';
/** Encrypts webhook secrets in tests (any 32 bytes). */
export const TEST_WEBHOOK_KEY = '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff';

export interface Harness {
  engine: EmbeddedMongo;
  client: MongoClient;
  db: Db;
  config: AppConfig;
  app: FastifyInstance;
  /** Rebuilds the app (e.g. with other config) on the same database. */
  rebuild(overrides?: Partial<BuildAppOptions> & { env?: Record<string, string> }): Promise<FastifyInstance>;
}

export function testConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '100000',
    RATE_LIMIT_IP_MAX: '100000',
    REPORT_RATE_LIMIT_MAX: '100000',
    DOCUMENT_BASE_URL: 'https://files.example.test',
    WEBHOOK_ENCRYPTION_KEY: TEST_WEBHOOK_KEY,
    ...env,
  });
}

export interface HarnessOptions {
  env?: Record<string, string>;
  build?: Partial<BuildAppOptions>;
  /** The on-disk store with its secondary indexes (as `npm start` runs it) instead of the scanning in-memory backend: for tests with tens of thousands of documents. */
  onDisk?: boolean;
  /** An engine of its own in an area file, for a test that stops it (shareEngineInThisProcess). */
  ownEngine?: boolean;
}

let sharedEngine: Promise<EmbeddedMongo> | undefined;
let databases = 0;
let sharing = false;
/** Harnesses on the shared engine not torn down yet, and whether the process's tests have ended. */
let openHarnesses = 0;
let testsEnded = false;

/**
 * Called first by an area file (test/<area>.test.ts, its parts queued as subtests right after):
 * its harnesses share one in-memory engine, each on a database of its own (dropped with it),
 * instead of a JVM's start each (~0.5 CPU-s, ~1.3 s). The engine stops once the file's tests have
 * ended and its last harness is torn down. Only there: registered on the root test while a file is
 * still awaiting its first harness, this teardown ended the root test early (tap then ran no more
 * of its subtests).
 */
export function shareEngineInThisProcess(): void {
  if (sharing) return;
  sharing = true;
  tap.teardown(async () => {
    testsEnded = true;
    if (openHarnesses === 0) await stopProcessEngine();
  });
}

function processEngine(): Promise<EmbeddedMongo> {
  sharedEngine ??= startEmbeddedMongo({ shortLived: true });
  return sharedEngine;
}

async function stopProcessEngine(): Promise<void> {
  const engine = sharedEngine;
  sharedEngine = undefined;
  if (engine) await (await engine).stop();
}

export async function startHarness(t: Test, opts: HarnessOptions = {}): Promise<Harness> {
  const dataDir = opts.onDisk ? await mkdtemp(path.join(os.tmpdir(), 'harness-')) : undefined;
  const own = Boolean(dataDir) || opts.ownEngine === true || !sharing;
  const engine = own ? await startEmbeddedMongo({ ...(dataDir ? { dataDir } : {}), shortLived: true }) : await processEngine();
  const { client, db } = await connectMongo(engine.uri, own ? 'test' : `test-${++databases}`, { serverSelectionTimeoutMS: 2000 });
  await ensureIndexes(db);
  await storeApiKey(db, { key: KEY_A, tenant: TENANT_A, label: 'test A' });
  await storeApiKey(db, { key: KEY_B, tenant: TENANT_B, label: 'test B' });
  const config = testConfig(opts.env);
  const h: Harness = {
    engine,
    client,
    db,
    config,
    app: await buildApp({ config, db, logger: false, ...opts.build }),
    async rebuild(overrides = {}) {
      await h.app.close();
      const { env, ...build } = overrides;
      h.config = testConfig(env);
      h.app = await buildApp({ config: h.config, db, logger: false, ...build });
      return h.app;
    },
  };
  if (!own) openHarnesses++;
  t.teardown(async () => {
    try {
      await h.app.close();
      if (own) {
        await client.close(true);
        await engine.stop();
      } else {
        await db.dropDatabase();
        await client.close(true);
      }
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    } finally {
      if (!own && --openHarnesses === 0 && testsEnded) await stopProcessEngine();
    }
  });
  return h;
}

/**
 * Checks a response against the spec: the status must be documented for the
 * operation and the body must match its schema (generated validators), and declare
 * every field it carries (test/helpers/strict-decoder.ts).
 */
export function assertConforms(t: Test, res: LightMyRequestResponse, method: string, route: string): void {
  // JSON is keyed by status alone; another JSON media type (version 1 lists) by status and type.
  const type = String(res.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  const key = `${method} ${route} response:${res.statusCode}${type && type !== 'application/json' && type.endsWith('+json') ? ` ${type}` : ''}`;
  const validate = validators[key];
  if (!validate) {
    t.fail(`status ${res.statusCode} is not documented for ${method} ${route}: ${res.body.slice(0, 300)}`);
    return;
  }
  const ok = validate(res.json());
  t.ok(ok, `${method} ${route} ${res.statusCode} body matches the spec`, { errors: validate.errors?.slice(0, 5) });
  const closed = strictValidator(key)!;
  t.ok(closed(res.json()), `${method} ${route} ${res.statusCode}: every field declared (as strict generated decoders read it)`, {
    errors: strictErrors(closed.errors),
  });
}
