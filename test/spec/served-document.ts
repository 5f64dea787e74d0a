/**
 * The OpenAPI document as served (`/docs/json`, `/docs/yaml`): its first server is this service
 * without echoing the request's Host (issue 24 §5): PUBLIC_BASE_URL when configured, the address
 * as fetched for a loopback one (`npm start`), `/` (relative to wherever the document was fetched)
 * for anything else, a forged Host or X-Forwarded-Host included. Its links (what Schemathesis's
 * stateful phase and link-aware clients follow) name operations, parameters and fields it has.
 */
import type { Test } from 'tap';
import { startHarness } from '../helpers/harness.ts';
import { buildApp, loadSpec } from '../../handlers/app.ts';
import { testConfig } from '../helpers/harness.ts';
import { deref, type Json } from '../../lib/spec/deref.ts';

export default async function servedDocumentTests(t: Test): Promise<void> {
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

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: Json | undefined): string => (typeof v === 'string' ? v : JSON.stringify(v));
/** Whether a body of `schema` can hold the JSON pointer's segments (read here from the schema, not by the service's code). */
function holds(schema: Json | undefined, segments: string[]): boolean {
  if (!isObj(schema)) return false;
  if (segments.length === 0) return true;
  const branches = ['allOf', 'oneOf', 'anyOf'].flatMap((k) => (Array.isArray(schema[k]) ? schema[k] : []));
  if (branches.some((b) => holds(b, segments))) return true;
  const [head, ...rest] = segments as [string, ...string[]];
  if (/^\d+$/.test(head) && isObj(schema.items)) return holds(schema.items, rest);
  return isObj(schema.properties) && holds(schema.properties[head], rest);
}

t.test("the served document's links name an operation, its parameters and a field of the answer", async (t) => {
  const res = await h.app.inject({ method: 'GET', url: '/docs/json', headers: { host: 'localhost:3000' } });
  const doc = deref(res.json<Json>()) as Obj;
  const operations = new Map<string, string[]>();
  const links: { from: string; name: string; link: Obj; body: Json | undefined }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Obj)) {
    if (!isObj(item)) continue;
    for (const [method, op] of Object.entries(item)) {
      if (!isObj(op) || typeof op.operationId !== 'string') continue;
      const params = [...(Array.isArray(item.parameters) ? item.parameters : []), ...(Array.isArray(op.parameters) ? op.parameters : [])];
      operations.set(
        op.operationId,
        params.filter(isObj).map((p) => `${str(p.in)}.${str(p.name)}`),
      );
      for (const [status, response] of Object.entries(isObj(op.responses) ? op.responses : {})) {
        if (!isObj(response) || !isObj(response.links)) continue;
        const body = isObj(response.content) && isObj(response.content['application/json']) ? response.content['application/json'].schema : undefined;
        for (const [name, link] of Object.entries(response.links))
          if (isObj(link)) links.push({ from: `${method.toUpperCase()} ${path} ${status}`, name, link, body });
      }
    }
  }
  t.ok(links.length > 0, `${links.length} links`);
  for (const { from, name, link, body } of links) {
    const declared = operations.get(str(link.operationId));
    if (!declared) {
      t.fail(`${from} ${name}: ${str(link.operationId)} is an operation of the document`);
      continue;
    }
    for (const [param, expression] of Object.entries(isObj(link.parameters) ? link.parameters : {})) {
      // A parameter is named `in.name`, or by its name alone when that is unambiguous (OpenAPI's Link Object).
      const matches = declared.filter((d) => d === param || d.endsWith(`.${param}`));
      t.equal(matches.length, 1, `${from} ${name}: ${param} is a parameter of ${str(link.operationId)}`);
      const pointer = /^\$response\.body#(\/.*)?$/.exec(str(expression));
      if (pointer)
        t.ok(
          holds(
            body,
            (pointer[1] ?? '')
              .split('/')
              .slice(1)
              .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~')),
          ),
          `${from} ${name}: the answer holds ${str(expression)}`,
        );
    }
  }
  // Issue 38: every export operation's 202 leads to the export and its file, by the id of its body.
  const exportLinks = links.filter((l) => /^POST \/api\/exports\/datasets\/[a-z-]+ 202$/.test(l.from));
  t.equal(new Set(exportLinks.map((l) => l.from)).size, 16, 'the 16 export operations have links');
  t.equal(exportLinks.length, 32, 'two each');
  for (const l of exportLinks) t.same(l.link.parameters, { id: '$response.body#/id' }, `${l.from} ${l.name}`);
  t.same([...new Set(exportLinks.map((l) => str(l.link.operationId)))].sort(), ['getExport', 'getExportFile'], 'to getExport and getExportFile');
});
}
