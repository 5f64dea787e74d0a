/**
 * Version 1 of the lists is deprecated: its answers say so (RFC 9745, RFC 8594, Link); version 2's do not.
 * Each version's answer names its media type exactly as the spec does (no charset parameter).
 * Which version answers: `x-api-version`, else Accept by RFC 9110 §12.5.1 (q-values, the most specific range);
 * from the Sunset on version 1 is 410 Gone; both versions name the headers that chose them in `Vary`.
 */
import type { Test } from 'tap';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { startHarness, assertConforms, testConfig, KEY_A } from '../helpers/harness.ts';
import { seedTwoTenants } from '../helpers/mcp.ts';
import { readFileSync } from 'node:fs';
import { buildApp, loadSpec } from '../../handlers/app.ts';

const V1 = 'application/vnd.freight.v1+json';
/** The Sunset the v1 answers carry (RFC 8594: the instant version 1 stops being served). */
const SUNSET = Date.parse('2027-06-30T00:00:00Z');
const BEFORE_SUNSET = Date.parse('2027-01-15T12:00:00Z');

/** The Vary field's names, lower-cased. */
const varyOf = (res: LightMyRequestResponse): string[] =>
  String(res.headers.vary ?? '')
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

export default async function apiVersionDeprecationTests(t: Test): Promise<void> {
  // The service's clock before the sunset: version 1 is served (the real clock would make these tests 410s from 2027-06-30).
  const h = await startHarness(t, { build: { now: () => new Date(BEFORE_SUNSET) } });
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

  // Expected by RFC 9110 §12.5.1 (not by the code): a range's q applies to what it matches, the most specific range
  // wins, q=0 is "not acceptable"; version 1 only when its media type itself is preferred to application/json.
  const ACCEPT_TABLE: [accept: string, version: '1' | '2', why: string][] = [
    [V1, '1', 'version 1 alone'],
    [`${V1};q=0`, '2', 'q=0: version 1 not acceptable'],
    [`${V1}, */*;q=0.1`, '1', 'version 1 named, anything else at 0.1'],
    [`${V1}, application/*;q=0.1`, '1', 'version 1 named, other application types at 0.1'],
    [`${V1}, application/json;q=0`, '1', 'application/json refused'],
    [`${V1}, application/json;q=0.5`, '1', 'version 1 preferred by q'],
    [`${V1};q=0.5, application/json`, '2', 'application/json preferred by q'],
    [`${V1}, application/json`, '2', 'a tie goes to application/json'],
    [`application/json;q=0.8, ${V1};q=0.8`, '2', 'a tie at 0.8 too, whatever the order'],
    [`${V1};q=0.3, application/*;q=0.5`, '2', 'application/json through application/* at 0.5'],
    [`${V1};q=0.5, */*;q=0.4`, '1', '*/* lower than version 1'],
    [`${V1}, application/json;q=0.5, */*;q=0.9`, '1', 'application/json by its own range (0.5), not */*'],
    [`${V1};q=0.2, text/*`, '1', 'application/json not acceptable at all'],
    ['Application/VND.Freight.V1+JSON', '1', 'type and subtype are case-insensitive'],
    [`${V1}; charset=utf-8`, '1', 'parameters other than q aside'],
    [`${V1} ; Q=0.7 , application/json;q=0.6`, '1', 'whitespace and the parameter name case'],
    [`${V1}x`, '2', 'another media type (a longer subtype), not version 1'],
    [`${V1}-seq`, '2', 'another media type (+json-seq), not version 1'],
    ['application/vnd.freight.v1', '2', 'another media type (no +json)'],
    ['*/*', '2', 'a wildcard never chooses version 1'],
    ['application/*', '2', 'nor does application/*'],
    ['text/html', '2', 'neither acceptable: version 2 as before'],
    [`application/json;q=0, ${V1};q=0`, '2', 'both refused: version 2 as before'],
  ];

  for (const route of ['/api/financial-docs', '/api/shipments']) {
    t.test(`${route}: Accept chooses the version by RFC 9110 (q-values, the most specific range)`, async (t) => {
      for (const [accept, version, why] of ACCEPT_TABLE) {
        const res = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, accept } });
        t.equal(res.statusCode, 200, `${accept}: 200`);
        t.equal(res.headers['x-api-version'], version, `${accept} → version ${version} (${why})`);
        t.equal(res.headers['content-type'], version === '1' ? V1 : 'application/json', `${accept}: its media type`);
        t.equal(Array.isArray(res.json()), version === '1', `${accept}: ${version === '1' ? 'the bare array' : 'the page'}`);
        assertConforms(t, res, 'GET', route);
      }
      const none = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A } });
      t.equal(none.headers['x-api-version'], '2', 'no Accept: version 2');
      const header2 = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, 'x-api-version': '2', accept: V1 } });
      t.equal(header2.headers['x-api-version'], '2', 'x-api-version: 2 wins over an Accept preferring version 1');
      const header1 = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, 'x-api-version': '1', accept: 'application/json' } });
      t.equal(header1.headers['x-api-version'], '1', 'x-api-version: 1 wins over Accept: application/json');
    });
  }

  /** An app on the harness's database whose clock reads `at` (HandlerDeps.now). */
  async function appAt(at: number, env: Record<string, string> = {}): Promise<FastifyInstance> {
    const app = await buildApp({ config: testConfig(env), db: h.db, logger: false, now: () => new Date(at) });
    t.teardown(() => app.close());
    return app;
  }

  t.test('from its Sunset on, version 1 is 410 Gone (by x-api-version or by Accept); version 2 is served', async (t) => {
    const before = await appAt(SUNSET - 1);
    const at = await appAt(SUNSET);
    const after = await appAt(Date.parse('2027-07-15T12:00:00Z'));
    for (const route of ['/api/financial-docs', '/api/shipments']) {
      for (const asked of [{ 'x-api-version': '1' }, { accept: V1 }]) {
        const how = Object.keys(asked)[0]!;
        const last = await before.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, ...asked } });
        t.equal(last.statusCode, 200, `${route} by ${how}: 200 one millisecond before the sunset`);
        t.equal(last.headers['x-api-version'], '1');
        t.equal(new Date(String(last.headers.sunset)).getTime(), SUNSET, 'the Sunset header is the instant the 410s start');
        for (const [app, when] of [
          [at, 'at the sunset'],
          [after, 'on 2027-07-15'],
        ] as const) {
          const gone = await app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, ...asked } });
          t.equal(gone.statusCode, 410, `${route} by ${how}: 410 ${when}`);
          assertConforms(t, gone, 'GET', route);
          t.equal(gone.headers['content-type'], 'application/json', 'the error shape, as JSON');
          const error = gone.json<{ error: { code: number; message: string; reason: string; details: string[] } }>().error;
          t.match(error, { code: 410, message: 'Gone', reason: 'not_found' });
          t.match(error.details.join(' '), /2027-06-30T00:00:00Z/, 'names the sunset');
          t.match(error.details.join(' '), /drop x-api-version: 1.*data/, 'names the migration');
          t.notOk(gone.headers['x-api-version'], 'no version served');
          t.ok(varyOf(gone).includes('x-api-version') && varyOf(gone).includes('accept'), '410 varies on what chose version 1');
          const head = await app.inject({ method: 'HEAD', url: route, headers: { 'x-api-key': KEY_A, ...asked } });
          t.equal(head.statusCode, 410, 'HEAD too');
        }
      }
      for (const headers of [{}, { 'x-api-version': '2' }, { accept: `${V1};q=0.5, application/json` }]) {
        const v2 = await after.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, ...headers } });
        t.equal(v2.statusCode, 200, `${route}: version 2 after the sunset (${JSON.stringify(headers)})`);
        t.equal(v2.headers['x-api-version'], '2');
      }
    }
  });

  t.test('Vary names x-api-version and accept on both versions, keeping Origin and accept-encoding', async (t) => {
    const origin = 'https://dashboard.example.com';
    const cors = await appAt(BEFORE_SUNSET, { CORS_ORIGINS: origin });
    for (const route of ['/api/financial-docs', '/api/shipments']) {
      for (const headers of [{}, { 'x-api-version': '2' }, { 'x-api-version': '1' }, { accept: V1 }, { accept: 'application/json' }]) {
        const label = `${route} ${JSON.stringify(headers)}`;
        const plain = await h.app.inject({ method: 'GET', url: route, headers: { 'x-api-key': KEY_A, ...headers } });
        t.equal(plain.statusCode, 200, label);
        t.same(
          varyOf(plain).filter((v) => v === 'x-api-version' || v === 'accept'),
          ['x-api-version', 'accept'],
          `${label}: vary once each`,
        );
        const res = await cors.inject({
          method: 'GET',
          url: `${route}?limit=50`,
          headers: { 'x-api-key': KEY_A, origin, 'accept-encoding': 'gzip', ...headers },
        });
        t.equal(res.statusCode, 200, label);
        t.equal(res.headers['content-encoding'], 'gzip', `${label}: compressed`);
        const vary = varyOf(res);
        for (const name of ['origin', 'accept-encoding', 'x-api-version', 'accept'])
          t.ok(vary.includes(name), `${label}: vary names ${name} (${vary.join(', ')})`);
        t.equal(new Set(vary).size, vary.length, `${label}: no name twice`);
      }
    }
    const invalid = await h.app.inject({ method: 'GET', url: '/api/shipments', headers: { 'x-api-key': KEY_A, 'x-api-version': '7' } });
    t.equal(invalid.statusCode, 400);
    t.ok(varyOf(invalid).includes('x-api-version'), 'the 400 for an unsupported x-api-version varies on it too');
  });
}
