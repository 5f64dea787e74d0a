/**
 * Get one financial document / one trip by id, through REST and MCP: the
 * summary is the list's item, `detail=full` the stored document, and another
 * tenant's id is 404 like a missing one (ids never leak as 403).
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen, seedTwoTenants } from '../helpers/mcp.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';

export default async function getByIdTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  await seedTwoTenants(h.db);
  const base = await listen(h.app);
  const docA = (await financialDocs(h.db).find({ company: TENANT_A }).sort({ date: -1 }).toArray())[0]!;
  const docB = (await financialDocs(h.db).findOne({ company: TENANT_B }))!;
  const tripA = (await trips(h.db).findOne({ company: TENANT_A, idFinan: { $ne: null } }))!;
  const tripB = (await trips(h.db).findOne({ company: TENANT_B }))!;
  const get = (url: string, key = KEY_A) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

  t.test('financial document: summary equals the list item, full is the stored document without its derived fields and _id', async (t) => {
    const res = await get(`/api/financial-docs/${docA._id}`);
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', '/api/financial-docs/:id');
    const list = await get(`/api/financial-docs?limit=100`);
    const item = list.json().data.find((d: { id: string }) => d.id === docA._id);
    t.same(res.json(), item, 'same summary as in the list');
    const full = await get(`/api/financial-docs/${docA._id}?detail=full`);
    t.equal(full.statusCode, 200);
    assertConforms(t, full, 'GET', '/api/financial-docs/:id');
    // The stored document as it is, but for the fields the service derives on write (never returned)
    // and the store's `_id`, which equals `id` (only the deprecated version 1 list repeats it).
    const { derivedPaymentStatus: _derived, derivedCancellationStatus: _derivedCx, _id: _storeId, ...storedOwnFields } = docA;
    t.equal(_storeId, full.json<{ id: string }>().id, 'its id is the store id');
    t.same(full.json(), storedOwnFields);
  });

  t.test('shipment: summary equals the list item (with the linked document), full is the stored trip with its key named id', async (t) => {
    const res = await get(`/api/shipments/${tripA._id}`);
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', '/api/shipments/:id');
    const list = await get(`/api/shipments?limit=100`);
    const item = list.json().data.find((d: { id: string }) => d.id === tripA._id);
    t.same(res.json(), item, 'same summary as in the list');
    t.equal(res.json().financialLinked.id, tripA.idFinan, 'linked document resolved');
    const full = await get(`/api/shipments/${tripA._id}?detail=full`);
    assertConforms(t, full, 'GET', '/api/shipments/:id');
    // The stored trip with its key named `id`, as the summary names it (the store's `_id`: only version 1 repeats that name),
    // without the months it is stored with for the offload-month list (lib/trips/offload-months.ts).
    const { _id: tripKey, offloadMonths, ...tripFields } = tripA;
    t.ok(Array.isArray(offloadMonths), 'the store holds the months');
    t.same(full.json(), { id: tripKey, ...tripFields });
  });

  t.test("another tenant's id and a missing id are both 404 in the error shape", async (t) => {
    for (const url of [`/api/financial-docs/${docB._id}`, '/api/financial-docs/TGO-FD-999999', `/api/shipments/${tripB._id}`, '/api/shipments/NOPE-1']) {
      const res = await get(url);
      t.equal(res.statusCode, 404, url);
      assertConforms(t, res, 'GET', url.startsWith('/api/shipments') ? '/api/shipments/:id' : '/api/financial-docs/:id');
      t.equal(res.json().error.code, 404);
    }
    t.equal((await get(`/api/financial-docs/${docB._id}`, KEY_B)).statusCode, 200, 'its own tenant sees it');
  });

  t.test('bad ids and parameters are 400; no key is 401 first', async (t) => {
    t.equal((await get('/api/financial-docs/bad%20id')).statusCode, 400);
    t.equal((await get(`/api/financial-docs/${'x'.repeat(65)}`)).statusCode, 400);
    t.equal((await get(`/api/shipments/${tripA._id}?detail=raw`)).statusCode, 400);
    t.equal((await get(`/api/shipments/${tripA._id}?page=2`)).statusCode, 400, 'unknown parameter');
    const anon = await h.app.inject({ method: 'GET', url: '/api/financial-docs/bad%20id' });
    t.equal(anon.statusCode, 401);
  });

  t.test('MCP tools getFinancialDoc and getShipment answer what REST answers', async (t) => {
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const doc = await client.callTool({ name: 'getFinancialDoc', arguments: { id: docA._id } });
    t.notOk(doc.isError);
    t.same(doc.structuredContent, (await get(`/api/financial-docs/${docA._id}`)).json());
    const trip = await client.callTool({ name: 'getShipment', arguments: { id: tripA._id, detail: 'full' } });
    t.same(trip.structuredContent, (await get(`/api/shipments/${tripA._id}?detail=full`)).json(), 'the stored trip as REST answers it (its key named id)');
    const foreign = await client.callTool({ name: 'getShipment', arguments: { id: tripB._id } });
    t.equal(foreign.isError, true);
    t.equal((foreign.structuredContent as { error: { code: number } }).error.code, 404);
  });

  t.test('money-bearing summaries state their currency: the stored one, else the tenant setting', async (t) => {
    const res = await get(`/api/financial-docs/${docA._id}`);
    t.equal(res.json().currency, 'MXN', 'tenant default');
    const trip = await get(`/api/shipments/${tripA._id}`);
    t.equal(trip.json().currency, 'MXN');
    await financialDocs(h.db).updateOne({ _id: docA._id }, { $set: { currency: 'USD' } });
    const usd = await get(`/api/financial-docs/${docA._id}`);
    t.equal(usd.json().currency, 'USD', 'the document says USD');
    assertConforms(t, usd, 'GET', '/api/financial-docs/:id');
    t.equal(
      (await get(`/api/shipments/${tripA._id}`)).json().currency,
      tripA.idFinan === docA._id ? 'USD' : 'MXN',
      "a trip's currency is its linked document's",
    );
    await financialDocs(h.db).updateOne({ _id: docA._id }, { $unset: { currency: '' } });
  });
}
