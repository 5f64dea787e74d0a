/**
 * A credit note (type E, relation 01) in another currency than the invoice it credits
 * (docs/domain.md, "Payments, credit notes and balances"): it counts for what it is worth in MXN,
 * its Total at its own TipoCambio, taken in the invoice's currency at the invoice's TipoCambio.
 * Expected values by hand:
 * - a 1,160 USD invoice at 20 credited by 2,320 MXN: 2,320 ÷ 20 = 116.00 USD, 1,044.00 pending;
 * - an 11,600 MXN invoice credited by 58 USD at 20: 1,160.00 MXN, 10,440.00 pending;
 * - a supplier's 1,160 USD invoice at 20 credited by 2,320 MXN: 116.00 settled, 1,044.00 owed.
 * Issued and received, over HTTP and MCP; a fact recorded before the note's currency or its own
 * taxes were kept is recorded anew when its file is imported again.
 */
import type { Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml } from '../helpers/cfdi-builder.ts';
import { importFacts } from '../../lib/finance/ledger/facts-repo.ts';
import { receivedFacts } from '../../lib/received/received-repo.ts';

export default async function creditNoteCurrencyTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const CLIENT = 'GDI920315QR4';
  const SUPPLIER = 'PGA010101AB1';
  const U = (n: number): string => `C4ED1700-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const invoice = (n: number, o: { issuer: string; receiver: string; amount: number; currency?: string; rate?: number }) =>
    invoiceXml({
      issuer: o.issuer,
      receiver: o.receiver,
      uuid: U(n),
      fecha: '2026-10-05T10:00:00',
      method: 'PPD',
      ...(o.currency ? { currency: o.currency, exchangeRate: o.rate } : {}),
      lines: [{ code: '78101802', desc: 'Flete', amount: o.amount, transfers: [{ tax: '002', rate: 0.16 }] }],
    }).xml;
  const creditNote = (n: number, credits: number, o: { issuer: string; receiver: string; amount: number; currency?: string; rate?: number }) =>
    invoiceXml({
      issuer: o.issuer,
      receiver: o.receiver,
      uuid: U(n),
      fecha: '2026-10-06T10:00:00',
      ...(o.currency ? { currency: o.currency, exchangeRate: o.rate } : {}),
      lines: [{ code: '84111506', desc: 'Bonificación', amount: o.amount, transfers: [{ tax: '002', rate: 0.16 }] }],
    })
      .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
      .replace('<cfdi:Emisor', `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${U(credits)}"/></cfdi:CfdiRelacionados><cfdi:Emisor`);
  const post = async (files: { name: string; content: string }[]) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { files },
    });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    return res.json<{ files: { status: string; reason?: string }[] }>().files;
  };
  const get = async (url: string) => (await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } })).json();

  const files = [
    { name: 'usd-invoice.xml', content: invoice(1, { issuer: TENANT_A, receiver: CLIENT, amount: 1_000, currency: 'USD', rate: 20 }) },
    { name: 'mxn-note.xml', content: creditNote(2, 1, { issuer: TENANT_A, receiver: CLIENT, amount: 2_000 }) },
    { name: 'mxn-invoice.xml', content: invoice(3, { issuer: TENANT_A, receiver: CLIENT, amount: 10_000 }) },
    { name: 'usd-note.xml', content: creditNote(4, 3, { issuer: TENANT_A, receiver: CLIENT, amount: 50, currency: 'USD', rate: 20 }) },
    { name: 'supplier-usd-invoice.xml', content: invoice(5, { issuer: SUPPLIER, receiver: TENANT_A, amount: 1_000, currency: 'USD', rate: 20 }) },
    { name: 'supplier-mxn-note.xml', content: creditNote(6, 5, { issuer: SUPPLIER, receiver: TENANT_A, amount: 2_000 }) },
  ];
  const expected = {
    usd: { total: 1_160, paid: 0, pending: 1_044, isFullyPaid: false, paymentsCount: 1 },
    mxn: { total: 11_600, paid: 0, pending: 10_440, isFullyPaid: false, paymentsCount: 1 },
    received: { total: 1_160, paid: 116, pending: 1_044, state: 'partial' },
  };

  t.test('issued and received, over HTTP and MCP', async (t) => {
    t.match(
      (await post(files)).map((f) => f.status),
      ['created', 'created', 'created', 'created', 'created', 'created'],
    );
    t.match((await get(`/api/financial-docs/${TENANT_A}-CFDI-${U(1)}`)).balance, expected.usd);
    t.match((await get(`/api/financial-docs/${TENANT_A}-CFDI-${U(3)}`)).balance, expected.mxn);
    t.match((await get(`/api/received-docs/${TENANT_A}-RCFDI-${U(5)}`)).balance, expected.received);

    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const call = async (name: string, id: string) =>
      ((await client.callTool({ name, arguments: { id } })) as unknown as { structuredContent: { balance: unknown } }).structuredContent.balance;
    t.match(await call('getFinancialDoc', `${TENANT_A}-CFDI-${U(1)}`), expected.usd);
    t.match(await call('getFinancialDoc', `${TENANT_A}-CFDI-${U(3)}`), expected.mxn);
    t.match(await call('getReceivedDoc', `${TENANT_A}-RCFDI-${U(5)}`), expected.received);
  });

  t.test("a note's fact recorded without its currency is recorded anew when its file comes again", async (t) => {
    await importFacts(h.db).updateOne({ _id: `${TENANT_A}|cfdi|${U(2)}` }, { $unset: { 'fact.currency': '', 'fact.exchangeRate': '' } });
    t.match(
      (await post([files[1]!])).map((f) => f.status),
      ['updated'],
    );
    t.match(await importFacts(h.db).findOne({ _id: `${TENANT_A}|cfdi|${U(2)}` }), { fact: { currency: 'MXN', exchangeRate: 1 } });
    t.match(
      (await post([files[1]!])).map((f) => f.status),
      ['skipped'],
    );
    t.match((await get(`/api/financial-docs/${TENANT_A}-CFDI-${U(1)}`)).balance, expected.usd);
  });

  // Its own taxes by hand: 2,000.00 at 16 % IVA, nothing retained.
  const noteTaxes = { vat: 320, vatRetained: 0, isrRetained: 0 };
  t.test("a note's fact recorded without its own taxes is recorded anew when its file comes again, issued and received", async (t) => {
    await importFacts(h.db).updateOne({ _id: `${TENANT_A}|cfdi|${U(2)}` }, { $unset: { 'fact.taxes': '' } });
    const receivedId = `${TENANT_A}|cfdi|${U(6)}`;
    t.match(await receivedFacts(h.db).findOne({ _id: receivedId }), { fact: { kind: 'creditNote', taxes: noteTaxes } });
    await receivedFacts(h.db).updateOne({ _id: receivedId }, { $unset: { 'fact.taxes': '' } });
    t.match(
      (await post([files[1]!, files[5]!])).map((f) => f.status),
      ['updated', 'updated'],
    );
    t.match(await importFacts(h.db).findOne({ _id: `${TENANT_A}|cfdi|${U(2)}` }), { fact: { taxes: noteTaxes } });
    t.match(await receivedFacts(h.db).findOne({ _id: receivedId }), { fact: { taxes: noteTaxes } });
    t.match(
      (await post([files[1]!, files[5]!])).map((f) => f.status),
      ['skipped', 'skipped'],
    );
    t.match((await get(`/api/financial-docs/${TENANT_A}-CFDI-${U(1)}`)).balance, expected.usd);
    t.match((await get(`/api/received-docs/${TENANT_A}-RCFDI-${U(5)}`)).balance, expected.received);
  });
}
