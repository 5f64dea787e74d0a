import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import {
  makeFinancialDoc,
  freight,
  shortage,
  payment,
  creditNote,
  paymentCancellation,
  CLIENT_COMPANY,
  CLIENT_COMPANY_2,
  CLIENT_PERSON,
} from '../fixtures/documents.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { saveTenantSettings, getTenantSettings } from '../../lib/settings/settings-repo.ts';

export default async function financialDocsTests(t: Test): Promise<void> {
  // A clock of its own, before version 1's sunset (2027-06-30): its version 1 answers stay what they test.
  const h = await startHarness(t, { build: { now: () => new Date('2026-12-01T12:00:00-06:00') } });
  const ROUTE = '/api/financial-docs';
  const get = (query: string, key = KEY_A, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key, ...headers } });

  // Tenant A: paid, partial (one payment cancelled), unpaid, cancelled, person client, credit-noted.
  const paid = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    date: '2026-03-10T10:00',
    status: 6,
    concepts: [freight(10_000)],
    payments: [payment(11_200, '2026-04-01')],
  });
  const cancelledPaymentUuid = 'AAAAAAAA-0000-4000-8000-000000000001';
  const partial = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY_2,
    date: '2026-03-12T09:00',
    status: 4,
    concepts: [freight(20_000), shortage(1_000)],
    payments: [payment(5_000, '2026-04-02'), payment(3_000, '2026-04-03', { uuid: cancelledPaymentUuid })],
    canceled: [paymentCancellation(cancelledPaymentUuid)],
  });
  const unpaid = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_PERSON, date: '2026-02-28T23:30', status: 4, concepts: [freight(5_000)] });
  const cancelled = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-01T00:00', status: 4, cancelled: true });
  const credited = makeFinancialDoc({
    tenant: TENANT_A,
    client: CLIENT_COMPANY,
    date: '2026-03-10T10:00',
    status: 7,
    concepts: [freight(1_000)],
    payments: [creditNote(1_120, '2026-03-20')],
  });
  // Same emission instant as `paid`: the timestamp breaks the tie.
  credited.timestamp = paid.timestamp + 1000;
  const otherTenant = makeFinancialDoc({ tenant: TENANT_B, client: CLIENT_COMPANY, date: '2026-03-11T10:00', status: 6 });
  await financialDocs(h.db).insertMany([paid, partial, unpaid, cancelled, credited, otherTenant].map(withDerivedFields));
  await saveTenantSettings(h.db, { ...(await getTenantSettings(h.db, TENANT_A)), statusLabels: { '4': 'Facturado', '6': 'Pagado', '7': 'Nota de crédito' } });

  const ids = (res: { json(): { data: { id: string }[] } }) => res.json().data.map((d) => d.id);

  t.test('summary form: computed balance, labels, urls, order', async (t) => {
    const res = await get('');
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', ROUTE);
    const body = res.json();
    t.same(body.meta, { total: 5, page: 1, limit: 20, pages: 1, hasMore: false, nextCursor: null, tenant: TENANT_A, detail: 'summary' });
    t.same(ids(res), [partial.id, credited.id, paid.id, cancelled.id, unpaid.id], 'newest emission first, timestamp breaks ties');
    const byId = Object.fromEntries(body.data.map((d: { id: string }) => [d.id, d]));
    t.same(byId[paid.id].balance, { total: 11_200, paid: 11_200, pending: 0, overpaid: 0, isFullyPaid: true, paymentsCount: 1 });
    t.same(byId[paid.id].status, { code: 6, label: 'Pagado' });
    t.equal(byId[credited.id].status.label, 'Nota de crédito', 'label from the tenant table');
    t.same(
      byId[credited.id].balance,
      { total: 1_120, paid: 0, pending: 0, overpaid: 0, isFullyPaid: true, paymentsCount: 1 },
      'a credit note settles without collecting',
    );
    // partial: 20,000 freight + 16% VAT − 4% retention + 1,000 shortage = 23,400; the cancelled 3,000 payment does not count
    t.same(byId[partial.id].balance, { total: 23_400, paid: 5_000, pending: 18_400, overpaid: 0, isFullyPaid: false, paymentsCount: 1 });
    t.equal(byId[partial.id].amounts.shrinkageDeduction, 1_000);
    t.same(
      byId[partial.id].cancellations,
      { hasCancellations: true, count: 1, invoiceCancelled: false, status: 'none', requestedAt: null, receiverDeadline: null },
      "a payment's cancellation is not the invoice's",
    );
    // A record written before statuses existed records a cancellation in effect.
    t.match(byId[cancelled.id].cancellations, { hasCancellations: true, count: 1, invoiceCancelled: true, status: 'accepted', receiverDeadline: null });
    t.equal(byId[cancelled.id].balance.pending, 0, 'a cancelled invoice owes nothing');
    t.equal(byId[unpaid.id].amounts.vatRetention4, 0, 'a person retains nothing');
    // Stored without a kept original (a fixture, as generated data): null links, not dead ones (test/originals/originals.ts has the kept ones).
    t.same([byId[paid.id].invoice.pdf, byId[paid.id].invoice.xml], [null, null]);
    t.equal(byId[paid.id].invoice.uuid, paid.invoice.uuid);
    t.equal(byId[paid.id].dates.satCertDate, paid.invoice.satCertDate);
  });

  t.test('full form returns the stored documents', async (t) => {
    const res = await get(`?detail=full&uuid=${paid.invoice.uuid.toLowerCase()}`);
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', ROUTE);
    // As stored, but for the store's `_id` (= id): only the deprecated version 1 list repeats it.
    const { _id: storeId, ...paidView } = paid;
    t.same(res.json().data, [paidView]);
    t.equal(storeId, paid.id);
    t.equal(res.json().meta.detail, 'full');
  });

  t.test('legacy version 1: bare array of stored documents', async (t) => {
    const res = await get('?limit=2', KEY_A, { 'x-api-version': '1' });
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'GET', ROUTE);
    t.equal(res.headers['x-api-version'], '1');
    t.same(res.json(), [partial, credited]);
    const bad = await get('', KEY_A, { 'x-api-version': '3' });
    t.equal(bad.statusCode, 400);
    t.match(bad.json().error.details[0], /x-api-version must be one of: 1, 2/);
  });

  t.test('filters', async (t) => {
    const cases: [string, string[]][] = [
      [`?client=${CLIENT_COMPANY}`, [credited.id, paid.id, cancelled.id]],
      ['?status=6', [paid.id]],
      ['?startDate=2026-03-01&endDate=2026-03-10', [credited.id, paid.id, cancelled.id]],
      ['?endDate=2026-02-28', [unpaid.id]],
      ['?startDate=2026-03-11', [partial.id]],
      [`?folio=${encodeURIComponent(partial.invoice.num)}`, [partial.id]],
      ['?paymentStatus=paid', [credited.id, paid.id]],
      ['?paymentStatus=partial', [partial.id]],
      ['?paymentStatus=unpaid', [unpaid.id]],
      ['?cancelled=true', [cancelled.id]],
      ['?cancelled=false', [partial.id, credited.id, paid.id, unpaid.id]],
      [`?client=${CLIENT_COMPANY}&paymentStatus=unpaid`, []],
    ];
    for (const [query, expected] of cases) {
      const res = await get(query);
      t.equal(res.statusCode, 200, query);
      t.same(ids(res), expected, query);
      t.equal(res.json().meta.total, expected.length, `${query} total`);
    }
  });

  t.test('pagination', async (t) => {
    const p1 = await get('?limit=2&page=1');
    t.same(ids(p1), [partial.id, credited.id]);
    const { nextCursor, ...meta1 } = p1.json().meta;
    t.same(meta1, { total: 5, page: 1, limit: 2, pages: 3, hasMore: true, tenant: TENANT_A, detail: 'summary' });
    t.type(nextCursor, 'string', 'a page with more after it carries the next cursor');
    const p3 = await get('?limit=2&page=3');
    t.same(ids(p3), [unpaid.id]);
    t.equal(p3.json().meta.hasMore, false);
    const past = await get('?limit=2&page=9');
    t.equal(past.statusCode, 200);
    t.same(past.json().data, [], 'past the end is an empty page');
    const deep = await get('?limit=100&page=501');
    t.equal(deep.statusCode, 400);
    t.match(deep.json().error.details[0], /page must be (an integer )?(<= 500|between 1 and 500)/);
  });

  t.test('tenant isolation', async (t) => {
    const res = await get('', KEY_B);
    t.same(ids(res), [otherTenant.id]);
    t.equal(res.json().meta.tenant, TENANT_B);
    const probe = await get(`?uuid=${paid.invoice.uuid}`, KEY_B);
    t.same(probe.json().data, [], 'another tenant cannot find A by uuid');
    const sneaky = await get(`?company=${TENANT_A}`, KEY_B);
    t.equal(sneaky.statusCode, 400, 'the tenant never comes from the query');
  });

  t.test('validation: one detail per problem, nothing coerced silently', async (t) => {
    const res = await get('?limit=0&page=abc&detail=everything&foo=1&startDate=2026-02-30');
    t.equal(res.statusCode, 400);
    assertConforms(t, res, 'GET', ROUTE);
    const details: string[] = res.json().error.details;
    t.ok(details.includes('limit must be an integer between 1 and 100'), details.join(' | '));
    t.ok(details.includes("unknown query parameter 'foo'"));
    t.ok(details.some((d) => d.startsWith('page ')));
    t.ok(details.some((d) => d.startsWith('detail must be one of')));
    t.ok(details.some((d) => d.startsWith('startDate must be a valid calendar date (YYYY-MM-DD')));
    const repeated = await get('?limit=1&limit=2');
    t.equal(repeated.statusCode, 400, 'a repeated scalar parameter is rejected');
    const inverted = await get('?startDate=2026-03-10&endDate=2026-03-01');
    t.equal(inverted.statusCode, 200, 'an inverted range selects no day');
    t.equal(inverted.json().meta.total, 0);
    for (const q of ['?limit=1.5', '?limit=101', '?limit=-1', '?limit=', '?status=true', '?client[$ne]=x', '?cancelled=maybe']) {
      const r = await get(q);
      t.equal(r.statusCode, 400, q);
    }
  });
}
