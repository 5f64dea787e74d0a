/**
 * cache-control is set per route (lib/http/cache-control.ts): tenant data is
 * `no-store`, error answers are `no-store` whatever the path, public answers
 * (health, Swagger UI) carry none.
 */
import type { Test } from 'tap';
import { startHarness, KEY_A } from '../helpers/harness.ts';
import { loadSpec } from '../../handlers/app.ts';

export default async function cacheControlTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const get = (url: string, headers: Record<string, string> = {}) => h.app.inject({ method: 'GET', url, headers });

  t.test('tenant data is never stored', async (t) => {
    for (const url of ['/api/financial-docs', '/api/shipments?limit=1', '/api/alerts/jobs', '/api/analytics/dispatch-to-bill']) {
      const res = await get(url, { 'x-api-key': KEY_A });
      t.equal(res.statusCode, 200, url);
      t.equal(res.headers['cache-control'], 'no-store', `${url}: no-store`);
    }
  });

  t.test('error answers are never stored, on any path', async (t) => {
    const cases: [string, string, number][] = [
      ['GET', '/api/financial-docs', 401],
      ['GET', '/api/financial-docs?limit=0', 400],
      ['GET', '/api/nothing-here', 404],
      ['GET', '/nothing-here', 404],
      ['DELETE', '/health', 405],
    ];
    for (const [method, url, status] of cases) {
      const res = await h.app.inject({ method: method as 'GET', url, headers: status === 401 ? {} : { 'x-api-key': KEY_A } });
      t.equal(res.statusCode, status, `${method} ${url}`);
      t.equal(res.headers['cache-control'], 'no-store', `${method} ${url} → ${status}: no-store`);
    }
  });

  t.test('public answers keep the default', async (t) => {
    for (const url of ['/health', '/ready']) {
      const res = await get(url);
      t.equal(res.statusCode, 200, url);
      t.equal(res.headers['cache-control'], undefined, `${url}: no cache-control`);
    }
    const docs = await get('/docs/json');
    t.equal(docs.statusCode, 200);
    t.equal(docs.json().info.version, loadSpec().info.version, 'Swagger serves the bundled spec');
    t.equal(docs.headers['cache-control'], undefined);
  });
}
