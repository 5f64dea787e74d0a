/**
 * The received CFDIs' stored `category` follows the tenant's category rules (spec: PUT
 * /api/received-category-rules, "the `category` filter and each document agree with the rules from
 * this answer on"), whatever instance writes and whatever fails:
 * - an import on another instance, whose settings cache still holds the old rules, after the
 *   change was answered (through MCP here), stores the new rules' category;
 * - a change cut short by a failure of the documents' update (answered 503) is finished by the next
 *   start (prepareDatabase, what `npm start` runs before it listens).
 * Diesel (15101505) is `fuel` by default (lib/received/received-category.ts); the rule makes it
 * `maintenance`.
 */
import type { Test } from 'tap';
import { startHarness, testConfig, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml } from '../helpers/cfdi-builder.ts';
import { startMongoProxy } from '../helpers/mongo-proxy.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { buildApp } from '../../handlers/app.ts';
import { prepareDatabase } from '../../lib/prepare-database.ts';
import { receivedDocs } from '../../lib/received/received-repo.ts';
import { tenantSettings } from '../../lib/db/collections.ts';

export default async function categoryRulesConsistencyTests(t: Test): Promise<void> {
  // A settings cache that outlives the test: the other instance keeps the rules it read.
  const h = await startHarness(t, { env: { SETTINGS_CACHE_TTL_MS: '600000' } });
  const U = (n: number): string => `9D1C0E55-00${String(n).padStart(2, '0')}-4000-8000-0000000009${String(n).padStart(2, '0')}`;
  const diesel = (n: number): string =>
    invoiceXml({
      issuer: 'PGA010101AB1',
      issuerName: 'GASOLINERA DEL GOLFO',
      receiver: TENANT_A,
      uuid: U(n),
      fecha: '2026-10-03T09:00:00',
      lines: [{ code: '15101505', desc: 'Diesel', amount: 43_100, transfers: [{ tax: '002', rate: 0.16 }] }],
    }).xml;
  const headers = { 'x-api-key': KEY_A, 'content-type': 'application/json' };
  const importThrough = async (app: typeof h.app, n: number) => {
    const res = await app.inject({ method: 'POST', url: '/api/imports', headers, payload: { files: [{ name: `r${n}.xml`, content: diesel(n) }] } });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
  };
  const categoryOf = async (n: number) =>
    (await h.app.inject({ method: 'GET', url: `/api/received-docs/${TENANT_A}-RCFDI-${U(n)}`, headers: { 'x-api-key': KEY_A } })).json<{ category: string }>()
      .category;
  const countOf = async (category: string) =>
    (await h.app.inject({ method: 'GET', url: `/api/received-docs?category=${category}`, headers: { 'x-api-key': KEY_A } })).json<{ meta: { total: number } }>()
      .meta.total;
  const reset = async () => {
    await receivedDocs(h.db).deleteMany({});
    await tenantSettings(h.db).updateOne({ _id: TENANT_A }, { $unset: { receivedCategoryRules: '', receivedCategoryRulesPending: '' } });
  };
  async function otherInstance(uri: string) {
    const other = await connectMongo(uri, h.db.databaseName, { serverSelectionTimeoutMS: 2000 });
    const app = await buildApp({ config: testConfig({ SETTINGS_CACHE_TTL_MS: '600000' }), db: other.db, logger: false });
    t.teardown(async () => {
      await app.close();
      await other.client.close(true);
    });
    return app;
  }

  t.test('an import on an instance that cached the old rules stores the category of the rules answered before it', async (t) => {
    await reset();
    const b = await otherInstance(h.engine.uri);
    t.equal((await b.inject({ method: 'GET', url: '/api/received-docs', headers: { 'x-api-key': KEY_A } })).statusCode, 200, 'B read the settings');
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=settings');
    const put = (await client.callTool({
      name: 'setReceivedCategoryRules',
      arguments: { body: { rules: [{ code: '15101505', category: 'maintenance' }] } },
    })) as {
      isError?: boolean;
    };
    t.notOk(put.isError, 'the rules are answered');
    await importThrough(b, 1);
    t.equal(await categoryOf(1), 'maintenance');
    t.equal(await countOf('fuel'), 0);
    t.equal(await countOf('maintenance'), 1);
  });

  t.test('a change cut short by a failure is finished at the next start', async (t) => {
    await reset();
    await importThrough(h.app, 2);
    t.equal(await categoryOf(2), 'fuel');
    const proxy = await startMongoProxy({ port: Number(new URL(h.engine.uri).port) });
    t.teardown(() => proxy.close());
    const b = await otherInstance(proxy.uri);
    // The documents' update fails, as a query time-out (or the process dying there) would cut it.
    proxy.intercept = (cmd) =>
      cmd.name === 'update' && cmd.collection === 'receivedDocs'
        ? { ok: 0, code: 50, codeName: 'MaxTimeMSExpired', errmsg: 'operation exceeded time limit' }
        : null;
    const put = await b.inject({
      method: 'PUT',
      url: '/api/received-category-rules',
      headers,
      payload: { rules: [{ code: '15101505', category: 'maintenance' }] },
    });
    t.equal(put.statusCode, 503, 'not answered as done');
    proxy.intercept = null;
    t.equal(await categoryOf(2), 'fuel', 'cut short: the document still follows the old rules');
    await prepareDatabase(h.db);
    const rules = (await h.app.inject({ method: 'GET', url: '/api/received-category-rules', headers: { 'x-api-key': KEY_A } })).json<{
      rules: { code: string; category: string }[];
    }>();
    t.match(rules.rules, [{ code: '15101505', category: 'maintenance' }], 'the rules stored');
    t.equal(await categoryOf(2), 'maintenance', 'and the document follows them');
    t.equal(await countOf('fuel'), 0);
    t.equal((await tenantSettings(h.db).findOne({ _id: TENANT_A }))?.receivedCategoryRulesPending, undefined, 'nothing left pending');
  });
}
