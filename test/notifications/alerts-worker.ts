/**
 * The alerts worker on the embedded engine: due jobs produce alert records with
 * the right findings on crafted data (every rule), failures are retried with
 * backoff and recorded, two workers on one database run each job exactly once,
 * and stopping drains running evaluations; a database outage is one warning, not an error per poll.
 */
import type { Test } from 'tap';
import { MongoClient, ObjectId } from 'mongodb';
import { startHarness, assertConforms, KEY_A, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeFinancialDoc, makeTrip, leg, diesel, freight, shortage, payment, CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { getTenantSettings, saveTenantSettings } from '../../lib/settings/settings-repo.ts';
import { alertJobs, alertRecords } from '../../lib/alerts/alert-jobs-repo.ts';
import { alertsPlugin } from '../../lib/alerts/plugin.ts';
import { createAlertWorker, type AlertJobContext } from '../../lib/alerts/worker.ts';
import { mongoClientOptions } from '../../lib/db/client.ts';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

export default async function alertsWorkerTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  type Tap = Test;
  const AS_OF = new Date('2026-04-10T18:00:00Z'); // 12:00 in Mexico City
  // Short lock lifetime: Agenda 6.2.6 leaves a ref'd watchdog timer of lockLifetime / 2 behind every run.
  const FAST = { processEveryMs: 150, retryDelayMs: 100, maxRetries: 3, lockLifetimeMs: 4000, drainTimeoutMs: 10_000 };
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  /** Test hook: `extraData.failTimes` fails the first N attempts, `extraData.sleepMs` slows an evaluation. */
  async function beforeEvaluate(job: AlertJobContext): Promise<void> {
    const extra = job.extraData as { failTimes?: number; sleepMs?: number };
    if (extra.sleepMs) await sleep(extra.sleepMs);
    if (extra.failTimes && job.attempt <= extra.failTimes) throw new Error(`simulated failure ${job.attempt}`);
  }

  const h = await startHarness(t, {
    build: { plugins: [alertsPlugin({ worker: true, settings: FAST, now: () => AS_OF, hooks: { beforeEvaluate }, name: 'in-app' })] },
  });
  await h.app.ready();

  const post = (body: Json) => h.app.inject({ method: 'POST', url: '/api/alerts/schedule', headers: { 'x-api-key': KEY_A }, payload: body });
  const get = (url: string) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } });

  async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  /** Schedules one job (due now) and waits until its record exists. */
  async function runRule(t: Tap, ruleId: string, cycleKey: string, userId: string, extraData: Json = {}): Promise<Json> {
    const res = await post({ userIds: [userId], ruleId, cycleKey, nameAlert: `${ruleId} ${cycleKey}`, extraData });
    t.equal(res.statusCode, 200, res.body);
    const jobId = res.json().jobs[0].jobId;
    await waitFor(`record of ${ruleId}`, async () => (await alertRecords(h.db).findOne({ _id: jobId })) !== null);
    const list = await get(`/api/alerts?ruleId=${ruleId}&cycleKey=${cycleKey}&userId=${userId}`);
    assertConforms(t, list, 'GET', '/api/alerts');
    const record = list.json().data[0];
    t.equal(record.jobId, jobId);
    return record;
  }

  // ---------------------------------------------------------------------------
  // Crafted data (tenant A unless said otherwise)

  const settings = await getTenantSettings(h.db, TENANT_A);
  // 2.6 credit days are 3 whole days, as the receivables aging reads them (a fraction made every overdue job fail).
  await saveTenantSettings(h.db, { ...settings, shrinkageTolerancePct: 0.2, creditDaysByClient: { [CLIENT_COMPANY_2]: 2.6 } });

  // overdue-invoices, cycle 2026-03, as of 2026-04-10
  const overdueCritical = makeFinancialDoc({
    tenant: TENANT_A,
    date: '2026-01-05T10:00',
    concepts: [freight(10_000)],
    payments: [payment(5_000, '2026-02-01')],
  }); // due 02-04: 65 days, 6,200 pending
  const overdueWarning = makeFinancialDoc({ tenant: TENANT_A, date: '2026-02-15T10:00', concepts: [freight(10_000)] }); // due 03-17: 24 days, 11,200
  const overdueShortCredit = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY_2, date: '2026-03-30T10:00', concepts: [freight(2_000)] }); // 3 credit days: due 04-02, 8 days, 2,240
  const notDueYet = makeFinancialDoc({ tenant: TENANT_A, date: '2026-03-20T10:00', concepts: [freight(3_000)] }); // due 04-19
  const fullyPaid = makeFinancialDoc({ tenant: TENANT_A, date: '2026-01-10T10:00', concepts: [freight(1_000)], payments: [payment(1_120, '2026-02-01')] });
  const cancelledUnpaid = makeFinancialDoc({ tenant: TENANT_A, date: '2026-01-10T10:00', cancelled: true });
  const afterCycle = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY_2, date: '2026-04-02T10:00', concepts: [freight(4_000)] }); // overdue, but emitted after the cycle
  const otherTenantOverdue = makeFinancialDoc({ tenant: TENANT_B, date: '2026-01-05T10:00' });

  // tax-findings, cycle 2026-03 (overdueShortCredit and notDueYet are March documents without findings)
  const taxVat = makeFinancialDoc({
    tenant: TENANT_A,
    date: '2026-03-05T10:00',
    concepts: [freight(10_000, { vat: 1_500 })],
    payments: [payment(11_100, '2026-03-20')],
  });
  const taxNoRetention = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    date: '2026-03-06T10:00',
    concepts: [freight(10_000, { retentionRate: 0, retention: 0 })],
    payments: [payment(11_600, '2026-03-20')],
  });
  const taxPersonRetention = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_PERSON,
    date: '2026-03-07T10:00',
    concepts: [freight(10_000, { retentionRate: 0.04, retention: 400 })],
    payments: [payment(11_200, '2026-03-08')],
  });
  const taxShortage = makeFinancialDoc({
    tenant: TENANT_A,
    date: '2026-03-08T10:00',
    concepts: [freight(10_000), shortage(500)],
    payments: [payment(11_700, '2026-03-09')],
  });
  const taxCancelled = makeFinancialDoc({ tenant: TENANT_A, date: '2026-03-09T10:00', concepts: [freight(10_000, { vat: 1 })], cancelled: true });
  const taxFebruary = makeFinancialDoc({
    tenant: TENANT_A,
    date: '2026-02-27T10:00',
    concepts: [freight(10_000, { vat: 1 })],
    payments: [payment(10_601, '2026-03-01')],
  });

  // billed trips' invoices
  const billedInvoice = makeFinancialDoc({
    tenant: TENANT_A,
    date: '2026-03-06T20:00',
    concepts: [freight(10_000)],
    payments: [payment(11_200, '2026-03-10')],
  });
  const cancelledInvoice = makeFinancialDoc({ tenant: TENANT_A, date: '2026-03-07T20:00', cancelled: true, payments: [] });

  await financialDocs(h.db).insertMany(
    [
      overdueCritical,
      overdueWarning,
      overdueShortCredit,
      notDueYet,
      fullyPaid,
      cancelledUnpaid,
      afterCycle,
      otherTenantOverdue,
      taxVat,
      taxNoRetention,
      taxPersonRetention,
      taxShortage,
      taxCancelled,
      taxFebruary,
      billedInvoice,
      cancelledInvoice,
    ].map(withDerivedFields),
  );

  // shrinkage-over-tolerance (tolerance 0.2%) and unbilled-deliveries, cycle 2026-03
  const shrinkOver = makeTrip({ tenant: TENANT_A, legs: [leg({ date: '2026-03-05', products: [diesel(20_000, 19_900)] })], idFinan: billedInvoice._id }); // 0.5%: 60 L excess × 24.5
  const shrinkWithin = makeTrip({ tenant: TENANT_A, legs: [leg({ date: '2026-03-06', products: [diesel(20_000, 19_980)] })], idFinan: billedInvoice._id }); // 0.1%
  const shrinkTwoLegs = makeTrip({
    tenant: TENANT_A,
    idFinan: billedInvoice._id,
    legs: [leg({ date: '2026-02-27', products: [diesel(20_000, 19_000)] }), leg({ date: '2026-03-02', products: [diesel(10_000, 9_950)] })], // Feb leg out of the cycle; March leg 0.5%: 30 L excess
  });
  const shrinkOtherTenant = makeTrip({ tenant: TENANT_B, legs: [leg({ date: '2026-03-05', products: [diesel(20_000, 10_000)] })] });
  const unbilledNoLink = makeTrip({ tenant: TENANT_A, legs: [leg({ date: '2026-03-05', products: [diesel(20_000, 20_000)] })] }); // freight 10,000
  const unbilledCancelled = makeTrip({
    tenant: TENANT_A,
    idFinan: cancelledInvoice._id,
    legs: [leg({ date: '2026-03-07', products: [diesel(10_000, 10_000)] })],
  }); // 5,000
  const unbilledMissing = makeTrip({
    tenant: TENANT_A,
    idFinan: 'no-such-doc',
    legs: [leg({ date: '2026-03-08', products: [diesel(8_000, 8_000)], pricing: { toll: 250 } })],
  }); // 4,000 + 250 toll
  const deliveredApril = makeTrip({ tenant: TENANT_A, legs: [leg({ date: '2026-04-02', products: [diesel(10_000, 10_000)] })] });
  const stillTravelling = makeTrip({
    tenant: TENANT_A,
    legs: [leg({ date: '2026-03-09', products: [diesel(10_000, 10_000)] }), leg({ date: '2026-03-10', unloadDate: null, products: [diesel(1_000, 1_000)] })],
  });
  const unbilledOtherTenant = makeTrip({ tenant: TENANT_B, legs: [leg({ date: '2026-03-05' })] });
  await insertTrips(h.db, [
    shrinkOver,
    shrinkWithin,
    shrinkTwoLegs,
    shrinkOtherTenant,
    unbilledNoLink,
    unbilledCancelled,
    unbilledMissing,
    deliveredApril,
    stillTravelling,
    unbilledOtherTenant,
  ]);

  // ---------------------------------------------------------------------------

  t.test('overdue-invoices', async (t) => {
    const r = await runRule(t, 'overdue-invoices', '2026-03', 'analyst', { channel: 'email' });
    t.match(r, {
      tenant: TENANT_A,
      userId: 'analyst',
      ruleId: 'overdue-invoices',
      cycleKey: '2026-03',
      status: 'triggered',
      truncated: false,
      attempts: 1,
      extraData: { channel: 'email' },
    });
    t.equal(r.evaluatedAt, AS_OF.toISOString(), 'evaluated as of the worker clock');
    t.same(r.summary, { findings: 3, critical: 1, warning: 2, info: 0, amount: 19_640 });
    t.equal(r.message, '3 overdue invoices, MXN 19,640.00 pending as of 2026-04-10');
    t.same(
      r.findings.map((f: Json) => [f.ref, f.severity, f.amount, f.details.daysOverdue, f.details.dueDate]),
      [
        [overdueCritical._id, 'critical', 6_200, 65, '2026-02-04'],
        [overdueWarning._id, 'warning', 11_200, 24, '2026-03-17'],
        [overdueShortCredit._id, 'warning', 2_240, 8, '2026-04-02'],
      ],
    );
    t.match(r.findings[0], {
      code: 'OVERDUE_INVOICE',
      client: CLIENT_COMPANY,
      details: { folio: overdueCritical.invoice.num, uuid: overdueCritical.invoice.uuid, total: 11_200, paid: 5_000, pending: 6_200, creditDays: 30 },
    });
    t.equal(r.findings[2].details.creditDays, 3, "the client's credit days");
  });

  t.test('shrinkage-over-tolerance', async (t) => {
    const r = await runRule(t, 'shrinkage-over-tolerance', '2026-03', 'analyst');
    t.equal(r.status, 'triggered');
    t.same(r.summary, { findings: 2, critical: 0, warning: 2, info: 0, amount: 2_205 });
    t.same(
      r.findings.map((f: Json) => [f.ref, f.amount, f.details.shrinkagePercent, f.details.excessLitres, f.details.tolerancePct]),
      [
        [`${shrinkOver._id}/${shrinkOver.shipments[0]!.shipment}`, 1_470, 0.5, 60, 0.2],
        [`${shrinkTwoLegs._id}/${shrinkTwoLegs.shipments[1]!.shipment}`, 735, 0.5, 30, 0.2],
      ],
    );
    t.match(r.message, /^2 legs over shrinkage tolerance in 2026-03: 90 L beyond tolerance, MXN 2,205.00 recoverable$/);
  });

  t.test('tax-findings', async (t) => {
    const r = await runRule(t, 'tax-findings', '2026-03', 'analyst');
    t.equal(r.status, 'triggered');
    t.same(
      r.findings.map((f: Json) => [f.ref, f.code, f.severity, f.amount]),
      [
        [taxVat._id, 'VAT_MISMATCH', 'critical', -100],
        [taxNoRetention._id, 'RETENTION_MISSING', 'warning', -400],
        [taxPersonRetention._id, 'RETENTION_UNEXPECTED', 'warning', 400],
        [taxShortage._id, 'EXEMPT_EXCLUDED', 'info', 0],
      ],
      'cancelled and February documents are left out; the shortage line is informational',
    );
    t.same(r.summary, { findings: 4, critical: 1, warning: 2, info: 1, amount: 900 });
    t.match(r.message, /^1 discrepancy and 2 warnings in \d+ invoices of 2026-03$/);
  });

  t.test('unbilled-deliveries', async (t) => {
    const r = await runRule(t, 'unbilled-deliveries', '2026-03', 'analyst');
    t.same(
      r.findings.map((f: Json) => [f.ref, f.amount, f.details.reason, f.severity]),
      [
        [unbilledNoLink._id, 10_000, 'no linked invoice', 'critical'],
        [unbilledCancelled._id, 5_000, 'linked invoice cancelled', 'critical'],
        [unbilledMissing._id, 4_250, 'linked invoice not found', 'critical'],
      ],
    );
    t.same(r.summary, { findings: 3, critical: 3, warning: 0, info: 0, amount: 19_250 });
    t.equal(r.findings[0].details.daysSinceDelivery, 35, 'delivered 2026-03-06T00:00Z, 35.75 days before the evaluation');
  });

  t.test('nothing found: a clear record', async (t) => {
    const r = await runRule(t, 'unbilled-deliveries', '2025-01', 'analyst');
    t.match(r, { status: 'clear', message: 'Every trip delivered in 2025-01 is billed', findings: [], summary: { findings: 0, amount: 0 } });
    // The record is stored by the run; the job's end is recorded after it returns: wait for that, bounded.
    const jobs = await waitFor('the job recorded as completed', async () => {
      const res = await get('/api/alerts/jobs?cycleKey=2025-01&state=completed');
      return res.json().data.length ? res : null;
    });
    assertConforms(t, jobs, 'GET', '/api/alerts/jobs');
    t.match(jobs.json().data[0], { state: 'completed', nextRunAt: null, failCount: 0 });
    t.ok(jobs.json().data[0].lastFinishedAt);
  });

  t.test('a future job waits for its due date', async (t) => {
    const res = await post({ userIds: ['later'], ruleId: 'tax-findings', cycleKey: '2026-03', nameAlert: 'later', dueDate: '2099-01-01T00:00:00Z' });
    await sleep(600);
    const job = (await get('/api/alerts/jobs?userId=later')).json().data[0];
    t.match(job, { id: res.json().jobs[0].jobId, state: 'scheduled', nextRunAt: '2099-01-01T00:00:00.000Z', lastRunAt: null });
    t.equal(await alertRecords(h.db).countDocuments({ userId: 'later' }), 0);
  });

  t.test('failures are retried with backoff and recorded', async (t) => {
    const recovered = await runRule(t, 'tax-findings', '2026-02', 'flaky', { failTimes: 2 });
    t.equal(recovered.attempts, 3, 'third attempt stored the record');
    // The third attempt stored the record; the job leaves `running` once its end is recorded, after the run returns.
    const job = await waitFor('the job to leave running', async () => {
      const j = (await get('/api/alerts/jobs?userId=flaky')).json().data[0];
      return j && j.state !== 'running' ? j : null;
    });
    t.match(job, { state: 'completed', failCount: 0 });
    t.same(
      job.failures.map((f: Json) => [f.attempt, f.error]),
      [
        [1, 'simulated failure 1'],
        [2, 'simulated failure 2'],
      ],
    );
    const gaps = job.failures.map((f: Json) => Date.parse(f.at));
    t.ok(gaps[1] - gaps[0] >= 80, `retried after a backoff (${gaps[1] - gaps[0]} ms)`);

    const res = await post({ userIds: ['broken'], ruleId: 'tax-findings', cycleKey: '2026-02', nameAlert: 'broken', extraData: { failTimes: 99 } });
    const id = res.json().jobs[0].jobId;
    const failed = await waitFor('job to fail for good', async () => {
      const list = await get(`/api/alerts/jobs?userId=broken&state=failed`);
      assertConforms(t, list, 'GET', '/api/alerts/jobs');
      return list.json().data[0] as Json | undefined;
    });
    t.match(failed, { id, state: 'failed', failCount: 4, failReason: 'simulated failure 4', nextRunAt: null });
    t.same(
      failed.failures.map((f: Json) => f.attempt),
      [1, 2, 3, 4],
      'first try + 3 retries, each recorded',
    );
    t.equal(await alertRecords(h.db).countDocuments({ _id: id }), 0, 'no record for a failed job');
  });

  t.test('two workers on one database: each job runs exactly once', async (t) => {
    await h.app.alertWorker!.stop(); // leave the field to the two workers below
    const clients = await Promise.all([0, 1].map(() => MongoClient.connect(h.engine.uri, mongoClientOptions({ maxPoolSize: 10 }))));
    t.teardown(() => Promise.all(clients.map((c) => c.close())));
    const starts = new Map<string, string[]>();
    const onStart = (jobId: string, worker: string) => starts.set(jobId, [...(starts.get(jobId) ?? []), worker]);
    const workers = clients.map((c, i) =>
      createAlertWorker({
        db: c.db(h.db.databaseName),
        name: `w${i}`,
        processEveryMs: 100,
        concurrency: 3,
        lockLifetimeMs: FAST.lockLifetimeMs,
        now: () => AS_OF,
        hooks: { onStart, beforeEvaluate: () => sleep(20) },
      }),
    );
    const userIds = Array.from({ length: 40 }, (_, i) => `pair-${i}`);
    const res = await post({ userIds, ruleId: 'overdue-invoices', cycleKey: '2026-02', nameAlert: 'pair' });
    const ids: string[] = res.json().jobs.map((j: Json) => j.jobId);
    await Promise.all(workers.map((w) => w.start()));
    await waitFor('40 records', async () => (await alertRecords(h.db).countDocuments({ _id: { $in: ids } })) === 40, 30_000);
    await Promise.all(workers.map((w) => w.stop()));

    t.same([...starts.keys()].sort(), [...ids].sort(), 'every job started');
    const twice = [...starts.entries()].filter(([, w]) => w.length !== 1);
    t.same(twice, [], 'no job started twice');
    const byWorker = await alertRecords(h.db)
      .aggregate<{ _id: string; n: number }>([{ $match: { _id: { $in: ids } } }, { $group: { _id: '$worker', n: { $sum: 1 } } }])
      .toArray();
    t.comment(`records per worker: ${JSON.stringify(byWorker)}`);
    t.ok(byWorker.length === 2 && byWorker.every((w) => w.n > 0), 'both workers took a share');
    const oids = ids.map((i) => new ObjectId(i));
    t.equal(
      await alertJobs(h.db).countDocuments({ _id: { $in: oids }, lockedAt: null, nextRunAt: null, failCount: { $in: [null, 0] } }),
      40,
      'all completed, none left locked',
    );
  });

  t.test('stop() drains a running evaluation and releases unstarted locks', async (t) => {
    const worker = createAlertWorker({
      db: h.db,
      name: 'drainer',
      processEveryMs: 100,
      concurrency: 1,
      lockLifetimeMs: FAST.lockLifetimeMs,
      now: () => AS_OF,
      hooks: { beforeEvaluate },
    });
    const res = await post({
      userIds: ['slow-1', 'slow-2', 'slow-3'],
      ruleId: 'overdue-invoices',
      cycleKey: '2026-01',
      nameAlert: 'slow',
      extraData: { sleepMs: 700 },
    });
    const ids: string[] = res.json().jobs.map((j: Json) => j.jobId);
    await worker.start();
    await waitFor('an evaluation to run', async () => worker.running() > 0);
    const t0 = Date.now();
    const result = await worker.stop();
    t.ok(Date.now() - t0 >= 300, `stop() waited for the running evaluation (${Date.now() - t0} ms)`);
    t.equal(result.timedOut, false);
    t.comment(`drain: ${JSON.stringify(result)}`);
    t.equal(worker.running(), 0);
    const records = await alertRecords(h.db).countDocuments({ _id: { $in: ids } });
    t.ok(records >= 1, `${records} evaluation(s) finished`);
    const jobs = (await get('/api/alerts/jobs?cycleKey=2026-01&limit=10')).json().data as Json[];
    t.same(
      jobs.filter((j) => j.state === 'running'),
      [],
      'no job left locked',
    );
    t.equal(jobs.filter((j) => j.state === 'completed').length, records);
    t.equal(jobs.filter((j) => j.state === 'scheduled').length, 3 - records, 'the rest wait for the next worker');
  });

  t.test('runs longer than the lock lifetime keep their locks: each job runs once and the worker goes on', async (t) => {
    // Each evaluation takes 2.5 lock lifetimes. Without the lock refresh Agenda cancels the run at
    // its lifetime (the run goes on) and locks the job again: started twice.
    const starts = new Map<string, number>();
    const worker = createAlertWorker({
      db: h.db,
      name: 'slow-runs',
      processEveryMs: 100,
      concurrency: 2,
      lockLifetimeMs: 1000,
      now: () => AS_OF,
      hooks: { beforeEvaluate, onStart: (jobId) => starts.set(jobId, (starts.get(jobId) ?? 0) + 1) },
    });
    const userIds = Array.from({ length: 5 }, (_, i) => `long-${i}`);
    const res = await post({ userIds, ruleId: 'overdue-invoices', cycleKey: '2025-12', nameAlert: 'long runs', extraData: { sleepMs: 2500 } });
    const ids: string[] = res.json().jobs.map((j: Json) => j.jobId);
    await worker.start();
    t.teardown(() => worker.stop());
    await waitFor('5 records', async () => (await alertRecords(h.db).countDocuments({ _id: { $in: ids } })) === 5, 40_000);
    await worker.stop();
    // (the jobs the drain test left scheduled run here too)
    t.same(
      ids.map((id) => starts.get(id)),
      [1, 1, 1, 1, 1],
      'each job started once',
    );
    const oids = ids.map((i) => new ObjectId(i));
    t.equal(
      await alertJobs(h.db).countDocuments({ _id: { $in: oids }, lockedAt: null, nextRunAt: null, failCount: { $in: [null, 0] } }),
      5,
      'all completed, none left locked',
    );
  });

  t.test('database down: the worker logs one warning for the outage, not an error per poll', async (t) => {
    const engine = await startEmbeddedMongo({ shortLived: true });
    // A short selection timeout makes each poll of the outage fail fast; the first connect to a JVM
    // still warming up on a loaded machine may outlast it, so that one is retried.
    const client = new MongoClient(engine.uri, mongoClientOptions({ serverSelectionTimeoutMS: 300 }));
    await waitFor(
      'first connection',
      () =>
        client.connect().then(
          () => true,
          () => false,
        ),
      30_000,
    );
    t.teardown(async () => {
      await client.close(true);
      await engine.stop();
    });
    const lines: { level: string; msg: string; fields: Json }[] = [];
    const logger = {
      info: (fields: object, msg?: string) => lines.push({ level: 'info', msg: msg ?? '', fields }),
      warn: (fields: object, msg?: string) => lines.push({ level: 'warn', msg: msg ?? '', fields }),
      error: (fields: object, msg?: string) => lines.push({ level: 'error', msg: msg ?? '', fields }),
    };
    const worker = createAlertWorker({
      db: client.db('outage'),
      name: 'outage',
      processEveryMs: 50,
      lockLifetimeMs: FAST.lockLifetimeMs,
      drainTimeoutMs: 1000,
      logger,
    });
    await worker.start();
    let failedPolls = 0;
    worker.agenda()!.on('error', () => (failedPolls += 1));
    await engine.stop();
    await waitFor('10 failed polls', async () => failedPolls >= 10, 60_000);
    const outage = lines.filter((l) => l.level !== 'info');
    t.equal(outage.filter((l) => l.level === 'error').length, 0, 'no error-level line for a database outage', { outage });
    t.equal(outage.length, 1, `${failedPolls} failed polls, one line`, { outage });
    t.match(outage[0], { level: 'warn', msg: /database unavailable, polling goes on/ });
    await worker.stop();
  });
}
