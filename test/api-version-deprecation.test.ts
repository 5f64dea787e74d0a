/**
 * Version 1 of the lists is deprecated: its answers say so (RFC 9745, RFC 8594, Link); version 2's do not.
 * Each version's answer names its media type exactly as the spec does (no charset parameter).
 */
import t from 'tap';
import { startHarness, assertConforms, KEY_A } from './helpers/harness.ts';
import { seedTwoTenants } from './helpers/mcp.ts';
import { loadSpec } from '../handlers/app.ts';

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

t.test('the spec marks the version header deprecated and documents the headers', async (t) => {
  const spec = loadSpec() as unknown as {
    paths: Record<
      string,
      { get: { parameters: { name?: string; deprecated?: boolean; $ref?: string }[]; responses: { '200': { headers: Record<string, unknown> } } } }
    >;
    components: { parameters?: Record<string, { deprecated?: boolean }> };
  };
  const text = JSON.stringify(spec);
  for (const route of ['/api/financial-docs', '/api/shipments']) {
    const headers = spec.paths[route]!.get.responses['200'].headers;
    t.ok(headers.deprecation && headers.sunset && headers.link, `${route} documents deprecation, sunset, link`);
  }
  t.match(text, /"name":"x-api-version","in":"header","deprecated":true/, 'x-api-version is deprecated');
});
