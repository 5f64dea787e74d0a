/**
 * A Carta Porte on an invoice in another currency (docs/domain.md, "Money and currency"): trip
 * pricing is MXN, converted at the invoice's TipoCambio, and so is every amount of the trip's
 * record (`currency: MXN`), the linked document's total included; the goods' ValorMercancia is in
 * MXN by its own Mercancia@Moneda. Expected values by hand: a 1,000.00 USD freight at 20 is
 * 20,000.00 MXN; goods of 1,000.00 valued in USD (or without a Moneda of their own on a USD
 * invoice) 20,000.00, in MXN 1,000.00, in EUR (no rate in the file) 0. Over HTTP and MCP.
 */
import type { Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { cartaPorteXml, ONE_DRIVER, ONE_PLATE } from '../helpers/carta-porte-xml.ts';

export default async function cartaPorteCurrencyTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const load = Date.parse('2026-10-05T08:00:00-06:00');
  const uuid = (n: number): string => `A1B2C3D4-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  /** The helper's invoice (1,000.00, no taxes) moved to USD at 20, its goods valued as `goods` says. */
  const usdInvoice = (n: number, goods: string): string =>
    cartaPorteXml({
      uuid: uuid(n),
      client: 'GDI920315QR4',
      load,
      issued: load,
      plate: ONE_PLATE,
      driver: ONE_DRIVER,
      concepts: [{ code: '78101802', desc: 'Flete', qty: '1', c: 100_000 }],
      legs: [{ km: 100, product: '15101505', productDesc: 'Diesel', litres: 30_000, unload: null }],
    })
      .replace('Moneda="MXN" Total', 'Moneda="USD" TipoCambio="20" Total')
      .replace('ValorMercancia="1000.00" Moneda="MXN"', goods);
  const cases = [
    { n: 1, goods: 'ValorMercancia="1000.00" Moneda="USD"', merchandiseValue: 20_000 },
    { n: 2, goods: 'ValorMercancia="1000.00" Moneda="MXN"', merchandiseValue: 1_000 },
    { n: 3, goods: 'ValorMercancia="1000.00"', merchandiseValue: 20_000 },
    { n: 4, goods: 'ValorMercancia="1000.00" Moneda="EUR"', merchandiseValue: 0 },
  ];
  const expected = (merchandiseValue: number) => ({
    currency: 'MXN',
    shipments: [{ pricing: { merchandiseValue, billedFreight: 20_000, toll: 0, totalFreight: 20_000 } }],
    financialLinked: { total: 20_000, pending: 0 },
  });

  t.test('the trip of a USD invoice: MXN throughout, over HTTP and MCP', async (t) => {
    for (const { n, goods } of cases) {
      const res = await h.app.inject({
        method: 'POST',
        url: '/api/imports',
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' },
        payload: usdInvoice(n, goods),
      });
      t.match(res.json(), { files: [{ status: 'created' }] }, res.body.slice(0, 300));
    }
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    for (const { n, goods, merchandiseValue } of cases) {
      const id = `${TENANT_A}-CP-${uuid(n)}`;
      const trip = (await h.app.inject({ method: 'GET', url: `/api/shipments/${id}`, headers: { 'x-api-key': KEY_A } })).json();
      t.match(trip, expected(merchandiseValue), goods);
      const tool = (await client.callTool({ name: 'getShipment', arguments: { id } })) as unknown as { structuredContent: unknown };
      t.match(tool.structuredContent, expected(merchandiseValue), `MCP: ${goods}`);
    }
    t.match((await h.app.inject({ method: 'GET', url: `/api/financial-docs/${TENANT_A}-CFDI-${uuid(1)}`, headers: { 'x-api-key': KEY_A } })).json(), {
      currency: 'USD',
      exchangeRate: 20,
      amounts: { total: 1_000 },
    });
  });

  t.test("a freight line's Descuento: the trip's billed freight is what the invoice bills, net of it", async (t) => {
    // Freight 1,000.00 less a Descuento of 100.00 (the header: SubTotal 1,000.00, Descuento 100.00, Total 900.00):
    // the client is billed 900.00 of freight; the discount audit keeps the gross 1,000.00 and the discount 100.00 apart.
    const xml = cartaPorteXml({
      uuid: uuid(9),
      client: 'GDI920315QR4',
      load,
      issued: load,
      plate: ONE_PLATE,
      driver: ONE_DRIVER,
      concepts: [{ code: '78101802', desc: 'Flete', qty: '1', c: 100_000 }],
      legs: [{ km: 100, product: '15101505', productDesc: 'Diesel', litres: 30_000, unload: null }],
    });
    const discounted = xml
      .replace('Importe="1000.00" ObjetoImp="01"', 'Importe="1000.00" Descuento="100.00" ObjetoImp="01"')
      .replace('SubTotal="1000.00" Moneda="MXN" Total="1000.00"', 'SubTotal="1000.00" Descuento="100.00" Moneda="MXN" Total="900.00"');
    t.not(discounted, xml, 'the discount written in');
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' },
      payload: discounted,
    });
    t.match(res.json(), { files: [{ status: 'created' }] }, res.body.slice(0, 300));
    const trip = (await h.app.inject({ method: 'GET', url: `/api/shipments/${TENANT_A}-CP-${uuid(9)}`, headers: { 'x-api-key': KEY_A } })).json();
    t.match(trip, { shipments: [{ pricing: { billedFreight: 900, toll: 0, totalFreight: 900 } }], financialLinked: { total: 900 } });
  });
}
