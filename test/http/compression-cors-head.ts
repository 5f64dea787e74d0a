/**
 * Compression (br/gzip by Accept-Encoding), CORS for configured origins only
 * (off by default), and HEAD on every GET route, through real HTTP.
 */
import type { Test } from 'tap';
import { gunzipSync, brotliDecompressSync } from 'node:zlib';
import { request } from 'node:http';
import { startHarness, KEY_A } from '../helpers/harness.ts';
import { listen, seedTwoTenants } from '../helpers/mcp.ts';
import { buildApp, loadSpec } from '../../handlers/app.ts';
import { testConfig } from '../helpers/harness.ts';
import { listOperations } from '../../lib/spec/operations.ts';
import { loadConfig } from '../../lib/config.ts';

export default async function compressionCorsHeadTests(t: Test): Promise<void> {
  const ORIGIN = 'https://dashboard.example.com';
  const h = await startHarness(t, { env: { CORS_ORIGINS: `${ORIGIN},http://localhost:5173` } });
  await seedTwoTenants(h.db);
  const base = await listen(h.app);
  const plain = await buildApp({ config: testConfig(), db: h.db, logger: false });
  t.teardown(() => plain.close());
  const plainBase = await listen(plain);

  /** A raw HTTP request (no automatic decompression), body as bytes. */
  function raw(
    url: string,
    method: string,
    headers: Record<string, string>,
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
    return new Promise((resolve, reject) => {
      const req = request(url, { method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      });
      req.on('error', reject);
      req.end();
    });
  }

  t.test('compression: br preferred, gzip when only gzip, identity when none; same JSON', async (t) => {
    const url = `${base}/api/financial-docs?detail=full`;
    const identity = await raw(url, 'GET', { 'x-api-key': KEY_A });
    t.equal(identity.status, 200);
    t.notOk(identity.headers['content-encoding'], 'no Accept-Encoding: not compressed');
    const json = JSON.parse(identity.body.toString('utf8'));
    t.ok(identity.body.length > 1024, 'page is above the threshold');

    const br = await raw(url, 'GET', { 'x-api-key': KEY_A, 'accept-encoding': 'gzip, deflate, br' });
    t.equal(br.headers['content-encoding'], 'br');
    t.match(String(br.headers.vary), /accept-encoding/i);
    t.same(JSON.parse(brotliDecompressSync(br.body).toString('utf8')), json, 'br decodes to the same JSON');
    t.ok(br.body.length < identity.body.length / 2, `br ${br.body.length} B < half of ${identity.body.length} B`);

    const gz = await raw(url, 'GET', { 'x-api-key': KEY_A, 'accept-encoding': 'gzip' });
    t.equal(gz.headers['content-encoding'], 'gzip');
    t.same(JSON.parse(gunzipSync(gz.body).toString('utf8')), json, 'gzip decodes to the same JSON');

    const small = await raw(`${base}/health`, 'GET', { 'accept-encoding': 'gzip' });
    t.notOk(small.headers['content-encoding'], 'a small body is sent as is');
  });

  t.test('CORS: an allowed origin gets the headers and a preflight; others and no-origin get none', async (t) => {
    const pre = await raw(`${base}/api/shipments`, 'OPTIONS', {
      origin: ORIGIN,
      'access-control-request-method': 'GET',
      'access-control-request-headers': 'x-api-key, x-api-version',
    });
    t.equal(pre.status, 204, 'preflight answered before authentication');
    t.equal(pre.headers['access-control-allow-origin'], ORIGIN);
    t.match(String(pre.headers['access-control-allow-headers']), /x-api-key/);
    t.match(String(pre.headers['access-control-allow-methods']), /GET/);

    // What a browser does next: the actual call, compressed, with readable headers.
    const res = await fetch(`${base}/api/shipments?limit=1`, { headers: { origin: ORIGIN, 'x-api-key': KEY_A, 'accept-encoding': 'br, gzip' } });
    t.equal(res.status, 200);
    t.equal(res.headers.get('access-control-allow-origin'), ORIGIN);
    t.match(res.headers.get('access-control-expose-headers') ?? '', /x-request-id/);
    t.match(res.headers.get('access-control-expose-headers') ?? '', /x-ratelimit-remaining/);
    t.equal(((await res.json()) as { data: unknown[] }).data.length, 1);

    const denied = await raw(`${base}/api/shipments`, 'GET', { origin: 'https://evil.example.com', 'x-api-key': KEY_A });
    t.notOk(denied.headers['access-control-allow-origin'], 'other origin: no allow-origin');
    const deniedPre = await raw(`${base}/api/shipments`, 'OPTIONS', { origin: 'https://evil.example.com', 'access-control-request-method': 'GET' });
    t.equal(deniedPre.status, 405, 'preflight from another origin is not granted');
    t.notOk(deniedPre.headers['access-control-allow-origin']);
    const errorRes = await raw(`${base}/api/shipments`, 'GET', { origin: ORIGIN });
    t.equal(errorRes.status, 401);
    t.equal(errorRes.headers['access-control-allow-origin'], ORIGIN, 'a browser can read the 401 too');
  });

  t.test('CORS is off by default', async (t) => {
    const pre = await raw(`${plainBase}/api/shipments`, 'OPTIONS', { origin: ORIGIN, 'access-control-request-method': 'GET' });
    t.equal(pre.status, 405);
    t.notOk(pre.headers['access-control-allow-origin']);
    const res = await raw(`${plainBase}/api/shipments`, 'GET', { origin: ORIGIN, 'x-api-key': KEY_A });
    t.equal(res.status, 200);
    t.notOk(res.headers['access-control-allow-origin']);
  });

  t.test('CORS_ORIGINS is validated', async (t) => {
    t.throws(() => loadConfig({ CORS_ORIGINS: 'dashboard.example.com' }), { message: /is not an origin/ });
    t.throws(() => loadConfig({ CORS_ORIGINS: 'https://a.example.com/path' }), { message: /no path/ });
    t.same(loadConfig({ CORS_ORIGINS: 'https://a.example.com, http://b.test:8080' }).corsOrigins, ['https://a.example.com', 'http://b.test:8080']);
    t.same(loadConfig({}).corsOrigins, []);
  });

  t.test('HEAD on every GET operation: same status and headers as GET, no body', async (t) => {
    const spec = loadSpec();
    const gets = listOperations(spec).filter((op) => op.method === 'GET' && !op.tags.includes('mcp'));
    t.ok(gets.length >= 10);
    for (const op of gets) {
      const url = `${base}${op.path.replace(/\{[^}]+\}/g, 'NO-SUCH-ID')}`;
      const headers: Record<string, string> = op.secured ? { 'x-api-key': KEY_A } : {};
      const get = await raw(url, 'GET', headers);
      const head = await raw(url, 'HEAD', headers);
      t.equal(head.status, get.status, `HEAD ${op.path} → ${get.status}`);
      t.equal(head.body.length, 0, 'no body');
      t.equal(head.headers['content-type'], get.headers['content-type']);
      if (get.headers['x-api-version']) t.equal(head.headers['x-api-version'], get.headers['x-api-version']);
    }
    const anon = await raw(`${base}/api/financial-docs`, 'HEAD', {});
    t.equal(anon.status, 401, 'HEAD is authenticated like GET');
    const bad = await raw(`${base}/api/financial-docs?limit=0`, 'HEAD', { 'x-api-key': KEY_A });
    t.equal(bad.status, 400, 'HEAD is validated like GET');
    const post = await raw(`${base}/api/alerts/schedule`, 'HEAD', { 'x-api-key': KEY_A });
    t.equal(post.status, 405, 'no HEAD where there is no GET');
    t.match(String(post.headers.allow), /POST/);
  });
}
