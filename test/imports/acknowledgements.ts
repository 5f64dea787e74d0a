/**
 * Cancellation acknowledgements in every shape PACs return them (issue 35): elements without
 * a namespace (as Timbox returns it), the web service's CancelaCFDResult, alone or in the SOAP
 * envelope the SAT answers with, imported through POST /api/imports and MCP (test/fixtures/sat/README.md gives their sources). Expected values come
 * from the fixtures' text.
 */
import type { Test } from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { fixture, fixtureNames, zipOf } from '../helpers/cfdi-fixtures.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';
import { importFacts, importLinks } from '../../lib/finance/ledger/facts-repo.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { invoiceXml, satAcuseXml } from '../helpers/cfdi-builder.ts';
import { connect, listen } from '../helpers/mcp.ts';

export default async function acknowledgementsTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const sat = (name: string): Promise<Buffer> => readFile(path.join(import.meta.dirname, '..', 'fixtures', 'sat', name));
  const UUID = (n: number): string => `1A2B3C4D-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const docId = (n: number): string => `${TENANT_A}-CFDI-${UUID(n)}`;
  const wipe = () =>
    Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({}), importLinks(h.db).deleteMany({})]);
  type Report = { files: { name: string; status: string; kind?: string; uuid?: string; reason?: string }[] };
  const post = async (payload: Buffer | string, contentType: string) => {
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': contentType }, payload });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    return res.json<Report>();
  };
  const get = async (url: string) => (await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } })).json();
  const summaryOf = async (n: number) => get(`/api/financial-docs/${docId(n)}`);
  const storedOf = async (n: number) => get(`/api/financial-docs/${docId(n)}?detail=full`);
  /** Mexico City wall time (UTC−6 all year since October 2022) as the instant. */
  const mx = (wall: string): number => Date.parse(`${wall.replace(' ', 'T')}-06:00`);
  const fixtureZipEntries = () => fixtureNames().map((n) => ({ name: `2026-10/${n}`, data: fixture(n) }));

  t.test('acknowledgements without namespace (Timbox) and the CancelaCFDResult form are read', async (t) => {
    await wipe();
    await post(await zipOf(fixtureZipEntries().filter((e) => !e.name.includes('/10-'))), 'application/zip');
    t.match(await summaryOf(8), { cancellations: { status: 'none' } });
    const r = await post(await sat('acuse-sin-namespace.xml'), 'application/xml');
    t.match(r.files[0], { status: 'created', kind: 'cancellation', uuid: UUID(8) });
    // EstatusUUID 202 (already cancelled): accepted at the acknowledgement's Fecha.
    t.match(await summaryOf(8), { cancellations: { status: 'accepted', invoiceCancelled: true }, status: { code: 9 } });
    t.match((await storedOf(8)).canceled, [{ uuid: UUID(8), statusSource: 'acknowledgement', satStatus: '202', date: mx('2026-10-09 18:00:00.123') }]);

    const c = await post(await sat('acuse-cancelacfdresult.xml'), 'application/xml');
    t.match(c.files[0], { status: 'created', kind: 'cancellation', uuid: UUID(4) });
    t.match(await summaryOf(4), { cancellations: { status: 'accepted', invoiceCancelled: true } });
    // A Folios with a UUID and no EstatusUUID says so.
    const half = await post(
      '<Acuse Fecha="2026-10-09T18:00:00" RfcEmisor="TGO850101AB1"><Folios><UUID>' + UUID(3) + '</UUID></Folios></Acuse>',
      'application/xml',
    );
    t.match(half.files[0], { status: 'rejected', reason: 'Acuse: Folios needs the elements UUID and EstatusUUID' });
  });

  /**
   * The SAT's cancellation web service answers in a SOAP envelope, and PACs hand it over as the
   * acuse (test/fixtures/sat/README.md: both files copied from public code, byte for byte). The
   * invoice it cancels is built here for the acuse's issuer: a CFDI 3.3 of 2022-09-20 under
   * 1,000 MXN, so that a 201 puts the cancellation in effect (docs/domain.md, "Receiver's
   * acceptance"). Mexico City kept daylight time until 2022-10-30: 11:46:42 there was 16:46:42 UTC.
   */
  t.test('a SOAP envelope with the SAT acknowledgement is read, not refused (HTTP and MCP)', async (t) => {
    const ISSUER = 'EKU9003173C9';
    const CANCELLED = 'D820A9F4-EADD-5E10-B45C-AE9310991E9E';
    const key = (await createApiKey(h.db, ISSUER, 'soap acuse')).key;
    const inv = invoiceXml({
      version: '3.3',
      issuer: ISSUER,
      receiver: 'CIN010203KL5',
      uuid: CANCELLED,
      fecha: '2022-09-20T10:00:00',
      certified: '2022-09-20T10:01:00',
      method: 'PUE',
      lines: [{ desc: 'Flete local', amount: 500, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    const send = async (payload: Buffer | string) => {
      const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload });
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      return res.json<Report>().files[0]!;
    };
    t.match(await send(inv.xml), { status: 'created', kind: 'invoice' });
    const id = `${ISSUER}-CFDI-${CANCELLED}`;
    const doc = async (full = '') => (await h.app.inject({ method: 'GET', url: `/api/financial-docs/${id}${full}`, headers: { 'x-api-key': key } })).json();
    t.match(await doc(), { cancellations: { status: 'none' } });

    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', { 'x-api-key': key });
    const res = (await client.callTool({
      name: 'importDocuments',
      arguments: { body: { files: [{ name: 'acuse-soap-finkok-201.xml', content: (await sat('acuse-soap-finkok-201.xml')).toString('utf8') }] } },
    })) as unknown as { structuredContent: Report; isError?: boolean };
    t.notOk(res.isError);
    t.match(res.structuredContent.files[0], { status: 'created', kind: 'cancellation', uuid: CANCELLED });
    t.match(await doc(), { cancellations: { status: 'accepted', invoiceCancelled: true } });
    t.match((await doc('?detail=full')).canceled, [
      { uuid: CANCELLED, statusSource: 'acknowledgement', satStatus: '201', date: Date.parse('2022-09-20T16:46:42Z') },
    ]);
    t.match(await send(await sat('acuse-soap-finkok-201.xml')), { status: 'skipped', kind: 'cancellation' }, 'the same envelope over HTTP: already imported');

    // EstatusUUID 205 (the SAT does not know the UUID): read, and refused with the SAT's meaning.
    t.match(await send(await sat('acuse-soap-finkok-205.xml')), {
      status: 'rejected',
      reason: 'the SAT did not accept the cancellation of A2D530D5-86EE-4ED6-AFB7-1C965D72A3E2 (EstatusUUID 205: the UUID is not known to the SAT)',
    });
    // A SOAP answer that is not an acknowledgement (a Fault) is refused saying what was looked for.
    const fault = await send(
      '<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Client</faultcode><faultstring>x</faultstring></s:Fault></s:Body></s:Envelope>',
    );
    t.match(fault, { status: 'rejected', reason: /SOAP envelope .* without a SAT acknowledgement/ });
  });

  /**
   * The SAT answers 201 (request received) to a request and 202 (already cancelled) to any request after the
   * cancellation, so of two acknowledgements of one UUID the 202 is the later news, whichever file arrives last. The
   * invoices are 5,800.00 (over 1,000 MXN) certified 2026-10-01, so a 201 dated 2026-10-09 (after the business day
   * following certification) leaves the cancellation pending on the receiver's acceptance; the 202 puts it in effect.
   */
  t.test('an older 201 acknowledgement does not undo a 202 that cancelled the CFDI, in either order (issued over HTTP, received over MCP)', async (t) => {
    const TENANT = 'ACK850101AB1';
    const SUPPLIER = 'SUP010101AB1';
    const U = (n: number): string => `7E2F0A11-00${n}0-4000-8000-00000000070${n}`;
    const key = (await createApiKey(h.db, TENANT, 'acknowledgement order')).key;
    const invoice = (issuer: string, receiver: string, n: number) =>
      invoiceXml({
        issuer,
        receiver,
        uuid: U(n),
        fecha: '2026-10-01T10:00:00',
        certified: '2026-10-01T10:01:00',
        method: 'PPD',
        lines: [{ desc: 'Flete', amount: 5_000, transfers: [{ tax: '002', rate: 0.16 }] }],
      }).xml;
    const ack = (issuer: string, n: number, code: '201' | '202', fecha: string) => satAcuseXml({ issuer, fecha, folios: [{ uuid: U(n), code }] });
    const send = async (name: string, content: string) => {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/imports',
        headers: { 'x-api-key': key, 'content-type': 'application/json' },
        payload: { files: [{ name, content }] },
      });
      t.equal(res.statusCode, 200, res.body.slice(0, 300));
      return res.json<Report>().files[0]!;
    };
    const cancellationOf = async (n: number) =>
      (await h.app.inject({ method: 'GET', url: `/api/financial-docs/${TENANT}-CFDI-${U(n)}`, headers: { 'x-api-key': key } })).json().cancellations;
    const KEPT = /cancelled already \(EstatusUUID 202\).*\(201\) does not undo/;

    // Issued, 202 first: the later 201 file is skipped, saying why, and the invoice stays cancelled.
    t.match(await send('inv1.xml', invoice(TENANT, 'CLI010101AB1', 1)), { status: 'created' });
    t.match(await send('ack1-202.xml', ack(TENANT, 1, '202', '2026-10-12T10:00:00')), { status: 'created', kind: 'cancellation' });
    t.match(await cancellationOf(1), { status: 'accepted', invoiceCancelled: true });
    t.match(await send('ack1-201.xml', ack(TENANT, 1, '201', '2026-10-09T10:00:00')), { status: 'skipped', kind: 'cancellation', reason: KEPT });
    t.match(await cancellationOf(1), { status: 'accepted', invoiceCancelled: true }, 'still cancelled');
    // Issued, 201 first: pending on the receiver, then the 202 puts it in effect (the same end).
    t.match(await send('inv2.xml', invoice(TENANT, 'CLI010101AB1', 2)), { status: 'created' });
    t.match(await send('ack2-201.xml', ack(TENANT, 2, '201', '2026-10-09T10:00:00')), { status: 'created' });
    t.match(await cancellationOf(2), { status: 'pending', invoiceCancelled: false }, 'a 201 after the next business day waits for the receiver');
    t.match(await send('ack2-202.xml', ack(TENANT, 2, '202', '2026-10-12T10:00:00')), { status: 'updated' });
    t.match(await cancellationOf(2), { status: 'accepted', invoiceCancelled: true });

    // Received, over MCP: the supplier's 202, then its older 201.
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key });
    const importOne = async (name: string, content: string) => {
      const r = (await client.callTool({ name: 'importDocuments', arguments: { body: { files: [{ name, content }] } } })) as unknown as {
        structuredContent: Report;
        isError?: boolean;
      };
      t.notOk(r.isError, name);
      return r.structuredContent.files[0]!;
    };
    t.match(await importOne('rinv3.xml', invoice(SUPPLIER, TENANT, 3)), { status: 'created' });
    t.match(await importOne('rack3-202.xml', ack(SUPPLIER, 3, '202', '2026-10-12T10:00:00')), { status: 'created' });
    t.match(await importOne('rack3-201.xml', ack(SUPPLIER, 3, '201', '2026-10-09T10:00:00')), { status: 'skipped', reason: KEPT });
    const received = (await client.callTool({ name: 'getReceivedDoc', arguments: { id: `${TENANT}-RCFDI-${U(3)}` } })) as unknown as {
      structuredContent: { cancellation: { status: string; satStatus: string | null } | null };
    };
    t.match(received.structuredContent.cancellation, { status: 'accepted', satStatus: '202' }, 'the received CFDI stays cancelled');
  });
}
