import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { apiKeys, createApiKey, revokeApiKey } from '../../lib/auth/api-keys.ts';

export default async function edgesTests(t: Test): Promise<void> {
  const h = await startHarness(t, { ownEngine: true }); // 'readiness follows the database' stops it
  const ROUTE = '/api/financial-docs';

  t.test('authentication', async (t) => {
    const missing = await h.app.inject({ method: 'GET', url: ROUTE });
    t.equal(missing.statusCode, 401);
    t.same(missing.json(), { error: { code: 401, message: 'Unauthorized', details: ['missing x-api-key header'], reason: 'missing_api_key' } });
    const unknown = await h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': 'not-a-real-key-000000' } });
    t.equal(unknown.statusCode, 401);
    t.same(unknown.json().error.details, ['unknown or revoked API key']);
    t.equal(unknown.json().error.reason, 'unknown_api_key', 'a stable reason beside the message');
    const bearer = await h.app.inject({ method: 'GET', url: ROUTE, headers: { authorization: `Bearer ${KEY_A}` } });
    t.equal(bearer.statusCode, 200, 'Authorization: Bearer is accepted too');

    const { key, record } = await createApiKey(h.db, TENANT_A, 'to revoke');
    t.notOk(JSON.stringify(await apiKeys(h.db).findOne({ _id: record._id })).includes(key), 'the key is not stored in clear');
    t.equal((await h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': key } })).statusCode, 200);
    t.same(await revokeApiKey(h.db, record._id), { revoked: 1, ambiguous: false });
    const revoked = await h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': key } });
    t.equal(revoked.statusCode, 401, 'revoked key');
    assertConforms(t, revoked, 'GET', ROUTE);
    const badAndUnauth = await h.app.inject({ method: 'GET', url: `${ROUTE}?limit=abc&zzz=1` });
    t.equal(badAndUnauth.statusCode, 401, '401 comes before 400');
  });

  // Ajv coerced "1e309" to Infinity and then skipped the bounds (ajv-validator/ajv#2212): the page
  // size had no cap. Expected: the documented 400 for a limit outside 1..100, whatever its spelling.
  t.test('a query number that overflows to Infinity is refused like any out-of-range value', async (t) => {
    for (const limit of ['1e309', 'Infinity', '-Infinity', '9e999']) {
      const res = await h.app.inject({ method: 'GET', url: `${ROUTE}?limit=${limit}`, headers: { 'x-api-key': KEY_A } });
      t.equal(res.statusCode, 400, limit);
      t.same(res.json().error.details, ['limit must be an integer between 1 and 100'], limit);
      assertConforms(t, res, 'GET', ROUTE);
    }
    const page = await h.app.inject({ method: 'GET', url: '/api/shipments?page=1e309', headers: { 'x-api-key': KEY_A } });
    t.equal(page.statusCode, 400, 'page=1e309');
    t.equal((await h.app.inject({ method: 'GET', url: `${ROUTE}?limit=1e2`, headers: { 'x-api-key': KEY_A } })).statusCode, 200, '1e2 is 100');
  });

  // Ajv's coercion read text as Number() does: "0x10" was 16, "" and " " were 0. A number in a URL is decimal.
  t.test('a query number not written in decimal is refused, never read as another', async (t) => {
    for (const limit of ['0x10', '0b11', '0o7', '', '%20', '%205', '1_0']) {
      const res = await h.app.inject({ method: 'GET', url: `${ROUTE}?limit=${limit}`, headers: { 'x-api-key': KEY_A } });
      t.equal(res.statusCode, 400, `limit=${limit}`);
      t.same(res.json().error.details, ['limit must be an integer between 1 and 100'], `limit=${limit}`);
      assertConforms(t, res, 'GET', ROUTE);
    }
    t.equal((await h.app.inject({ method: 'GET', url: '/api/shipments?page=0x2', headers: { 'x-api-key': KEY_A } })).statusCode, 400, 'page=0x2');
    t.equal((await h.app.inject({ method: 'GET', url: `${ROUTE}?limit=016`, headers: { 'x-api-key': KEY_A } })).statusCode, 200, '016 is 16, decimal');
  });

  t.test('scopes: read-only and write-only keys', async (t) => {
    const readOnly = await createApiKey(h.db, TENANT_A, 'reader', ['read']);
    const writeOnly = await createApiKey(h.db, TENANT_A, 'scheduler', ['write']);
    t.equal((await h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': readOnly.key } })).statusCode, 200);
    const denied = await h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': writeOnly.key } });
    t.equal(denied.statusCode, 403);
    t.same(denied.json(), { error: { code: 403, message: 'Forbidden', details: ["this API key lacks the 'read' scope"], reason: 'insufficient_scope' } });
    assertConforms(t, denied, 'GET', ROUTE);
    const body = { userIds: ['u1'], ruleId: 'overdue-invoices', cycleKey: '2026-11', nameAlert: 'Vencidas' };
    const schedule = await h.app.inject({ method: 'POST', url: '/api/alerts/schedule', headers: { 'x-api-key': readOnly.key }, payload: body });
    t.equal(schedule.statusCode, 403, 'a read-only key cannot schedule');
    t.same(schedule.json().error.details, ["this API key lacks the 'write' scope"]);
    const noKeyBadBody = await h.app.inject({ method: 'POST', url: '/api/alerts/schedule', headers: { 'x-api-key': readOnly.key }, payload: { nope: 1 } });
    t.equal(noKeyBadBody.statusCode, 403, 'scope is checked before validation');
  });

  t.test('error shape for routing and protocol errors', async (t) => {
    const unknownRoute = await h.app.inject({ method: 'GET', url: '/api/nope', headers: { 'x-api-key': KEY_A } });
    t.equal(unknownRoute.statusCode, 404);
    t.same(unknownRoute.json(), { error: { code: 404, message: 'Not Found', details: ['no route GET /api/nope'], reason: 'not_found' } });
    const wrongMethod = await h.app.inject({ method: 'DELETE', url: ROUTE, headers: { 'x-api-key': KEY_A } });
    t.equal(wrongMethod.statusCode, 405, 'a known path with another method is 405');
    t.match(wrongMethod.json().error, { code: 405, reason: 'method_not_allowed' });
    t.notOk('fields' in wrongMethod.json().error, 'fields only on validation errors');
    t.equal(wrongMethod.headers.allow, 'GET, HEAD', 'allow lists the methods the path offers');
    for (const res of [unknownRoute, wrongMethod]) {
      t.notOk(res.body.includes('at '), 'no stack trace');
      t.ok(res.headers['x-request-id']);
    }
  });

  t.test('request ids', async (t) => {
    const echoed = await h.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'abc-123' } });
    t.equal(echoed.headers['x-request-id'], 'abc-123');
    const replaced = await h.app.inject({ method: 'GET', url: '/health', headers: { 'x-request-id': 'bad id with spaces <script>' } });
    t.match(replaced.headers['x-request-id'], /^[0-9a-f-]{36}$/);
  });

  t.test('security headers', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: ROUTE, headers: { 'x-api-key': KEY_A } });
    t.equal(res.headers['x-content-type-options'], 'nosniff');
    t.equal(res.headers['cache-control'], 'no-store');
    t.notOk(res.headers['x-powered-by']);
    t.notOk(res.headers.server);
  });

  t.test('rate limit per key', async (t) => {
    await h.rebuild({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_IP_MAX: '3', REPORT_RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } });
    const call = (key?: string) => h.app.inject({ method: 'GET', url: ROUTE, headers: key ? { 'x-api-key': key } : {} });
    const first = await call(KEY_A);
    t.equal(first.headers['x-ratelimit-limit'], '3');
    t.equal(first.headers['x-ratelimit-remaining'], '2');
    t.ok(Number(first.headers['x-ratelimit-reset']) > 0);
    await call(KEY_A);
    await call(KEY_A);
    const limited = await call(KEY_A);
    t.equal(limited.statusCode, 429);
    assertConforms(t, limited, 'GET', ROUTE);
    t.ok(Number(limited.headers['retry-after']) > 0, 'retry-after on 429');
    t.match(
      limited.json().error.details[0],
      /^rate limit of 3 requests per minute for this API key exceeded; retry in \d+ seconds$/,
      'the window, then the time left',
    );
    t.equal(limited.json().error.reason, 'rate_limited');
    const otherKey = await createApiKey(h.db, TENANT_A, 'second');
    t.equal((await call(otherKey.key)).statusCode, 200, 'limits are per key');
    for (let i = 0; i < 5; i++) await h.app.inject({ method: 'GET', url: '/ready' });
    t.equal((await h.app.inject({ method: 'GET', url: '/ready' })).statusCode, 429, 'readiness (it reads the database) is limited per IP');
    const probes = await Promise.all(Array.from({ length: 6 }, () => h.app.inject({ method: 'GET', url: '/health' })));
    t.same(
      probes.map((r) => r.statusCode),
      [200, 200, 200, 200, 200, 200],
      'liveness probes are never limited (nor do they depend on the limit store)',
    );
    t.notOk(probes[0]!.headers['x-ratelimit-limit'], 'and carry no rate-limit headers');
    await h.rebuild();
  });

  t.test('readiness follows the database', async (t) => {
    t.equal((await h.app.inject({ method: 'GET', url: '/ready' })).statusCode, 200);
    await h.engine.stop();
    const t0 = Date.now();
    const down = await h.app.inject({ method: 'GET', url: '/ready' });
    t.equal(down.statusCode, 503);
    t.equal(down.json().error.reason, 'database_unavailable');
    assertConforms(t, down, 'GET', '/ready');
    t.ok(Date.now() - t0 < 8000, 'answers within a bounded time');
    t.equal((await h.app.inject({ method: 'GET', url: '/health' })).statusCode, 200, 'liveness does not need the database');
    const data = await h.app.inject({ method: 'GET', url: '/api/shipments', headers: { 'x-api-key': KEY_A } });
    t.equal(data.statusCode, 503, 'data operations answer 503 too (the key lookup needs the database)');
    t.equal(data.json().error.reason, 'database_unavailable', 'with the reason that says retry later');
    assertConforms(t, data, 'GET', '/api/shipments');
  });
}
