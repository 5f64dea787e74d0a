/**
 * Issue 20 through the public interface, over HTTP and over MCP (the same steps, each on its own
 * carrier): every CFDI tax, another currency, and cancellation as the SAT runs it.
 *
 * Hand-computed values (October 2026, client GDI920315QR4 a company unless said):
 *   A  RESICO carrier (persona física) freight 10,000.00: IVA 16% 1,600.00, IVA retained 4% 400.00,
 *      ISR retained 1.25% 125.00 → Total 11,075.00 (PUE).
 *   B  USD 2,000.00 at TipoCambio 17.25, IVA 0% (the Mexican leg of international freight), to a
 *      foreign client (XEXX010101000) → 34,500.00 MXN in every report; paid by a USD complement at
 *      TipoCambioP 17.80 → 35,600.00 MXN collected on the payment basis.
 *   C  freight 5,000.00 (IVA 800.00, IVA ret 200.00, ISR ret 62.50) + cargo insurance 300.00 IVA
 *      exempt → Total 5,837.50; exempt base 300.00.
 *   D  freight 2,000.00 + IVA → 2,320.00 (PUE), cancelled by the SAT's acknowledgement (202).
 *   E  freight 3,000.00 + IVA → 3,480.00 (PUE): request (motive 01, replaced by D) → pending;
 *      acknowledgement 201 → still pending (over 1,000 MXN, requested days after certification);
 *      "Plazo vencido" before the receiver's 3 business days end → 409; after → expired (cancelled).
 *   G  freight 4,000.00 + IVA → 4,640.00 (PUE): request + acknowledgement 201 → pending; the receiver
 *      rejects → rejected: still valid, in revenue and taxes.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { invoiceXml, paymentXml, requestXml, satAcuseXml } from '../helpers/cfdi-builder.ts';

export default async function taxesCancellationsTests(t: Test): Promise<void> {
  const NOW = new Date('2026-10-30T18:00:00Z');
  const h = await startHarness(t, { build: { now: () => NOW } });
  const CLIENT = 'GDI920315QR4';
  const FOREIGN = 'XEXX010101000';
  const uuid = (run: number, n: number): string => `2B3C4D5E-00${run}${n}-4000-8000-0000000000${run}${n}`;

  type Json = Record<string, any>;
  interface Api {
    importFile(name: string, xml: string): Promise<Json>;
    /** The file's bytes as they are (base64 in JSON). */
    importBytes(name: string, bytes: Buffer): Promise<Json>;
    doc(id: string): Promise<Json>;
    list(query: Record<string, string | number | boolean>): Promise<Json>;
    tax(query: Record<string, string | number>): Promise<Json>;
    putStatus(id: string, body: Json): Promise<{ status: number; body: Json }>;
  }

  function httpApi(t: Test, key: string): Api {
    const get = async (url: string, route: string) => {
      const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
      t.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
      assertConforms(t, res, 'GET', route);
      return res.json<Json>();
    };
    const qs = (q: Record<string, string | number | boolean>) =>
      new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();
    return {
      async importFile(name, xml) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/api/imports',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          payload: { files: [{ name, content: xml }] },
        });
        assertConforms(t, res, 'POST', '/api/imports');
        return res.json<Json>().files[0];
      },
      async importBytes(name, bytes) {
        const res = await h.app.inject({
          method: 'POST',
          url: '/api/imports',
          headers: { 'x-api-key': key, 'content-type': 'application/xml' },
          payload: bytes,
        });
        assertConforms(t, res, 'POST', '/api/imports');
        return res.json<Json>().files[0];
      },
      doc: (id) => get(`/api/financial-docs/${encodeURIComponent(id)}`, '/api/financial-docs/:id'),
      list: (q) => get(`/api/financial-docs?${qs(q)}`, '/api/financial-docs'),
      tax: (q) => get(`/api/tax-summary?${qs(q)}`, '/api/tax-summary'),
      async putStatus(id, body) {
        const res = await h.app.inject({
          method: 'PUT',
          url: `/api/financial-docs/${encodeURIComponent(id)}/cancellation`,
          headers: { 'x-api-key': key },
          payload: body,
        });
        assertConforms(t, res, 'PUT', '/api/financial-docs/:id/cancellation');
        return { status: res.statusCode, body: res.json() };
      },
    };
  }

  async function mcpApi(t: Test, key: string): Promise<Api> {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key });
    const call = async (name: string, args: Json) =>
      (await client.callTool({ name, arguments: args })) as unknown as { structuredContent: Json; isError?: boolean };
    const ok = async (name: string, args: Json) => {
      const r = await call(name, args);
      t.notOk(r.isError, `${name} ${JSON.stringify(args).slice(0, 120)}`);
      return r.structuredContent;
    };
    return {
      importFile: async (name, xml) => (await ok('importDocuments', { body: { files: [{ name, content: xml }] } })).files[0],
      importBytes: async (name, bytes) =>
        (await ok('importDocuments', { body: { files: [{ name, content: bytes.toString('base64'), encoding: 'base64' }] } })).files[0],
      doc: (id) => ok('getFinancialDoc', { id }),
      list: (q) => ok('listFinancialDocs', q),
      tax: (q) => ok('getTaxSummary', q),
      async putStatus(id, body) {
        const r = await call('recordCancellationStatus', { id, body });
        return { status: r.isError ? (r.structuredContent.error as Json).code : 200, body: r.structuredContent };
      },
    };
  }

  const ids = (page: Json): string[] => page.data.map((d: Json) => d.id);
  const clientTotals = (summary: Json, client: string): Json => summary.months[0].clients.data.find((c: Json) => c.client === client).totals;

  async function scenario(t: Test, api: Api, tenant: string, run: number): Promise<void> {
    const id = (n: number) => `${tenant}-CFDI-${uuid(run, n)}`;
    const freight = (amount: number, extra: Json = {}) => ({
      desc: 'Flete Coatzacoalcos - Minatitlán',
      amount,
      transfers: [{ tax: '002' as const, rate: 0.16 }],
      ...extra,
    });
    const resicoRetentions = [
      { tax: '002' as const, rate: 0.04 },
      { tax: '001' as const, rate: 0.0125 },
    ];

    await t.test('RESICO carrier: 4% IVA and 1.25% ISR retained, no discrepancy, ISR per month and client', async (t) => {
      const a = invoiceXml({
        issuer: tenant,
        receiver: CLIENT,
        uuid: uuid(run, 1),
        fecha: '2026-10-05T10:00:00',
        lines: [freight(10_000, { retentions: resicoRetentions })],
      });
      t.equal(a.total, 11_075);
      t.match(await api.importFile('a.xml', a.xml), { status: 'created', kind: 'invoice' });
      const doc = await api.doc(id(1));
      t.match(doc.amounts, {
        subtotal: 10_000,
        vat16: 1_600,
        vatRetention4: 400,
        isrRetained: 125,
        transferredTaxes: 1_600,
        retainedTaxes: 525,
        total: 11_075,
        vatBases: { rate16: 10_000 },
      });
      const tax = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      t.match(clientTotals(tax, CLIENT), { isrRetained: 125, retention: { declared: 400, expected: 400, difference: 0 }, documentsWithDiscrepancies: 0 });
      t.equal(tax.findings.byKind.discrepancy, 0, 'no discrepancy');
      t.equal(tax.findings.byCode.ISR_RETAINED, 1, 'the 1.25% ISR is information (LISR art. 113-J)');
    });

    await t.test('USD invoice at IVA 0%: the CFDI amounts in USD, every report in MXN, the payment at its own rate', async (t) => {
      const b = invoiceXml({
        issuer: tenant,
        receiver: FOREIGN,
        receiverName: 'ACME LOGISTICS INC',
        uuid: uuid(run, 2),
        fecha: '2026-10-07T09:00:00',
        method: 'PPD',
        currency: 'USD',
        exchangeRate: 17.25,
        lines: [{ desc: 'Flete internacional, tramo nacional Monterrey - Nuevo Laredo', amount: 2_000, transfers: [{ tax: '002', rate: 0 }] }],
      });
      t.match(await api.importFile('b.xml', b.xml), { status: 'created' });
      const doc = await api.doc(id(2));
      t.match(doc, {
        currency: 'USD',
        exchangeRate: 17.25,
        amounts: { subtotal: 2_000, vat16: 0, total: 2_000, vatBases: { rate0: 2_000, rate16: 0 } },
        balance: { total: 2_000, pending: 2_000 },
      });
      const tax = await api.tax({ targetMonth: '2026-10', client: FOREIGN });
      t.match(
        clientTotals(tax, FOREIGN),
        { subtotal: 34_500, total: 34_500, vatBases: { rate0: 34_500 }, vat: { declared: 0, expected: 0 }, documentsWithDiscrepancies: 0 },
        '2,000 USD × 17.25 = 34,500 MXN',
      );
      t.equal(tax.findings.byKind.discrepancy, 0, 'IVA 0% is legal (LIVA art. 29): no discrepancy');
      const pay = paymentXml({
        issuer: tenant,
        receiver: FOREIGN,
        uuid: uuid(run, 3),
        fecha: '2026-10-20T12:00:00',
        invoiceUuid: uuid(run, 2),
        currency: 'USD',
        exchangeRate: 17.8,
        before: 2_000,
        paid: 2_000,
      });
      t.match(await api.importFile('b-pago.xml', pay), { status: 'created', kind: 'payment', financialDocIds: [id(2)] });
      t.match((await api.doc(id(2))).balance, { paid: 2_000, pending: 0, isFullyPaid: true });
      const cash = await api.tax({ targetMonth: '2026-10', client: FOREIGN, basis: 'payment' });
      t.match(clientTotals(cash, FOREIGN), { collected: 35_600, total: 35_600 }, 'collected at the payment rate: 2,000 × 17.80');
    });

    await t.test('freight at IVA 0% to a Mexican company: no VAT charged, so no 4% retention expected', async (t) => {
      // The Mexican leg of international freight billed to a company at 0% (LIVA art. 29): the retention
      // of LIVA art. 1-A is of the VAT charged, here none. Expected by hand: Total 5,000, retention 0.
      const company = 'TIN0902115Z3';
      const x = invoiceXml({
        issuer: tenant,
        receiver: company,
        uuid: uuid(run, 9),
        fecha: '2026-09-07T09:00:00',
        lines: [{ desc: 'Flete internacional, tramo nacional Saltillo - Piedras Negras', amount: 5_000, transfers: [{ tax: '002', rate: 0 }] }],
      });
      t.match(await api.importFile('zero.xml', x.xml), { status: 'created' });
      const tax = await api.tax({ targetMonth: '2026-09', client: company });
      t.match(clientTotals(tax, company), { total: 5_000, vatBases: { rate0: 5_000 }, retention: { declared: 0, expected: 0 }, documentsWithDiscrepancies: 0 });
      t.notOk(tax.findings.byCode.RETENTION_MISSING, 'no RETENTION_MISSING (it was expected 200 before)');
    });

    await t.test('an exempt line: its base apart, never a discrepancy', async (t) => {
      const c = invoiceXml({
        issuer: tenant,
        receiver: CLIENT,
        uuid: uuid(run, 4),
        fecha: '2026-10-08T10:00:00',
        lines: [
          freight(5_000, { retentions: resicoRetentions }),
          { code: '84131501', desc: 'Seguro de carga', amount: 300, transfers: [{ tax: '002', factor: 'Exento' }] },
        ],
      });
      t.equal(c.total, 5_837.5);
      t.match(await api.importFile('c.xml', c.xml), { status: 'created' });
      t.match((await api.doc(id(4))).amounts, { vat16: 800, total: 5_837.5, vatBases: { rate16: 5_000, exempt: 300 } });
      const tax = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      t.match(clientTotals(tax, CLIENT), { vatBases: { rate16: 15_000, exempt: 300 }, isrRetained: 187.5, documentsWithDiscrepancies: 0 });
    });

    await t.test('a file declared ISO-8859-1 is read as such: accented names stored right', async (t) => {
      const name = 'TRANSPORTES MARÍTIMOS Y TERRESTRES DEL GOLFO, S.A. DE C.V.';
      const desc = 'Flete Mérida - Progreso, maniobras en almacén (año 2026)';
      const latin = invoiceXml({
        issuer: tenant,
        receiver: CLIENT,
        receiverName: name,
        uuid: uuid(run, 8),
        fecha: '2026-10-02T10:00:00',
        encoding: 'ISO-8859-1',
        lines: [{ ...freight(1_000), desc }],
      });
      const bytes = Buffer.from(latin.xml, 'latin1');
      t.ok(bytes.includes(0xcd) && !bytes.includes(0xc3), 'Í is one Latin-1 byte, not UTF-8');
      t.match(await api.importBytes('latin1.xml', bytes), { status: 'created' });
      const full = (await api.list({ detail: 'full', uuid: uuid(run, 8) })).data[0];
      t.equal(full.clientName, name, 'the receiver name as written');
      t.equal(full.invoice.concepts[0].desc, desc, 'the description as written');
      // The same bytes declared as UTF-8 (or undeclared) are refused, not stored mangled.
      const mislabelled = Buffer.from(latin.xml.replace('encoding="ISO-8859-1"', 'encoding="UTF-8"'), 'latin1');
      t.match(await api.importBytes('mislabelled.xml', mislabelled), { status: 'rejected', reason: /not valid UTF-8.*ISO-8859-1 must say so/ });
      // Sent as JSON text (what an agent sends): the text is decoded already, and kept in the encoding it declares.
      const asText = latin.xml.replaceAll(uuid(run, 8), uuid(run, 0));
      t.match(await api.importFile('latin1-text.xml', asText), { status: 'created' });
      const fromText = (await api.list({ detail: 'full', uuid: uuid(run, 0) })).data[0];
      t.equal(fromText.clientName, name, 'the receiver name as written, sent as text');
      t.equal(fromText.invoice.concepts[0].desc, desc, 'the description as written, sent as text');
      const reader = (await createApiKey(h.db, tenant, 'originals')).key;
      const kept = await h.app.inject({ method: 'GET', url: `/api/cfdi-originals/${uuid(run, 0)}`, headers: { 'x-api-key': reader } });
      t.ok(kept.rawPayload.equals(Buffer.from(asText, 'latin1')), 'the original kept is the text in ISO-8859-1, as it declares');
      t.match(await api.importFile('euro.xml', asText.replace('Flete', 'Flete €')), {
        status: 'rejected',
        reason: 'the text declares the encoding "iso-8859-1", which cannot hold the character "€" (U+20AC); send it declared as UTF-8, or as base64 bytes',
      });
      // JSON can escape half a surrogate pair; no encoding holds it (written as UTF-8 it became U+FFFD, kept as the original).
      const utf8 = asText.replace('encoding="ISO-8859-1"', 'encoding="UTF-8"');
      const at = utf8.indexOf('Flete');
      t.match(await api.importFile('lone.xml', `${utf8.slice(0, at)}\ud83dFlete${utf8.slice(at + 5)}`), {
        status: 'rejected',
        reason: `the text holds half of a surrogate pair (U+D83D) alone at character ${at + 1}, which is no character: send the file as base64 bytes`,
      });
      t.equal((await api.list({ detail: 'full', uuid: uuid(run, 0) })).data[0].invoice.concepts[0].desc, desc, 'the stored CFDI is as it was');
      t.match(
        await api.importFile('pair.xml', utf8.replace('Flete', '\ud83d\ude9a Flete')),
        { status: 'updated' },
        'a whole pair (an emoji) is text like any other',
      );
      t.equal((await api.list({ detail: 'full', uuid: uuid(run, 0) })).data[0].invoice.concepts[0].desc, `\u{1f69a} ${desc}`);
    });

    await t.test("the SAT's acknowledgement as PACs return it cancels the invoice", async (t) => {
      const d = invoiceXml({ issuer: tenant, receiver: CLIENT, uuid: uuid(run, 5), fecha: '2026-10-09T10:00:00', lines: [freight(2_000)] });
      await api.importFile('d.xml', d.xml);
      const before = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      const ack = satAcuseXml({ issuer: tenant, fecha: '2026-10-12T11:02:56.2475804', folios: [{ uuid: uuid(run, 5), code: '202' }] });
      t.match(await api.importFile('acuse.xml', ack), { status: 'created', kind: 'cancellation', uuid: uuid(run, 5), financialDocIds: [id(5)] });
      const doc = await api.doc(id(5));
      t.match(doc.cancellations, { invoiceCancelled: true, status: 'accepted', receiverDeadline: null });
      t.match(doc.balance, { pending: 0, isFullyPaid: false });
      t.ok(ids(await api.list({ cancelled: true, limit: 50 })).includes(id(5)), 'cancelled=true lists it');
      t.ok(ids(await api.list({ cancellationStatus: 'accepted', limit: 50 })).includes(id(5)), 'cancellationStatus=accepted lists it');
      const after = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      t.equal(clientTotals(after, CLIENT).cancelledDocuments, clientTotals(before, CLIENT).cancelledDocuments + 1);
      t.equal(clientTotals(after, CLIENT).total, clientTotals(before, CLIENT).total - 2_320, 'it leaves the totals');
    });

    await t.test('a request, then its acknowledgement, then tacit acceptance after 3 business days', async (t) => {
      const e = invoiceXml({ issuer: tenant, receiver: CLIENT, uuid: uuid(run, 6), fecha: '2026-10-05T10:00:00', lines: [freight(3_000)] });
      await api.importFile('e.xml', e.xml);
      const request = requestXml({ issuer: tenant, fecha: '2026-10-13T09:00:00', folios: [{ uuid: uuid(run, 6), motive: '01', replacement: uuid(run, 5) }] });
      t.match(await api.importFile('solicitud.xml', request), { status: 'created', kind: 'cancellationRequest', financialDocIds: [id(6)] });
      let doc = await api.doc(id(6));
      t.match(doc.cancellations, { invoiceCancelled: false, status: 'pending', requestedAt: '2026-10-13T15:00:00.000Z' }, 'a request cancels nothing');
      t.match(doc.balance, { isFullyPaid: true }, 'still paid (PUE), still owed nothing');
      t.ok(ids(await api.list({ cancellationStatus: 'pending', limit: 50 })).includes(id(6)), 'cancellationStatus=pending lists it');
      t.ok(ids(await api.list({ cancelled: false, limit: 50 })).includes(id(6)), 'cancelled=false lists it');
      t.ok(ids(await api.list({ paymentStatus: 'paid', limit: 50 })).includes(id(6)), 'paymentStatus=paid lists it');
      let tax = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      t.ok(clientTotals(tax, CLIENT).pendingCancellations >= 1, 'counted, with its pending cancellation');
      t.ok(tax.findings.byCode.CANCELLATION_PENDING >= 1);

      const ack = satAcuseXml({ issuer: tenant, fecha: '2026-10-13T09:05:00.1234567', folios: [{ uuid: uuid(run, 6), code: '201' }] });
      t.match(await api.importFile('acuse-e.xml', ack), { status: 'created', kind: 'cancellation' });
      doc = await api.doc(id(6));
      // Tuesday 13 → Wednesday 14, Thursday 15, Friday 16: the receiver may answer until Saturday 17, 00:00 Mexico City.
      t.match(
        doc.cancellations,
        { status: 'pending', invoiceCancelled: false, receiverDeadline: '2026-10-17T06:00:00.000Z' },
        '201 on an invoice that needs the receiver: in process',
      );

      const early = await api.putStatus(id(6), { estado: 'Cancelado', estatusCancelacion: 'Plazo vencido', consultedAt: '2026-10-16T17:00:00Z' });
      t.equal(early.status, 409, 'no tacit acceptance before the 3 business days end');
      t.match(early.body.error, { reason: 'conflict', details: [/3 business days/] });
      // Schema-valid but later than the service's clock (NOW): a conflict with the clock, as the tacit rule is (Schemathesis: positive data is never a 400).
      const future = await api.putStatus(id(6), { estado: 'Cancelado', estatusCancelacion: 'Plazo vencido', consultedAt: '3549-11-16T04:00:17.000Z' });
      t.equal(future.status, 409, 'an answer from after the service clock is a 409');
      t.match(future.body.error, { reason: 'conflict', details: [/later than the service's clock \(2026-10-30T18:00:00.000Z\)/] });
      t.equal((await api.doc(id(6))).cancellations.status, 'pending', 'and records nothing');
      const wrongPair = await api.putStatus(id(6), { estado: 'Vigente', estatusCancelacion: 'Plazo vencido' });
      t.equal(wrongPair.status, 400, 'Plazo vencido goes with Cancelado');
      t.match(wrongPair.body.error, { reason: 'invalid_body', fields: [{ in: 'body', name: 'estatusCancelacion' }] });

      // Still in process when consulted on the 18th; the tacit acceptance consulted later still replaces it (answers are
      // ordered by when they were consulted, though Plazo vencido takes effect earlier, below).
      const inProcess = await api.putStatus(id(6), { estado: 'Vigente', estatusCancelacion: 'En proceso', consultedAt: '2026-10-18T17:00:00Z' });
      t.equal(inProcess.status, 200, JSON.stringify(inProcess.body));
      const tacit = await api.putStatus(id(6), { estado: 'Cancelado', estatusCancelacion: 'Plazo vencido', consultedAt: '2026-10-19T17:00:00Z' });
      t.equal(tacit.status, 200, JSON.stringify(tacit.body));
      t.match(tacit.body.cancellations, { status: 'expired', invoiceCancelled: true, receiverDeadline: null });
      const full = await api.list({ detail: 'full', uuid: uuid(run, 6) });
      t.match(full.data[0].canceled, [
        {
          target: 'invoice',
          status: 'expired',
          motive: '01',
          replacementUuid: uuid(run, 5),
          statusSource: 'status-service',
          satStatus: 'Plazo vencido',
          requestedAt: Date.parse('2026-10-13T15:00:00Z'),
          // In effect when the receiver's 3 business days ended (Saturday 17 00:00 Mexico City), not when consulted (the 19th).
          date: Date.parse('2026-10-17T06:00:00Z'),
        },
      ]);
      t.same(full.data[0].payments, [], 'a cancelled PUE invoice has no receipt');
      tax = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      t.ok(ids(await api.list({ cancellationStatus: 'expired', limit: 50 })).includes(id(6)));
      t.equal(tax.findings.items.filter((f: Json) => f.docId === id(6) && f.code === 'DOCUMENT_CANCELLED').length, 1, 'out of the tax totals');

      const again = await api.putStatus(id(6), { estado: 'Cancelado', estatusCancelacion: 'Plazo vencido', consultedAt: '2026-10-19T17:00:00Z' });
      t.same(again.body, tacit.body, 'the same answer again changes nothing');
      // The same instant with an offset of whole hours (the date-time format admits `+05`; Date.parse does not): 17:00Z is 22:00 at UTC+5.
      const hours = await api.putStatus(id(6), { estado: 'Cancelado', estatusCancelacion: 'Plazo vencido', consultedAt: '2026-10-19T22:00:00+05' });
      t.equal(hours.status, 200, JSON.stringify(hours.body));
      t.same(hours.body, tacit.body, 'an offset of whole hours: the same answer, nothing changed');

      // A cancellation in effect is final (issue 33: a later Vigente put the invoice back into revenue).
      for (const [estado, estatusCancelacion] of [
        ['Vigente', 'En proceso'],
        ['Vigente', 'Solicitud rechazada'],
      ] as const) {
        const back = await api.putStatus(id(6), { estado, estatusCancelacion, consultedAt: '2026-10-20T17:00:00Z' });
        t.equal(back.status, 409, `${estatusCancelacion} after Plazo vencido is refused`);
        t.match(back.body.error, {
          reason: 'conflict',
          details: [
            new RegExp(
              `is cancelled: Plazo vencido \\(recorded from status-service, dated 2026-10-17T06:00:00.000Z\\); a cancellation in effect is final .* so ${estatusCancelacion} is not recorded`,
            ),
          ],
        });
      }
      t.match((await api.doc(id(6))).cancellations, { status: 'expired', invoiceCancelled: true }, 'still cancelled');
      t.ok(ids(await api.list({ cancellationStatus: 'expired', limit: 50 })).includes(id(6)), 'still listed as expired');
    });

    await t.test('a rejected cancellation: the invoice stays valid, in revenue and taxes', async (t) => {
      const g = invoiceXml({ issuer: tenant, receiver: CLIENT, uuid: uuid(run, 7), fecha: '2026-10-06T10:00:00', lines: [freight(4_000)] });
      await api.importFile('g.xml', g.xml);
      const before = clientTotals(await api.tax({ targetMonth: '2026-10', client: CLIENT }), CLIENT);
      const request = requestXml({ issuer: tenant, fecha: '2026-10-14T10:00:00', folios: [{ uuid: uuid(run, 7), motive: '02' }] });
      const ack = satAcuseXml({ issuer: tenant, fecha: '2026-10-14T10:00:05', folios: [{ uuid: uuid(run, 7), code: '201' }] });
      await api.importFile('solicitud-g.xml', request);
      await api.importFile('acuse-g.xml', ack);
      t.match((await api.doc(id(7))).cancellations, { status: 'pending' });
      const rejected = await api.putStatus(id(7), { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada', consultedAt: '2026-10-15T17:00:00Z' });
      t.equal(rejected.status, 200);
      t.match(rejected.body, { cancellations: { status: 'rejected', invoiceCancelled: false }, balance: { isFullyPaid: true }, status: { code: 6 } });
      t.ok(ids(await api.list({ cancellationStatus: 'rejected', limit: 50 })).includes(id(7)));
      t.ok(ids(await api.list({ cancelled: false, paymentStatus: 'paid', limit: 50 })).includes(id(7)), 'valid and paid');
      t.notOk(ids(await api.list({ cancelled: true, limit: 50 })).includes(id(7)), 'not cancelled');
      const tax = await api.tax({ targetMonth: '2026-10', client: CLIENT });
      t.same(
        { documents: clientTotals(tax, CLIENT).documents, cancelled: clientTotals(tax, CLIENT).cancelledDocuments, total: clientTotals(tax, CLIENT).total },
        { documents: before.documents, cancelled: before.cancelledDocuments, total: before.total },
        'the tax summary still counts it',
      );
      t.ok(tax.findings.byCode.CANCELLATION_REJECTED >= 1);
      // An answer consulted before the recorded one does not replace it (issue 33).
      const older = await api.putStatus(id(7), { estado: 'Vigente', estatusCancelacion: 'En proceso', consultedAt: '2026-10-15T10:00:00Z' });
      t.equal(older.status, 409, 'an older answer is refused');
      t.match(older.body.error, {
        reason: 'conflict',
        details: [
          /is Solicitud rechazada \(recorded from status-service, dated 2026-10-15T17:00:00.000Z\); an answer consulted at 2026-10-15T10:00:00.000Z is not newer, so it does not replace it/,
        ],
      });
      const sameInstant = await api.putStatus(id(7), { estado: 'Vigente', estatusCancelacion: 'En proceso', consultedAt: '2026-10-15T17:00:00Z' });
      t.equal(sameInstant.status, 409, 'another answer at the same instant is refused');
      t.match((await api.doc(id(7))).cancellations, { status: 'rejected' }, 'still rejected');
      // Importing the request and the acknowledgement again keeps the receiver's answer (it is kept as a fact).
      t.match(await api.importFile('solicitud-g.xml', request), { status: 'skipped' });
      t.match((await api.doc(id(7))).cancellations, { status: 'rejected' });
    });
  }

  t.test('tax lines of 6 decimals: the document states the rounded sum of each group, not the sum of rounded lines (Anexo 20)', async (t) => {
    // Anexo 20, Guía de llenado, Comprobante/Impuestos: a concept's Traslado/Retención Importe may carry 6 decimals; the
    // document's Impuestos states per group (transfers by Impuesto + TipoFactor + TasaOCuota, retentions by Impuesto)
    // "el redondeo de la suma" of the concepts' lines, and TotalImpuestosTrasladados/Retenidos the sums of those.
    //
    // Invoice I (PUE, 2026-09-10) to the company GDI920315QR4: 8 freight concepts, IVA 16% and IVA retained 4%:
    //   4 × 1,000.03: IVA 160.004800 (rounded alone 160.00), retained 40.001200 (40.00)
    //   4 × 1,000.37: IVA 160.059200 (rounded alone 160.06), retained 40.014800 (40.01)
    //   SubTotal = 4,000.12 + 4,001.48 = 8,001.60
    //   IVA 002|Tasa|0.16  = 4 × 160.0048 + 4 × 160.0592 = 640.0192 + 640.2368 = 1,280.2560 → 1,280.26
    //                        (the lines rounded first: 4 × 160.00 + 4 × 160.06 = 1,280.24: 2 cents short)
    //   IVA 002 retained   = 4 × 40.0012 + 4 × 40.0148 = 160.0048 + 160.0592 = 320.0640 → 320.06
    //                        (the lines rounded first: 4 × 40.00 + 4 × 40.01 = 320.04: 2 cents short)
    //   Total = 8,001.60 + 1,280.26 − 320.06 = 8,961.80
    // Credit note N (E, relation 01 to I, 2026-09-24): 6 × 100.03: IVA 16.004800 (16.00), retained 4.001200 (4.00)
    //   SubTotal 600.18; IVA 6 × 16.0048 = 96.0288 → 96.03 (rounded first 96.00); retained 6 × 4.0012 = 24.0072 → 24.01
    //   (rounded first 24.00); Total = 600.18 + 96.03 − 24.01 = 672.20.
    // Tax position of September (cash basis; I is PUE, collected whole at its date; N gives back its own taxes, all of
    // its Total returning what was collected): VAT collected 1,280.26 − 96.03 = 1,184.23; retained by the client
    // 320.06 − 24.01 = 296.05; payable 1,184.23 − 296.05 = 888.18 (the lines rounded first: 1,184.24, 296.04, 888.20).
    const tenant = 'TSE850101AB1';
    const key = (await createApiKey(h.db, tenant, 'six-decimals')).key;
    const api = httpApi(t, key);
    const I = '2B3C4D5E-0061-4000-8000-000000000061';
    const N = '2B3C4D5E-0062-4000-8000-000000000062';
    type Line = { amount: string; vat: string; ret: string };
    const cfdi = (o: { uuid: string; fecha: string; type: 'I' | 'E'; related?: string; lines: Line[]; sub: string; vat: string; ret: string; total: string }) =>
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0" Serie="T" Folio="${o.uuid.slice(0, 8)}" Fecha="${o.fecha}" SubTotal="${o.sub}" Moneda="MXN" Total="${o.total}" TipoDeComprobante="${o.type}" Exportacion="01" MetodoPago="PUE" LugarExpedicion="91700">` +
      (o.related ? `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${o.related}"/></cfdi:CfdiRelacionados>` : '') +
      `<cfdi:Emisor Rfc="${tenant}" Nombre="EMISOR" RegimenFiscal="601"/>` +
      `<cfdi:Receptor Rfc="${CLIENT}" Nombre="RECEPTOR" DomicilioFiscalReceptor="96400" RegimenFiscalReceptor="601" UsoCFDI="G03"/><cfdi:Conceptos>` +
      o.lines
        .map(
          (l) =>
            `<cfdi:Concepto ClaveProdServ="78101802" Cantidad="1" ClaveUnidad="E48" Descripcion="Flete Veracruz - Xalapa" ValorUnitario="${l.amount}" Importe="${l.amount}" ObjetoImp="02"><cfdi:Impuestos>` +
            `<cfdi:Traslados><cfdi:Traslado Base="${l.amount}" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="${l.vat}"/></cfdi:Traslados>` +
            `<cfdi:Retenciones><cfdi:Retencion Base="${l.amount}" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.040000" Importe="${l.ret}"/></cfdi:Retenciones>` +
            `</cfdi:Impuestos></cfdi:Concepto>`,
        )
        .join('') +
      `</cfdi:Conceptos><cfdi:Impuestos TotalImpuestosRetenidos="${o.ret}" TotalImpuestosTrasladados="${o.vat}">` +
      `<cfdi:Retenciones><cfdi:Retencion Impuesto="002" Importe="${o.ret}"/></cfdi:Retenciones>` +
      `<cfdi:Traslados><cfdi:Traslado Base="${o.sub}" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="${o.vat}"/></cfdi:Traslados></cfdi:Impuestos>` +
      `<cfdi:Complemento><tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${o.uuid}" FechaTimbrado="${o.fecha}" RfcProvCertif="SAT970701NN3" SelloCFD="A" NoCertificadoSAT="00001000000509846663" SelloSAT="B"/></cfdi:Complemento>` +
      `</cfdi:Comprobante>`;
    const low: Line = { amount: '1000.03', vat: '160.004800', ret: '40.001200' };
    const high: Line = { amount: '1000.37', vat: '160.059200', ret: '40.014800' };
    const invoice = cfdi({
      uuid: I,
      fecha: '2026-09-10T10:00:00',
      type: 'I',
      lines: [low, low, low, low, high, high, high, high],
      sub: '8001.60',
      vat: '1280.26',
      ret: '320.06',
      total: '8961.80',
    });
    const note = cfdi({
      uuid: N,
      fecha: '2026-09-24T10:00:00',
      type: 'E',
      related: I,
      lines: Array.from({ length: 6 }, () => ({ amount: '100.03', vat: '16.004800', ret: '4.001200' })),
      sub: '600.18',
      vat: '96.03',
      ret: '24.01',
      total: '672.20',
    });
    const id = `${tenant}-CFDI-${I}`;

    t.match(await api.importFile('six-decimals.xml', invoice), { status: 'created', kind: 'invoice' });
    t.match((await api.doc(id)).amounts, {
      subtotal: 8_001.6,
      vat16: 1_280.26,
      vatRetention4: 320.06,
      transferredTaxes: 1_280.26,
      retainedTaxes: 320.06,
      total: 8_961.8,
      vatBases: { rate16: 8_001.6 },
    });
    const full = (await api.list({ detail: 'full', uuid: I })).data[0];
    t.match(full, { iTax1: 1_280.26, iTax2: 320.06 }, 'the header figures, not the sum of rounded lines (1,280.24 and 320.04)');
    t.same(
      full.invoice.concepts.map((c: Json) => [c.vat, c.retention]),
      [...Array.from({ length: 4 }, () => [160, 40]), ...Array.from({ length: 4 }, () => [160.06, 40.01])],
      "a concept's own VAT and retention are its lines rounded",
    );
    const summary = await api.tax({ targetMonth: '2026-09', client: CLIENT });
    t.same(
      summary.findings.items.filter((f: Json) => f.docId === id && f.kind === 'discrepancy'),
      [],
      'no TAX_TOTAL_MISMATCH / VAT_SUM_MISMATCH on a valid CFDI',
    );
    t.match(clientTotals(summary, CLIENT), {
      vat: { declared: 1_280.26 },
      retention: { declared: 320.06 },
      vatBases: { rate16: 8_001.6 },
      documentsWithDiscrepancies: 0,
    });

    t.match(await api.importFile('six-decimals-note.xml', note), { status: 'created', kind: 'creditNote', financialDocIds: [id] });
    t.match(
      (await api.list({ detail: 'full', uuid: I })).data[0].payments,
      [{}, { kind: 'creditNote', uuid: N, amount: 672.2, taxes: { vat: 96.03, vatRetained: 24.01, isrRetained: 0 } }],
      "the note's taxes are its groups' rounded sums (not 96.00 and 24.00)",
    );
    const res = await h.app.inject({ method: 'GET', url: '/api/tax/position?month=2026-09&limit=10', headers: { 'x-api-key': key } });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    assertConforms(t, res, 'GET', '/api/tax/position');
    const position = res.json<Json>();
    t.match(position.vat, { collected: 1_184.23, retainedByClients: 296.05, payable: 888.18 });
    const fig = (name: string) => position.figures.find((f: Json) => f.figure === name).lines.map((l: Json) => [l.uuid, l.settlement, l.paymentUuid, l.amount]);
    t.same(fig('vatCollected'), [
      [I, 'pue', null, 1_280.26],
      [I, 'creditNote', N, -96.03],
    ]);
    t.same(fig('vatRetainedByClients'), [
      [I, 'pue', null, 320.06],
      [I, 'creditNote', N, -24.01],
    ]);
  });

  t.test('local taxes (implocal): the Total holds them, so a valid CFDI is no TOTAL_MISMATCH', async (t) => {
    // Complemento ImpuestosLocales 1.0 (SAT, "Guía de llenado del complemento de impuestos locales"): state taxes outside
    // Comprobante/Impuestos; the Total is SubTotal − Descuento + transferred − retained + TotaldeTraslados −
    // TotaldeRetenciones. By hand, freight 10,000.00 to the company GDI920315QR4 for a public work (PUE, 2026-08-12):
    //   IVA 16% 1,600.00; IVA retained 4% 400.00; local retention "5 al millar" 0.50% of 10,000.00 = 50.00
    //   Total = 10,000.00 + 1,600.00 − 400.00 − 50.00 = 11,150.00.
    // A second CFDI whose Total forgets the local retention (11,200.00) is the discrepancy, expected 11,150.00.
    const tenant = 'TLO850101AB1';
    const key = (await createApiKey(h.db, tenant, 'local-taxes')).key;
    const api = httpApi(t, key);
    const cfdi = (uuid: string, total: string) =>
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" xmlns:implocal="http://www.sat.gob.mx/implocal" Version="4.0" Serie="L" Folio="${uuid.slice(0, 8)}" Fecha="2026-08-12T10:00:00" SubTotal="10000.00" Moneda="MXN" Total="${total}" TipoDeComprobante="I" Exportacion="01" FormaPago="03" MetodoPago="PUE" LugarExpedicion="91700">` +
      `<cfdi:Emisor Rfc="${tenant}" Nombre="EMISOR" RegimenFiscal="601"/>` +
      `<cfdi:Receptor Rfc="${CLIENT}" Nombre="RECEPTOR" DomicilioFiscalReceptor="96400" RegimenFiscalReceptor="601" UsoCFDI="G03"/><cfdi:Conceptos>` +
      `<cfdi:Concepto ClaveProdServ="78101802" Cantidad="1" ClaveUnidad="E48" Descripcion="Flete Veracruz - Xalapa" ValorUnitario="10000.00" Importe="10000.00" ObjetoImp="02"><cfdi:Impuestos>` +
      `<cfdi:Traslados><cfdi:Traslado Base="10000.00" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="1600.00"/></cfdi:Traslados>` +
      `<cfdi:Retenciones><cfdi:Retencion Base="10000.00" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.040000" Importe="400.00"/></cfdi:Retenciones>` +
      `</cfdi:Impuestos></cfdi:Concepto></cfdi:Conceptos>` +
      `<cfdi:Impuestos TotalImpuestosRetenidos="400.00" TotalImpuestosTrasladados="1600.00"><cfdi:Retenciones><cfdi:Retencion Impuesto="002" Importe="400.00"/></cfdi:Retenciones>` +
      `<cfdi:Traslados><cfdi:Traslado Base="10000.00" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="1600.00"/></cfdi:Traslados></cfdi:Impuestos>` +
      `<cfdi:Complemento><implocal:ImpuestosLocales version="1.0" TotaldeRetenciones="50.00" TotaldeTraslados="0.00"><implocal:RetencionesLocales ImpLocRetenido="5 al millar" TasadeRetencion="0.50" Importe="50.00"/></implocal:ImpuestosLocales>` +
      `<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${uuid}" FechaTimbrado="2026-08-12T10:00:00" RfcProvCertif="SAT970701NN3" SelloCFD="A" NoCertificadoSAT="00001000000509846663" SelloSAT="B"/></cfdi:Complemento>` +
      `</cfdi:Comprobante>`;
    const VALID = '2B3C4D5E-0071-4000-8000-000000000071';
    const WRONG = '2B3C4D5E-0072-4000-8000-000000000072';
    t.match(await api.importFile('local.xml', cfdi(VALID, '11150.00')), { status: 'created', kind: 'invoice' });
    t.match(await api.importFile('local-wrong.xml', cfdi(WRONG, '11200.00')), { status: 'created', kind: 'invoice' });
    t.match((await api.doc(`${tenant}-CFDI-${VALID}`)).amounts, { subtotal: 10_000, vat16: 1_600, vatRetention4: 400, total: 11_150 });
    const summary = await api.tax({ targetMonth: '2026-08', client: CLIENT });
    const discrepancies = (uuid: string) =>
      summary.findings.items
        .filter((f: Json) => f.docId === `${tenant}-CFDI-${uuid}` && f.kind === 'discrepancy')
        .map((f: Json) => [f.code, f.declared, f.expected]);
    t.same(discrepancies(VALID), [], 'the Total with its local retention adds up');
    t.same(discrepancies(WRONG), [['TOTAL_MISMATCH', 11_200, 11_150]], 'a Total that forgets it is the discrepancy, 11,150.00 expected');
    t.match(clientTotals(summary, CLIENT), { documents: 2, documentsWithDiscrepancies: 1 });
  });

  t.test('HTTP', async (t) => {
    const tenant = 'ROCM750315QW2';
    await scenario(t, httpApi(t, (await createApiKey(h.db, tenant, 'http')).key), tenant, 1);
  });

  t.test('MCP', async (t) => {
    const tenant = 'LOPA800101AB4';
    await scenario(t, await mcpApi(t, (await createApiKey(h.db, tenant, 'mcp')).key), tenant, 2);
  });
}
