/**
 * The per-tenant cap on exports queued or running (EXPORT_MAX_ACTIVE) under concurrent requests,
 * through HTTP: many POSTs at once admit exactly the cap, the rest answer 429 `quota_exceeded`
 * in the documented shape; a slot frees when its export is ready; a slot left by a crash (an export
 * ended without its release, or a request that died before storing its export) is reclaimed.
 */
import type { Test } from 'tap';
import type { AddressInfo } from 'node:net';
import { ObjectId } from 'mongodb';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A } from '../helpers/harness.ts';
import { exportsPlugin } from '../../lib/exports/plugin.ts';
import { COLLECTIONS } from '../../lib/db/collections.ts';

export default async function exportSlotsTests(t: Test): Promise<void> {
  const CAP = 3;
  const ENV = { EXPORT_MAX_ACTIVE: String(CAP), EXPORT_PROCESS_EVERY_MS: '100' };
  const h = await startHarness(t, { env: ENV, build: { plugins: [exportsPlugin({ worker: false })] } });

  /** A CSV of the tenant's alerts: the smallest export (exportAlerts). */
  const EXPORT_URL = '/api/exports/datasets/alerts?format=csv';
  type Answer = {
    status: number;
    body: { id?: string; status?: string; error?: { code: number; reason: string; details: string[] } };
    retryAfter: string | null;
  };

  /** `count` export requests at once over real sockets (not one after another in-process). */
  async function postMany(count: number, key = KEY_A): Promise<Answer[]> {
    if (!h.app.server.listening) await h.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    return Promise.all(
      Array.from({ length: count }, async () => {
        const res = await fetch(`${base}${EXPORT_URL}`, { method: 'POST', headers: { 'x-api-key': key } });
        return { status: res.status, body: (await res.json()) as Answer['body'], retryAfter: res.headers.get('retry-after') };
      }),
    );
  }
  const admitted = (answers: Answer[]) => answers.filter((a) => a.status === 202);
  const refused = (answers: Answer[]) => answers.filter((a) => a.status !== 202);
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  t.test('many concurrent requests: exactly the cap is admitted, the rest are 429 quota_exceeded', async (t) => {
    const answers = await postMany(24);
    t.equal(admitted(answers).length, CAP, 'admitted');
    t.equal(refused(answers).length, 24 - CAP);
    for (const a of refused(answers)) {
      t.equal(a.status, 429);
      t.equal(a.body.error?.reason, 'quota_exceeded');
      t.equal(a.body.error?.code, 429);
      t.match(a.body.error?.details.join(' '), /EXPORT_MAX_ACTIVE/);
      t.equal(a.retryAfter, '10');
    }
    // The documented shape, checked against the spec.
    const again = await h.app.inject({ method: 'POST', url: EXPORT_URL, headers: { 'x-api-key': KEY_A } });
    t.equal(again.statusCode, 429);
    assertConforms(t, again, 'POST', '/api/exports/datasets/alerts');
    const list = await h.app.inject({ method: 'GET', url: '/api/exports?limit=100', headers: { 'x-api-key': KEY_A } });
    t.same(
      list
        .json<{ data: { id: string; status: string }[] }>()
        .data.map((e) => e.id)
        .sort(),
      admitted(answers)
        .map((a) => a.body.id)
        .sort(),
      'the admitted ones are the stored ones',
    );
    // Another tenant has its own slots.
    t.equal(admitted(await postMany(CAP + 2, KEY_B)).length, CAP, "tenant B's own cap");
  });

  t.test('a slot frees when its export is ready', async (t) => {
    await h.rebuild({ env: ENV, plugins: [exportsPlugin({ worker: true })] });
    await h.app.ready();
    const deadline = Date.now() + 120_000;
    for (;;) {
      const list = await h.app.inject({ method: 'GET', url: '/api/exports?limit=100', headers: { 'x-api-key': KEY_A } });
      if (list.json<{ data: { status: string }[] }>().data.every((e) => e.status === 'ready')) break;
      if (Date.now() > deadline) throw new Error('exports not ready');
      await sleep(100);
    }
    await h.rebuild({ env: ENV, plugins: [exportsPlugin({ worker: false })] });
    const answers = await postMany(10);
    t.equal(admitted(answers).length, CAP, 'the cap again, all slots free');
  });

  t.test('slots a crash left are reclaimed, live ones are not', async (t) => {
    const exports = h.db.collection<{ _id: ObjectId; tenant: string; status: string }>(COLLECTIONS.exports);
    const queued = await exports.find({ tenant: TENANT_A, status: 'queued' }).toArray();
    t.equal(queued.length, CAP, 'the cap is held');
    // A worker that died after writing the outcome and before releasing: the export ended, its slot still held.
    await exports.updateOne({ tenant: TENANT_A, _id: queued[0]!._id }, { $set: { status: 'failed', error: 'crash test' } });
    // A request that died after taking its slot and before storing its export, long ago.
    const slots = h.db.collection<{ _id: string; tenant: string; exportId: ObjectId; claimedAt: Date; slot: number }>(COLLECTIONS.exportSlots);
    const dangling = await slots.findOne({ tenant: TENANT_A, exportId: queued[1]!._id });
    await exports.deleteOne({ tenant: TENANT_A, _id: queued[1]!._id });
    await slots.updateOne({ _id: dangling!._id }, { $set: { claimedAt: new Date(Date.now() - 3_600_000) } });
    // A request that took its slot a moment ago and has not stored its export yet keeps it.
    await exports.deleteOne({ tenant: TENANT_A, _id: queued[2]!._id });

    const answers = await postMany(6);
    t.equal(admitted(answers).length, 2, 'the two crashed slots, not the young one');
    t.equal(await slots.countDocuments({ tenant: TENANT_A }), CAP);
    t.equal(await slots.countDocuments({ tenant: TENANT_A, exportId: queued[2]!._id }), 1, 'the young slot is kept');
  });
}
