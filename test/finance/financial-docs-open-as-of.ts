/**
 * The financial-docs list's `openAsOf` read from the kept spans (docs/rollups.md "Receivables",
 * `openSpans`) on documents at the edges of the list's rule, over HTTP: the same page, order,
 * total and cursor as the document evaluation on every day of the data, and by hand where the
 * list's rule and the reports' differ. Invoices (Mexico City, 2026; now is 20 June):
 *   A Total 2.00, payments 1.005 and 0.99 on 03-10: the list counts cents as floor(x × 100 + 0.5)
 *     (100 + 99), so 1 cent stays open after them (the reports' balance rounds 1.005 up and closes it).
 *   B 1,000, paid whole on 03-05, that payment cancelled by a record dated 04-10: open 02-20 → 03-05,
 *     closed, open again from 04-10.
 *   C a cancellation request pending, D one rejected: open. E cancelled by a record without a
 *     status dated 05-01 (in effect): open until then. F its cancellation names the UUID in lower case.
 *   G a payment without a date (counted on every day) of half. H emitted 07-10, after now.
 *   I a payment flagged cancelled. J and K: the same instant and timestamp (order by id); L the same instant, an earlier timestamp.
 *   M another client, paid 06-25 (after now: open now).
 */
import type { Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { makeFinancialDoc, payment, paymentCancellation, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { listFinancialDocs, type ListFinancialDocsInput } from '../../lib/finance/list-financial-docs.ts';
import { receivablesRollups } from '../../lib/analytics/receivables-rollup-kind.ts';
import { mxAddDays } from '../../lib/time/mexico-city.ts';
import type { FinancialDocument } from '../../lib/model/financial-document.ts';

export default async function financialDocsOpenAsOfTests(t: Test): Promise<void> {
  const NOW = new Date('2026-06-20T12:00:00-06:00');
  const h = await startHarness(t, { build: { now: () => NOW } });

  const doc = (id: string, over: Parameters<typeof makeFinancialDoc>[0]): FinancialDocument =>
    makeFinancialDoc({ tenant: TENANT_A, _id: `${TENANT_A}-${id}`, id, ...over });
  const pay = (uuid: string, amount: number, date: string) => payment(amount, date, { uuid, id: `p-${uuid}` });

  const A = doc('A', { date: '2026-03-01T10:00', iTot: 2, payments: [pay('PA1', 1.005, '2026-03-10T10:00'), pay('PA2', 0.99, '2026-03-10T11:00')] });
  const B0 = doc('B', {
    date: '2026-02-20T09:00',
    iTot: 1000,
    payments: [pay('PB1', 1000, '2026-03-05T09:00')],
    canceled: [paymentCancellation('PB1', '2026-04-10T09:00')],
  });
  const C = doc('C', { date: '2026-02-25T08:00', cancelled: { status: 'pending', date: '2026-03-02T08:00' } });
  const D = doc('D', { date: '2026-02-25T08:00', cancelled: { status: 'rejected', date: '2026-03-02T08:00' } });
  const E0 = doc('E', { date: '2026-04-02T08:00', iTot: 500 });
  const E: FinancialDocument = {
    ...E0,
    canceled: [{ id: 'cx-E', target: 'invoice', uuid: E0.invoice.uuid, date: Date.parse('2026-05-01T08:00:00-06:00'), motive: '02', replacementUuid: null }],
  };
  const F0 = doc('F', { date: '2026-04-03T08:00', invoice: { uuid: 'ABCDEF12-0000-4000-8000-00000000000F' } });
  const F: FinancialDocument = {
    ...F0,
    canceled: [
      {
        id: 'cx-F',
        target: 'invoice',
        uuid: 'abcdef12-0000-4000-8000-00000000000f',
        date: Date.parse('2026-04-20T08:00:00-06:00'),
        motive: '02',
        replacementUuid: null,
        status: 'accepted',
      },
    ],
  };
  const G0 = doc('G', { date: '2026-04-05T08:00', iTot: 800 });
  const G: FinancialDocument = {
    ...G0,
    payments: [{ ...pay('PG1', 400, '2026-04-06T08:00'), date: null } as unknown as FinancialDocument['payments'][number]],
  };
  const H = doc('H', { date: '2026-07-10T08:00' });
  const I = doc('I', { date: '2026-05-05T08:00', iTot: 300, payments: [pay('PI1', 300, '2026-05-06T08:00')] });
  const I2: FinancialDocument = { ...I, payments: I.payments.map((p) => ({ ...p, canceled: true })) };
  const J = doc('J', { date: '2026-05-10T08:00', timestamp: 1 });
  const K = doc('K', { date: '2026-05-10T08:00', timestamp: 1 });
  const L = doc('L', { date: '2026-05-10T08:00', timestamp: 0 });
  const M = doc('M', { date: '2026-05-20T08:00', client: CLIENT_COMPANY_2, iTot: 100, payments: [pay('PM1', 100, '2026-06-25T08:00')] });

  const all = [A, B0, C, D, E, F, G, H, I2, J, K, L, M];
  await financialDocs(h.db).insertMany(all.map((d) => withDerivedFields(d)));
  await receivablesRollups.rebuild(h.db);

  const get = async (q: Record<string, string>) => {
    const res = await h.app.inject({ method: 'GET', url: `/api/financial-docs?${new URLSearchParams(q).toString()}`, headers: { 'x-api-key': KEY_A } });
    t.equal(res.statusCode, 200, res.body.slice(0, 200));
    return res.json<{ meta: { total: number; nextCursor: string | null }; data: { id: string }[] }>();
  };
  /** The same list evaluated on every document: the context without the kept reader. */
  async function reference(q: Record<string, string>) {
    const { page = '1', limit = '20', detail = 'summary', cursor, ...filters } = q;
    const input = { page: Number(page), limit: Number(limit), detail, ...(cursor ? { cursor } : {}), ...filters } as ListFinancialDocsInput;
    const answer = await listFinancialDocs({ db: h.db, config: h.config, now: () => NOW }, TENANT_A, input);
    return JSON.parse(JSON.stringify({ detail: answer.meta.detail, ...answer })) as unknown;
  }
  const ids = async (day: string, extra: Record<string, string> = {}) => (await get({ openAsOf: day, limit: '100', ...extra })).data.map((d) => d.id);

  t.ok(await receivablesRollups.ready(h.db), 'the kind is built: the list reads its spans');

  t.test('by hand, where the rule is at its edges', async (t) => {
    t.ok((await ids('2026-03-31')).includes('A'), 'A: one cent left by the pipeline cents (100 + 99 of 200)');
    t.same(
      await Promise.all(['2026-03-01', '2026-03-31', '2026-04-30'].map(async (d) => (await ids(d)).includes('B'))),
      [true, false, true],
      'B: open, settled, open again once its payment is cancelled',
    );
    t.same(
      (await ids('2026-03-31')).filter((id) => id === 'C' || id === 'D'),
      ['D', 'C'],
      'C, D: a pending or rejected request cancels nothing (same instant: by id, newest first)',
    );
    t.same([(await ids('2026-04-30')).includes('E'), (await ids('2026-05-01')).includes('E')], [true, false], 'E: a record without a status is in effect');
    t.same([(await ids('2026-04-19')).includes('F'), (await ids('2026-04-20')).includes('F')], [true, false], 'F: the UUID compares without case');
    t.ok((await ids('2026-04-05')).includes('G'), 'G: half paid by a payment without a date');
    t.same(await ids('2026-05-10'), ['K', 'J', 'L', 'I', 'G', 'A', 'D', 'C', 'B'], 'the list order: date, timestamp, id, newest first');
    t.same(await ids('2026-12-31'), ['M', 'K', 'J', 'L', 'I', 'G', 'A', 'D', 'C', 'B'], 'a later day is now: H not emitted yet, M paid after now');
    t.same(await ids('2026-12-31', { client: CLIENT_COMPANY_2 }), ['M'], 'a client');
    t.same((await get({ openAsOf: '2026-05-10', limit: '2' })).meta.total, 9, 'the total counted by index');
    for (const query of [
      { openAsOf: '2026-05-10', limit: '4', page: '3' },
      { openAsOf: '2026-05-10', limit: '4', page: '4' },
      { openAsOf: '2001-01-01', limit: '100' },
    ] as Record<string, string>[])
      t.same(await get(query), await reference(query), `a page past the last, or a day years before the data: ${JSON.stringify(query)}`);
    t.same((await get({ openAsOf: '2026-05-10', limit: '4', page: '3' })).data.length, 1, 'the last page holds the ninth');
  });

  t.test('every day of the data: the same page, total and cursor as the documents', async (t) => {
    let compared = 0;
    for (let day = '2026-02-18'; day <= '2026-07-12'; day = mxAddDays(day, 3)) {
      for (const q of [{ limit: '100' }, { limit: '2', page: '2' }, { limit: '3', client: CLIENT_COMPANY, detail: 'full' }] as Record<string, string>[]) {
        const query = { openAsOf: day, ...q };
        const kept = await get(query);
        t.same(kept, await reference(query), `openAsOf ${JSON.stringify(query)}`);
        if (kept.meta.nextCursor !== null) {
          const next = { ...query, page: '1', cursor: kept.meta.nextCursor };
          t.same(await get(next), await reference(next), `and its next page`);
        }
        compared += 1;
      }
    }
    t.ok(compared > 100, `${compared} lists compared`);
  });

  t.test('a stretch ending decades after the day: its month is found past the months walked whatever they hold', async (t) => {
    // N: paid by a payment dated 2040 (a mistyped year): open from 01-05 until then, in that month's bucket.
    const N = doc('N', { date: '2026-01-05T08:00', iTot: 700, payments: [pay('PN1', 700, '2040-03-01T08:00')] });
    await financialDocs(h.db).insertOne(withDerivedFields(N));
    await receivablesRollups.rebuild(h.db);
    t.ok((await ids('2026-02-01')).includes('N'), 'N is open on 2026-02-01');
    for (const day of ['2026-01-04', '2026-02-01', '2026-04-30', '2039-12-31', '2040-03-01'])
      for (const q of [{ limit: '100' }, { limit: '2', page: '2' }] as Record<string, string>[]) {
        const query = { openAsOf: day, ...q };
        t.same(await get(query), await reference(query), `openAsOf ${JSON.stringify(query)}`);
      }
    await financialDocs(h.db).deleteOne({ _id: N._id });
    await receivablesRollups.rebuild(h.db);
  });

  t.test('the kept spans are what the list reads: without them it differs (the check can fail)', async (t) => {
    await h.db.collection('openSpans').deleteMany({ tenant: TENANT_A, docId: `${TENANT_A}-B` });
    t.notOk((await ids('2026-04-30')).includes('B'), 'B is gone from the kept list');
    const documents = (await reference({ openAsOf: '2026-04-30', limit: '100' })) as { data: { id: string }[] };
    t.ok(
      documents.data.some((d) => d.id === 'B'),
      'while the documents still have it',
    );
    const v = await receivablesRollups.verify(h.db, TENANT_A, { repair: true });
    t.ok(v.mismatched.length > 0, 'verification finds the day');
    t.ok((await ids('2026-04-30')).includes('B'), 'repaired');
  });
}
