import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A } from '../helpers/harness.ts';

export default async function foundationTests(t: Test): Promise<void> {
  const h = await startHarness(t);

  t.test('health needs no key and no database', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/health' });
    t.equal(res.statusCode, 200);
    t.equal(res.json().status, 'ok');
    t.ok(res.headers['x-request-id']);
    assertConforms(t, res, 'GET', '/health');
  });

  t.test('ready pings the database', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/ready' });
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', '/ready');
  });

  t.test('401 before 400', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=500' });
    t.equal(res.statusCode, 401);
    t.same(res.json().error.code, 401);
    assertConforms(t, res, 'GET', '/api/financial-docs');
  });

  t.test('invalid limit', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=500', headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 400);
    t.same(res.json(), {
      error: {
        code: 400,
        message: 'Invalid query parameter',
        details: ['limit must be an integer between 1 and 100'],
        reason: 'invalid_parameter',
        fields: [{ in: 'query', name: 'limit', detail: 'limit must be an integer between 1 and 100' }],
      },
    });
  });

  t.test('empty list', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs', headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'GET', '/api/financial-docs');
    const res2 = await h.app.inject({ method: 'GET', url: '/api/shipments', headers: { 'x-api-key': KEY_A } });
    t.equal(res2.statusCode, 200, res2.body);
    assertConforms(t, res2, 'GET', '/api/shipments');
  });

  t.test('swagger ui', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/docs/json' });
    t.equal(res.statusCode, 200);
    t.equal(res.json().info.title, 'Freight Back-Office API');
  });
}
