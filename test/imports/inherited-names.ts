/**
 * CFDI text that names a property every JavaScript object inherits ("constructor", "toString",
 * "__proto__") is looked up as the text it is. The import read such codes from plain tables, where
 * they found a function or Object.prototype: an Impuesto "constructor" was stored as a tax that is
 * a function (dropped by BSON), after which the document list and the tax summary answered 500; a
 * BienesTransp "constructor" found a "price" that is a function, and the shrinkage audit answered
 * 500 (NaN litres × price); an Estado "__proto__" stored the province as {}.
 *
 * Expected answers, from the CFDI 4.0 rules and this service's documented behaviour:
 *   - Impuesto must be a SAT tax (c_Impuesto: 001 ISR, 002 IVA, 003 IEPS): any other text rejects
 *     the file, as an unknown code does.
 *   - A product code without a price in the tenant's settings is an unpriced product.
 *   - A state key the SAT catalogue does not hold is kept as the province, as any unknown key is.
 *   - Attributes are read trimmed (the address's too, which were kept as written).
 * The trip: 20,000 l of "constructor" (unpriced) and 12,000 l of gasoline 15101514 (23.90/l, the
 * default settings) loaded, 31,930 offloaded: 70 l short, all beyond a 0 % tolerance. The leg's
 * price per litre is the priced litres' value over all litres loaded: 23.90 × 12,000 ÷ 32,000 =
 * 8.9625; recoverable 70 × 8.9625 = 627.375 → 627.38.
 */
import type { Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml } from '../helpers/cfdi-builder.ts';
import { fixture } from '../helpers/cfdi-fixtures.ts';
import { CLIENT_COMPANY } from '../fixtures/documents.ts';

export default async function inheritedNamesTests(t: Test): Promise<void> {
  const h = await startHarness(t, { build: { now: () => new Date('2026-11-10T12:00:00-06:00') } });
  const post = (files: { name: string; content: string }[]) =>
    h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A }, payload: { files } });
  const get = async (url: string) => {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } });
    return { status: res.statusCode, body: res.json() };
  };
  const OCTOBER = { startDate: '2026-10-01', endDate: '2026-10-31' };
  const SHRINKAGE = { shrinkageLitres: 70, recoverableLitres: 70, recoverableValue: 627.38, unpricedProductCodes: ['constructor'] };

  t.test('an Impuesto that names an inherited property rejects the file; the lists and the tax summary answer', async (t) => {
    const names = ['constructor', 'toString', '__proto__'];
    const files = names.map((tax, i) => ({
      name: `${tax}.xml`,
      content: invoiceXml({
        issuer: TENANT_A,
        receiver: CLIENT_COMPANY,
        uuid: `9C0DE000-000${i}-4000-8000-00000000000${i}`,
        fecha: '2026-10-05T10:00:00',
        lines: [{ code: '78101802', desc: 'flete', amount: 1_000, transfers: [{ tax: '002', rate: 0.16 }] }],
      }).xml.replaceAll('Impuesto="002"', `Impuesto="${tax}"`),
    }));
    const res = await post(files);
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    t.match(res.json().summary, { files: 3, created: 0, rejected: 3 });
    for (const [i, f] of res.json().files.entries()) {
      t.equal(f.status, 'rejected');
      // The reason quotes the code's first 10 characters.
      t.match(f.reason, `Impuesto "${names[i]!.slice(0, 10)}" is not a SAT tax`);
    }
    t.equal((await get('/api/financial-docs?limit=10')).status, 200);
    t.equal((await get(`/api/tax-summary?${new URLSearchParams(OCTOBER).toString()}`)).status, 200);
  });

  // Fixture 11 (Carta Porte 3.1, delivered): its diesel's BienesTransp, loaded and delivered, and
  // its origin's Estado changed.
  const carta = fixture('11-carta-porte-two-products.xml')
    .toString('utf8')
    .replaceAll('BienesTransp="15101505"', 'BienesTransp="constructor"')
    .replace('Estado="VER"', 'Estado="__proto__"')
    // Padded, as some issuers' software writes them: read trimmed, as every other attribute is.
    .replace('Calle="Av. Marina Mercante"', 'Calle="  Av. Marina Mercante "')
    .replace('CodigoPostal="91700"', 'CodigoPostal=" 91700\t"');

  t.test('a BienesTransp "constructor" is an unpriced product, an Estado "__proto__" its own province', async (t) => {
    const res = await post([{ name: 'carta.xml', content: carta }]);
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    t.match(res.json().summary, { created: 1, rejected: 0 });

    const shipments = await get('/api/shipments?limit=10&detail=full');
    t.equal(shipments.status, 200);
    const [trip] = shipments.body.data;
    t.equal(trip.origin.address.province, '__proto__');
    t.equal(trip.origin.address.state, '__proto__');
    t.equal(trip.origin.address.street, 'Av. Marina Mercante 210');
    t.equal(trip.origin.address.zip, '91700');
    t.same(
      trip.shipments[0].products.map((p: { code: string }) => p.code),
      ['constructor', '15101514'],
    );

    const audit = await get(`/api/analytics/discounts-and-shrinkage?${new URLSearchParams(OCTOBER).toString()}`);
    t.equal(audit.status, 200, JSON.stringify(audit.body).slice(0, 300));
    t.match(audit.body.shrinkage.totals, SHRINKAGE);
  });

  t.test('MCP: the shrinkage audit answers the same', async (t) => {
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'auditDiscountsAndShrinkage', arguments: OCTOBER })) as unknown as {
      isError?: boolean;
      structuredContent: { shrinkage: { totals: unknown } };
    };
    t.notOk(r.isError);
    t.match(r.structuredContent.shrinkage.totals, SHRINKAGE);
  });
}
