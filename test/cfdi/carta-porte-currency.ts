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
import { cartaPorteXml, ONE_DRIVER, ONE_PLATE, type CartaPorteLeg } from '../helpers/carta-porte-xml.ts';

export default async function cartaPorteCurrencyTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const load = Date.parse('2026-10-05T08:00:00-06:00');
  const uuid = (n: number): string => `A1B2C3D4-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  /** The helper's one-leg freight invoice (1,000.00, no taxes) of `uuid(n)` in MXN; `leg` overrides the leg. */
  const mxnInvoice = (n: number, leg: Partial<CartaPorteLeg> = {}): string =>
    cartaPorteXml({
      uuid: uuid(n),
      client: 'GDI920315QR4',
      load,
      issued: load,
      plate: ONE_PLATE,
      driver: ONE_DRIVER,
      concepts: [{ code: '78101802', desc: 'Flete', qty: '1', c: 100_000 }],
      legs: [{ km: 100, product: '15101505', productDesc: 'Diesel', litres: 30_000, unload: null, ...leg }],
    });

  /** The one-leg invoice moved to USD at 20, its goods valued as `goods` says. */
  const usdInvoice = (n: number, goods: string): string =>
    mxnInvoice(n).replace('Moneda="MXN" Total', 'Moneda="USD" TipoCambio="20" Total').replace('ValorMercancia="1000.00" Moneda="MXN"', goods);
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
    const xml = mxnInvoice(9);
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

  t.test('one product in two compartments (two Mercancia of one code, one destination): the delivered volume counted once', async (t) => {
    // 20,000 + 10,000 L of diesel (15101505) to DE000001. The addenda's one Entrega says 29,950 L arrived in all: the leg
    // offloaded 29,950 L, short 50 L (0.1667%), not 29,950 L on each compartment (59,900 L, 29,900 L over what was loaded).
    const base = mxnInvoice(10, { litres: 20_000, unload: { at: load + 6 * 3_600_000, offloaded: 29_950 } });
    const mercancia = /<cartaporte31:Mercancia [\s\S]*?<\/cartaporte31:Mercancia>/.exec(base)![0];
    const second = mercancia.replaceAll('"20000"', '"10000"');
    const xml = base.replace(mercancia, mercancia + second).replace('NumTotalMercancias="1"', 'NumTotalMercancias="2"');
    t.not(xml, base, 'the second compartment written in');
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' }, payload: xml });
    t.match(res.json(), { files: [{ status: 'created' }] }, res.body.slice(0, 300));
    const trip = (await h.app.inject({ method: 'GET', url: `/api/shipments/${TENANT_A}-CP-${uuid(10)}`, headers: { 'x-api-key': KEY_A } })).json();
    const volumes = trip.shipments[0].volumes;
    t.match(volumes, { loaded: 30_000, offloaded: 29_950, shrinkageVolume: 50, shrinkagePercent: 0.1667 });
    t.equal(
      volumes.products.reduce((s: number, p: { offloaded: number }) => s + p.offloaded, 0),
      29_950,
      "the compartments' offloaded volumes add up to the Entrega",
    );
  });

  t.test('a driver not resident in Mexico (no RFCFigura, NumRegIdTribFigura): the invoice and its trip are imported', async (t) => {
    // Carta Porte 2.0–3.1 make RFCFigura optional (the SAT's XSD and cadena original: "Opcional"): a cross-border
    // driver is identified by NumRegIdTribFigura and ResidenciaFiscalFigura. A valid file, not a refusal.
    const base = mxnInvoice(11);
    const xml = base.replace(
      `RFCFigura="${ONE_DRIVER[0]}" NumLicencia="VER0012345" NombreFigura="${ONE_DRIVER[1]}"`,
      'NumLicencia="TX12345678" NombreFigura="JOHN SMITH" NumRegIdTribFigura="123456789" ResidenciaFiscalFigura="USA"',
    );
    t.not(xml, base, 'the foreign driver written in');
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' }, payload: xml });
    t.match(
      res.json(),
      { summary: { created: 1, rejected: 0 }, files: [{ status: 'created', kind: 'invoice', tripId: `${TENANT_A}-CP-${uuid(11)}` }] },
      res.body.slice(0, 300),
    );
    const trip = (await h.app.inject({ method: 'GET', url: `/api/shipments/${TENANT_A}-CP-${uuid(11)}`, headers: { 'x-api-key': KEY_A } })).json();
    t.equal(trip.driver, 'JOHN SMITH');
    t.match(trip, { financialLinked: { total: 1000 } });
  });

  t.test('two origins on two days: each leg is dated at the origin its goods are loaded at (CantidadTransporta IDOrigen)', async (t) => {
    // Diesel loaded at OR000001 on 5 October 08:00 for DE000001, gasoline at a second terminal OR000002 on 6 October
    // 07:30 (Mexico City) for DE000002: the second leg's loading is 6 October (2026-10-06T13:30:00Z), not the first origin's.
    const base = cartaPorteXml({
      uuid: uuid(12),
      client: 'GDI920315QR4',
      load,
      issued: load,
      plate: ONE_PLATE,
      driver: ONE_DRIVER,
      concepts: [{ code: '78101802', desc: 'Flete', qty: '1', c: 100_000 }],
      legs: [
        { km: 100, product: '15101505', productDesc: 'Diesel', litres: 20_000, unload: null },
        { km: 80, product: '15101514', productDesc: 'Gasolina', litres: 10_000, unload: null },
      ],
    });
    const origin = /<cartaporte31:Ubicacion TipoUbicacion="Origen"[\s\S]*?<\/cartaporte31:Ubicacion>/.exec(base)![0];
    const second = origin
      .replace('IDUbicacion="OR000001"', 'IDUbicacion="OR000002"')
      .replace(/FechaHoraSalidaLlegada="[^"]*"/, 'FechaHoraSalidaLlegada="2026-10-06T07:30:00"');
    const xml = base.replace(origin, origin + second).replace('IDOrigen="OR000001" IDDestino="DE000002"', 'IDOrigen="OR000002" IDDestino="DE000002"');
    t.match(xml, /IDOrigen="OR000002" IDDestino="DE000002"/, 'the second origin written in');
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' }, payload: xml });
    t.match(res.json(), { files: [{ status: 'created' }] }, res.body.slice(0, 300));
    const trip = (await h.app.inject({ method: 'GET', url: `/api/shipments/${TENANT_A}-CP-${uuid(12)}`, headers: { 'x-api-key': KEY_A } })).json();
    t.same(
      trip.shipments.map((l: { loadDate: string }) => l.loadDate),
      ['2026-10-05T14:00:00.000Z', '2026-10-06T13:30:00.000Z'],
    );
  });
}
