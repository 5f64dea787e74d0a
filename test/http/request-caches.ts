/**
 * Per-request reads that are cached (issue 9, section 3), through HTTP:
 * - a valid API key is resolved from the database at most once per API_KEY_CACHE_TTL_MS; a key
 *   revoked by another process (another Db handle: `npm run apikey -- revoke`, another instance)
 *   stops working within that bound, one revoked through this process at once;
 * - an unknown key is refused without a database read for API_KEY_NEGATIVE_CACHE_TTL_MS: a key
 *   created by another process after being tried works once that time has passed;
 * - a tenant's settings are read at most once per SETTINGS_CACHE_TTL_MS; a change written
 *   elsewhere shows within that bound, one saved through this process at once.
 */
import type { Test } from 'tap';
import { startHarness, TENANT_A } from '../helpers/harness.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { createApiKey, revokeApiKey, storeApiKey } from '../../lib/auth/api-keys.ts';
import { financialDocs, tenantSettings } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { getTenantSettings, saveTenantSettings } from '../../lib/settings/settings-repo.ts';
import { makeFinancialDoc, freight, CLIENT_COMPANY } from '../fixtures/documents.ts';

export default async function requestCachesTests(t: Test): Promise<void> {
  const TTL_MS = 1_000;
  const h = await startHarness(t, {
    env: { API_KEY_CACHE_TTL_MS: String(TTL_MS), API_KEY_NEGATIVE_CACHE_TTL_MS: String(TTL_MS), SETTINGS_CACHE_TTL_MS: String(TTL_MS) },
  });
  // "Another process": its own connection and Db handle, so nothing it does touches this app's caches.
  const other = await connectMongo(h.engine.uri, h.db.databaseName, { serverSelectionTimeoutMS: 2000 });
  t.teardown(() => other.client.close(true));
  const storeApiKeyElsewhere = (key: string) => storeApiKey(other.db, { key, tenant: TENANT_A, label: 'stored elsewhere' });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const ROUTE = '/api/financial-docs';
  const get = (key: string) => h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': key } });

  await financialDocs(h.db).insertOne(
    withDerivedFields(makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-10T10:00', status: 4, concepts: [freight(1_000)] })),
  );

  t.test('a key revoked by another process stops working within API_KEY_CACHE_TTL_MS', async (t) => {
    const { key, record } = await createApiKey(h.db, TENANT_A, 'revoked elsewhere');
    t.equal((await get(key)).statusCode, 200, 'valid key');
    t.same(await revokeApiKey(other.db, record._id), { revoked: 1, ambiguous: false });
    t.equal((await get(key)).statusCode, 200, 'still trusted from the cache right after (no database read)');
    await sleep(TTL_MS + 200);
    const res = await get(key);
    t.equal(res.statusCode, 401, 'rejected once the TTL has passed');
    t.same(res.json().error.details, ['unknown or revoked API key']);
  });

  t.test('a key revoked through this process stops working at once', async (t) => {
    const { key, record } = await createApiKey(h.db, TENANT_A, 'revoked here');
    t.equal((await get(key)).statusCode, 200);
    await revokeApiKey(h.db, record._id);
    t.equal((await get(key)).statusCode, 401);
  });

  t.test('a new key works at once (unknown keys are not cached)', async (t) => {
    const { key } = await createApiKey(other.db, TENANT_A, 'created elsewhere');
    t.equal((await get(key)).statusCode, 200);
  });

  t.test('an unknown key is refused from the cache; created elsewhere, it works within API_KEY_NEGATIVE_CACHE_TTL_MS', async (t) => {
    const key = 'fbo_tried_before_it_existed_000000001';
    t.equal((await get(key)).statusCode, 401, 'unknown');
    await storeApiKeyElsewhere(key);
    t.equal((await get(key)).statusCode, 401, 'created by another process: still refused from the negative cache right after');
    await sleep(TTL_MS + 200);
    t.equal((await get(key)).statusCode, 200, 'accepted once the negative TTL has passed');
  });

  t.test('tenant settings changed elsewhere show within SETTINGS_CACHE_TTL_MS; saved here, at once', async (t) => {
    const label = async () => (await get((await createApiKey(h.db, TENANT_A, 'reader')).key)).json().data[0].status.label as string;
    await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, TENANT_A)), statusLabels: { '4': 'Facturado' } });
    t.equal(await label(), 'Facturado', 'saved through this process: at once');
    await tenantSettings(other.db).updateOne({ _id: TENANT_A }, { $set: { statusLabels: { '4': 'Emitida' } } });
    t.equal(await label(), 'Facturado', 'changed elsewhere: the cached settings still serve');
    await sleep(TTL_MS + 200);
    t.equal(await label(), 'Emitida', 'changed elsewhere: seen once the TTL has passed');
  });
}
