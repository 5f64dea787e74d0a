/**
 * Webhook endpoints through HTTP (no worker): create with the secret shown
 * once and stored encrypted, list/get without it, URL policy, the per-tenant
 * limit under concurrent creates, rotation, test events queued, deliveries
 * listed, delete cascades, tenant isolation, scopes, 503 without a key.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TEST_WEBHOOK_KEY, testConfig } from '../helpers/harness.ts';
import { buildApp } from '../../handlers/app.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { webhooks, webhookDeliveries, webhookJobs } from '../../lib/webhooks/webhooks-repo.ts';
import { decryptSecret } from '../../lib/webhooks/secret-box.ts';
import { enqueueAlertEvent } from '../../lib/alerts/alert-events.ts';
import type { AlertRecordDocument } from '../../lib/alerts/records.ts';
import { alertRecord } from '../fixtures/alert-records.ts';

export default async function webhooksApiTests(t: Test): Promise<void> {
  const h = await startHarness(t, { env: { WEBHOOK_MAX_ENDPOINTS: '5' } });
  type Json = Record<string, any>;
  const URL_OK = 'https://hooks.example.com/freight';
  const post = (url: string, body?: unknown, key = KEY_A) =>
    h.app.inject({
      method: 'POST',
      url,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
  const get = (url: string, key = KEY_A) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  const del = (url: string, key = KEY_A) => h.app.inject({ method: 'DELETE', url, headers: { 'x-api-key': key } });
  const create = (over: Json = {}, key = KEY_A) => post('/api/webhooks', { url: URL_OK, events: ['alert.triggered'], ...over }, key);

  t.test('create: 201 with the secret once; stored encrypted; list and get never show it', async (t) => {
    const res = await create({ description: 'ERP inbox' });
    t.equal(res.statusCode, 201, res.body);
    assertConforms(t, res, 'POST', '/api/webhooks');
    const w = res.json();
    t.match(w, { tenant: TENANT_A, url: URL_OK, events: ['alert.triggered'], description: 'ERP inbox' });
    t.match(w.secret, /^whsec_[A-Za-z0-9_-]{43}$/);
    t.equal(w.secretHint, w.secret.slice(0, 10));

    const stored = await webhooks(h.db).findOne({ tenant: TENANT_A });
    t.ok(stored);
    t.notOk(JSON.stringify(stored).includes(w.secret.slice(6)), 'the secret is not stored in clear');
    t.equal(decryptSecret(Buffer.from(TEST_WEBHOOK_KEY, 'hex'), stored!.secret, w.id), w.secret, 'it decrypts with the configured key');
    t.throws(() => decryptSecret(Buffer.alloc(32, 7), stored!.secret, w.id), 'another key cannot decrypt it');
    t.throws(() => decryptSecret(Buffer.from(TEST_WEBHOOK_KEY, 'hex'), stored!.secret, 'aaaaaaaaaaaaaaaaaaaaaaaa'), 'bound to its endpoint');

    const one = await get(`/api/webhooks/${w.id}`);
    t.equal(one.statusCode, 200);
    assertConforms(t, one, 'GET', '/api/webhooks/:id');
    t.notOk('secret' in one.json());
    const list = await get('/api/webhooks');
    t.equal(list.statusCode, 200);
    assertConforms(t, list, 'GET', '/api/webhooks');
    t.equal(list.json().meta.total, 1);
    t.notOk(list.body.includes(w.secret));
    await del(`/api/webhooks/${w.id}`);
  });

  t.test('a description holding half a surrogate pair is a 400, never stored as U+FFFD', async (t) => {
    // JSON can escape a lone surrogate; UTF-8 (BSON) cannot hold it: it came back as U+FFFD after a 201 that echoed it.
    const res = await post('/api/webhooks', { url: URL_OK, events: ['alert.triggered'], description: 'ERP \ud800 inbox' });
    t.equal(res.statusCode, 400, res.body);
    assertConforms(t, res, 'POST', '/api/webhooks');
    t.match(res.json().error.details.join(' '), /description must be well-formed Unicode/);
    t.equal(await webhooks(h.db).countDocuments(), 0, 'nothing stored');
    const pair = await create({ description: 'ERP 🚚 inbox' });
    t.equal(pair.statusCode, 201, 'a whole pair (an emoji) is text like any other');
    t.equal((await get(`/api/webhooks/${pair.json().id}`)).json().description, 'ERP 🚚 inbox');
    await del(`/api/webhooks/${pair.json().id}`);
  });

  t.test('URL policy and validation: 400 with one detail per problem', async (t) => {
    const bad: [string, RegExp][] = [
      ['http://127.0.0.1:9000/hook', /loopback/],
      ['http://localhost/hook', /loopback name/],
      ['http://10.1.2.3/hook', /private/],
      ['http://192.168.1.1/hook', /private/],
      ['http://169.254.169.254/latest/meta-data', /link-local/],
      ['http://[::1]/hook', /loopback/],
      ['http://[::ffff:127.0.0.1]/hook', /loopback/],
      ['http://2130706433/hook', /loopback/],
      ['http://0x7f.1/hook', /loopback/],
      ['http://a.localhost:8080/hook', /loopback name/],
      // Ports: 443 and 80 only by default (WEBHOOK_ALLOWED_PORTS), the schema says so too.
      ['https://hooks.example.com:8443/hook', /port 8443 is not allowed; webhook URLs use port 443 or 80 \(WEBHOOK_ALLOWED_PORTS\)/],
      ['http://hooks.example.com:22/hook', /port 22 is not allowed/],
      // Outside the form the schema states (IPv6 literals, ports beyond 65535): the detail says what the form is.
      ['http://[2001:4860:4860::8888]/hook', /accepted form/],
      ['http://hooks.example.com:70000/hook', /./],
      ['https://user:pass@hooks.example.com/x', /./],
      ['ftp://hooks.example.com/x', /./],
      ['hooks.example.com/x', /./],
    ];
    for (const [url, why] of bad) {
      const res = await create({ url });
      t.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assertConforms(t, res, 'POST', '/api/webhooks');
      t.match(res.json().error.details.join(' '), why, String(url));
    }
    for (const body of [
      { url: URL_OK },
      { url: URL_OK, events: [] },
      { url: URL_OK, events: ['alert.exploded'] },
      { url: URL_OK, events: ['alert.triggered'], secret: 'mine' },
      { url: URL_OK, events: ['alert.triggered', 'alert.triggered'] },
    ]) {
      const res = await post('/api/webhooks', body);
      t.equal(res.statusCode, 400, JSON.stringify(body));
    }
    t.equal(await webhooks(h.db).countDocuments(), 0, 'nothing stored');

    // One endpoint for every event type (there are four: alerts and exports); was refused past two.
    const every = await create({ events: ['alert.triggered', 'alert.cleared', 'export.ready', 'export.failed'] });
    t.equal(every.statusCode, 201, every.body);
    t.same(every.json().events, ['alert.triggered', 'alert.cleared', 'export.ready', 'export.failed']);
    await del(`/api/webhooks/${every.json().id}`);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
    const viaMcp = (await client.callTool({
      name: 'createWebhook',
      arguments: { body: { url: URL_OK, events: ['alert.triggered', 'alert.cleared', 'export.ready', 'export.failed'] } },
    })) as unknown as { isError?: boolean; structuredContent: { id: string; events: string[] } };
    t.notOk(viaMcp.isError, 'MCP: the same');
    t.equal(viaMcp.structuredContent.events.length, 4);
    await del(`/api/webhooks/${viaMcp.structuredContent.id}`);

    for (const url of ['https://hooks.example.com:443/explicit', 'http://hooks.example.com:80/explicit']) {
      const res = await create({ url });
      t.equal(res.statusCode, 201, `${url}: the default ports, spelled out`);
      await del(`/api/webhooks/${res.json().id}`);
    }

    // The documented settings let private receivers on other ports in.
    const app = await buildApp({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '9000' }), db: h.db, logger: false });
    t.teardown(() => app.close());
    const ok = await app.inject({
      method: 'POST',
      url: '/api/webhooks',
      headers: { 'x-api-key': KEY_A },
      payload: { url: 'http://127.0.0.1:9000/hook', events: ['alert.cleared'] },
    });
    t.equal(ok.statusCode, 201, ok.body);
    await del(`/api/webhooks/${ok.json().id}`);
  });

  t.test('IPv6 literals: reserved ranges named and refused; WEBHOOK_ALLOWED_PORTS relaxes only the port, WEBHOOK_ALLOW_PRIVATE the address', async (t) => {
    // Whatever fails here, the next tests start without its endpoints (they count them).
    t.teardown(async () => {
      await webhooks(h.db).deleteMany({ tenant: TENANT_A });
    });
    const withEnv = async (env: Record<string, string>) => {
      const app = await buildApp({ config: testConfig(env), db: h.db, logger: false });
      t.teardown(() => app.close());
      return (url: string) =>
        app.inject({ method: 'POST', url: '/api/webhooks', headers: { 'x-api-key': KEY_A }, payload: { url, events: ['alert.cleared'] } });
    };
    const P = 8443;
    // Each embeds or is an address no tenant should reach through us.
    const literals: [string, RegExp][] = [
      [`http://[::ffff:0:7f00:1]:${P}/hook`, /::ffff:0:7f00:1 is a loopback address/], // IPv4-translated 127.0.0.1
      [`http://[2002:7f00:1::1]:${P}/hook`, /2002:7f00:1::1 is a 6to4 address of a loopback address/], // 6to4 of 127.0.0.1
      [`http://[2002:a00:1::1]:${P}/hook`, /is a 6to4 address of a private address/], // 6to4 of 10.0.0.1
      [`http://[fec0::1]:${P}/hook`, /fec0::1 is a site-local address/],
      [`http://[100::1]:${P}/hook`, /100::1 is a discard-only address/],
      [`http://[2001::1]:${P}/hook`, /2001::1 is a Teredo address/],
      [`http://[2001:10::1]:${P}/hook`, /2001:10::1 is a reserved address/], // ORCHID
      [`http://[64:ff9b:1::7f00:1]:${P}/hook`, /is a NAT64 address/],
      [`http://[3fff::1]:${P}/hook`, /is a documentation address/],
      [`http://[4000::1]:${P}/hook`, /is a reserved address/], // outside global unicast (2000::/3)
    ];
    const anyPort = await withEnv({ WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_ALLOWED_PORTS: '*' });
    for (const [url, why] of literals) {
      const res = await anyPort(url);
      t.equal(res.statusCode, 400, `WEBHOOK_ALLOWED_PORTS=*: ${url}: ${res.body}`);
      assertConforms(t, res, 'POST', '/api/webhooks');
      t.match(res.json().error.details.join(' '), why, url);
      t.match(res.json().error.details.join(' '), /webhook URLs must be public \(WEBHOOK_ALLOW_PRIVATE=true allows it\)/);
      // The default settings name the problem too (the port aside).
      const byDefault = await create({ url: url.replace(`:${P}/`, '/') });
      t.equal(byDefault.statusCode, 400, `default settings: ${url}`);
      t.match(byDefault.json().error.details.join(' '), why, `default settings: ${url}`);
    }
    // A public IPv6 literal is outside the accepted form (schema: IPv6 literals are a 400), whatever the ports.
    for (const url of [`http://[2001:4860:4860::8888]:${P}/hook`, 'http://[2606:4700:4700::1111]/hook']) {
      const res = await anyPort(url);
      t.equal(res.statusCode, 400, `WEBHOOK_ALLOWED_PORTS=*: ${url}: ${res.body}`);
      t.match(res.json().error.details.join(' '), /accepted form/, url);
    }
    // What the port setting is for: a public host name on another port.
    const other = await anyPort(`https://hooks.example.com:${P}/hook`);
    t.equal(other.statusCode, 201, other.body);
    await del(`/api/webhooks/${other.json().id}`);
    const listed = await withEnv({ WEBHOOK_ALLOW_PRIVATE: 'false', WEBHOOK_ALLOWED_PORTS: `443,80,${P}` });
    for (const [url, why] of literals.slice(0, 2)) {
      const res = await listed(url);
      t.equal(res.statusCode, 400, `WEBHOOK_ALLOWED_PORTS=443,80,${P}: ${url}`);
      t.match(res.json().error.details.join(' '), why);
    }
    const listedOk = await listed(`https://hooks.example.com:${P}/hook`);
    t.equal(listedOk.statusCode, 201, listedOk.body);
    await del(`/api/webhooks/${listedOk.json().id}`);

    // WEBHOOK_ALLOW_PRIVATE=true lets in the addresses the policy leaves out (receivers inside the network) ...
    const privateAnyPort = await withEnv({ WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*' });
    for (const [url] of literals) {
      const res = await privateAnyPort(url);
      t.equal(res.statusCode, 201, `WEBHOOK_ALLOW_PRIVATE=true: ${url}: ${res.body}`);
      if (res.statusCode === 201) await del(`/api/webhooks/${res.json().id}`);
    }
    // ... and not other ports: those stay WEBHOOK_ALLOWED_PORTS's.
    const privateOnly = await withEnv({ WEBHOOK_ALLOW_PRIVATE: 'true' });
    const port = await privateOnly(literals[0]![0]);
    t.equal(port.statusCode, 400);
    t.match(port.json().error.details.join(' '), new RegExp(`port ${P} is not allowed`));
    t.equal(await webhooks(h.db).countDocuments(), 0, 'nothing left stored');
  });

  t.test('at most WEBHOOK_MAX_ENDPOINTS per tenant, also under concurrent creates: 409', async (t) => {
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => create({ url: `${URL_OK}/${i}` })));
    const codes = answers.map((r) => r.statusCode).sort();
    t.same(codes, [...Array(5).fill(201), ...Array(7).fill(409)], 'five created, seven refused');
    const refused = answers.find((r) => r.statusCode === 409)!;
    assertConforms(t, refused, 'POST', '/api/webhooks');
    t.match(refused.json().error.details[0], /at most 5 webhook endpoints/);
    t.equal(await webhooks(h.db).countDocuments({ tenant: TENANT_A }), 5);
    t.equal((await create({}, KEY_B)).statusCode, 201, 'another tenant has its own budget');
    // Deleting one frees a slot.
    const id = answers.find((r) => r.statusCode === 201)!.json().id;
    t.equal((await del(`/api/webhooks/${id}`)).statusCode, 200);
    t.equal((await create()).statusCode, 201);
    await webhooks(h.db).deleteMany({});
  });

  t.test('26 concurrent creates under a limit of 20: 20 created, 6 refused, none a 500', async (t) => {
    // Each create used to retry only the lowest free slot, ten times: more than ten at once and the last ones gave up (500).
    const h20 = await startHarness(t, { env: { WEBHOOK_MAX_ENDPOINTS: '20' } });
    const answers = await Promise.all(
      Array.from({ length: 26 }, (_, i) =>
        h20.app.inject({
          method: 'POST',
          url: '/api/webhooks',
          headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
          payload: JSON.stringify({ url: `${URL_OK}/${i}`, events: ['alert.triggered'] }),
        }),
      ),
    );
    t.same(answers.map((r) => r.statusCode).sort(), [...Array<number>(20).fill(201), ...Array<number>(6).fill(409)]);
    t.same(
      (await webhooks(h20.db).find({ tenant: TENANT_A }).toArray()).map((w) => w.slot).sort((a, b) => a - b),
      [...Array(20).keys()],
      'each slot once',
    );
    await webhooks(h20.db).deleteMany({});
  });

  t.test('rotate: a new secret, the old one gone; 404 for unknown or foreign ids', async (t) => {
    const w = (await create()).json();
    const res = await post(`/api/webhooks/${w.id}/rotate-secret`);
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'POST', '/api/webhooks/:id/rotate-secret');
    const r = res.json();
    t.not(r.secret, w.secret);
    t.ok(r.secretRotatedAt >= w.secretRotatedAt);
    const stored = await webhooks(h.db).findOne({ tenant: TENANT_A });
    t.equal(decryptSecret(Buffer.from(TEST_WEBHOOK_KEY, 'hex'), stored!.secret, w.id), r.secret);
    t.equal((await post(`/api/webhooks/${w.id}/rotate-secret`, undefined, KEY_B)).statusCode, 404, "B cannot rotate A's secret");
    t.equal((await get(`/api/webhooks/${w.id}`, KEY_B)).statusCode, 404, "B cannot see A's endpoint");
    t.equal((await del(`/api/webhooks/${w.id}`, KEY_B)).statusCode, 404, "B cannot delete A's endpoint");
    t.equal((await get(`/api/webhooks/${w.id}/deliveries`, KEY_B)).statusCode, 404);
    t.equal((await post(`/api/webhooks/${w.id}/test`, undefined, KEY_B)).statusCode, 404);
    t.equal((await get('/api/webhooks/not-an-id')).statusCode, 400);
    const missing = await get('/api/webhooks/aaaaaaaaaaaaaaaaaaaaaaaa');
    t.equal(missing.statusCode, 404);
    assertConforms(t, missing, 'GET', '/api/webhooks/:id');
    await del(`/api/webhooks/${w.id}`);
  });

  t.test('test events and alert events are queued once per endpoint and event; delete cascades', async (t) => {
    const triggered = (await create({ events: ['alert.triggered'] })).json();
    const both = (await create({ events: ['alert.triggered', 'alert.cleared'] })).json();
    const foreign = (await create({ events: ['alert.triggered', 'alert.cleared'] }, KEY_B)).json();

    const test = await post(`/api/webhooks/${triggered.id}/test`);
    t.equal(test.statusCode, 202, test.body);
    assertConforms(t, test, 'POST', '/api/webhooks/:id/test');
    t.match(test.json().eventId, /^evt_test_[0-9a-f]{24}$/);

    const record = (id: string, status: 'triggered' | 'clear'): AlertRecordDocument =>
      alertRecord({ _id: id, nameAlert: 'x', status, dueDate: new Date(), evaluatedAt: new Date() });
    t.equal(await enqueueAlertEvent(h.db, record('bbbbbbbbbbbbbbbbbbbbbbb1', 'triggered')), 2, 'a triggered alert goes to both subscribed endpoints of A');
    t.equal(await enqueueAlertEvent(h.db, record('bbbbbbbbbbbbbbbbbbbbbbb1', 'triggered')), 0, 'again: nothing new');
    t.equal(await enqueueAlertEvent(h.db, record('bbbbbbbbbbbbbbbbbbbbbbb2', 'clear')), 1, 'a clear alert only where alert.cleared is subscribed');
    t.equal(await webhookDeliveries(h.db).countDocuments({ webhookId: foreign.id }), 0, "B's endpoint gets nothing of A");
    t.equal(await webhookJobs(h.db).countDocuments(), 4, 'one job per delivery');

    const listed = await get(`/api/webhooks/${both.id}/deliveries`);
    t.equal(listed.statusCode, 200);
    assertConforms(t, listed, 'GET', '/api/webhooks/:id/deliveries');
    t.equal(listed.json().meta.total, 2);
    t.match(listed.json().data[0], { webhookId: both.id, status: 'pending', attempts: [] });
    t.same(
      listed
        .json()
        .data.map((d: Json) => d.eventId)
        .sort(),
      ['evt_bbbbbbbbbbbbbbbbbbbbbbb1', 'evt_bbbbbbbbbbbbbbbbbbbbbbb2'],
    );
    t.equal((await get(`/api/webhooks/${both.id}/deliveries?status=succeeded`)).json().meta.total, 0);

    const gone = await del(`/api/webhooks/${both.id}`);
    t.equal(gone.statusCode, 200);
    assertConforms(t, gone, 'DELETE', '/api/webhooks/:id');
    t.match(gone.json(), { deleted: true, webhook: { id: both.id } });
    t.equal(await webhookDeliveries(h.db).countDocuments({ webhookId: both.id }), 0, 'its deliveries are gone');
    t.equal(await webhookJobs(h.db).countDocuments({ 'data.webhookId': both.id }), 0, 'and its jobs');
    t.equal((await get(`/api/webhooks/${both.id}`)).statusCode, 404);
    await webhooks(h.db).deleteMany({});
    await webhookDeliveries(h.db).deleteMany({});
    await webhookJobs(h.db).deleteMany({});
  });

  t.test("an endpoint's deliveries page by cursor at any depth: each once, in order, none of a later event; the walk is the endpoint's", async (t) => {
    const a = (await create({ events: ['alert.triggered'] })).json();
    const other = (await create({ events: ['alert.triggered'] })).json();
    const event = (n: number) =>
      enqueueAlertEvent(
        h.db,
        alertRecord({ _id: `ccccccccccccccccccccccc${n}`, nameAlert: 'x', status: 'triggered', dueDate: new Date(), evaluatedAt: new Date() }),
      );
    for (let n = 1; n <= 7; n += 1) await event(n);
    // The order the list promises (newest first, then the id), computed here from the stored documents.
    const stored = await webhookDeliveries(h.db).find({ webhookId: a.id }).toArray();
    const expected = stored
      .sort((x, y) => y.createdAt.getTime() - x.createdAt.getTime() || (x._id.toHexString() < y._id.toHexString() ? 1 : -1))
      .map((d) => d._id.toHexString());
    t.equal(expected.length, 7);

    const first = await get(`/api/webhooks/${a.id}/deliveries?limit=3`);
    t.equal(first.statusCode, 200, first.body);
    assertConforms(t, first, 'GET', '/api/webhooks/:id/deliveries');
    t.match(first.json().meta, { total: 7, page: 1, hasMore: true, nextCursor: String });
    await event(8); // newer than every delivery walked: the walk goes on past it
    const walked: string[] = first.json().data.map((d: Json) => d.id);
    let cursor: string | null = first.json().meta.nextCursor;
    let pages = 1;
    while (cursor) {
      const res = await get(`/api/webhooks/${a.id}/deliveries?limit=3&cursor=${cursor}`);
      t.equal(res.statusCode, 200, res.body);
      assertConforms(t, res, 'GET', '/api/webhooks/:id/deliveries');
      walked.push(...res.json().data.map((d: Json) => d.id));
      cursor = res.json().meta.nextCursor;
      pages += 1;
      t.equal(res.json().meta.page, pages);
    }
    t.same(walked, expected, 'each delivery once, newest first, the later event not among them');
    t.equal(pages, 3);

    const second = first.json().meta.nextCursor;
    t.equal((await get(`/api/webhooks/${a.id}/deliveries?limit=3&page=2&cursor=${second}`)).statusCode, 400, 'cursor and page');
    const foreign = await get(`/api/webhooks/${other.id}/deliveries?limit=3&cursor=${second}`);
    t.equal(foreign.statusCode, 404, "another endpoint's walk");
    t.equal(foreign.json().error.reason, 'invalid_cursor');
    assertConforms(t, foreign, 'GET', '/api/webhooks/:id/deliveries');
    t.equal((await get(`/api/webhooks/${a.id}/deliveries?limit=3&status=pending&cursor=${second}`)).statusCode, 404, 'other filters');
    t.equal((await get(`/api/webhooks/${a.id}/deliveries?limit=3&cursor=${second}`, KEY_B)).statusCode, 404, "another tenant's");

    // MCP: the same walk through the tool, from the REST page's cursor.
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=webhooks');
    const tool = (await client.callTool({ name: 'listWebhookDeliveries', arguments: { id: a.id, limit: 3, cursor: second } })) as {
      isError?: boolean;
      structuredContent?: Json;
    };
    t.notOk(tool.isError, JSON.stringify(tool.structuredContent));
    t.same(
      tool.structuredContent?.data.map((d: Json) => d.id),
      expected.slice(3, 6),
      "the tool's second page is the REST walk's",
    );
    await webhooks(h.db).deleteMany({});
    await webhookDeliveries(h.db).deleteMany({});
    await webhookJobs(h.db).deleteMany({});
  });

  t.test('scopes: reading needs read, managing needs write', async (t) => {
    const { key: readOnly } = await createApiKey(h.db, TENANT_A, 'ro', ['read']);
    const { key: writeOnly } = await createApiKey(h.db, TENANT_A, 'wo', ['write']);
    t.equal((await create({}, readOnly)).statusCode, 403);
    t.equal((await get('/api/webhooks', writeOnly)).statusCode, 403);
    t.equal((await get('/api/webhooks', readOnly)).statusCode, 200);
    t.equal((await create({}, writeOnly)).statusCode, 201);
    await webhooks(h.db).deleteMany({});
  });

  t.test('without an encryption key (MONGODB_URI and no WEBHOOK_ENCRYPTION_KEY): 503 in the error shape', async (t) => {
    const config = testConfig();
    const app = await buildApp({ config: { ...config, webhooks: { ...config.webhooks, encryptionKey: null } }, db: h.db, logger: false });
    t.teardown(() => app.close());
    for (const [method, url] of [
      ['POST', '/api/webhooks'],
      ['GET', '/api/webhooks'],
      ['GET', '/api/webhooks/aaaaaaaaaaaaaaaaaaaaaaaa'],
    ] as const) {
      const res = await app.inject({
        method,
        url,
        headers: { 'x-api-key': KEY_A },
        ...(method === 'POST' ? { payload: { url: URL_OK, events: ['alert.triggered'] } } : {}),
      });
      t.equal(res.statusCode, 503, `${method} ${url}`);
      t.match(res.json().error.details[0], /WEBHOOK_ENCRYPTION_KEY/);
      t.ok(res.headers['retry-after']);
    }
  });
}
