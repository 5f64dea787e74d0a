/**
 * Webhook delivery end to end: the alert worker writes a record, the webhook
 * worker POSTs the signed event to a real receiver on 127.0.0.1 that verifies
 * the signature. A receiver that is down (refusing, or answering 5xx) loses
 * nothing; a rotated secret signs every later attempt; redirects are not
 * followed; retries run out into `failed`, also when the secret cannot be
 * decrypted or a run keeps throwing (a database error); another tenant's
 * endpoint never receives an event. (WEBHOOK_ALLOW_PRIVATE=true: the receivers are on loopback.)
 */
import type { Test } from 'tap';
import net from 'node:net';
import { once } from 'node:events';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { makeFinancialDoc, freight } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { alertsPlugin } from '../../lib/alerts/plugin.ts';
import { webhooksPlugin } from '../../lib/webhooks/plugin.ts';
import { ObjectId, MongoServerError } from 'mongodb';
import { connect, listen } from '../helpers/mcp.ts';
import { COLLECTIONS } from '../../lib/db/collections.ts';
import { insertWebhook, webhookDeliveries, webhookJobs, webhooks } from '../../lib/webhooks/webhooks-repo.ts';
import { enqueueTestEvent } from '../../lib/webhooks/events.ts';
import { sendWebhookTest } from '../../lib/webhooks/send-webhook-test.ts';
import { encryptSecret, generateSecret, secretHint } from '../../lib/webhooks/secret-box.ts';
import { createWebhookWorker } from '../../lib/webhooks/worker.ts';
import { attemptDelivery } from '../../lib/webhooks/deliver.ts';
import { verifySignature } from '../../lib/webhooks/signature.ts';

export default async function webhooksDeliveryTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  const AS_OF = new Date('2026-04-10T18:00:00Z');
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  const receiver = await startReceiver();
  t.teardown(() => receiver.close());
  const h = await startHarness(t, {
    env: {
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      WEBHOOK_PROCESS_EVERY_MS: '100',
      WEBHOOK_RETRY_DELAY_MS: '200',
      WEBHOOK_RETRY_MAX_DELAY_MS: '600',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_LOCK_LIFETIME_MS: '4000',
    },
    build: {
      plugins: [
        alertsPlugin({ worker: true, settings: { processEveryMs: 150, lockLifetimeMs: 4000, retryDelayMs: 100 }, now: () => AS_OF }),
        webhooksPlugin({ worker: true }),
      ],
    },
  });
  await h.app.ready();

  // Tenant A has an overdue invoice (overdue-invoices triggers); tenant B has nothing (its alerts are clear).
  await financialDocs(h.db).insertOne(withDerivedFields(makeFinancialDoc({ tenant: TENANT_A, date: '2026-01-05T10:00', concepts: [freight(10_000)] })));

  const api = (method: 'GET' | 'POST' | 'DELETE', url: string, key = KEY_A, payload?: unknown) =>
    h.app.inject({ method, url, headers: { 'x-api-key': key }, ...(payload === undefined ? {} : { payload: payload as object }) });

  async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false> | T | null | undefined | false, timeoutMs = 20_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(50);
    }
  }

  async function endpoint(path: string, events: string[], key = KEY_A): Promise<Json> {
    const res = await api('POST', '/api/webhooks', key, { url: receiver.url(path), events });
    if (res.statusCode !== 201) throw new Error(res.body);
    const w = res.json();
    receiver.secrets.set(path, w.secret);
    return w;
  }

  const deliveriesOf = async (id: string, key = KEY_A) => {
    const res = await api('GET', `/api/webhooks/${id}/deliveries?limit=100`, key);
    return res.json().data as Json[];
  };

  t.test('an alert record reaches the subscribed endpoint, signed, once; other tenants never see it', async (t) => {
    const a = await endpoint('/a', ['alert.triggered']);
    const b = await endpoint('/b', ['alert.triggered', 'alert.cleared'], KEY_B);

    const scheduled = await api('POST', '/api/alerts/schedule', KEY_A, {
      userIds: ['ana'],
      ruleId: 'overdue-invoices',
      cycleKey: '2026-03',
      nameAlert: 'vencidas',
    });
    t.equal(scheduled.statusCode, 200, scheduled.body);
    const jobId = scheduled.json().jobs[0].jobId;
    const got = await waitFor('the delivery to /a', () => receiver.received.find((r) => r.path === '/a'));
    t.ok(got.verified, 'the signature verifies with the secret shown at creation');
    t.match(got.signature, /^t=\d+,v1=[0-9a-f]{64}$/);
    t.equal(got.eventId, `evt_${jobId}`);
    t.equal(got.eventType, 'alert.triggered');
    t.equal(got.attempt, 1);
    const event = JSON.parse(got.body);
    const alerts = (await api('GET', '/api/alerts')).json().data as Json[];
    t.match(event, { id: `evt_${jobId}`, type: 'alert.triggered', tenant: TENANT_A });
    t.same(
      event.data.alert,
      alerts.find((x) => x.jobId === jobId),
      'the body carries the alert record as GET /api/alerts shows it',
    );
    t.notOk(verifySignature('whsec_wrong', got.body, got.signature, Math.floor(Date.now() / 1000)), 'another secret does not verify');

    const [d] = await waitFor('succeeded', async () => {
      const list = await deliveriesOf(a.id);
      return list[0]?.status === 'succeeded' && list;
    });
    t.match(d, { webhookId: a.id, eventId: `evt_${jobId}`, eventType: 'alert.triggered', status: 'succeeded', nextAttemptAt: null });
    t.equal(d!.attempts.length, 1);
    t.match(d!.attempts[0], { attempt: 1, statusCode: 200, error: null });
    assertConforms(t, await api('GET', `/api/webhooks/${a.id}/deliveries`), 'GET', '/api/webhooks/:id/deliveries');

    // B's own (clear) alert goes to B only; A's endpoint is subscribed to triggered alerts only.
    const bJob = (await api('POST', '/api/alerts/schedule', KEY_B, { userIds: ['bo'], ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: 'x' })).json()
      .jobs[0].jobId;
    const gotB = await waitFor('the delivery to /b', () => receiver.received.find((r) => r.path === '/b'));
    t.equal(gotB.eventId, `evt_${bJob}`);
    t.equal(gotB.eventType, 'alert.cleared');
    t.equal(JSON.parse(gotB.body).tenant, TENANT_B);
    await sleep(500);
    t.same(
      receiver.received.filter((r) => r.path === '/b').map((r) => r.eventId),
      [`evt_${bJob}`],
      "B's endpoint received only B's event, once",
    );
    t.same(
      receiver.received.filter((r) => r.path === '/a').map((r) => r.eventId),
      [`evt_${jobId}`],
      "A's endpoint received only A's event, once",
    );
    await api('DELETE', `/api/webhooks/${a.id}`);
    await api('DELETE', `/api/webhooks/${b.id}`, KEY_B);
  });

  t.test('a receiver that is down, then answers 5xx, then is back: nothing lost, every attempt recorded', async (t) => {
    const w = await endpoint('/flaky', ['alert.triggered']);
    await receiver.down();
    const test = await api('POST', `/api/webhooks/${w.id}/test`);
    t.equal(test.statusCode, 202);
    const { eventId } = test.json();
    await waitFor('two refused attempts', async () => ((await deliveriesOf(w.id))[0]?.attempts.length ?? 0) >= 2);
    receiver.status.set('/flaky', 503);
    await receiver.up();
    await waitFor('a 503 attempt', () => receiver.received.some((r) => r.path === '/flaky'));
    receiver.status.delete('/flaky');
    const [d] = await waitFor('succeeded', async () => {
      const list = await deliveriesOf(w.id);
      return list[0]?.status === 'succeeded' && list;
    });
    const attempts = d!.attempts as Json[];
    t.ok(attempts.length >= 4, `${attempts.length} attempts`);
    t.match(attempts[0], { attempt: 1, statusCode: null, error: 'connection refused' }, 'the reason, not the address it tried');
    t.ok(
      attempts.some((x) => x.statusCode === 503 && x.error === 'answered 503'),
      'the 503 is recorded',
    );
    t.match(attempts.at(-1), { statusCode: 200, error: null });
    t.same(
      attempts.map((x) => x.attempt),
      attempts.map((_, i) => i + 1),
    );
    const gaps = attempts.slice(1).map((x, i) => Date.parse(x.at) - Date.parse(attempts[i]!.at));
    t.ok(
      gaps.every((g) => g >= 150),
      `backoff between attempts (${gaps.join(', ')} ms)`,
    );
    const seen = receiver.received.filter((r) => r.path === '/flaky');
    t.ok(
      seen.every((r) => r.eventId === eventId && r.verified),
      'every attempt carried the same event id and a valid signature',
    );
    t.same(
      seen.map((r) => r.attempt),
      attempts.filter((x) => x.statusCode !== null).map((x) => x.attempt),
    );
    await api('DELETE', `/api/webhooks/${w.id}`);
  });

  t.test('rotation: a receiver still on the old secret rejects; every later attempt is signed with the new one', async (t) => {
    const w = await endpoint('/rotating', ['alert.triggered']);
    const rotated = (await api('POST', `/api/webhooks/${w.id}/rotate-secret`)).json();
    // The receiver still holds the old secret: the signature fails there (400), the delivery retries.
    const { eventId } = (await api('POST', `/api/webhooks/${w.id}/test`)).json();
    await waitFor('a rejected attempt', () => receiver.received.some((r) => r.path === '/rotating' && !r.verified));
    t.ok(
      verifySignature(
        rotated.secret,
        receiver.received.find((r) => r.path === '/rotating')!.body,
        receiver.received.find((r) => r.path === '/rotating')!.signature,
        Math.floor(Date.now() / 1000),
      ),
      'it was signed with the new secret',
    );
    receiver.secrets.set('/rotating', rotated.secret);
    await waitFor('accepted', () => receiver.received.some((r) => r.path === '/rotating' && r.verified));
    const [d] = await waitFor('succeeded', async () => {
      const list = await deliveriesOf(w.id);
      return list[0]?.status === 'succeeded' && list;
    });
    t.equal(d!.eventId, eventId);
    t.match(d!.attempts[0], { statusCode: 400, error: 'answered 400' });
    await api('DELETE', `/api/webhooks/${w.id}`);
  });

  t.test('redirects are not followed; after the retry window the delivery is failed', async (t) => {
    const w = await endpoint('/moved', ['alert.triggered']);
    receiver.status.set('/moved', 302);
    await api('POST', `/api/webhooks/${w.id}/test`);
    await waitFor('a redirect answered', () => receiver.received.some((r) => r.path === '/moved'));
    // Age the event to the edge of the 24 h window (WEBHOOK_RETRY_WINDOW_MS): the next failure is the last.
    await webhookDeliveries(h.db).updateMany({ webhookId: w.id }, { $set: { createdAt: new Date(Date.now() - 86_400_000) } });
    const [d] = await waitFor('failed', async () => {
      const list = await deliveriesOf(w.id);
      return list[0]?.status === 'failed' && list;
    });
    t.match(d!.attempts[0], { statusCode: 302, error: 'redirect (302) not followed' });
    t.equal(d!.nextAttemptAt, null);
    t.ok(d!.completedAt);
    t.notOk(
      receiver.received.some((r) => r.path === '/moved/elsewhere'),
      'the Location was never requested',
    );
    const failed = await api('GET', `/api/webhooks/${w.id}/deliveries?status=failed`);
    t.equal(failed.json().meta.total, 1);
    receiver.status.delete('/moved');
    await api('DELETE', `/api/webhooks/${w.id}`);
  });

  t.test(
    'a signing secret that cannot be decrypted (the key changed): every attempt recorded with the reason, failed after the window; HTTP and MCP alike',
    async (t) => {
      const w = await endpoint('/undecryptable', ['alert.triggered']);
      // Another key's box (WEBHOOK_ENCRYPTION_KEY changed): decrypting fails its authentication.
      await webhooks(h.db).updateOne({ tenant: TENANT_A, _id: new ObjectId(w.id) }, { $set: { secret: { box: Buffer.alloc(60, 1).toString('base64') } } });
      const test = await api('POST', `/api/webhooks/${w.id}/test`);
      t.equal(test.statusCode, 202, test.body);
      const { deliveryId } = test.json();
      const first = await waitFor('two attempts recorded', async () => {
        const [d] = await deliveriesOf(w.id);
        return (d?.attempts.length ?? 0) >= 2 && d;
      });
      t.equal(first.status, 'pending', 'retried within the window like any failed attempt');
      t.ok(first.nextAttemptAt, 'with its next attempt due');
      // Age the event to the edge of the 24 h window (WEBHOOK_RETRY_WINDOW_MS): the next failure is the last.
      await webhookDeliveries(h.db).updateMany({ webhookId: w.id }, { $set: { createdAt: new Date(Date.now() - 86_400_000) } });
      const [d] = await waitFor('failed', async () => {
        const list = await deliveriesOf(w.id);
        return list[0]?.status === 'failed' && list;
      });
      t.match(d, { id: deliveryId, status: 'failed', nextAttemptAt: null });
      t.ok(d!.completedAt);
      const attempts = d!.attempts as Json[];
      t.ok(attempts.length >= 3, `${attempts.length} attempts`);
      t.same(
        attempts.map((x) => x.attempt),
        attempts.map((_, i) => i + 1),
      );
      for (const x of attempts) t.match(x, { statusCode: null, error: 'signing secret cannot be decrypted: rotate the secret' });
      t.notOk(
        receiver.received.some((r) => r.path === '/undecryptable'),
        'nothing was sent unsigned',
      );
      const http = await api('GET', `/api/webhooks/${w.id}/deliveries?limit=100`);
      assertConforms(t, http, 'GET', '/api/webhooks/:id/deliveries');
      t.equal((await api('GET', `/api/webhooks/${w.id}/deliveries?status=failed`)).json().meta.total, 1);
      // The job ended with the delivery: no run threw, none is due.
      const job = await waitFor('the job to end', async () => {
        const j = await webhookJobs(h.db).findOne({ _id: new ObjectId(deliveryId) });
        return j && j.nextRunAt == null && !j.lockedAt && j;
      });
      t.notOk(job.failCount, 'Agenda never saw the run fail');
      t.notOk(job.failReason);

      const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A }, '?toolsets=webhooks');
      const viaMcp = (await client.callTool({ name: 'listWebhookDeliveries', arguments: { id: w.id, limit: 100 } })) as unknown as {
        isError?: boolean;
        structuredContent: { data: Json[] };
      };
      t.notOk(viaMcp.isError);
      t.same(viaMcp.structuredContent.data, http.json().data, 'MCP lists the same failed delivery and attempts');
      await api('DELETE', `/api/webhooks/${w.id}`);
    },
  );

  t.test('a run that keeps throwing (a database error): retried within the window, nothing lost; after it, failed with the reason', async (t) => {
    // A worker of its own on a database of its own (the app's worker must not take these jobs),
    // whose `webhooks` reads fail while `failing` is set.
    const real = h.client.db(`${h.db.databaseName}-dberr`);
    t.teardown(() => real.dropDatabase());
    let failing = true;
    const bound = <T extends object>(target: T, prop: string | symbol) => {
      const v = Reflect.get(target, prop, target) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    };
    const db = new Proxy(real, {
      get(target, prop) {
        if (prop !== 'collection') return bound(target, prop);
        return (name: string, ...rest: unknown[]) => {
          const c = (target.collection as (...a: unknown[]) => object)(name, ...rest);
          if (name !== COLLECTIONS.webhooks) return c;
          return new Proxy(c, {
            get(ct, p) {
              if (p === 'findOne' && failing) return () => Promise.reject(new MongoServerError({ message: 'simulated: not primary', code: 10107 }));
              return bound(ct, p);
            },
          });
        };
      },
    });
    const worker = createWebhookWorker({
      db,
      settings: { ...h.config.webhooks, processEveryMs: 100, retryDelayMs: 100, retryMaxDelayMs: 200 },
      name: 'webhooks-db-error',
    });
    await worker.start();
    t.teardown(() => worker.stop());
    const key = h.config.webhooks.encryptionKey!;
    const _id = new ObjectId();
    const secret = generateSecret();
    const path = '/db-error';
    receiver.secrets.set(path, secret);
    const now = new Date();
    const stored = (await insertWebhook(
      real,
      {
        _id,
        tenant: TENANT_A,
        url: receiver.url(path),
        events: ['alert.triggered'],
        description: '',
        secret: encryptSecret(key, secret, _id.toHexString()),
        secretHint: secretHint(secret),
        createdAt: now,
        secretRotatedAt: now,
      },
      5,
    ))!;
    const jobOf = (id: ObjectId) => webhookJobs(real).findOne({ _id: id });

    // Within the window: Agenda runs it again; once the database answers, it is delivered.
    const a = await enqueueTestEvent(real, stored, new Date());
    await waitFor('two failed runs', async () => ((await jobOf(a._id))?.failCount ?? 0) >= 2);
    t.match(await webhookDeliveries(real).findOne({ _id: a._id }), { status: 'pending', attempts: [] }, 'no attempt was made');
    failing = false;
    const ok = await waitFor('delivered', async () => {
      const d = await webhookDeliveries(real).findOne({ _id: a._id });
      return d?.status === 'succeeded' && d;
    });
    t.match(ok.attempts, [{ attempt: 1, statusCode: 200, error: null }]);
    t.ok(
      receiver.received.some((r) => r.path === path && r.eventId === a.eventId && r.verified),
      'received, signed',
    );

    // Still failing when the window ends: failed, with the reason (not the database's words), and the job ends.
    failing = true;
    const b = await enqueueTestEvent(real, stored, new Date());
    await waitFor('a failed run', async () => ((await jobOf(b._id))?.failCount ?? 0) >= 1);
    await webhookDeliveries(real).updateOne({ _id: b._id }, { $set: { createdAt: new Date(Date.now() - 86_400_000) } });
    const failed = await waitFor('failed', async () => {
      const d = await webhookDeliveries(real).findOne({ _id: b._id });
      return d?.status === 'failed' && d;
    });
    t.equal(failed.nextAttemptAt, null);
    t.ok(failed.completedAt);
    t.match(failed.attempts, [
      { attempt: 1, statusCode: null, error: 'the service could not process the delivery (internal error) before its retry window ended' },
    ]);
    t.notMatch(JSON.stringify(failed.attempts), /simulated|primary/, 'the database error stays in the log');
    await waitFor('the job to end', async () => {
      const j = await jobOf(b._id);
      return j && j.nextRunAt == null && !j.lockedAt;
    });
    t.notOk(
      receiver.received.some((r) => r.eventId === b.eventId),
      'never sent',
    );
  });

  t.test(
    'at delivery time a name resolving to a private address is refused (WEBHOOK_ALLOW_PRIVATE off), and the error names the reason, not the address',
    async (t) => {
      const before = receiver.received.length;
      const anyPort = { allowedPorts: 'any' as const };
      const res = await attemptDelivery({
        url: `http://localhost:${receiver.port}/sneaky`,
        body: '{}',
        headers: {},
        timeoutMs: 2000,
        allowPrivate: false,
        ...anyPort,
      });
      t.equal(res.statusCode, null);
      t.equal(res.error, 'refused: the host name resolves to a loopback address');
      t.notMatch(res.error, /127\.0\.0\.1|::1/, 'the address the name resolved to is not told (it would map internal names)');
      const literal = await attemptDelivery({ url: receiver.url('/sneaky'), body: '{}', headers: {}, timeoutMs: 2000, allowPrivate: false, ...anyPort });
      t.equal(literal.error, "refused: the URL's address is a loopback address");
      t.equal(receiver.received.length, before, 'the receiver was never contacted');
      // Ports: 443 and 80 unless WEBHOOK_ALLOWED_PORTS says otherwise, checked at delivery too.
      const port = await attemptDelivery({ url: receiver.url('/port'), body: '{}', headers: {}, timeoutMs: 2000, allowPrivate: true, allowedPorts: [443, 80] });
      t.equal(port.error, `refused: port ${receiver.port} is not allowed; webhook URLs use port 443 or 80 (WEBHOOK_ALLOWED_PORTS)`);
      t.equal(receiver.received.length, before, 'still not contacted');
      // Network failures: by their reason only.
      const closed = net.createServer().listen(0, '127.0.0.1');
      await once(closed, 'listening');
      const closedPort = (closed.address() as net.AddressInfo).port;
      await new Promise((r) => closed.close(r));
      const refused = await attemptDelivery({
        url: `http://127.0.0.1:${closedPort}/`,
        body: '{}',
        headers: {},
        timeoutMs: 2000,
        allowPrivate: true,
        ...anyPort,
      });
      t.equal(refused.error, 'connection refused');
      const unknown = await attemptDelivery({
        url: 'http://no-such-host.invalid/',
        body: '{}',
        headers: {},
        timeoutMs: 5000,
        allowPrivate: false,
        allowedPorts: [443, 80],
      });
      t.match(unknown.error, /^host name (not found|lookup failed.*)$/, `an unknown name: ${unknown.error}`);
      // A receiver that accepts and never answers: the attempt ends at the time limit.
      const silent = net.createServer(() => {}).listen(0, '127.0.0.1');
      await once(silent, 'listening');
      t.teardown(() => silent.close());
      const timeout = await attemptDelivery({
        url: `http://127.0.0.1:${(silent.address() as net.AddressInfo).port}/`,
        body: '{}',
        headers: {},
        timeoutMs: 300,
        allowPrivate: true,
        ...anyPort,
      });
      t.match(timeout, { statusCode: null, error: 'timed out after 300 ms' });
      t.ok(timeout.durationMs >= 290 && timeout.durationMs < 2000, `${timeout.durationMs} ms`);
    },
  );
  t.test('a test send that raced a delete: its delivery is removed, and the test quota does not count it', async (t) => {
    // The race's second half replayed: the send found the endpoint, the delete removed it and its deliveries,
    // then the send queued its delivery (lib/webhooks/send-webhook-test.ts).
    const gone = await endpoint('/raced', ['alert.triggered']);
    const stored = (await webhooks(h.db).findOne({ tenant: TENANT_A, url: receiver.url('/raced') }))!;
    t.equal((await api('DELETE', `/api/webhooks/${gone.id}`)).statusCode, 200);
    // Ten due tomorrow (the quota, WEBHOOK_MAX_PENDING_TESTS 10, while they wait) and one due now.
    const tomorrow = new Date(Date.now() + 86_400_000);
    for (let i = 0; i < 10; i++) await enqueueTestEvent(h.db, stored, tomorrow);
    const now = await enqueueTestEvent(h.db, stored, new Date());
    const live = await endpoint('/live', ['alert.triggered']);
    const test = await api('POST', `/api/webhooks/${live.id}/test`);
    t.equal(test.statusCode, 202, `the deleted endpoint's deliveries are not the tenant's to wait for: ${test.body.slice(0, 200)}`);
    await waitFor('the worker to remove the delivery due now', async () => (await webhookDeliveries(h.db).countDocuments({ _id: now._id })) === 0);
    t.equal(await webhookDeliveries(h.db).countDocuments({ _id: now._id }), 0, 'removed when its job ran, not left pending');
    await waitFor('the live test delivered', async () => (await deliveriesOf(live.id)).some((d) => d.status === 'succeeded'));
    await webhookDeliveries(h.db).deleteMany({ webhookId: stored._id.toHexString() });
  });

  t.test('a test send that failed between its delivery and its job (a database error): delivered by the running worker, not left pending', async (t) => {
    // The app's database, whose delivery-job inserts fail (a blip): the send stored the delivery, then failed (5xx to the client).
    const db = new Proxy(h.db, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (prop !== 'collection') return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        return (name: string, ...rest: unknown[]) => {
          const c = (target.collection as (...a: unknown[]) => object)(name, ...rest);
          if (name !== COLLECTIONS.webhookJobs) return c;
          return new Proxy(c, {
            get(ct, p) {
              if (p === 'insertOne') return () => Promise.reject(new MongoServerError({ message: 'simulated: not primary', code: 10107 }));
              const f = Reflect.get(ct, p, ct) as unknown;
              return typeof f === 'function' ? (f as (...a: unknown[]) => unknown).bind(ct) : f;
            },
          });
        };
      },
    });
    const w = await endpoint('/half-queued', ['alert.triggered']);
    await t.rejects(sendWebhookTest({ db, config: h.config, webhooks: h.config.webhooks, now: () => new Date() }, TENANT_A, w.id));
    t.equal(await webhookJobs(h.db).countDocuments({ 'data.webhookId': w.id }), 0, 'its job was never stored');
    // The worker keeps running (no restart): once overdue by a lock lifetime (WEBHOOK_LOCK_LIFETIME_MS, 4 s here) it is queued again.
    const [d] = await waitFor('the delivery to succeed', async () => {
      const list = await deliveriesOf(w.id);
      return list[0]?.status === 'succeeded' && list;
    });
    t.equal(d!.attempts.length, 1);
    t.ok(
      receiver.received.some((r) => r.path === '/half-queued' && r.verified),
      'the receiver got it, signed',
    );
    await api('DELETE', `/api/webhooks/${w.id}`);
  });
}
