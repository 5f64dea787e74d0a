/**
 * Version 1 of the lists is deprecated: its answers say so (RFC 9745, RFC 8594, Link); version 2's do not.
 * Each version's answer names its media type exactly as the spec does (no charset parameter).
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A } from '../helpers/harness.ts';
import { seedTwoTenants } from '../helpers/mcp.ts';
import { readFileSync } from 'node:fs';
import { loadSpec } from '../../handlers/app.ts';

export default async function apiVersionDeprecationTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  await seedTwoTenants(h.db);

  for (const route of ['/api/financial-docs', '/api/shipments']) {
    t.test(`${route}: version 1 carries Deprecation, Sunset and Link`, async (t) => {
      const v1 = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, 'x-api-version': '1' } });
      t.equal(v1.statusCode, 200);
      assertConforms(t, v1, 'GET', route);
      t.ok(Array.isArray(v1.json()), 'the bare array');
      // Bare media types: clients generated for a status with two media types compare the header exactly (oapi-codegen).
      t.equal(v1.headers['content-type'], 'application/vnd.freight.v1+json', 'the media type as the spec names it, no charset');
      t.equal(v1.headers.deprecation, '@1793491200', 'RFC 9745 date: 2026-11-01T00:00:00Z');
      t.equal(v1.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT', 'RFC 8594 HTTP-date');
      t.match(String(v1.headers.link), /<\/docs#\/>; rel="deprecation"/);
      t.match(String(v1.headers.link), /rel="sunset"/);
      const head = await h.app.inject({ method: 'HEAD', url: route, headers: { 'x-api-key': KEY_A, 'x-api-version': '1' } });
      t.equal(head.headers.deprecation, '@1793491200', 'HEAD too');
      for (const headers of [{}, { 'x-api-version': '2' }]) {
        const v2 = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, ...headers } });
        t.equal(v2.statusCode, 200);
        t.notOk(v2.headers.deprecation, 'version 2 is not deprecated');
        t.equal(v2.headers['content-type'], 'application/json', 'application/json as the spec names it, no charset');
        t.notOk(v2.headers.sunset);
      }
    });
  }

  t.test("version 1 refuses version 2's parameters (spec/v1.yaml names them not), as any unknown parameter is 400", async (t) => {
    const v2Page = (await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=1', headers: { 'x-api-key': KEY_A } })).json<{
      meta: { nextCursor: string | null };
    }>();
    t.ok(v2Page.meta.nextCursor, 'a version 2 cursor to try');
    for (const url of [
      '/api/financial-docs?limit=2&detail=summary',
      `/api/financial-docs?limit=1&cursor=${v2Page.meta.nextCursor}`,
      '/api/shipments?limit=2&detail=summary',
    ]) {
      const name = url.includes('cursor') ? 'cursor' : 'detail';
      const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A, 'x-api-version': '1' } });
      t.equal(res.statusCode, 400, url);
      assertConforms(t, res, 'GET', url.split('?')[0]!);
      t.match(res.json(), { error: { reason: 'invalid_parameter', fields: [{ in: 'query', name }] } });
    }
    const ok = await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=2&page=1', headers: { 'x-api-key': KEY_A, 'x-api-version': '1' } });
    t.equal(ok.statusCode, 200, "version 1's own parameters are read as before");
  });

  t.test(
    'version 1 is a document of its own: the current lists answer one schema, version 1 marks its header deprecated and documents its headers',
    async (t) => {
      type Doc = {
        paths: Record<
          string,
          {
            get: { deprecated?: boolean; parameters?: unknown[]; responses: { '200': { headers: Record<string, unknown>; content: Record<string, unknown> } } };
          }
        >;
      };
      const current = loadSpec() as unknown as Doc;
      const v1 = JSON.parse(readFileSync(new URL('../../generated/openapi-v1.json', import.meta.url), 'utf8')) as Doc;
      const served = await h.app.inject({ method: 'GET', url: '/docs/v1.json' });
      t.equal(served.statusCode, 200);
      t.same(Object.keys(served.json<Doc>().paths), ['/api/financial-docs', '/api/shipments'], 'served at /docs/v1.json');
      for (const route of ['/api/financial-docs', '/api/shipments']) {
        t.same(Object.keys(current.paths[route]!.get.responses['200'].content), ['application/json'], `${route}: one media type in the current document`);
        t.notMatch(JSON.stringify(current.paths[route]!.get.parameters), /x-api-version/, `${route}: the current document does not name x-api-version`);
        const old = v1.paths[route]!.get;
        t.equal(old.deprecated, true, `${route}: version 1 deprecated`);
        t.same(Object.keys(old.responses['200'].content), ['application/vnd.freight.v1+json']);
        const headers = old.responses['200'].headers;
        t.ok(headers.deprecation && headers.sunset && headers.link, `${route} version 1 documents deprecation, sunset, link`);
      }
      t.match(JSON.stringify(v1), /"name":"x-api-version","in":"header","required":true,"deprecated":true/, 'x-api-version is deprecated');
    },
  );
}
