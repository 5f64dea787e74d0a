/**
 * The OpenAPI document as served (`/docs/json`, `/docs/yaml`): its first server is this service
 * without echoing the request's Host (issue 24 §5): PUBLIC_BASE_URL when configured, the address
 * as fetched for a loopback one (`npm start`), `/` (relative to wherever the document was fetched)
 * for anything else, a forged Host or X-Forwarded-Host included.
 */
import t from 'tap';
import { startHarness } from './helpers/harness.ts';
import { buildApp, loadSpec } from '../handlers/app.ts';
import { testConfig } from './helpers/harness.ts';

const h = await startHarness(t);
const specServers = (loadSpec() as unknown as { servers: { url: string }[] }).servers.map((s) => s.url);
const servers = async (app = h.app, headers: Record<string, string> = {}, url = '/docs/json') => {
  const res = await app.inject({ method: 'GET', url, headers });
  t.equal(res.statusCode, 200, `${url} ${JSON.stringify(headers)}`);
  if (url.endsWith('yaml')) return [/servers:\n\s+- url: (\S+)/.exec(res.body)?.[1] ?? ''];
  return res.json<{ servers: { url: string }[] }>().servers.map((s) => s.url);
};

t.test('loopback: the address as fetched (npm start on a laptop)', async (t) => {
  t.same((await servers(h.app, { host: 'localhost:3000' }))[0], 'http://localhost:3000');
  t.same((await servers(h.app, { host: '127.0.0.1:8080' }))[0], 'http://127.0.0.1:8080');
  t.same((await servers(h.app, { host: '[::1]:3000' }))[0], 'http://[::1]:3000');
  t.same(
    (await servers(h.app, { host: 'localhost:3000' })).slice(1),
    specServers.filter((u) => u !== 'http://localhost:3000'),
    "the spec's own servers follow",
  );
});

t.test('any other Host is never echoed: the first server is relative', async (t) => {
  for (const host of [
    'evil.example.com',
    'api.example.com:443',
    'localhost.evil.example.com',
    '127.0.0.1.evil.example.com',
    'localhost:3000@evil.example.com',
  ]) {
    const first = (await servers(h.app, { host }))[0];
    t.equal(first, '/', `Host: ${host} → /`);
  }
  t.equal((await servers(h.app, { host: 'evil.example.com' }, '/docs/yaml'))[0], '/', '/docs/yaml too');
  t.equal((await servers(h.app, { host: 'evil.example.com' }, '/docs/v1.json'))[0], '/', 'the version 1 document too');
  t.equal((await servers(h.app, { host: 'localhost:3000' }, '/docs/v1.json'))[0], 'http://localhost:3000', 'and on loopback, as fetched');
  const proxied = await buildApp({ config: testConfig({ TRUST_PROXY: 'true' }), db: h.db, logger: false });
  t.teardown(() => proxied.close());
  t.equal(
    (await servers(proxied, { host: 'localhost:3000', 'x-forwarded-host': 'evil.example.com', 'x-forwarded-proto': 'https' }))[0],
    '/',
    'behind a proxy, a forwarded host is not echoed either',
  );
});

t.test('PUBLIC_BASE_URL names the service whatever the request says', async (t) => {
  const app = await buildApp({ config: testConfig({ PUBLIC_BASE_URL: 'https://api.example.com/freight/' }), db: h.db, logger: false });
  t.teardown(() => app.close());
  for (const host of ['evil.example.com', 'localhost:3000']) t.equal((await servers(app, { host }))[0], 'https://api.example.com/freight', `Host: ${host}`);
  t.throws(() => testConfig({ PUBLIC_BASE_URL: 'api.example.com' }), /PUBLIC_BASE_URL/, 'a URL that is not absolute is a configuration error');
  t.throws(() => testConfig({ PUBLIC_BASE_URL: 'https://api.example.com/?x=1' }), /PUBLIC_BASE_URL/, 'and one with a query');
});
