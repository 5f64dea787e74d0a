/**
 * Alert scheduling and its companions through HTTP, without a worker (jobs stay
 * as scheduled): one job per user with the right data and tenant, no duplicates
 * on repeated or concurrent posts, tenant isolation, validation, Idempotency-Key,
 * cancel and listing.
 */
import type { Test } from 'tap';
import { ObjectId } from 'mongodb';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { COLLECTIONS } from '../../lib/db/collections.ts';
import { alertJobs, alertRecords } from '../../lib/alerts/alert-jobs-repo.ts';
import { alertJobKey } from '../../lib/alerts/jobs.ts';
import { ALERT_JOB_NAME } from '../../lib/alerts/jobs.ts';
import { ALERT_RULE_IDS } from '../../lib/alerts/rules.ts';
import { alertsPlugin } from '../../lib/alerts/plugin.ts';
import type { AlertRecordDocument } from '../../lib/alerts/records.ts';
import { alertRecord } from '../fixtures/alert-records.ts';
import { idempotencyRecordId, requestFingerprint, withIdempotency } from '../../lib/alerts/idempotency.ts';
import type { IdempotencyRecord } from '../../lib/alerts/idempotency-repo.ts';
import { ApiError } from '../../lib/http/api-error.ts';
import { errorProblem } from '../helpers/error-reason.ts';
import { readExtraData } from '../../lib/alerts/extra-data.ts';

export default async function alertsApiTests(t: Test): Promise<void> {
  const h = await startHarness(t, { build: { plugins: [alertsPlugin({ worker: false })] } });

  const SCHEDULE = '/api/alerts/schedule';
  const JOBS = '/api/alerts/jobs';
  const ALERTS = '/api/alerts';

  type Json = Record<string, any>;
  const post = (body: unknown, key = KEY_A, headers: Record<string, string> = {}) =>
    h.app.inject({
      method: 'POST',
      url: SCHEDULE,
      headers: { 'x-api-key': key, 'content-type': 'application/json', ...headers },
      payload: JSON.stringify(body),
    });
  const get = (url: string, key = KEY_A) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
  const del = (id: string, key = KEY_A) => h.app.inject({ method: 'DELETE', url: `${JOBS}/${id}`, headers: { 'x-api-key': key } });

  const users = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
  const body = (over: Json = {}): Json => ({
    userIds: ['u-1'],
    ruleId: 'overdue-invoices',
    cycleKey: '2026-03',
    nameAlert: 'Facturas vencidas marzo',
    ...over,
  });
  /** Everything the alert feature writes, to prove a rejected request wrote nothing. */
  const footprint = async () => ({
    jobs: await h.db.collection(COLLECTIONS.alertJobs).countDocuments(),
    keys: await h.db.collection(COLLECTIONS.idempotency).countDocuments(),
  });

  t.test('N users: N jobs with the right data, for the key tenant', async (t) => {
    const userIds = users('n', 5);
    const dueDate = '2026-04-01T14:00:00.000Z';
    // extraData at any depth (free-form: its 8 KiB bound the depth), back exactly as sent.
    const extraData = { channel: 'email', nested: { level: 2, a: { b: { c: { d: { e: [[{ f: 1 }]] } } } } } };
    const res = await post(body({ userIds, tenantId: TENANT_A, extraData, dueDate }));
    t.equal(res.statusCode, 200, res.body);
    assertConforms(t, res, 'POST', SCHEDULE);
    const out = res.json();
    t.match(out, {
      success: true,
      tenant: TENANT_A,
      ruleId: 'overdue-invoices',
      cycleKey: '2026-03',
      dueDate,
      individual: true,
      scheduled: 5,
      newlyScheduled: 5,
      alreadyScheduled: 0,
    });
    t.match(out.message, /^5 individual alerts scheduled .*\(5 new, 0 already scheduled\)$/);
    t.same(
      out.jobs.map((j: Json) => j.userId),
      userIds,
      'one entry per user, in order',
    );
    t.ok(out.jobs.every((j: Json) => j.created === true && /^[0-9a-f]{24}$/.test(j.jobId)));

    const stored = await alertJobs(h.db)
      .find({ 'data.userId': { $in: userIds } })
      .toArray();
    t.equal(stored.length, 5, 'five jobs persisted');
    for (const job of stored) {
      t.equal(job.name, ALERT_JOB_NAME);
      t.equal(job.data.tenant, TENANT_A);
      t.equal(job.data.ruleId, 'overdue-invoices');
      t.equal(job.data.cycleKey, '2026-03');
      t.equal(job.data.nameAlert, 'Facturas vencidas marzo');
      t.same(readExtraData(job.data.extraData), { channel: 'email', nested: { level: 2, a: { b: { c: { d: { e: [[{ f: 1 }]] } } } } } });
      t.equal(job.nextRunAt?.toISOString(), dueDate, 'due at dueDate');
      t.equal(job.lockedAt, null);
      t.equal(job.data.jobKey, alertJobKey(TENANT_A, 'overdue-invoices', '2026-03', job.data.userId));
      t.equal(job._id.toHexString(), out.jobs.find((j: Json) => j.userId === job.data.userId).jobId);
    }

    const listed = await get(`${JOBS}?cycleKey=2026-03&ruleId=overdue-invoices&limit=100`);
    t.equal(listed.statusCode, 200);
    assertConforms(t, listed, 'GET', JOBS);
    const mine = listed.json().data.filter((j: Json) => userIds.includes(j.userId));
    t.equal(mine.length, 5);
    t.match(mine[0], { tenant: TENANT_A, state: 'scheduled', nextRunAt: dueDate, failCount: 0, failReason: null, failures: [], individual: true });
  });

  t.test('repeated post: same jobs, nothing new', async (t) => {
    const userIds = users('r', 3);
    const first = (await post(body({ userIds }))).json();
    const before = await alertJobs(h.db).countDocuments();
    const again = await post(body({ userIds, nameAlert: 'renamed', dueDate: '2030-01-01T00:00:00Z' }));
    t.equal(again.statusCode, 200);
    assertConforms(t, again, 'POST', SCHEDULE);
    t.match(again.json(), { scheduled: 3, newlyScheduled: 0, alreadyScheduled: 3 });
    t.same(
      again.json().jobs.map((j: Json) => j.jobId),
      first.jobs.map((j: Json) => j.jobId),
      'the existing job ids',
    );
    t.ok(again.json().jobs.every((j: Json) => j.created === false));
    t.equal(await alertJobs(h.db).countDocuments(), before, 'no job added');
    const job = await alertJobs(h.db).findOne({ 'data.userId': userIds[0] });
    t.equal(job?.data.nameAlert, 'Facturas vencidas marzo', 'an existing job is left unchanged');

    const overlap = (await post(body({ userIds: [...userIds.slice(1), 'r-new'] }))).json();
    t.match(overlap, { scheduled: 3, newlyScheduled: 1, alreadyScheduled: 2 });
    t.same(
      overlap.jobs.map((j: Json) => j.created),
      [false, false, true],
    );
  });

  t.test('concurrent identical posts never duplicate', async (t) => {
    const userIds = users('c', 60);
    const responses = await Promise.all(Array.from({ length: 8 }, () => post(body({ userIds, ruleId: 'tax-findings' }))));
    for (const r of responses) t.equal(r.statusCode, 200, r.body);
    const bodies = responses.map((r) => r.json());
    t.equal(
      bodies.reduce((s, b) => s + b.newlyScheduled, 0),
      60,
      'each user created exactly once across all requests',
    );
    for (const b of bodies) t.equal(b.scheduled, 60);
    const idsPerUser = new Map<string, Set<string>>();
    for (const b of bodies) for (const j of b.jobs) idsPerUser.set(j.userId, (idsPerUser.get(j.userId) ?? new Set()).add(j.jobId));
    t.ok(
      [...idsPerUser.values()].every((s) => s.size === 1),
      'every response names the same job per user',
    );
    t.equal(await alertJobs(h.db).countDocuments({ 'data.ruleId': 'tax-findings', 'data.userId': { $in: userIds } }), 60, 'exactly one job per user');
  });

  t.test('tenants are isolated', async (t) => {
    const userIds = ['shared-1', 'shared-2'];
    const a = (await post(body({ userIds, ruleId: 'unbilled-deliveries' }))).json();
    const b = await post(body({ userIds, ruleId: 'unbilled-deliveries' }), KEY_B);
    t.equal(b.statusCode, 200);
    t.match(b.json(), { tenant: TENANT_B, newlyScheduled: 2 }, 'same users, rule and cycle are new jobs for another tenant');
    t.notSame(
      b.json().jobs.map((j: Json) => j.jobId),
      a.jobs.map((j: Json) => j.jobId),
    );
    const listB = (await get(JOBS, KEY_B)).json();
    t.equal(listB.meta.total, 2);
    t.ok(listB.data.every((j: Json) => j.tenant === TENANT_B));
    t.equal(listB.meta.tenant, TENANT_B);
  });

  t.test('foreign tenantId: 403 and nothing written', async (t) => {
    const before = await footprint();
    const res = await post(body({ tenantId: TENANT_B, userIds: ['x-1', 'x-2'] }));
    t.equal(res.statusCode, 403);
    assertConforms(t, res, 'POST', SCHEDULE);
    t.same(res.json().error, {
      code: 403,
      message: 'Forbidden',
      details: [`tenantId ${TENANT_B} does not match the authenticated tenant`],
      reason: 'foreign_tenant',
    });
    const withKey = await post(body({ tenantId: TENANT_B, userIds: ['x-1'] }), KEY_A, { 'idempotency-key': 'forbidden-key' });
    t.equal(withKey.statusCode, 403);
    t.same(await footprint(), before, 'no job and no idempotency record');
    const fine = await post(body({ tenantId: TENANT_B, userIds: ['x-1'] }), KEY_B, { 'idempotency-key': 'forbidden-key' });
    t.equal(fine.statusCode, 200, 'the key is free; the same body is fine for the tenant it names');
  });

  t.test('validation errors: 400, one detail per problem, nothing written', async (t) => {
    const before = await footprint();
    const cases: [string, Json, RegExp][] = [
      ['unknown field', body({ priority: 'high' }), /unknown body field 'priority'/],
      ['missing nameAlert', { userIds: ['a'], ruleId: 'overdue-invoices', cycleKey: '2026-03' }, /nameAlert is required/],
      ['empty userIds', body({ userIds: [] }), /userIds must NOT have fewer than 1 items/],
      ['1001 users', body({ userIds: users('big', 1001) }), /userIds must NOT have more than 1000 items/],
      ['duplicate users', body({ userIds: ['a', 'b', 'a'] }), /userIds must NOT have duplicate items/],
      ['empty user id', body({ userIds: [''] }), /userIds\.0/],
      ['month 13', body({ cycleKey: '2026-13' }), /cycleKey must match pattern/],
      ['no dash', body({ cycleKey: '202603' }), /cycleKey must match pattern/],
      // Months no alert can be about (years 1970–2999, as every date here): 0026-03 was evaluated over March 1926, 9999-12 over today.
      ['year 0026', body({ cycleKey: '0026-03' }), /cycleKey must match pattern/],
      ['year 9999', body({ cycleKey: '9999-12' }), /cycleKey must match pattern/],
      ['year 1969', body({ cycleKey: '1969-12' }), /cycleKey must match pattern/],
      // Half a surrogate pair (JSON writes it \ud800): stored as UTF-8 it became U+FFFD without a word.
      ['lone surrogate', body({ nameAlert: 'a\ud800b' }), /nameAlert must be well-formed Unicode text/],
      ['bad dueDate', body({ dueDate: 'tomorrow' }), /dueDate must (be a valid date-time|match pattern)/],
      ['unknown rule', body({ ruleId: 'late-payments' }), new RegExp(`ruleId must be one of: ${ALERT_RULE_IDS.join(', ')}`)],
      ['too large', body({ extraData: { blob: 'x'.repeat(9000) } }), /extraData is \d+ bytes as JSON; the limit is 8192/],
      ['bad tenantId', body({ tenantId: 'nope' }), /tenantId must match pattern/],
      ['individual not boolean', body({ individual: 'yes' }), /individual must be boolean/],
    ];
    for (const [name, payload, detail] of cases) {
      const res = await post(payload);
      t.equal(res.statusCode, 400, `${name}: 400`);
      assertConforms(t, res, 'POST', SCHEDULE);
      t.equal(res.json().error.message, 'Invalid request body', name);
      t.match(res.json().error.details.join(' | '), detail, `${name}: ${res.json().error.details.join(' | ')}`);
    }
    // Bodies JSON.stringify cannot write: a number JSON.parse reads as Infinity (it was stored, and listed back, as null).
    for (const [raw, detail] of [
      ['"extraData":{"big":1e400}', /^extraData\.big is an infinite number/],
      ['"extraData":{"nested":{"list":[1,-1e400]}}', /^extraData\.nested\.list\[1\] is an infinite number/],
    ] as const) {
      const res = await h.app.inject({
        method: 'POST',
        url: SCHEDULE,
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
        payload: `{"userIds":["x-1"],"ruleId":"overdue-invoices","cycleKey":"2026-03","nameAlert":"n",${raw}}`,
      });
      t.equal(res.statusCode, 400, raw);
      t.match(res.json().error.details[0], detail, raw);
    }
    // Valid RFC 3339 instants whose year the answers cannot write in four digits (+010000-01-01…, -000001-12-31…).
    for (const dueDate of ['9999-12-31T23:59:59-23:59', '0000-01-01T00:00:00+01:00', '1969-12-31T23:59:59Z']) {
      const res = await post(body({ dueDate }));
      t.equal(res.statusCode, 400, dueDate);
      t.match(res.json().error.details.join(' '), /dueDate must match pattern/, dueDate);
    }
    // 201 characters (an emoji is one, as JSON Schema's maxLength counts) are too many; 200 are not (300 UTF-16 units).
    const long = await post(body({ userIds: ['emoji-1'], nameAlert: '🚚'.repeat(201) }));
    t.equal(long.statusCode, 400);
    t.match(long.json().error.details.join(' '), /nameAlert must NOT have more than 200 characters/);
    const two = await post(body({ cycleKey: '2026-00', extraData: { $x: 1 }, surprise: true }));
    t.equal(two.statusCode, 400);
    t.ok(two.json().error.details.length >= 2, 'every schema problem listed');
    const noKey = await h.app.inject({ method: 'POST', url: SCHEDULE, payload: body() });
    t.equal(noKey.statusCode, 401, '401 before validation');
    assertConforms(t, noKey, 'POST', SCHEDULE);
    const xml = await h.app.inject({ method: 'POST', url: SCHEDULE, headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' }, payload: '<a/>' });
    t.equal(xml.statusCode, 415);
    assertConforms(t, xml, 'POST', SCHEDULE);
    t.same(await footprint(), before, 'nothing written');
    // Within the years, an offset may carry the instant past them by a day: it still writes back in four digits.
    const edge = await post(body({ userIds: ['edge-1'], dueDate: '2999-12-31T23:59:59-23:59' }));
    t.equal(edge.statusCode, 200, edge.body);
    t.equal(edge.json().dueDate, '3000-01-01T23:58:59.000Z');
  });

  t.test('extraData nested deeper than JSON.stringify recurses, within the body limit: 400 too large, never a 500', async (t) => {
    const before = await footprint();
    // 20,000 levels are 100 KB of body (under 256 KiB): measuring it with JSON.stringify overflowed the stack (a 500).
    const nestings: [string, string][] = [
      ['{"a":', '}'],
      ['[', ']'],
    ];
    for (const [open, close] of nestings) {
      const depth = 20_000;
      const res = await h.app.inject({
        method: 'POST',
        url: SCHEDULE,
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
        payload: `{"userIds":["deep-1"],"ruleId":"overdue-invoices","cycleKey":"2026-03","nameAlert":"n","extraData":{"x":${open.repeat(depth)}1${close.repeat(depth)}}}`,
      });
      t.equal(res.statusCode, 400, `${open} × ${depth}: ${res.body.slice(0, 200)}`);
      assertConforms(t, res, 'POST', SCHEDULE);
      t.match(res.json().error?.details?.join(' '), /extraData is \d+ bytes as JSON; the limit is 8192/);
    }
    t.same(await footprint(), before, 'nothing written');
  });

  t.test('a dueDate the schema admits is scheduled: a leap second (RFC 3339 5.7) and an offset of whole hours', async (t) => {
    // Both pass the spec's date-time format; Date.parse refuses them, and they were a 400 "dueDate must be a valid date-time".
    for (const [userId, dueDate, instant] of [
      // The leap second comes after 23:59:59 UTC; a Date has no 61st second: the last millisecond before the next minute.
      ['leap-1', '2026-06-30T23:59:60Z', '2026-06-30T23:59:59.999Z'],
      ['leap-2', '2026-06-30T17:59:60-06:00', '2026-06-30T23:59:59.999Z'],
      // 14:00 at UTC+5 is 09:00 UTC.
      ['hours-1', '2026-04-01T14:00:00+05', '2026-04-01T09:00:00.000Z'],
    ] as const) {
      const res = await post(body({ userIds: [userId], dueDate }));
      t.equal(res.statusCode, 200, `${dueDate}: ${res.body}`);
      assertConforms(t, res, 'POST', SCHEDULE);
      t.equal(res.json().dueDate, instant, dueDate);
      const job = await alertJobs(h.db).findOne({ 'data.tenant': TENANT_A, 'data.userId': userId });
      t.equal(job?.nextRunAt?.toISOString(), instant, `${dueDate}: due then`);
    }
  });

  t.test('a name of 150 emoji (150 characters, 300 UTF-16 units) is within the 200 characters', async (t) => {
    const res = await post(body({ userIds: ['emoji-2'], nameAlert: '🚚'.repeat(150) }));
    t.equal(res.statusCode, 200, res.body);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
    const viaMcp = (await client.callTool({
      name: 'scheduleAlerts',
      arguments: { body: { userIds: ['emoji-3'], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: '🚚'.repeat(150) } },
    })) as { isError?: boolean };
    t.notOk(viaMcp.isError, 'MCP: the same');
    const year26 = (await client.callTool({
      name: 'scheduleAlerts',
      arguments: { body: { userIds: ['emoji-4'], ruleId: 'overdue-invoices', cycleKey: '0026-03', nameAlert: 'n' } },
    })) as { isError?: boolean; structuredContent?: { error?: { code: number; details: string[] } } };
    t.match(
      year26,
      { isError: true, structuredContent: { error: { code: 400, details: [/cycleKey must match pattern/] } } },
      'MCP: a cycle in year 0026 is refused',
    );
    const half = (await client.callTool({
      name: 'scheduleAlerts',
      arguments: { body: { userIds: ['emoji-5'], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: 'a\ud800b' } },
    })) as { isError?: boolean };
    t.match(
      half,
      { isError: true, structuredContent: { error: { code: 400, details: [/nameAlert must be well-formed/] } } },
      'MCP: half a surrogate pair is refused',
    );
  });

  t.test('Idempotency-Key: same body replays, a different body is a 409, another key is a new request', async (t) => {
    const first = await post(body({ userIds: ['i-1', 'i-2'] }), KEY_A, { 'idempotency-key': 'key-001' });
    t.equal(first.statusCode, 200);
    t.notOk(first.headers['idempotent-replayed']);
    t.equal(first.json().newlyScheduled, 2);
    // Same body with keys in another order: the same request.
    const replay = await post({ cycleKey: '2026-03', nameAlert: 'Facturas vencidas marzo', ruleId: 'overdue-invoices', userIds: ['i-1', 'i-2'] }, KEY_A, {
      'idempotency-key': 'key-001',
    });
    t.equal(replay.statusCode, 200);
    assertConforms(t, replay, 'POST', SCHEDULE);
    t.equal(replay.headers['idempotent-replayed'], 'true');
    t.same(replay.json(), first.json(), 'exactly the first answer (newlyScheduled 2, not 0)');

    // The same key with another body: 409 idempotency_key_reused, in the documented shape; nothing is written.
    const jobsBefore = await h.db.collection(COLLECTIONS.alertJobs).countDocuments();
    const reused = await post(body({ userIds: ['i-1', 'i-3'] }), KEY_A, { 'idempotency-key': 'key-001' });
    t.equal(reused.statusCode, 409, 'a key reused for a different body is refused');
    assertConforms(t, reused, 'POST', SCHEDULE);
    t.equal(errorProblem(409, reused.json()), null, 'in the error shape, with a reason that fits 409');
    t.same(reused.json(), {
      error: {
        code: 409,
        message: 'Conflict',
        reason: 'idempotency_key_reused',
        details: ['this Idempotency-Key was already used for a different request (another body) in the last 24 hours; send a new key for a new request'],
      },
    });
    t.notOk(reused.headers['idempotent-replayed']);
    t.equal(await h.db.collection(COLLECTIONS.alertJobs).countDocuments(), jobsBefore, 'nothing scheduled (no job for i-3)');
    const reusedAgain = await post(body({ userIds: ['i-1', 'i-3'] }), KEY_A, { 'idempotency-key': 'key-001' });
    t.equal(reusedAgain.statusCode, 409, 'and again: the key stays bound to the first request');
    const stillReplays = await post(body({ userIds: ['i-1', 'i-2'] }), KEY_A, { 'idempotency-key': 'key-001' });
    t.equal(stillReplays.headers['idempotent-replayed'], 'true', 'the first body still replays after the 409s');
    t.same(stillReplays.json(), first.json());
    t.equal(await h.db.collection(COLLECTIONS.idempotency).countDocuments({ key: 'key-001' }), 1, 'one record per (tenant, operation, key)');

    // Another key: a new request.
    const other = await post(body({ userIds: ['i-1', 'i-3'] }), KEY_A, { 'idempotency-key': 'key-001b' });
    t.equal(other.statusCode, 200);
    assertConforms(t, other, 'POST', SCHEDULE);
    t.notOk(other.headers['idempotent-replayed'], 'not a replay of the first');
    t.match(other.json(), { newlyScheduled: 1, alreadyScheduled: 1 });
    const otherAgain = await post(body({ userIds: ['i-1', 'i-3'] }), KEY_A, { 'idempotency-key': 'key-001b' });
    t.equal(otherAgain.headers['idempotent-replayed'], 'true', 'and its own retry replays it');
    t.same(otherAgain.json(), other.json());

    const otherTenant = await post(body({ userIds: ['i-1'] }), KEY_B, { 'idempotency-key': 'key-001' });
    t.equal(otherTenant.statusCode, 200, 'keys are per tenant: another body under the same key in another tenant is its own request');
    t.notOk(otherTenant.headers['idempotent-replayed']);

    const badKey = await post(body(), KEY_A, { 'idempotency-key': 'has space' });
    t.equal(badKey.statusCode, 400);
    assertConforms(t, badKey, 'POST', SCHEDULE);

    const concurrent = await Promise.all(Array.from({ length: 6 }, () => post(body({ userIds: ['i-9'] }), KEY_A, { 'idempotency-key': 'key-002' })));
    t.same(
      concurrent.map((r) => r.statusCode),
      [200, 200, 200, 200, 200, 200],
    );
    t.equal(concurrent.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 5, 'one original, five replays');
    t.ok(
      concurrent.every((r) => r.body === concurrent[0]!.body),
      'identical answers',
    );
    t.equal(await h.db.collection(COLLECTIONS.idempotency).countDocuments({ key: 'key-002' }), 1);
  });

  t.test('Idempotency-Key with extraData nested 4,000 deep (8 KB, within its limit): scheduled and replayed, never a 500', async (t) => {
    // Admitted without the key; with it, the request's fingerprint was written recursively and overflowed the stack.
    const depth = 4000;
    const payload = `{"userIds":["deep-key-1"],"ruleId":"overdue-invoices","cycleKey":"2026-03","nameAlert":"n","extraData":{"x":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
    const send = () =>
      h.app.inject({
        method: 'POST',
        url: SCHEDULE,
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/json', 'idempotency-key': 'deep-extra-data' },
        payload,
      });
    const first = await send();
    t.equal(first.statusCode, 200, first.body.slice(0, 200));
    assertConforms(t, first, 'POST', SCHEDULE);
    t.equal(first.json().newlyScheduled, 1);
    const again = await send();
    t.equal(again.statusCode, 200, again.body.slice(0, 200));
    t.equal(again.headers['idempotent-replayed'], 'true');
    t.same(again.json(), first.json(), 'the first answer, replayed');
  });

  t.test('Idempotency-Key: in-flight duplicate, dead owner, expired record, other body, old-scheme record', async (t) => {
    const keys = h.db.collection<IdempotencyRecord>(COLLECTIONS.idempotency);
    const now = new Date();
    const fingerprint = requestFingerprint({ any: 'request' });
    const opts = (key: string) => ({ tenant: TENANT_A, key, operation: 'scheduleAlerts', fingerprint, now: () => new Date(), waitMs: 300, pollMs: 50 });
    const record = (key: string, over: Partial<IdempotencyRecord>): IdempotencyRecord => ({
      _id: idempotencyRecordId({ tenant: TENANT_A, key, operation: 'scheduleAlerts' }),
      tenant: TENANT_A,
      key,
      operation: 'scheduleAlerts',
      fingerprint,
      state: 'pending',
      leaseUntil: new Date(now.getTime() + 60_000),
      status: null,
      body: null,
      createdAt: now,
      expiresAt: new Date(now.getTime() + 3_600_000),
      ...over,
    });
    await keys.insertMany([
      record('in-flight', {}),
      record('dead-owner', { leaseUntil: new Date(now.getTime() - 1) }),
      record('expired', { state: 'done', status: 200, body: { old: true }, expiresAt: new Date(now.getTime() - 1) }),
    ]);
    let ran = 0;
    const run = async () => ({ ran: ++ran });
    const inFlight = await withIdempotency(h.db, opts('in-flight'), run).catch((err: unknown) => err);
    t.ok(inFlight instanceof ApiError && inFlight.statusCode === 409, 'still in progress after waiting: 409');
    t.same(await withIdempotency(h.db, opts('dead-owner'), run), { body: { ran: 1 }, replayed: false }, 'a claim whose lease ran out is taken over');
    t.same(await withIdempotency(h.db, opts('dead-owner'), run), { body: { ran: 1 }, replayed: true });
    t.same(await withIdempotency(h.db, opts('expired'), run), { body: { ran: 2 }, replayed: false }, 'an expired record is ignored');
    await t.rejects(
      withIdempotency(h.db, opts('fails'), async () => {
        throw new Error('boom');
      }),
      /boom/,
    );
    t.equal(await keys.countDocuments({ key: 'fails' }), 0, 'a failed request releases its key');
    t.same(
      await withIdempotency(h.db, { ...opts('fails'), fingerprint: requestFingerprint({ other: 1 }) }, run),
      { body: { ran: 3 }, replayed: false },
      'then any body may use it',
    );

    // Another body under a live key: 409 at once, whether the first request is done, running or dead; its record is kept.
    const other = (key: string) => ({ ...opts(key), fingerprint: requestFingerprint({ another: 'request' }) });
    await keys.insertMany([record('other-running', {}), record('other-dead', { leaseUntil: new Date(now.getTime() - 1) })]);
    for (const key of ['dead-owner', 'other-running', 'other-dead']) {
      const started = Date.now();
      const err = await withIdempotency(h.db, other(key), run).catch((e: unknown) => e);
      t.ok(err instanceof ApiError && err.statusCode === 409 && err.reason === 'idempotency_key_reused', `${key}: another body is a 409`);
      t.ok(Date.now() - started < 250, `${key}: without waiting for the first request`);
    }
    t.match(await keys.findOne({ key: 'other-dead' }), { fingerprint, state: 'pending' }, 'the first request keeps its key');
    t.equal(ran, 3, 'a 409 runs nothing');

    // A record of the former scheme (id with the fingerprint) is not found under the new id: the request runs as new.
    await keys.insertOne({
      ...record('old-scheme', { state: 'done', status: 200, body: { old: true } }),
      _id: `${TENANT_A}:old-scheme\u0000scheduleAlerts\u0000${fingerprint}`,
    });
    t.same(await withIdempotency(h.db, opts('old-scheme'), run), { body: { ran: 4 }, replayed: false }, 'an old-scheme record is ignored');
    t.same(await withIdempotency(h.db, opts('old-scheme'), run), { body: { ran: 4 }, replayed: true }, 'and the new record replays');
  });

  t.test('cancel: own job 200, twice or foreign 404, then schedulable again', async (t) => {
    const a = (await post(body({ userIds: ['k-1', 'k-2'], ruleId: 'shrinkage-over-tolerance' }))).json();
    const b = (await post(body({ userIds: ['k-1'], ruleId: 'shrinkage-over-tolerance' }), KEY_B)).json();
    const id = a.jobs[0].jobId;

    const foreign = await del(b.jobs[0].jobId);
    t.equal(foreign.statusCode, 404, "another tenant's id is not found");
    assertConforms(t, foreign, 'DELETE', `${JOBS}/:id`);
    t.ok(await alertJobs(h.db).findOne({ _id: new ObjectId(b.jobs[0].jobId) }), 'and it is still there');

    const res = await del(id);
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'DELETE', `${JOBS}/:id`);
    t.match(res.json(), { cancelled: true, job: { id, userId: 'k-1', tenant: TENANT_A, state: 'scheduled' } });
    t.equal(await alertJobs(h.db).countDocuments({ _id: new ObjectId(id) }), 0);

    const twice = await del(id);
    t.equal(twice.statusCode, 404);
    t.same(twice.json().error.details, [`no alert job with id ${id}`]);
    const malformed = await del('not-an-id');
    t.equal(malformed.statusCode, 400);
    assertConforms(t, malformed, 'DELETE', `${JOBS}/:id`);
    t.equal((await del(new ObjectId().toHexString())).statusCode, 404);

    const again = (await post(body({ userIds: ['k-1', 'k-2'], ruleId: 'shrinkage-over-tolerance' }))).json();
    t.same(
      again.jobs.map((j: Json) => j.created),
      [true, false],
      'the cancelled user is scheduled anew',
    );
    t.not(again.jobs[0].jobId, id);
  });

  t.test('listing jobs: filters, states and pagination', async (t) => {
    const userIds = users('p', 7);
    const sched = (await post(body({ userIds, cycleKey: '2026-05' }))).json();
    const ids = sched.jobs.map((j: Json) => new ObjectId(j.jobId));
    const at = new Date('2026-05-02T10:00:00Z');
    // Simulate what Agenda writes in each state.
    await alertJobs(h.db).updateOne({ _id: ids[0] }, { $set: { lockedAt: at, lastRunAt: at } });
    await alertJobs(h.db).updateOne({ _id: ids[1] }, { $set: { nextRunAt: null, lastRunAt: at, lastFinishedAt: at, failCount: 0 } });
    await alertJobs(h.db).updateOne(
      { _id: ids[2] },
      {
        $set: {
          nextRunAt: new Date('2026-05-02T10:05:00Z'),
          failCount: 1,
          failReason: 'boom',
          failedAt: at,
          lastFinishedAt: at,
          'data.failures': [{ at, attempt: 1, error: 'boom' }],
        },
      },
    );
    await alertJobs(h.db).updateOne({ _id: ids[3] }, { $set: { nextRunAt: null, failCount: 6, failReason: 'boom', failedAt: at, lastFinishedAt: at } });

    const state = async (s: string) => {
      const res = await get(`${JOBS}?cycleKey=2026-05&state=${s}`);
      t.equal(res.statusCode, 200);
      assertConforms(t, res, 'GET', JOBS);
      return res
        .json()
        .data.map((j: Json) => j.userId)
        .sort();
    };
    t.same(await state('running'), [userIds[0]]);
    t.same(await state('completed'), [userIds[1]]);
    t.same(await state('retrying'), [userIds[2]]);
    t.same(await state('failed'), [userIds[3]]);
    t.same(await state('scheduled'), userIds.slice(4).sort());
    const retrying = (await get(`${JOBS}?userId=${userIds[2]}`)).json().data[0];
    t.match(retrying, { state: 'retrying', failCount: 1, failReason: 'boom', failures: [{ attempt: 1, error: 'boom', at: at.toISOString() }] });

    const p1 = await get(`${JOBS}?cycleKey=2026-05&limit=3&page=1`);
    const p3 = await get(`${JOBS}?cycleKey=2026-05&limit=3&page=3`);
    assertConforms(t, p3, 'GET', JOBS);
    t.match(p1.json().meta, { total: 7, page: 1, limit: 3, pages: 3, hasMore: true, nextCursor: /^[\w-]+\.[\w-]+$/, tenant: TENANT_A });
    t.same(p3.json().meta, { total: 7, page: 3, limit: 3, pages: 3, hasMore: false, nextCursor: null, tenant: TENANT_A });
    t.equal(p3.json().data.length, 1);
    const all = [...p1.json().data, ...(await get(`${JOBS}?cycleKey=2026-05&limit=3&page=2`)).json().data, ...p3.json().data].map((j: Json) => j.id);
    t.equal(new Set(all).size, 7, 'pages do not overlap');

    for (const bad of ['state=done', 'limit=0', 'cycleKey=2026-5', 'ruleId=nope', 'colour=red']) {
      const res = await get(`${JOBS}?${bad}`);
      t.equal(res.statusCode, 400, bad);
      assertConforms(t, res, 'GET', JOBS);
    }
    t.equal((await get(JOBS, 'wrong-key')).statusCode, 401);
  });

  t.test('listing alert records: tenant, filters and pagination', async (t) => {
    const record = (i: number, over: Partial<AlertRecordDocument> = {}): AlertRecordDocument =>
      alertRecord({
        _id: new ObjectId().toHexString(),
        userId: `rec-${i % 2}`,
        extraData: { i },
        evaluatedAt: new Date(Date.UTC(2026, 3, 1, 0, i)),
        status: i % 3 === 0 ? 'clear' : 'triggered',
        ...over,
      });
    await alertRecords(h.db).insertMany([
      ...Array.from({ length: 6 }, (_, i) => record(i)),
      record(10, { tenant: TENANT_B }),
      record(11, { ruleId: 'tax-findings', cycleKey: '2026-02' }),
    ]);
    const res = await get(ALERTS);
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', ALERTS);
    t.equal(res.json().meta.total, 7, "only the tenant's records");
    t.ok(res.json().data.every((r: Json) => r.tenant === TENANT_A && !('worker' in r)));
    const times = res.json().data.map((r: Json) => r.evaluatedAt);
    t.same(times, [...times].sort().reverse(), 'newest evaluation first');
    t.equal((await get(`${ALERTS}?userId=rec-1`)).json().meta.total, 4, 'rec-1: records 1, 3, 5 and 11');
    t.equal((await get(`${ALERTS}?ruleId=tax-findings&cycleKey=2026-02`)).json().meta.total, 1);
    t.equal((await get(`${ALERTS}?status=clear`)).json().meta.total, 2);
    const page = await get(`${ALERTS}?limit=4&page=2`);
    assertConforms(t, page, 'GET', ALERTS);
    t.same(page.json().meta, { total: 7, page: 2, limit: 4, pages: 2, hasMore: false, nextCursor: null, tenant: TENANT_A });
    t.equal((await get(`${ALERTS}?status=maybe`)).statusCode, 400);
    t.equal((await get(ALERTS, KEY_B)).json().meta.total, 1);
  });

  t.test('a cursor walks the records and the jobs whole while newer ones arrive: none repeated, none skipped, any depth', async (t) => {
    // 250 records of tenant A, five per evaluation instant (ties broken by id), walked 40 at a time; a newer record
    // arrives before each page (by page number, each would push one record onto the next page: repeated).
    const base = Date.UTC(2026, 5, 1);
    const hexId = (i: number): string => `c0ffee${i.toString(16).padStart(18, '0')}`;
    const rec = (i: number, at: number): AlertRecordDocument =>
      alertRecord({ _id: hexId(i), userId: 'walker', cycleKey: '2026-06', dueDate: new Date(base), evaluatedAt: new Date(at) });
    await alertRecords(h.db).insertMany(Array.from({ length: 250 }, (_, i) => rec(i, base + Math.floor(i / 5) * 60_000)));
    const seen: string[] = [];
    let url = `${ALERTS}?userId=walker&limit=40`;
    for (let page = 1; ; page++) {
      const res = await get(url);
      t.equal(res.statusCode, 200, res.body.slice(0, 200));
      if (page === 2) assertConforms(t, res, 'GET', ALERTS);
      seen.push(...res.json().data.map((r: Json) => r.id));
      await alertRecords(h.db).insertOne(rec(1000 + page, base + 86_400_000 + page));
      const next = res.json().meta.nextCursor;
      if (!next) break;
      url = `${ALERTS}?userId=walker&limit=40&cursor=${next}`;
    }
    t.equal(seen.length, 250, 'every record once');
    t.equal(new Set(seen).size, 250, 'none repeated');
    t.same(seen.slice(0, 5), [249, 248, 247, 246, 245].map(hexId), 'newest first, ties by id (descending)');
    const forged = await get(`${ALERTS}?userId=other&limit=40&cursor=${(await get(`${ALERTS}?userId=walker&limit=40`)).json().meta.nextCursor}`);
    t.equal(forged.statusCode, 404, "another walk's cursor designates no page here");

    // The jobs: ObjectId ids and Date creation instants round-trip through the cursor.
    const jobs = await get(`${JOBS}?limit=2`);
    const total = jobs.json().meta.total as number;
    const ids: string[] = [];
    let next: string | null = null;
    do {
      const res = await get(`${JOBS}?limit=2${next ? `&cursor=${next}` : ''}`);
      t.equal(res.statusCode, 200);
      ids.push(...res.json().data.map((j: Json) => j.id));
      next = res.json().meta.nextCursor;
    } while (next);
    t.equal(ids.length, total, `every job once (${total})`);
    t.equal(new Set(ids).size, total);

    // MCP: the same walk with the tool.
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
    const first = (await client.callTool({ name: 'listAlerts', arguments: { userId: 'walker', limit: 100 } })) as unknown as {
      structuredContent: { meta: { nextCursor: string }; data: Json[] };
    };
    const second = (await client.callTool({
      name: 'listAlerts',
      arguments: { userId: 'walker', limit: 100, cursor: first.structuredContent.meta.nextCursor },
    })) as unknown as {
      structuredContent: { data: Json[] };
    };
    const mcpIds = [...first.structuredContent.data, ...second.structuredContent.data].map((r) => r.id);
    t.equal(new Set(mcpIds).size, 200, 'MCP pages do not overlap');
  });

  t.test("findingsLimit lists a record's first findings, so MCP can read an alert of 200 findings (its first item alone was over the budget)", async (t) => {
    const finding = (i: number) => ({
      code: 'OVERDUE_INVOICE',
      severity: 'critical',
      ref: `TGO-FD-${String(i).padStart(6, '0')}`,
      client: 'CLI020202CD2',
      message: `Invoice A-${1000 + i} of CLI020202CD2 is ${30 + i} days overdue: 11,600.00 pending of 11,600.00 (credit 30 days, due 2026-02-01).`,
      amount: 11_600,
      date: '2026-01-02T16:00:00.000Z',
      details: {
        folio: `A-${1000 + i}`,
        uuid: `AAAAAAAA-0000-4000-8000-${String(i).padStart(12, '0')}`,
        total: 11_600,
        paid: 0,
        pending: 11_600,
        dueDate: '2026-02-01',
        daysOverdue: 30 + i,
        creditDays: 30,
      },
    });
    const id = 'f1d0000000000000000000a1';
    await alertRecords(h.db).insertOne(
      alertRecord({
        _id: id,
        userId: 'many-findings',
        nameAlert: 'Facturas vencidas marzo',
        message: '210 overdue invoices',
        summary: { findings: 210, critical: 210, warning: 0, info: 0, amount: 2_436_000 },
        findings: Array.from({ length: 200 }, (_, i) => finding(i)) as AlertRecordDocument['findings'],
        truncated: true,
      }),
    );
    const full = await get(`${ALERTS}?userId=many-findings`);
    t.equal(full.json().data[0].findings.length, 200, 'by default every finding stored');
    const few = await get(`${ALERTS}?userId=many-findings&findingsLimit=20`);
    t.equal(few.statusCode, 200);
    assertConforms(t, few, 'GET', ALERTS);
    t.match(few.json().data[0], { summary: { findings: 210 }, truncated: true });
    t.same(
      few.json().data[0].findings.map((f: Json) => f.ref),
      Array.from({ length: 20 }, (_, i) => finding(i).ref),
      'the first 20, most important first',
    );
    t.equal((await get(`${ALERTS}?userId=many-findings&findingsLimit=201`)).statusCode, 400);

    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const whole = (await client.callTool({ name: 'listAlerts', arguments: { userId: 'many-findings', limit: 1 } })) as unknown as {
      isError?: boolean;
      content: { text: string }[];
    };
    t.ok(whole.isError, 'the record of 200 findings alone is over the budget of a tool result');
    t.match(whole.content[0]!.text, /a smaller `findingsLimit`/, 'the advice names what makes it smaller');
    const read = (await client.callTool({ name: 'listAlerts', arguments: { userId: 'many-findings', limit: 1, findingsLimit: 50 } })) as unknown as {
      isError?: boolean;
      structuredContent: { data: { findings: unknown[]; truncated: boolean }[] };
    };
    t.notOk(read.isError, 'followed, the advice works');
    t.match(read.structuredContent.data[0], { truncated: true });
    t.equal(read.structuredContent.data[0]!.findings.length, 50);
    await alertRecords(h.db).deleteOne({ _id: id });
  });

  t.test('the spec rule enum is the catalogue', async (t) => {
    const spec = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json();
    t.same(spec.components.schemas.ScheduleAlertsRequest ? true : false, true);
    const op = spec.paths['/api/alerts/schedule'].post;
    t.ok(op.parameters.some((p: Json) => p.name === 'Idempotency-Key'));
    const res = await post(body({ ruleId: 'nope' }));
    t.match(res.json().error.details[0], ALERT_RULE_IDS.join(', '));
  });

  t.test('extraData keeps any key, stored serialised (no key can act as a MongoDB operator or path)', async (t) => {
    const extraData = { $where: 'sleep(1000)', 'a.b': 1, '': 'empty', filter: { total: { $gt: 1 } }, list: [{ $set: 1 }] };
    const res = await post(body({ userIds: ['keys-1'], cycleKey: '2026-05', extraData }));
    t.equal(res.statusCode, 200, res.body);
    const jobId = res.json().jobs[0].jobId;
    const listed = await h.app.inject({ method: 'GET', url: '/api/alerts/jobs?userId=keys-1', headers: { 'x-api-key': KEY_A } });
    t.same(listed.json().data.find((j: Json) => j.id === jobId).extraData, extraData, 'comes back exactly as sent');
    const stored = await alertJobs(h.db).findOne({ 'data.userId': 'keys-1' });
    t.type(stored?.data.extraData, 'string', 'stored serialised');
  });
}
