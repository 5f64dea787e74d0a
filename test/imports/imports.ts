/**
 * POST /api/imports end to end: the hand-written CFDI 4.0 fixtures
 * (test/fixtures/cfdi) imported over HTTP and MCP, then read back through the
 * lists, the tax summary and the audits, against values computed by hand:
 *
 *   01 A-1001 freight 20,000.00, VAT 3,200.00, retention 4% 800.00, Total 22,400.00 (PUE)
 *   02 A-1002 freight 30,000 L × 0.85 = 25,500.00 (VAT 4,080.00, ret 1,020.00) + shortage
 *      60 L × 24.50 = 1,470.00 ObjetoImp 01 → SubTotal 26,970.00, Total 30,030.00 (PUE)
 *   03 A-1003 persona física client: 8,000.00 + VAT 1,280.00, no retention = 9,280.00 (PUE)
 *   04 A-1004 PPD 50,000.00 + 8,000.00 − 2,000.00 = 56,000.00; paid by
 *      05 payment 10-20 20,000.00 (56,000 → 36,000), 06 credit note 10-25 5,600.00
 *      (36,000 → 30,400) and 07 payment 11-05 30,400.00 (→ 0): paid, status 6
 *   08 A-1008 11,200.00, cancelled by 10 (motive 01, replaced by 09 A-1009, 11,760.00)
 *   11 A-1011 Carta Porte: diesel 20,000 L (19,940 delivered) + regular 12,000 L (11,990),
 *      105 km, freight 32,000 L × 0.90 = 28,800.00 + 4,608.00 − 1,152.00 = 32,256.00
 *
 * October 2026, invoice basis, non-cancelled (01 02 03 04 09 11):
 *   taxable = freight base = 20,000 + 25,500 + 8,000 + 50,000 + 10,500 + 28,800 = 142,800.00
 *   VAT = 3,200 + 4,080 + 1,280 + 8,000 + 1,680 + 4,608 = 22,848.00
 *   retention = 800 + 1,020 + 0 + 2,000 + 420 + 1,152 = 5,392.00; exempt (shortage) 1,470.00
 *   Σ Total = 22,400 + 30,030 + 9,280 + 56,000 + 11,760 + 32,256 = 161,726.00
 * Shrinkage (tenant default tolerance 0%, excess mode): 70 L of 32,000 = 0.21875% → 0.2188%,
 *   valued at the loaded-weighted price (20,000 × 24.50 + 12,000 × 23.90) / 32,000 = 24.275
 *   → 70 × 24.275 = 1,699.25. Unit economics: 28,800 / 105 km = 274.29 per km,
 *   28,800 / 32,000 loaded L = 0.90 per litre.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { fixture, fixtureNames, zipOf } from '../helpers/cfdi-fixtures.ts';
import { invoiceXml, paymentXml } from '../helpers/cfdi-builder.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';
import { importFacts } from '../../lib/finance/ledger/facts-repo.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';

export default async function importsTests(t: Test): Promise<void> {
  const h = await startHarness(t, { env: { IMPORT_MAX_FILE_BYTES: '65536', IMPORT_BODY_LIMIT_BYTES: '1048576', IMPORT_MAX_FILES: '50' } });
  const ROUTE = '/api/imports';
  const UUID = (n: number): string => `1A2B3C4D-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const docId = (n: number): string => `${TENANT_A}-CFDI-${UUID(n)}`;

  type Report = {
    tenant: string;
    summary: Record<string, number>;
    ignored?: { names: string[]; more: number };
    files: { name: string; status: string; kind?: string; uuid?: string; reason?: string; pendingInvoices?: string[]; tripId?: string }[];
  };

  async function post(payload: Buffer | string | object, contentType: string, key = KEY_A) {
    const res = await h.app.inject({ method: 'POST', url: ROUTE, headers: { 'x-api-key': key, 'content-type': contentType }, payload: payload as never });
    return res;
  }
  const get = async (url: string, key = KEY_A) => {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    return res.json();
  };
  const allFixtures = async () => zipOf(fixtureNames().map((n) => ({ name: n, data: fixture(n) })));
  const wipe = async () => {
    await Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({})]);
  };
  const storedDocs = async () => (await financialDocs(h.db).find({}).sort({ _id: 1 }).toArray()).map((d) => JSON.stringify(d));
  const storedTrips = async () => (await trips(h.db).find({}).sort({ _id: 1 }).toArray()).map((d) => JSON.stringify(d));
  /** What the documents say, without when they were written (`lastUpdate`). */
  const contentOf = (rows: string[]) => rows.map((r) => JSON.stringify({ ...JSON.parse(r), lastUpdate: undefined }));

  t.test('a zip of the fixtures: every file created, then the lists, tax summary and audits give the hand-computed values', async (t) => {
    await wipe();
    const res = await post(await allFixtures(), 'application/zip');
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'POST', ROUTE);
    const report = res.json<Report>();
    t.equal(report.tenant, TENANT_A);
    t.same(report.summary, { files: 11, created: 11, updated: 0, skipped: 0, rejected: 0, ignored: 0, rejectedLines: 0 });
    t.same(
      report.files.map((f) => [f.name.replace('upload.zip/', '').slice(0, 2), f.kind]),
      [
        ['01', 'invoice'],
        ['02', 'invoice'],
        ['03', 'invoice'],
        ['04', 'invoice'],
        ['05', 'payment'],
        ['06', 'creditNote'],
        ['07', 'payment'],
        ['08', 'invoice'],
        ['09', 'invoice'],
        ['10', 'cancellation'],
        ['11', 'invoice'],
      ],
    );
    t.equal(report.files[10]!.tripId, `${TENANT_A}-CP-${UUID(11)}`);

    // --- financial documents list
    const list = await get('/api/financial-docs?limit=20&startDate=2026-10-01&endDate=2026-10-31');
    t.equal(list.meta.total, 7, '7 invoices (payments, credit note and cancellation live inside them)');
    const byId = new Map((list.data as { id: string }[]).map((d) => [d.id, d as Record<string, any>]));
    const ppd = byId.get(docId(4))!;
    t.equal(ppd.status.code, 6, 'A-1004 paid by two complements and a credit note');
    t.equal(ppd.status.label, 'Pagado');
    const full = await get(`/api/financial-docs?limit=20&detail=full&client=CIN010203KL5`);
    const ppdFull = full.data.find((d: { id: string }) => d.id === docId(4));
    t.same(
      ppdFull.payments.map((p: { kind: string; amount: number; balanceBefore: number; balanceAfter: number; canceled: boolean }) => [
        p.kind,
        p.amount,
        p.balanceBefore,
        p.balanceAfter,
        p.canceled,
      ]),
      [
        ['payment', 20000, 56000, 36000, false],
        ['creditNote', 5600, 36000, 30400, false],
        ['payment', 30400, 30400, 0, false],
      ],
    );
    t.equal(ppdFull.invoice.satCertDate, '2026-10-01T15:02:30.000Z', 'FechaTimbrado 09:02:30 Mexico City');
    const cancelled = (await get('/api/financial-docs?limit=20&detail=full&client=GDI920315QR4')).data.find((d: { id: string }) => d.id === docId(8));
    t.equal(cancelled.status, 9);
    t.same(
      cancelled.canceled.map((c: { target: string; uuid: string; motive: string; replacementUuid: string }) => [c.target, c.uuid, c.motive, c.replacementUuid]),
      [['invoice', UUID(8), '01', UUID(9)]],
    );
    const shortage = byId.get(docId(2))!;
    t.match(shortage.amounts, { subtotal: 26970, vat16: 4080, vatRetention4: 1020, shrinkageDeduction: 1470, total: 30030 });
    t.match(ppd.balance, { total: 56000, paid: 50400, pending: 0, isFullyPaid: true, paymentsCount: 3 });
    for (const n of [1, 2, 3, 9, 11]) t.equal(byId.get(docId(n))!.status.code, 6, `PUE invoice ${n} is paid when issued`);
    // The versions the files state (Comprobante Version="4.0"; fixture 11's CartaPorte Version="3.1"), in the summary.
    for (const n of [1, 2, 3, 4, 8, 9]) t.same([byId.get(docId(n))!.invoice.cfdiVersion, byId.get(docId(n))!.invoice.cartaPorteVersion], ['4.0', undefined]);
    t.same([byId.get(docId(11))!.invoice.cfdiVersion, byId.get(docId(11))!.invoice.cartaPorteVersion], ['4.0', '3.1'], 'the Carta Porte version');

    // --- shipments list
    const ships = await get('/api/shipments?limit=5');
    t.equal(ships.meta.total, 1);
    const trip = ships.data[0];
    t.equal(trip.references.idFinan, docId(11));
    t.same(trip.route.origin, { id: 'OR000001', city: '24', state: 'VER' });
    t.equal(trip.driver, 'RAUL HERNANDEZ GARCIA');
    const legSummary = trip.shipments[0];
    t.equal(legSummary.vehicle, 'XA1234B');
    t.equal(legSummary.distanceKm, 105);
    t.match(legSummary.volumes, { loaded: 32000, offloaded: 31930, shrinkageVolume: 70, shrinkagePercent: 0.2188, exceedsTolerance: true });
    t.same(
      legSummary.volumes.products.map((p: { code: string; loaded: number; offloaded: number }) => [p.code, p.loaded, p.offloaded]),
      [
        ['15101505', 20000, 19940],
        ['15101514', 12000, 11990],
      ],
    );
    t.equal(legSummary.loadDate, '2026-10-20T14:00:00.000Z');
    t.equal(legSummary.offloadDate, '2026-10-20T22:00:00.000Z');
    t.match(trip.financialLinked, { id: docId(11), total: 32256, pending: 0, invoiceFolio: 'A-1011' });

    // --- tax summary
    const tax = await get('/api/tax-summary?targetMonth=2026-10');
    t.match(tax.totals, {
      documents: 6,
      cancelledDocuments: 1,
      cancelledTotal: 11200,
      subtotal: 144270,
      taxableBase: 142800,
      freightBase: 142800,
      exempt: { total: 1470, shortage: 1470 },
      vat: { declared: 22848, expected: 22848, difference: 0 },
      retention: { declared: 5392, expected: 5392, difference: 0 },
      total: 161726,
      findings: { discrepancies: 0, warnings: 0 },
    });
    const person = tax.months[0].clients.data.find((c: { client: string }) => c.client === 'LOMJ800101AB2');
    t.match(person, { clientKind: 'person', totals: { retention: { declared: 0, expected: 0 } } }, 'persona física: no retention expected');
    t.same(tax.findings.byCode, { DOCUMENT_CANCELLED: 1, EXEMPT_EXCLUDED: 1 });

    // --- audits
    const shrink = await get('/api/analytics/discounts-and-shrinkage?startDate=2026-10-01&endDate=2026-10-31');
    t.match(shrink.shrinkage.totals, {
      trips: 1,
      legs: 1,
      loadedLitres: 32000,
      offloadedLitres: 31930,
      shrinkageLitres: 70,
      legsOutOfTolerance: 1,
      recoverableLitres: 70,
      recoverableValue: 1699.25,
    });
    const ue = await get('/api/analytics/unit-economics?startDate=2026-10-01&endDate=2026-10-31');
    t.match(ue.totals, {
      trips: 1,
      legs: 1,
      revenue: 28800,
      km: 105,
      litres: 32000,
      loadedLitres: 32000,
      offloadedLitres: 31930,
      revenuePerKm: { value: 274.29 },
      revenuePerLitre: { value: 0.9 },
    });
  });

  t.test('idempotent: the same files again change nothing and are reported skipped', async (t) => {
    const docs = await storedDocs();
    const tripsBefore = await storedTrips();
    const again = (await post(await allFixtures(), 'application/zip')).json<Report>();
    t.same(again.summary, { files: 11, created: 0, updated: 0, skipped: 11, rejected: 0, ignored: 0, rejectedLines: 0 });
    t.ok(again.files.every((f) => f.reason === 'already imported (same UUID, same content)'));
    t.same(await storedDocs(), docs, 'financial documents unchanged');
    t.same(await storedTrips(), tripsBefore, 'trips unchanged');
    // One file again, alone, as XML: skipped too.
    const one = (await post(fixture('05-payment-complement-1.xml'), 'application/xml')).json<Report>();
    t.same(one.summary, { files: 1, created: 0, updated: 0, skipped: 1, rejected: 0, ignored: 0, rejectedLines: 0 });
  });

  t.test('order does not matter: payments, credit note and cancellation before their invoices give the same documents', async (t) => {
    const reference = await storedDocs();
    const referenceTrips = await storedTrips();
    await wipe();
    const names = fixtureNames().reverse();
    for (const name of names) {
      const r = (await post(fixture(name), 'application/xml')).json<Report>();
      t.equal(r.summary.created, 1, `${name} created`);
      if (name.startsWith('07') || name.startsWith('06') || name.startsWith('05')) t.same(r.files[0]!.pendingInvoices, [UUID(4)], `${name} waits for A-1004`);
      if (name.startsWith('10')) t.same(r.files[0]!.pendingInvoices, [UUID(8)], 'the cancellation waits for A-1008');
    }
    t.same(contentOf(await storedDocs()), contentOf(reference), 'same financial documents as in file order');
    t.same(contentOf(await storedTrips()), contentOf(referenceTrips), 'same trips');
  });

  t.test('two imports of the same files at once: each reports what it did (issue 33: both said created)', async (t) => {
    const reference = await storedDocs();
    await wipe();
    const zip = await allFixtures();
    const [a, b] = (await Promise.all([post(zip, 'application/zip'), post(zip, 'application/zip')])).map((r) => r.json<Report>()) as [Report, Report];
    for (const name of fixtureNames()) {
      const statuses = [a, b].map((r) => r.files.find((f) => f.name === `upload.zip/${name}`)!.status).sort();
      t.same(statuses, ['created', 'skipped'], `${name}: created by one import, skipped by the other`);
    }
    t.equal(a.summary.created! + b.summary.created!, 11, 'eleven files created in all');
    t.same(contentOf(await storedDocs()), contentOf(reference), 'the same documents as one import');
  });

  t.test('an updated file (same UUID, other content) replaces the earlier version', async (t) => {
    const original = fixture('11-carta-porte-two-products.xml').toString('utf8');
    const undelivered = original.replace(/<cfdi:Addenda>[\s\S]*<\/cfdi:Addenda>/, '');
    const r = (await post(undelivered, 'application/xml')).json<Report>();
    t.equal(r.files[0]!.status, 'updated');
    const leg = (await get('/api/shipments?limit=1')).data[0].shipments[0];
    t.equal(leg.status, 2, 'without the delivery addenda the leg is in transit');
    t.equal(leg.offloadDate, null);
    const back = (await post(original, 'application/xml')).json<Report>();
    t.equal(back.files[0]!.status, 'updated');
    t.equal((await get('/api/shipments?limit=1')).data[0].shipments[0].volumes.offloaded, 31930);
  });

  t.test('a UUID names one CFDI: a file giving a UUID of the books another type is rejected, nothing of it written', async (t) => {
    const CLIENT = 'CLI010101AB1';
    const U = (n: number) => `5C1D0E77-0001-4000-8000-0000000009${String(n).padStart(2, '0')}`;
    const invoice = (n: number) =>
      invoiceXml({
        issuer: TENANT_A,
        receiver: CLIENT,
        uuid: U(n),
        fecha: '2026-10-05T09:00:00',
        method: 'PPD',
        lines: [{ code: '78101802', desc: 'Flete', amount: 1_000, transfers: [{ tax: '002', rate: 0.16 }] }],
      }).xml;
    // A payment complement stamped with the invoice's UUID (paying another invoice).
    const clash = (n: number) =>
      paymentXml({
        issuer: TENANT_A,
        receiver: CLIENT,
        uuid: U(n),
        fecha: '2026-10-10T12:00:00',
        invoiceUuid: U(99),
        currency: 'MXN',
        exchangeRate: 1,
        before: 1_160,
        paid: 1_160,
      });
    t.equal((await post({ files: [{ name: 'i1.xml', content: invoice(1) }] }, 'application/json')).json<Report>().files[0]!.status, 'created');
    const later = (await post({ files: [{ name: 'p1.xml', content: clash(1) }] }, 'application/json')).json<Report>();
    t.match(later.files, [{ name: 'p1.xml', status: 'rejected', reason: /^UUID .+ is already an invoice .* a payment complement: a UUID names one CFDI/ }]);
    const doc = await get(`/api/financial-docs/${TENANT_A}-CFDI-${U(1)}?detail=full`);
    t.match(doc, { iTot: 1_160, invoice: { uuid: U(1) } }, 'the invoice stays');
    const original = await h.app.inject({ method: 'GET', url: `/api/cfdi-originals/${U(1)}`, headers: { 'x-api-key': KEY_A } });
    t.equal(original.body, invoice(1), "and its original is the invoice's file");
    // In one request: the later file of the two is the one rejected.
    const both = (
      await post(
        {
          files: [
            { name: 'i2.xml', content: invoice(2) },
            { name: 'p2.xml', content: clash(2) },
          ],
        },
        'application/json',
      )
    ).json<Report>();
    t.match(both.files, [
      { name: 'i2.xml', status: 'created' },
      { name: 'p2.xml', status: 'rejected', reason: /is already an invoice/ },
    ]);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const viaMcp = (await client.callTool({ name: 'importDocuments', arguments: { body: { files: [{ name: 'p1.xml', content: clash(1) }] } } })) as unknown as {
      structuredContent: Report;
    };
    t.match(viaMcp.structuredContent.files, [{ status: 'rejected', reason: /is already an invoice/ }], 'MCP: the same');
  });

  t.test('a delivery recorded through the API outlives importing the Carta Porte again', async (t) => {
    const original = fixture('11-carta-porte-two-products.xml').toString('utf8');
    const undelivered = original.replace(/<cfdi:Addenda>[\s\S]*<\/cfdi:Addenda>/, '');
    t.equal((await post(undelivered, 'application/xml')).json<Report>().files[0]!.status, 'updated');
    const tripId = `${TENANT_A}-CP-${UUID(11)}`;
    const stored = async () => (await trips(h.db).findOne({ _id: tripId }))!;
    t.same(
      (await stored()).shipments[0]!.products.map((p) => p.offloaded),
      [null, null],
      'in transit: nothing offloaded recorded (null, not 0)',
    );
    const summary = (await get(`/api/shipments/${tripId}`)).shipments[0];
    t.match(summary, { delivered: false, volumes: { offloaded: null, shrinkagePercent: null, exceedsTolerance: false } });

    const delivery = {
      offloadDate: '2026-10-20T17:00:00-06:00',
      ticket: 'TK-A1011',
      products: [
        { code: '15101505', offloaded: 19_950 },
        { code: '15101514', offloaded: 11_995 },
      ],
    };
    const put = await h.app.inject({
      method: 'PUT',
      url: `/api/shipments/${tripId}/legs/${summary.shipmentId}/delivery`,
      headers: { 'x-api-key': KEY_A },
      payload: delivery,
    });
    t.equal(put.statusCode, 200, put.body);
    const recorded = await stored();
    t.match(recorded.shipments[0], { status: 4, delivery: { source: 'recorded', ticket: 'TK-A1011' } });

    t.equal((await post(undelivered, 'application/xml')).json<Report>().files[0]!.status, 'skipped');
    t.same(await stored(), recorded, 'the same file again: nothing written, the delivery stays');
    const withAddenda = (await post(original, 'application/xml')).json<Report>();
    t.equal(withAddenda.files[0]!.status, 'updated', 'another version of the file is imported');
    const after = await stored();
    t.match(
      after.shipments[0],
      { status: 4, unloadDate: recorded.shipments[0]!.unloadDate, delivery: { source: 'recorded', ticket: 'TK-A1011' } },
      "the recorded delivery wins over the file's addenda",
    );
    t.same(
      after.shipments[0]!.products.map((p) => p.offloaded),
      [19_950, 11_995],
    );
    t.same({ ...after, lastUpdate: undefined }, { ...recorded, lastUpdate: undefined }, 'the trip says what it said');
    const leg = (await get(`/api/shipments/${tripId}`)).shipments[0];
    t.match(leg, { delivered: true, deliveryTicket: 'TK-A1011', volumes: { offloaded: 31_945, shrinkageVolume: 55 } });
  });

  t.test('a recorded delivery that no longer fits the corrected Carta Porte is not kept', async (t) => {
    const original = fixture('11-carta-porte-two-products.xml').toString('utf8');
    const undelivered = original.replace(/<cfdi:Addenda>[\s\S]*<\/cfdi:Addenda>/, '');
    await post(undelivered, 'application/xml');
    const tripId = `${TENANT_A}-CP-${UUID(11)}`;
    const shipmentId = (await get(`/api/shipments/${tripId}`)).shipments[0].shipmentId;
    // The reception ticket: 19,900 L of diesel and 11,950 L of gasoline.
    const deliver = () =>
      h.app.inject({
        method: 'PUT',
        url: `/api/shipments/${tripId}/legs/${shipmentId}/delivery`,
        headers: { 'x-api-key': KEY_A },
        payload: {
          offloadDate: '2026-10-20T17:00:00-06:00',
          products: [
            { code: '15101505', offloaded: 19_900 },
            { code: '15101514', offloaded: 11_950 },
          ],
        },
      });
    const put = await deliver();
    t.equal(put.statusCode, 200, put.body);
    // The carrier corrects the file: 10,000 L of diesel were loaded, not 20,000.
    const corrected = undelivered.replaceAll('Cantidad="20000"', 'Cantidad="10000"');
    t.equal((await post(corrected, 'application/xml')).json<Report>().files[0]!.status, 'updated');
    const leg = (await get(`/api/shipments/${tripId}`)).shipments[0];
    t.equal(leg.volumes.products[0].loaded, 10_000, 'the corrected loaded volume');
    t.not(leg.volumes.products[0].offloaded, 19_900, 'not 19,900 L offloaded of 10,000 L loaded (a delivery refused when recorded)');
    t.match(leg, { delivered: false, volumes: { offloaded: null, shrinkageVolume: null } }, 'back in transit: its ticket is to be recorded again');
    const again = await deliver();
    t.equal(again.statusCode, 400, 'the same ticket is refused against the corrected leg, as the import now judges it');
    // The file as the other tests know it.
    t.equal((await post(original, 'application/xml')).json<Report>().files[0]!.status, 'updated');
  });

  t.test('tenant safety: a file issued by another RFC is rejected, whoever sends it', async (t) => {
    const before = await storedDocs();
    for (const name of ['01-freight-invoice-retention.xml', '05-payment-complement-1.xml', '06-credit-note.xml', '10-cancellation-acuse-motive-01.xml']) {
      const r = (await post(fixture(name), 'application/xml', KEY_B)).json<Report>();
      t.equal(r.tenant, 'FNO900202CD2');
      t.equal(r.files[0]!.status, 'rejected', name);
      t.match(r.files[0]!.reason, /(Emisor Rfc|RfcEmisor) TGO850101AB1 is not the tenant's RFC \(FNO900202CD2\)/);
    }
    t.equal((await get('/api/financial-docs?limit=5', KEY_B)).meta.total, 0, 'tenant B sees nothing');
    t.same(await storedDocs(), before, "tenant A's documents untouched");
  });

  const CFDI4 = fixture('01-freight-invoice-retention.xml').toString('utf8');
  const BAD: [string, string, RegExp][] = [
    ['malformed', CFDI4.slice(0, 600), /malformed XML/],
    ['not XML', 'hola, esto no es XML', /malformed XML/],
    ['empty root', '<?xml version="1.0"?>', /malformed XML|empty file/],
    [
      'billion laughs',
      '<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]><lolz>&lol2;</lolz>',
      /DTDs .* are not accepted/,
    ],
    ['external entity', '<?xml version="1.0"?><!DOCTYPE foo [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><foo>&xxe;</foo>', /DTDs .* are not accepted/],
    ['undeclared entity', '<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4">&xxe;</cfdi:Comprobante>', /malformed XML/],
    // CFDI 3.3 is read (test/cfdi/archive.ts); 3.2, in the same namespace, is not.
    [
      'CFDI 3.2',
      CFDI4.replaceAll('http://www.sat.gob.mx/cfd/4', 'http://www.sat.gob.mx/cfd/3').replace('Version="4.0"', 'Version="3.2"'),
      /unsupported: CFDI 3\.2 \(namespace http:\/\/www\.sat\.gob\.mx\/cfd\/3, which is CFDI 3\.3\); CFDI 3\.3 and 4\.0 are imported/,
    ],
    // As CFDI 3.2 writes it (Anexo 20 of 2012: the attribute `version`, in lower case).
    [
      'CFDI 3.2, lower-case version',
      CFDI4.replaceAll('http://www.sat.gob.mx/cfd/4', 'http://www.sat.gob.mx/cfd/3').replace('Version="4.0"', 'version="3.2"'),
      /unsupported: CFDI 3\.2 \(namespace http:\/\/www\.sat\.gob\.mx\/cfd\/3, which is CFDI 3\.3\)/,
    ],
    [
      'wrong namespace',
      CFDI4.replaceAll('http://www.sat.gob.mx/cfd/4', 'http://example.com/cfd'),
      /not a CFDI \(3\.3 or 4\.0\) or SAT cancellation acknowledgement/,
    ],
    [
      'version 4.1',
      CFDI4.replace('Version="4.0"', 'Version="4.1"'),
      /unsupported: CFDI 4\.1 \(namespace http:\/\/www\.sat\.gob\.mx\/cfd\/4, which is CFDI 4\.0\)/,
    ],
    ['unstamped', CFDI4.replace(/<cfdi:Complemento>[\s\S]*<\/cfdi:Complemento>/, ''), /not stamped/],
    ['bad amount', CFDI4.replace('Total="22400.00"', 'Total="22,400.00"'), /Comprobante@Total is not a non-negative decimal amount/],
    ['negative amount', CFDI4.replace('SubTotal="20000.00"', 'SubTotal="-20000.00"'), /SubTotal is not a non-negative/],
    ['bad date', CFDI4.replace('Fecha="2026-10-05T10:00:00"', 'Fecha="2026-13-45T10:00:00"'), /Fecha is not a valid date-time/],
    // Dates no CFDI has (years 0–99 also read as 19xx): outside 1970–2999, as every date here.
    ['year 0000', CFDI4.replace('Fecha="2026-10-05T10:00:00"', 'Fecha="0000-01-01T00:00:00"'), /Fecha is outside the years 1970–2999/],
    ['stamped in 9999', CFDI4.replace(/FechaTimbrado="[^"]*"/, 'FechaTimbrado="9999-12-31T23:59:59"'), /FechaTimbrado is outside the years 1970–2999/],
    [
      'unknown tax',
      CFDI4.replace('<cfdi:Retencion Base="20000.00" Impuesto="002"', '<cfdi:Retencion Base="20000.00" Impuesto="004"'),
      /Impuesto "004" is not a SAT tax \(001 ISR, 002 IVA, 003 IEPS\)/,
    ],
    ['UTF-16', `\ufeff${CFDI4}`.replace('encoding="UTF-8"', 'encoding="UTF-16"'), /encoding "utf-16", which is not read here/],
    ['Latin-1 bytes declared UTF-8', CFDI4.replace('GASOLINERAS DEL ISTMO', 'GASOLINERAS DEL \u00ccSTMO'), /not valid UTF-8/],
    ['no exchange rate', CFDI4.replace('Moneda="MXN"', 'Moneda="USD"'), /TipoCambio is missing: Moneda USD needs its MXN exchange rate/],
    // Anexo 20 admits 18 integer digits; a double holds 15 significant ones: 12345678901234567.89 reads as …568.00.
    [
      'amount beyond the cent',
      CFDI4.replace('Total="22400.00"', 'Total="12345678901234567.89"'),
      /Comprobante@Total 12345678901234567\.89 is beyond 9,999,999,999,999\.99/,
    ],
    ['subtotal of 10^13', CFDI4.replace('SubTotal="20000.00"', 'SubTotal="10000000000000.00"'), /Comprobante@SubTotal 10000000000000\.00 is beyond/],
    // 22,400.00 at 500,000,000 MXN each: 11,200,000,000,000 MXN.
    [
      'MXN value beyond the cent',
      CFDI4.replace('Moneda="MXN"', 'Moneda="USD" TipoCambio="500000000"'),
      /Comprobante@Total × its exchange rate 500000000 is beyond 9,999,999,999,999\.99 MXN/,
    ],
  ];

  t.test('bad input: each a clear per-file rejection, nothing written', async (t) => {
    const docs = await storedDocs();
    const facts = await importFacts(h.db).countDocuments();
    // Latin-1 bytes in a file that declares UTF-8: the bytes as they are, not re-encoded.
    const bytes = (label: string, xml: string) => (label.startsWith('Latin-1') ? Buffer.from(xml, 'latin1') : Buffer.from(xml));
    const entries = BAD.map(([label, xml]) => ({ name: `${label.replaceAll(' ', '-')}.xml`, data: bytes(label, xml) }));
    const res = await post(await zipOf(entries), 'application/zip');
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'POST', ROUTE);
    const report = res.json<Report>();
    t.equal(report.summary.rejected, BAD.length);
    BAD.forEach(([label, , reason], i) => t.match(report.files[i]!.reason, reason, label));
    // Each alone as application/xml too.
    for (const [label, xml, reason] of BAD) {
      const r = (await post(bytes(label, xml), 'application/xml')).json<Report>();
      t.match(r.files[0], { status: 'rejected', reason }, `${label} (application/xml)`);
    }
    t.same(await storedDocs(), docs, 'no document changed');
    t.equal(await importFacts(h.db).countDocuments(), facts, 'no fact stored');
  });

  t.test('a rejection quotes at most 40 characters of what the file holds: the report stays small whatever the values', async (t) => {
    const base = fixture('01-freight-invoice-retention.xml').toString('utf8');
    const value = Array.from({ length: 6000 }, (_, i) => `Q${i}x`).join(''); // ~30 KB, no letter run to compress
    const quoted = `${value.slice(0, 40)}…`;
    const cases: [string, string, string][] = [
      [
        'TipoDeComprobante',
        base.replace('TipoDeComprobante="I"', `TipoDeComprobante="${value}"`),
        `TipoDeComprobante "${quoted}" is not imported (I, E, P or T)`,
      ],
      ['MetodoPago', base.replace('MetodoPago="PUE"', `MetodoPago="${value}"`), `MetodoPago "${quoted}" is not PUE or PPD`],
      ['TipoFactor', base.replace('TipoFactor="Tasa"', `TipoFactor="${value}"`), `Concepto 1: Traslado@TipoFactor "${quoted}" is not Tasa, Cuota or Exento`],
    ];
    const body = { files: cases.map(([name, content]) => ({ name: `${name}.xml`, content })) };
    const expectReasons = (report: Report) => {
      t.equal(report.summary.rejected, cases.length);
      cases.forEach(([name, , reason], i) => t.same(report.files[i], { name: `${name}.xml`, status: 'rejected', reason }, name));
    };
    const res = await post(body, 'application/json');
    t.equal(res.statusCode, 200);
    t.ok(res.body.length < 2_000, `a report of ${res.body.length} bytes for ${JSON.stringify(body).length} bytes sent`);
    expectReasons(res.json<Report>());

    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const mcp = (await client.callTool({ name: 'importDocuments', arguments: { body } })) as unknown as { structuredContent: Report; isError?: boolean };
    t.notOk(mcp.isError);
    expectReasons(mcp.structuredContent);
  });

  t.test('zip limits: bombs, oversized, too many entries, nested archives and garbage are per-file rejections', async (t) => {
    const docs = await storedDocs();
    const bomb = Buffer.alloc(60_000, 0x20); // compresses ~500:1, under the 64 KiB file limit
    const big = Buffer.from(CFDI4 + ' '.repeat(70_000));
    const zip = await zipOf([
      { name: 'bomb.xml', data: bomb },
      { name: 'big.xml', data: big, store: true },
      { name: 'nested.zip', data: await zipOf([{ name: 'a.xml', data: fixture('01-freight-invoice-retention.xml') }]) },
      { name: 'readme.txt', data: Buffer.from('hola') },
      { name: 'carpeta/01.xml', data: fixture('01-freight-invoice-retention.xml') },
    ]);
    const r = (await post(zip, 'application/zip')).json<Report>();
    t.match(r.files[0], { name: 'upload.zip/bomb.xml', status: 'rejected', reason: /compression ratio \d+:1 exceeds 100:1/ });
    t.match(r.files[1], { name: 'upload.zip/big.xml', status: 'rejected', reason: /larger than 65536 bytes/ });
    t.match(r.files[2], { status: 'rejected', reason: /nested archives/ });
    t.match(r.files[3], { name: 'upload.zip/carpeta/01.xml', status: 'skipped' }, 'a folder inside the zip is read');
    t.equal(r.files.length, 4, 'a text file that is not the SAT metadata is not a file read');
    t.same(r.ignored, { names: ['upload.zip/readme.txt'], more: 0 }, 'it is listed as ignored');
    t.equal(r.summary.ignored, 1);

    const many = await zipOf(Array.from({ length: 51 }, (_, i) => ({ name: `f${i}.xml`, data: Buffer.from('<a/>') })));
    const m = (await post(many, 'application/zip')).json<Report>();
    t.same(m.summary, { files: 1, created: 0, updated: 0, skipped: 0, rejected: 1, ignored: 0, rejectedLines: 0 });
    t.match(m.files[0]!.reason, /archive has 51 entries; at most 50 files per import/);

    const garbage = (await post(Buffer.from('PK\u0003\u0004 not really a zip'), 'application/zip')).json<Report>();
    t.match(garbage.files[0], { status: 'rejected', reason: /not a readable zip archive/ });
    const bigXml = (await post(big, 'application/xml')).json<Report>();
    t.match(bigXml.files[0], { status: 'rejected', reason: /larger than 65536 bytes/ });
    t.same(await storedDocs(), docs, 'nothing written');
  });

  t.test('request-level limits in the error shape: 413, 415, 400, 401 before 400, 403 without write scope', async (t) => {
    const tooBig = await post(Buffer.alloc(1_100_000, 0x41), 'application/zip');
    t.equal(tooBig.statusCode, 413);
    assertConforms(t, tooBig, 'POST', ROUTE);
    const text = await post('hola', 'text/plain');
    t.equal(text.statusCode, 415);
    assertConforms(t, text, 'POST', ROUTE);
    const empty = await post({ files: [] }, 'application/json');
    t.equal(empty.statusCode, 400);
    assertConforms(t, empty, 'POST', ROUTE);
    const noKey = await h.app.inject({ method: 'POST', url: ROUTE, headers: { 'content-type': 'application/json' }, payload: { files: [] } });
    t.equal(noKey.statusCode, 401);
    const { key } = await createApiKey(h.db, TENANT_A, 'read only', ['read']);
    const readOnly = await post(fixture('01-freight-invoice-retention.xml'), 'application/xml', key);
    t.equal(readOnly.statusCode, 403);
    // XML is only for the import: other operations still refuse it.
    const xmlElsewhere = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' },
      payload: '<a/>',
    });
    t.equal(xmlElsewhere.statusCode, 415);
    // A method the path does not declare is 405 with `allow`, whatever the body (not 415 from the body parser).
    for (const [method, contentType, payload] of [
      ['PUT', 'application/xml', '<a/>'],
      ['PATCH', 'application/zip', 'PK'],
      ['DELETE', 'application/json', '{}'],
    ] as const) {
      const res = await h.app.inject({ method, url: ROUTE, headers: { 'x-api-key': KEY_A, 'content-type': contentType }, payload });
      t.equal(res.statusCode, 405, `${method} with ${contentType}`);
      t.equal(res.headers.allow, 'POST');
      t.equal(res.json().error.code, 405);
    }
  });

  t.test('JSON bodies: XML text and base64 files, bad base64 rejected per file', async (t) => {
    const res = await post(
      {
        files: [
          { name: '01.xml', content: fixture('01-freight-invoice-retention.xml').toString('utf8') },
          { name: 'todo.zip', encoding: 'base64', content: (await allFixtures()).toString('base64') },
          { name: 'roto.xml', encoding: 'base64', content: '%%%no base64%%%' },
        ],
      },
      'application/json',
    );
    t.equal(res.statusCode, 200);
    assertConforms(t, res, 'POST', ROUTE);
    const r = res.json<Report>();
    t.same(r.summary, { files: 13, created: 0, updated: 0, skipped: 12, rejected: 1, ignored: 0, rejectedLines: 0 });
    t.match(r.files[12], { name: 'roto.xml', status: 'rejected', reason: 'content is not valid base64' });
  });

  t.test('MCP: the importDocuments tool imports, and the tax summary tool reads the imported numbers', async (t) => {
    await wipe();
    const base = await listen(await h.rebuild({ env: { IMPORT_MAX_FILE_BYTES: '65536' } }));
    for (const kind of ['streamable', 'sse'] as const) {
      const client = await connect(t, base, kind, { 'x-api-key': KEY_A });
      const tools = await client.listTools();
      const tool = tools.tools.find((x) => x.name === 'importDocuments');
      t.ok(tool, `${kind}: importDocuments is a tool`);
      t.notOk(tool?.annotations?.readOnlyHint, 'not read-only');
      const files = fixtureNames().map((n) => ({ name: n, content: fixture(n).toString('utf8') }));
      const res = (await client.callTool({ name: 'importDocuments', arguments: { body: { files } } })) as unknown as {
        structuredContent: Report;
        isError?: boolean;
      };
      t.notOk(res.isError);
      t.same(
        res.structuredContent.summary,
        kind === 'streamable'
          ? { files: 11, created: 11, updated: 0, skipped: 0, rejected: 0, ignored: 0, rejectedLines: 0 }
          : { files: 11, created: 0, updated: 0, skipped: 11, rejected: 0, ignored: 0, rejectedLines: 0 },
      );
      const tax = (await client.callTool({ name: 'getTaxSummary', arguments: { targetMonth: '2026-10' } })) as unknown as {
        structuredContent: { totals: Record<string, unknown> };
      };
      t.match(tax.structuredContent.totals, {
        documents: 6,
        taxableBase: 142800,
        vat: { declared: 22848, expected: 22848 },
        retention: { declared: 5392, expected: 5392 },
        exempt: { total: 1470 },
        total: 161726,
      });
      const shrink = (await client.callTool({
        name: 'auditDiscountsAndShrinkage',
        arguments: { startDate: '2026-10-01', endDate: '2026-10-31' },
      })) as unknown as { structuredContent: { shrinkage: { totals: Record<string, unknown> } } };
      t.match(shrink.structuredContent.shrinkage.totals, { shrinkageLitres: 70, recoverableValue: 1699.25 });
      const ue = (await client.callTool({ name: 'getFreightUnitEconomics', arguments: { startDate: '2026-10-01', endDate: '2026-10-31' } })) as unknown as {
        structuredContent: { totals: Record<string, unknown> };
      };
      t.match(ue.structuredContent.totals, { revenue: 28800, km: 105, revenuePerKm: { value: 274.29 }, revenuePerLitre: { value: 0.9 } });
      const lists = (await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 20 } })) as unknown as {
        structuredContent: { meta: { total: number } };
      };
      t.equal(lists.structuredContent.meta.total, 7);
      const bad = (await client.callTool({ name: 'importDocuments', arguments: { body: { files: [{ name: 'x.xml', content: BAD[3]![1] }] } } })) as unknown as {
        structuredContent: Report;
      };
      t.match(bad.structuredContent.files[0], { status: 'rejected', reason: /DTDs/ });
    }
  });

  t.test('a credit note that names its one invoice twice (CfdiRelacionado 01 repeated) credits that invoice', async (t) => {
    // Invoice 1,000.00 (PPD); a note of 100.00 whose CfdiRelacionados 01 lists the same UUID twice (once in lower case):
    // one invoice, so the note is imported and the balance is 900.00 — not refused as relating two invoices.
    await wipe();
    const inv = 'C0FFEE00-0001-4000-8000-000000000001';
    const note = 'C0FFEE00-0002-4000-8000-000000000002';
    t.equal(
      (
        await post(
          invoiceXml({
            issuer: TENANT_A,
            receiver: 'CIN010203KL5',
            uuid: inv,
            fecha: '2026-10-01T10:00:00',
            method: 'PPD',
            lines: [{ desc: 'Flete', amount: 1000 }],
          }).xml,
          'application/xml',
        )
      ).statusCode,
      200,
    );
    const xml = invoiceXml({
      issuer: TENANT_A,
      receiver: 'CIN010203KL5',
      uuid: note,
      fecha: '2026-10-03T10:00:00',
      lines: [{ desc: 'Bonificacion', amount: 100 }],
    })
      .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
      .replace(
        '<cfdi:Emisor',
        `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${inv}"/><cfdi:CfdiRelacionado UUID="${inv.toLowerCase()}"/></cfdi:CfdiRelacionados><cfdi:Emisor`,
      );
    const report = (await post(xml, 'application/xml')).json<Report>();
    t.match(report.files[0], { status: 'created', kind: 'creditNote' }, report.files[0]?.reason ?? '');
    const doc = await get(`/api/financial-docs/${TENANT_A}-CFDI-${inv}`);
    t.match(doc.balance, { total: 1000, pending: 900 });
  });
}
