/** Pure parts of the alerts feature: extraData checks, job states, fingerprints, the rule outcome and the spec/catalogue agreement. */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { ObjectId } from 'mongodb';
import { extraDataProblems, validateScheduleInput } from '../../lib/alerts/validation.ts';
import { alertJobKey, alertJobState, alertJobView, newAlertJobDocument } from '../../lib/alerts/jobs.ts';
import { canonicalJson, requestFingerprint } from '../../lib/alerts/idempotency.ts';
import { ALERT_RULE_IDS, MAX_LISTED_FINDINGS, outcome, shrinkageOverTolerance, type AlertFinding } from '../../lib/alerts/rules.ts';
import { DEFAULT_ALERT_WORKER_SETTINGS } from '../../lib/alerts/worker.ts';
import { loadConfig } from '../../lib/config.ts';
import { ApiError } from '../../lib/http/api-error.ts';
import { DEFAULT_SETTINGS } from '../../lib/model/tenant-settings.ts';
import { makeTrip, leg, diesel } from '../fixtures/documents.ts';

t.test('extraData problems', async (t) => {
  t.same(extraDataProblems(undefined), []);
  t.same(extraDataProblems({ a: 1, b: { c: [1, { d: 'x$y.z' }] } }), [], 'values may contain $ and dots');
  t.same(extraDataProblems({ $where: 1, a: { 'b.c': 1 }, l: [{ $in: [] }], '': 0 }), [], 'any key: extraData is stored serialised');
  t.same(extraDataProblems({ a: { b: { c: { d: { e: { f: [[{ g: 1 }]] } } } } } }), [], 'any depth: the serialised size is the bound');
  t.match(extraDataProblems({ s: 'é'.repeat(5000) }), [/bytes as JSON; the limit is 8192/], 'bytes, not characters');
  t.match(extraDataProblems([1]), ['extraData must be an object']);
});

t.test('domain validation: 403 first, then every problem', async (t) => {
  const now = new Date('2026-04-01T00:00:00Z');
  const base = { userIds: ['a'], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: 'n' };
  t.throws(
    () => validateScheduleInput('AAA010101AAA', { ...base, tenantId: 'BBB010101BBB', ruleId: 'bad' }, now),
    new ApiError(403, 'Forbidden', ['tenantId BBB010101BBB does not match the authenticated tenant'], { reason: 'foreign_tenant' }),
  );
  try {
    validateScheduleInput(
      'AAA010101AAA',
      { ...base, userIds: ['a', 'a', ' b'], ruleId: 'bad', cycleKey: '2026-13', extraData: { s: 'x'.repeat(9000) }, dueDate: 'soon' },
      now,
    );
    t.fail('should throw');
  } catch (err) {
    t.ok(err instanceof ApiError && err.statusCode === 400);
    const details = (err as ApiError).details.join('\n');
    t.match(details, /repeated: a/);
    t.match(details, /leading or trailing spaces/);
    t.match(details, new RegExp(`known rules: ${ALERT_RULE_IDS.join(', ')}`));
    t.match(details, /cycleKey must be a month/);
    t.match(details, /the limit is 8192/);
    t.match(details, /dueDate/);
  }
  const ok = validateScheduleInput('AAA010101AAA', { ...base, tenantId: 'AAA010101AAA' }, now);
  t.same(ok, { userIds: ['a'], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: 'n', extraData: {}, dueDate: now, individual: true });
});

t.test('job key and state', async (t) => {
  t.equal(alertJobKey('T', 'r', '2026-03', 'u'), alertJobKey('T', 'r', '2026-03', 'u'));
  t.not(alertJobKey('T', 'r', '2026-03', 'u|x'), alertJobKey('T', 'r', '2026-03|u', 'x'), 'no ambiguity from separators');
  const due = new Date('2026-04-01T00:00:00Z');
  const doc = newAlertJobDocument(new ObjectId(), {
    jobKey: 'k',
    tenant: 'T',
    userId: 'u',
    ruleId: 'tax-findings',
    cycleKey: '2026-03',
    nameAlert: 'n',
    individual: false,
    extraData: {},
    dueDate: due,
    createdAt: due,
    failures: [],
  });
  t.equal(alertJobState(doc), 'scheduled');
  t.equal(alertJobState({ ...doc, lockedAt: due }), 'running');
  t.equal(alertJobState({ ...doc, failCount: 2 }), 'retrying');
  t.equal(alertJobState({ ...doc, nextRunAt: null, failCount: 0 }), 'completed');
  t.equal(alertJobState({ ...doc, nextRunAt: null, failCount: 6 }), 'failed');
  t.match(alertJobView(doc), { state: 'scheduled', individual: false, nextRunAt: due.toISOString(), failCount: 0, failures: [] });
});

t.test('request fingerprint ignores key order, not values', async (t) => {
  t.equal(canonicalJson({ b: 1, a: { d: [2, { y: 1, x: 0 }], c: null } }), '{"a":{"c":null,"d":[2,{"x":0,"y":1}]},"b":1}');
  t.equal(requestFingerprint({ a: 1, b: 2 }), requestFingerprint({ b: 2, a: 1 }));
  t.not(requestFingerprint({ a: 1 }), requestFingerprint({ a: 2 }));
  t.not(requestFingerprint({ u: ['a', 'b'] }), requestFingerprint({ u: ['b', 'a'] }), 'array order matters');
});

t.test('outcome: sorted, capped, summarised', async (t) => {
  const f = (i: number, severity: AlertFinding['severity']): AlertFinding => ({
    code: 'X',
    severity,
    ref: `r${i}`,
    client: 'C',
    message: 'm',
    amount: i % 2 ? -i : i,
    date: '2026-03-01T00:00:00.000Z',
    details: {},
  });
  const findings = [...Array.from({ length: 250 }, (_, i) => f(i, 'warning')), f(1, 'critical'), f(3, 'info')];
  const o = outcome(findings, (s) => `${s.findings}`);
  t.equal(o.findings.length, MAX_LISTED_FINDINGS);
  t.equal(o.truncated, true);
  t.equal(o.findings[0]!.severity, 'critical');
  t.equal(o.findings[1]!.amount, -249, 'then by |amount|');
  t.same(o.summary, { findings: 252, critical: 1, warning: 250, info: 1, amount: (249 * 250) / 2 + 1 + 3 });
  t.equal(outcome([f(2, 'info')], () => '').status, 'clear', 'informational findings alone do not trigger');
});

t.test('shrinkage rule: the legs delivered in the cycle month, never a leg in transit', async (t) => {
  const settings = { ...DEFAULT_SETTINGS, _id: 'T', name: 'T' };
  const trip = makeTrip({
    legs: [
      leg({ loadDate: '2026-02-27T08:00', unloadDate: '2026-02-28T10:00', products: [diesel(1000, 900)] }), // delivered in February
      leg({ loadDate: '2026-02-28T20:00', unloadDate: '2026-03-01T02:00', products: [diesel(1000, 900)] }), // loaded in February, delivered in March
      leg({ loadDate: '2026-02-28T21:00', unloadDate: null, products: [diesel(1000, null)] }), // in transit
      leg({ loadDate: '2026-02-28T21:00', unloadDate: null, products: [diesel(1000, 0)] }), // in transit, as older versions stored it (0)
    ],
  });
  const asOf = Date.parse('2026-03-10T00:00:00Z');
  const feb = shrinkageOverTolerance([trip], { cycleKey: '2026-02', asOf, settings });
  t.same(
    feb.findings.map((f) => f.details.shipment),
    [trip.shipments[0]!.shipment],
    'February: the leg delivered in February only',
  );
  t.equal(feb.findings[0]!.amount, 2450, '100 L × 24.50 at 0% tolerance');
  t.equal(feb.findings[0]!.date, new Date(trip.shipments[0]!.unloadDate!).toISOString(), 'dated at its delivery');
  const mar = shrinkageOverTolerance([trip], { cycleKey: '2026-03', asOf, settings });
  t.same(
    mar.findings.map((f) => f.details.shipment),
    [trip.shipments[1]!.shipment],
    'March: the leg delivered on March 1 (Mexico City), loaded in February',
  );
  t.equal(mar.summary.findings, 1, 'the legs in transit are never findings');
});

t.test('worker settings from env', async (t) => {
  const workerSettings = (env: NodeJS.ProcessEnv) => loadConfig(env).alerts.workerSettings;
  t.same(workerSettings({}), DEFAULT_ALERT_WORKER_SETTINGS);
  t.match(workerSettings({ ALERT_PROCESS_EVERY_MS: '250', ALERT_MAX_RETRIES: '0' }), { processEveryMs: 250, maxRetries: 0 });
  t.throws(() => workerSettings({ ALERT_CONCURRENCY: 'lots' }), /ALERT_CONCURRENCY must be an integer/);
});

t.test('the spec lists exactly the rule catalogue', async (t) => {
  const spec = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
  const schemas = spec.components.schemas;
  const ruleSchema = schemas.RuleId ?? schemas.ScheduleAlertsRequest.properties.ruleId;
  t.same(ruleSchema.enum, [...ALERT_RULE_IDS]);
});
