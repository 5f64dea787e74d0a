/**
 * The list's `paymentStatus` and `cancelled` filters read the payment state stored on each
 * document (`derivedPaymentStatus`, the computed pattern of issue 9). Through HTTP:
 *  - every document a filter returns is one whose own answer (the summary's balance and
 *    cancellations) says that state, and no other document is (edge cases included);
 *  - documents stored without the field (an older store, another writer) get it from the
 *    start-up backfill (prepareDatabase, as `npm start` runs it) and are then found;
 *  - an imported payment complement moves its invoice from unpaid to partial;
 *  - the stored field never reaches a client (REST lists, v1, get by id, MCP).
 */
import type { Test } from 'tap';
import type { Document } from 'mongodb';
import { startHarness, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { fixture } from '../helpers/cfdi-fixtures.ts';
import { makeFinancialDoc, freight, payment, creditNote, paymentCancellation, CLIENT_COMPANY, CLIENT_PERSON } from '../fixtures/documents.ts';
import { COLLECTIONS, financialDocs } from '../../lib/db/collections.ts';
import { importFacts, importLinks } from '../../lib/finance/ledger/facts-repo.ts';
import { prepareDatabase } from '../../lib/prepare-database.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import type { FinancialDocument, PaymentStatus } from '../../lib/model/financial-document.ts';

export default async function financialDocsPaymentStateTests(t: Test): Promise<void> {
  // A clock of its own, before version 1's sunset (2027-06-30): its version 1 answers stay what they test.
  const h = await startHarness(t, { build: { now: () => new Date('2026-12-01T12:00:00-06:00') } });
  const ROUTE = '/api/financial-docs';
  const get = async (query: string, key = KEY_A, headers: Record<string, string> = {}) => {
    const res = await h.app.inject({ method: 'GET', url: `${ROUTE}${query}`, headers: { 'x-api-key': key, ...headers } });
    if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body.slice(0, 300)}`);
    return res.json();
  };
  const wipe = () => Promise.all([financialDocs(h.db).deleteMany({}), importFacts(h.db).deleteMany({}), importLinks(h.db).deleteMany({})]);

  interface Summary {
    id: string;
    balance: { total: number; paid: number; pending: number; overpaid: number; isFullyPaid: boolean };
    cancellations: { invoiceCancelled: boolean };
  }
  const cents = (x: number): number => Math.round(x * 100);
  /** The state a document's own answer shows: cancelled, nothing pending, something settled, or nothing. */
  const shownState = (d: Summary): PaymentStatus =>
    d.cancellations.invoiceCancelled ? 'cancelled' : d.balance.isFullyPaid ? 'paid' : cents(d.balance.pending) < cents(d.balance.total) ? 'partial' : 'unpaid';

  /** Every document of a filtered list, following the cursors (so keyset pages are exercised too). */
  async function walk(query: string, key = KEY_A): Promise<Summary[]> {
    const all: Summary[] = [];
    let page = await get(`?limit=100${query}`, key);
    all.push(...page.data);
    while (page.meta.nextCursor) {
      page = await get(`?limit=100${query}&cursor=${encodeURIComponent(page.meta.nextCursor)}`, key);
      all.push(...page.data);
    }
    return all;
  }

  const FILTERS: [query: string, states: PaymentStatus[]][] = [
    ['&paymentStatus=paid', ['paid']],
    ['&paymentStatus=partial', ['partial']],
    ['&paymentStatus=unpaid', ['unpaid']],
    ['&cancelled=true', ['cancelled']],
    ['&cancelled=false', ['paid', 'partial', 'unpaid']],
    ['&paymentStatus=partial&cancelled=false', ['partial']],
    ['&paymentStatus=unpaid&cancelled=true', []],
  ];

  /** Each filter returns exactly the documents whose own answer shows one of its states. */
  async function filtersAgreeWithAnswers(t: Test, key = KEY_A): Promise<Map<string, PaymentStatus>> {
    const shown = new Map((await walk('', key)).map((d) => [d.id, shownState(d)]));
    for (const [query, states] of FILTERS) {
      const found = await walk(query, key);
      const expected = [...shown]
        .filter(([, s]) => states.includes(s))
        .map(([id]) => id)
        .sort();
      t.same(found.map((d) => d.id).sort(), expected, `${query}: the documents whose answer says ${states.join('/') || 'nothing'}`);
      t.equal((await get(`?limit=1${query}`, key)).meta.total, expected.length, `${query}: total`);
    }
    return shown;
  }

  t.test('each filter returns exactly the documents whose answer shows that state', async (t) => {
    await wipe();
    const paidUuid = 'AAAAAAAA-0000-4000-8000-00000000000A';
    const docs: Record<string, FinancialDocument> = {
      paid: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(10_000)], payments: [payment(11_200)] }),
      overpaid: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(10_000)], payments: [payment(11_300)] }),
      partial: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(10_000)], payments: [payment(1_000)] }),
      unpaid: makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_PERSON, concepts: [freight(5_000)] }),
      creditNoteOnly: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(1_000)], payments: [creditNote(1_120)] }),
      creditNotePart: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(1_000)], payments: [creditNote(500)] }),
      // The only payment was cancelled: by a record naming it, and by its own flag.
      cancelledPayment: makeFinancialDoc({
        tenant: TENANT_A,
        concepts: [freight(2_000)],
        payments: [payment(2_240, undefined, { uuid: paidUuid })],
        canceled: [paymentCancellation(paidUuid)],
      }),
      flaggedPayment: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(2_000)], payments: [payment(2_240, undefined, { canceled: true })] }),
      cancelledPaymentAndValid: makeFinancialDoc({
        tenant: TENANT_A,
        concepts: [freight(2_000)],
        payments: [payment(2_240, undefined, { uuid: 'AAAAAAAA-0000-4000-8000-00000000000B' }), payment(100)],
        canceled: [paymentCancellation('aaaaaaaa-0000-4000-8000-00000000000b')], // named in lower case: still that payment
      }),
      cancelledAfterPaid: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(10_000)], payments: [payment(11_200)], cancelled: true }),
      cancelledUnpaid: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(3_000)], cancelled: true }),
      // Sub-cent amounts: the rule counts cents, not floats within half a cent.
      subCent: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(100)], payments: [payment(111.994)] }),
      zeroTotal: makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(0)] }),
      otherTenantPartial: makeFinancialDoc({ tenant: TENANT_B, client: CLIENT_COMPANY, concepts: [freight(10_000)], payments: [payment(1_000)] }),
    };
    // Lower-case UUID in the invoice's own cancellation record: still the invoice.
    docs.cancelledUnpaid!.canceled[0]!.uuid = docs.cancelledUnpaid!.invoice.uuid.toLowerCase();
    await financialDocs(h.db).insertMany(Object.values(docs).map(withDerivedFields));

    const shown = await filtersAgreeWithAnswers(t);
    const stateOf = (name: string) => shown.get(docs[name]!.id);
    t.same(
      Object.fromEntries(
        Object.keys(docs)
          .filter((n) => n !== 'otherTenantPartial')
          .map((n) => [n, stateOf(n)]),
      ),
      {
        paid: 'paid',
        overpaid: 'paid',
        partial: 'partial',
        unpaid: 'unpaid',
        creditNoteOnly: 'paid',
        creditNotePart: 'partial',
        cancelledPayment: 'unpaid',
        flaggedPayment: 'unpaid',
        cancelledPaymentAndValid: 'partial',
        cancelledAfterPaid: 'cancelled',
        cancelledUnpaid: 'cancelled',
        subCent: 'partial',
        zeroTotal: 'paid',
      },
      'the fixture covers every state and its edges',
    );
    // What was paid and credited beyond the total, which `pending` (never below 0) cannot show: 11,300.00 paid on
    // 10,000.00 + 1,600.00 VAT − 400.00 retained = 11,200.00 is 100.00 over; every other document is 0 (subCent's
    // 111.994 is 111.99 of 112.00: under, not over).
    const answers = new Map((await walk('')).map((d) => [d.id, d]));
    t.same(
      Object.fromEntries(
        Object.keys(docs)
          .filter((n) => n !== 'otherTenantPartial')
          .map((n) => [n, answers.get(docs[n]!.id)!.balance.overpaid])
          .filter(([, v]) => v !== 0),
      ),
      { overpaid: 100 },
      'overpaid: only the document paid beyond its total',
    );
    const mcp = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const one = (await mcp.callTool({ name: 'getFinancialDoc', arguments: { id: docs.overpaid!.id } })).structuredContent as Summary;
    t.match(one.balance, { total: 11_200, paid: 11_300, pending: 0, overpaid: 100, isFullyPaid: true }, 'MCP: the same balance');
    t.same(
      (await walk('&paymentStatus=partial', KEY_B)).map((d) => d.id),
      [docs.otherTenantPartial!.id],
      'scoped to the tenant',
    );
  });

  t.test('documents stored without the field are repaired by the start-up backfill, then found', async (t) => {
    await wipe();
    // Written by "another writer": the raw collection, no derived field. Enough for several bulk writes.
    const raw = h.db.collection<{ _id: string } & Document>(COLLECTIONS.financialDocs);
    const kinds = [
      (tenant: string) => makeFinancialDoc({ tenant, concepts: [freight(1_000)], payments: [payment(1_120)] }),
      (tenant: string) => makeFinancialDoc({ tenant, concepts: [freight(1_000)], payments: [payment(100)] }),
      (tenant: string) => makeFinancialDoc({ tenant, concepts: [freight(1_000)] }),
      (tenant: string) => makeFinancialDoc({ tenant, concepts: [freight(1_000)], payments: [creditNote(200)] }),
      (tenant: string) => makeFinancialDoc({ tenant, concepts: [freight(1_000)], cancelled: true }),
    ];
    const legacy = Array.from({ length: 1_105 }, (_, i) => kinds[i % kinds.length]!(i % 13 === 0 ? TENANT_B : TENANT_A));
    await raw.insertMany(legacy);
    // Beside them, documents that have it (this version's writers): left as they are.
    const current = [makeFinancialDoc({ tenant: TENANT_A, payments: [payment(50)] }), makeFinancialDoc({ tenant: TENANT_B })].map(withDerivedFields);
    await financialDocs(h.db).insertMany(current);
    // A document the rule cannot read (no payment or cancellation arrays), in a tenant of its own.
    await raw.insertOne({ _id: 'broken-1', company: 'ZZZ010101ZZ9', date: 1, timestamp: 1, iTot: 10 });

    t.equal((await get('?limit=1&paymentStatus=partial')).meta.total, 1, 'before the backfill only the document with the field is found');

    const logged: string[] = [];
    const { backfilled } = await prepareDatabase(h.db, { log: (m) => logged.push(m) });
    const missingA = legacy.filter((d) => d.company === TENANT_A).length;
    t.same(
      backfilled.map((r) => [r.tenant, r.repaired, r.unreadable]),
      [
        [TENANT_B, legacy.length - missingA, 0],
        ['ZZZ010101ZZ9', 0, 1],
        [TENANT_A, missingA, 0],
      ].sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      'per tenant, in RFC order: repaired and unreadable documents',
    );
    t.equal(logged.length, 3, 'one log line per tenant that had documents to repair');
    t.match(logged.join('\n'), new RegExp(`${TENANT_A}: derived payment and cancellation states written on ${missingA} documents`));
    t.equal(
      await raw.countDocuments({ company: { $in: [TENANT_A, TENANT_B] }, derivedPaymentStatus: null }),
      0,
      'no document of the served tenants is left without it',
    );
    t.same(
      await raw.findOne({ _id: 'broken-1' }),
      { _id: 'broken-1', company: 'ZZZ010101ZZ9', date: 1, timestamp: 1, iTot: 10 },
      'the unreadable document is left untouched',
    );

    await filtersAgreeWithAnswers(t, KEY_A);
    await filtersAgreeWithAnswers(t, KEY_B);

    // Idempotent: a second start finds only the unreadable document again, and writes nothing.
    const before = await raw
      .find({ company: { $in: [TENANT_A, TENANT_B] } })
      .sort({ _id: 1 })
      .toArray();
    const again = await prepareDatabase(h.db);
    t.same(
      again.backfilled.map((r) => [r.tenant, r.repaired, r.unreadable]),
      [['ZZZ010101ZZ9', 0, 1]],
      'nothing left to repair',
    );
    t.same(
      await raw
        .find({ company: { $in: [TENANT_A, TENANT_B] } })
        .sort({ _id: 1 })
        .toArray(),
      before,
      'no document changed',
    );
  });

  t.test('an imported payment complement moves its invoice from unpaid to partial, then paid', async (t) => {
    await wipe();
    const id = `${TENANT_A}-CFDI-1A2B3C4D-0004-4000-8000-000000000004`; // 04-ppd-invoice.xml, A-1004, 56,000.00
    const importXml = async (name: string) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/imports',
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' },
        payload: fixture(name),
      });
      t.equal(res.statusCode, 200, name);
      return res.json().files[0].status as string;
    };
    const statesOf = async () => {
      const found: string[] = [];
      for (const [query] of FILTERS.slice(0, 4)) if ((await walk(query)).some((d) => d.id === id)) found.push(query);
      return found;
    };
    t.equal(await importXml('04-ppd-invoice.xml'), 'created');
    t.same(await statesOf(), ['&paymentStatus=unpaid'], 'imported without payments: unpaid');
    t.equal(await importXml('05-payment-complement-1.xml'), 'created');
    t.same(await statesOf(), ['&paymentStatus=partial'], '20,000.00 of 56,000.00 paid: partial');
    const written = (await financialDocs(h.db).findOne({ _id: id }))!.lastUpdate;
    t.equal(await importXml('05-payment-complement-1.xml'), 'skipped', 'the same file again');
    t.equal((await financialDocs(h.db).findOne({ _id: id }))!.lastUpdate, written, 'a re-import writes nothing (the stored state compares equal)');
    t.equal(await importXml('06-credit-note.xml'), 'created');
    t.equal(await importXml('07-payment-complement-2.xml'), 'created');
    t.same(await statesOf(), ['&paymentStatus=paid'], 'two complements and a credit note settle it: paid');
  });

  t.test('the stored field never reaches a client', async (t) => {
    await wipe();
    const doc = makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(10_000)], payments: [payment(1_000)] });
    await financialDocs(h.db).insertOne(withDerivedFields(doc));
    t.equal((await financialDocs(h.db).findOne({ _id: doc._id }))!.derivedPaymentStatus, 'partial', 'it is stored');
    const answers: [string, unknown][] = [
      ['list detail=full', (await get('?detail=full&paymentStatus=partial')).data],
      ['list version 1', await get('?paymentStatus=partial', KEY_A, { 'x-api-version': '1' })],
      ['list summary', (await get('?paymentStatus=partial')).data],
      ['get by id, full', (await h.app.inject({ method: 'GET', url: `${ROUTE}/${doc._id}?detail=full`, headers: { 'x-api-key': KEY_A } })).json()],
      ['get by id, summary', (await h.app.inject({ method: 'GET', url: `${ROUTE}/${doc._id}`, headers: { 'x-api-key': KEY_A } })).json()],
    ];
    const mcp = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    answers.push([
      'MCP listFinancialDocs detail=full',
      (await mcp.callTool({ name: 'listFinancialDocs', arguments: { detail: 'full', paymentStatus: 'partial' } })).structuredContent,
    ]);
    answers.push([
      'MCP getFinancialDoc detail=full',
      (await mcp.callTool({ name: 'getFinancialDoc', arguments: { id: doc._id, detail: 'full' } })).structuredContent,
    ]);
    for (const [what, body] of answers) {
      t.ok(JSON.stringify(body).includes(doc.id), `${what}: the document is there`);
      t.notOk(JSON.stringify(body).includes('derivedPaymentStatus'), `${what}: without the stored field`);
      t.notOk(JSON.stringify(body).includes('derivedCancellationStatus'), `${what}: without the stored cancellation status`);
    }
    const { _id: _storeId, ...view } = doc;
    t.same((await get('?detail=full&paymentStatus=partial')).data, [view], 'detail=full is the stored document without its derived fields (nor _id, = id)');
    t.same(await get('?paymentStatus=partial', KEY_A, { 'x-api-version': '1' }), [doc], 'version 1: the earlier shape, _id included');
  });

  t.test('a store written before the cancellation status: the start-up backfill adds it, then cancellationStatus= finds it', async (t) => {
    await wipe();
    const raw = h.db.collection<{ _id: string } & Document>(COLLECTIONS.financialDocs);
    // What the previous version wrote: the payment state, no cancellation status; records without statuses.
    const previous = [
      makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(1_000)], cancelled: true }),
      makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(2_000)], payments: [payment(2_320)] }),
      makeFinancialDoc({ tenant: TENANT_A, concepts: [freight(3_000)], cancelled: { status: 'pending', date: '2026-03-12T10:00' } }),
    ].map((d) => {
      const { derivedCancellationStatus: _added, ...stored } = withDerivedFields(d);
      return stored;
    });
    await raw.insertMany(previous);
    t.equal((await get('?limit=1&cancellationStatus=none')).meta.total, 0, 'not found before the backfill');
    const { backfilled } = await prepareDatabase(h.db);
    t.same(
      backfilled.map((r) => [r.tenant, r.repaired]),
      [[TENANT_A, 3]],
    );
    t.same(
      (await get('?limit=10&cancellationStatus=accepted')).data.map((d: { id: string }) => d.id),
      [previous[0]!.id],
      'a record without a status: a cancellation in effect',
    );
    t.same(
      (await get('?limit=10&cancellationStatus=none')).data.map((d: { id: string }) => d.id),
      [previous[1]!.id],
    );
    t.same(
      (await get('?limit=10&cancellationStatus=pending')).data.map((d: { id: string }) => d.id),
      [previous[2]!.id],
    );
    t.same((await get('?limit=10&cancellationStatus=pending&cancelled=true')).meta.total, 0, 'pending is not cancelled');
    t.same(
      (await get('?limit=10&cancellationStatus=pending&cancelled=false')).data.map((d: { id: string }) => d.id),
      [previous[2]!.id],
    );
    t.same((await get('?limit=10&cancellationStatus=accepted&paymentStatus=unpaid')).meta.total, 0, 'a cancelled invoice has no payment status');
    t.same(
      (await get('?limit=10&cancellationStatus=pending&paymentStatus=unpaid')).data.map((d: { id: string }) => d.id),
      [previous[2]!.id],
    );
    t.equal((await raw.findOne({ _id: previous[1]!._id }))!.derivedPaymentStatus, 'paid', 'the payment state it had is kept');
  });
}
