/**
 * Error answers carry a stable `reason` beside `{code, message, details}`, and
 * validation errors say which parameter or body field each detail is about
 * (`fields`), over REST and in MCP tool errors alike (issue 11, item 5).
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { ERROR_REASONS } from '../../lib/http/api-error.ts';
import { loadSpec } from '../../handlers/app.ts';
import { errorProblem, REASON_STATUSES } from '../helpers/error-reason.ts';

export default async function errorReasonsTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const auth = { 'x-api-key': KEY_A };
  type Err = { code: number; message: string; details: string[]; reason: string; fields?: { in: string; name: string; detail: string }[] };
  const errorOf = (res: { json: () => unknown }) => (res.json() as { error: Err }).error;

  t.test('the spec lists exactly the reasons the code can give', async (t) => {
    const spec = loadSpec() as unknown as { components: { schemas: { ErrorReason: { enum: string[] } } } };
    t.same([...spec.components.schemas.ErrorReason.enum].sort(), [...ERROR_REASONS].sort());
    t.same(Object.keys(REASON_STATUSES).sort(), [...ERROR_REASONS].sort(), 'and the tests know the status of each (test/helpers/error-reason.ts)');
  });

  t.test('headers: an unsupported x-api-version names the header', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs', headers: { ...auth, 'x-api-version': '7' } });
    t.equal(res.statusCode, 400);
    assertConforms(t, res, 'GET', '/api/financial-docs');
    t.equal(errorProblem(400, res.json()), null);
    t.match(errorOf(res), { reason: 'invalid_parameter', fields: [{ in: 'header', name: 'x-api-version' }] });
  });

  t.test('authentication and authorisation', async (t) => {
    const missing = await h.app.inject({ method: 'GET', url: '/api/shipments' });
    t.match(errorOf(missing), { code: 401, reason: 'missing_api_key' });
    const unknown = await h.app.inject({ method: 'GET', url: '/api/shipments', headers: { 'x-api-key': 'not-a-real-key-000000' } });
    t.match(errorOf(unknown), { code: 401, reason: 'unknown_api_key' });
    const writer = await createApiKey(h.db, TENANT_A, 'writer', ['write']);
    const denied = await h.app.inject({ method: 'GET', url: '/api/shipments', headers: { 'x-api-key': writer.key } });
    t.match(errorOf(denied), { code: 403, reason: 'insufficient_scope' });
    t.notOk('fields' in errorOf(denied), 'fields only on validation errors');
  });

  t.test('query parameters: one detail per parameter, each named in fields', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/api/shipments?limit=abc&startDate=yesterday&zzz=1', headers: auth });
    t.equal(res.statusCode, 400);
    assertConforms(t, res, 'GET', '/api/shipments');
    const e = errorOf(res);
    t.equal(e.reason, 'invalid_parameter');
    t.equal(e.details.length, 3, 'limit, startDate (format and pattern: one problem) and zzz');
    t.same(e.fields?.map((f) => [f.in, f.name]).sort(), [
      ['query', 'limit'],
      ['query', 'startDate'],
      ['query', 'zzz'],
    ]);
    t.same(
      e.fields?.map((f) => f.detail),
      e.details,
      'fields follow details, in order',
    );
  });

  t.test('body fields', async (t) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: auth,
      payload: { userIds: ['u1'], ruleId: 'overdue-invoices', cycleKey: '2026-13', nameAlert: 'x', priority: 'high' },
    });
    t.equal(res.statusCode, 400);
    const e = errorOf(res);
    t.equal(e.reason, 'invalid_body');
    t.ok(
      e.fields?.every((f) => f.in === 'body'),
      'all in the body',
    );
    t.ok(
      e.fields?.some((f) => f.name === 'priority'),
      'the unknown field is named',
    );
    t.same(
      e.fields?.map((f) => f.detail),
      e.details,
    );
    const domain = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: auth,
      payload: { userIds: ['u1', 'u1'], ruleId: 'overdue-invoices', cycleKey: '2026-11', nameAlert: 'x' },
    });
    t.match(
      errorOf(domain),
      { code: 400, reason: 'invalid_body', fields: [{ in: 'body', name: 'userIds' }] },
      'rules checked by the domain name their field too',
    );
    const items = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: auth,
      payload: { userIds: ['same', 'same', ' x'], ruleId: 'overdue-invoices', cycleKey: '2026-11', nameAlert: 'x' },
    });
    t.equal(errorProblem(400, items.json()), null, 'one detail per field, fields follow details');
    t.match(
      errorOf(items).fields,
      [
        { in: 'body', name: 'userIds.2' },
        { in: 'body', name: 'userIds' },
      ],
      'an array entry is named by its index',
    );
    const notJson = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"userIds": [',
    });
    t.match(errorOf(notJson), { code: 400, reason: 'invalid_body', details: [/not valid JSON/] }, 'malformed JSON');
    // Valid JSON (RFC 8259) with a key the prototype-poisoning protection refuses: told why, not "not valid JSON".
    for (const payload of ['{"userIds":["q1"],"extraData":{"__proto__":{"a":1}}}', '{"extraData":{"constructor":{"prototype":1}}}']) {
      const poisoned = await h.app.inject({ method: 'POST', url: '/api/alerts/schedule', headers: { ...auth, 'content-type': 'application/json' }, payload });
      t.match(
        errorOf(poisoned),
        { code: 400, reason: 'invalid_body', details: [/__proto__ or constructor with prototype/], fields: [{ in: 'body', name: '' }] },
        payload,
      );
      t.notMatch(poisoned.body, /not valid JSON/, `${payload}: not called malformed`);
    }
  });

  t.test('cursor', async (t) => {
    const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs?cursor=eyJ2IjoxfQ.AAAA', headers: auth });
    t.equal(res.statusCode, 400, 'not in the documented form: 400');
    t.match(errorOf(res), { reason: 'invalid_cursor', fields: [{ in: 'query', name: 'cursor' }] });
    const inForm = `eyJ2IjoxLCJsIjoi${'A'.repeat(60)}.${'A'.repeat(43)}`;
    const forged = await h.app.inject({ method: 'GET', url: `/api/financial-docs?limit=1&cursor=${inForm}`, headers: auth });
    t.equal(forged.statusCode, 404, 'in the documented form but not issued: 404');
    t.match(errorOf(forged), { reason: 'invalid_cursor', fields: [{ in: 'query', name: 'cursor' }] });
  });

  t.test('routing, media types and sizes', async (t) => {
    t.match(errorOf(await h.app.inject({ method: 'GET', url: '/api/financial-docs/NO-SUCH-DOC', headers: auth })), { code: 404, reason: 'not_found' });
    t.match(errorOf(await h.app.inject({ method: 'GET', url: '/api/no-such-route' })), { code: 404, reason: 'not_found' });
    t.match(errorOf(await h.app.inject({ method: 'DELETE', url: '/api/shipments', headers: auth })), { code: 405, reason: 'method_not_allowed' });
    const text = await h.app.inject({ method: 'POST', url: '/api/alerts/schedule', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'hi' });
    t.match(errorOf(text), { code: 415, reason: 'unsupported_media_type' });
    const big = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ nameAlert: 'x'.repeat(300_000) }),
    });
    t.match(errorOf(big), { code: 413, reason: 'payload_too_large' });
  });

  t.test('rate limit', async (t) => {
    await h.rebuild({ env: { RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000' } });
    await h.app.inject({ method: 'GET', url: '/api/shipments', headers: auth });
    t.match(errorOf(await h.app.inject({ method: 'GET', url: '/api/shipments', headers: auth })), { code: 429, reason: 'rate_limited' });
    await h.rebuild();
  });

  t.test('MCP tool errors carry the same reason and fields', async (t) => {
    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', auth);
    const res = await client.callTool({ name: 'listShipments', arguments: { startDate: 'yesterday', dateFilterBy: 'sometime' } });
    t.equal(res.isError, true);
    const e = (res.structuredContent as { error: Err }).error;
    t.equal(e.reason, 'invalid_parameter');
    t.same(e.fields?.map((f) => f.name).sort(), ['dateFilterBy', 'startDate']);
    const missing = await client.callTool({ name: 'getFinancialDoc', arguments: {} });
    t.match(
      (missing.structuredContent as { error: Err }).error,
      { code: 400, reason: 'invalid_parameter', fields: [{ in: 'path', name: 'id' }] },
      'a missing path argument',
    );
  });
}
