/**
 * A carrier's archive (issue 35; docs/domain.md, "A carrier's archive"): CFDI 3.3, Pagos 1.0 and
 * Carta Porte 2.0, imported through HTTP and MCP. The public files are in
 * test/fixtures/cfdi-archive (README: source repository, path and commit of each); the expected
 * figures are read from each XML by this test (test/helpers/cfdi-corpus.ts), not by the service.
 *
 * - The stamped CFDI 3.3 invoice of eclipxe13/CfdiUtils: its amounts as the XML states them.
 * - A 3.3 PPD invoice (built: no public invoice is paid by the public Pagos 1.0 file) of
 *   30,000.00 = 25,862.07 + IVA 4,137.93, paid by SW's public Pagos 1.0 sample (USD payment at
 *   TipoCambioP 21.50 of an MXN document: ImpPagado 15,000.00, 30,000.00 → 15,000.00), then by a
 *   Pagos 2.0 complement (built: no public one pays a 3.3 invoice) of the 15,000.00 left → 0.
 * - A 3.3 invoice in USD at 20.00 (built) of 1,160.00: 500.00 paid by a Pagos 1.0 in MXN whose
 *   TipoCambioDR 0.05 (USD per MXN) gives the rate 1 ÷ 0.05 = 20.00 MXN per USD, the 660.00 left
 *   by a Pagos 2.0 in USD at TipoCambioP 19.50.
 * - SW's public Carta Porte 2.0 transfer by road: a trip whose origin, destination, distance,
 *   goods, vehicle, trailer and driver are the XML's; SW's Carta Porte 2.0 by air is refused.
 * - A 3.3 transfer with a Carta Porte 1.0 (built: no public one was found): the trip as it states.
 * - A 3.3 freight invoice (built) of 5,000.00 + 800.00 − 200.00 = 5,600.00 carrying the public
 *   Carta Porte 2.0: its trip links to it; a 3.3 credit note of 1,160.00 leaves 4,440.00.
 *
 * The SW samples are not stamped (SDK inputs): the test adds a TimbreFiscalDigital with a UUID of
 * its own and changes nothing else, as the corpus's `derived/` files do.
 */
import type { Test } from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, assertConforms } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';
import { importFacts } from '../../lib/finance/ledger/facts-repo.ts';
import { invoiceXml, paymentXml } from '../helpers/cfdi-builder.ts';
import { kid, kids, parseElements, readInvoice, sumC, type El } from '../helpers/cfdi-corpus.ts';

export default async function archiveTests(t: Test): Promise<void> {
  const DIR = path.join(import.meta.dirname, '..', 'fixtures', 'cfdi-archive');
  const file = (name: string): string => readFileSync(path.join(DIR, name), 'utf8');
  const h = await startHarness(t);

  type FileResult = { name: string; status: string; kind?: string; uuid?: string; reason?: string; financialDocIds?: string[]; tripId?: string };
  type Report = { summary: Record<string, number>; files: FileResult[] };

  const keys = new Map<string, string>();
  async function keyOf(tenant: string): Promise<string> {
    let key = keys.get(tenant);
    if (!key) {
      key = (await createApiKey(h.db, tenant, `archive ${tenant}`)).key;
      keys.set(tenant, key);
    }
    return key;
  }

  async function post(key: string, xml: string): Promise<FileResult> {
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: xml });
    if (res.statusCode !== 200) throw new Error(`POST /api/imports ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.json<Report>().files[0]!;
  }
  async function get(key: string, url: string, t?: Test, route?: string) {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    if (t && route) assertConforms(t, res, 'GET', route);
    return { status: res.statusCode, body: res.json() };
  }

  /** A TimbreFiscalDigital added as the first complement, nothing else changed. */
  function stamped(xml: string, uuid: string, fecha: string): string {
    const tfd = `<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${uuid}" FechaTimbrado="${fecha}" RfcProvCertif="SAT970701NN3" SelloCFD="A" NoCertificadoSAT="00001000000509846663" SelloSAT="B"/>`;
    const at = xml.indexOf('<cfdi:Complemento>');
    if (at < 0) throw new Error('no cfdi:Complemento');
    const end = at + '<cfdi:Complemento>'.length;
    return xml.slice(0, end) + tfd + xml.slice(end);
  }

  const cents = (x: number): number => Math.round(x * 100);
  const num = (el: El | undefined, attr: string): number => Number(el!.attrs[attr]);

  t.test('the public CFDI 3.3 invoice (CfdiUtils): accepted, amounts as its XML states them', async (t) => {
    const xml = file('cfdiutils-cfdi33-real.xml');
    const inv = readInvoice(xml);
    const root = parseElements(xml);
    const tenant = kid(root, 'Emisor')!.attrs.Rfc!;
    const key = await keyOf(tenant);
    const r = await post(key, xml);
    t.equal(r.status, 'created', r.reason ?? 'created');
    t.equal(r.uuid, inv.uuid);
    const { status, body: doc } = await get(key, `/api/financial-docs/${encodeURIComponent(`${tenant}-CFDI-${inv.uuid}`)}`, t, '/api/financial-docs/:id');
    t.equal(status, 200);
    t.same(
      {
        subtotal: cents(doc.amounts.subtotal),
        total: cents(doc.amounts.total),
        transferred: cents(doc.amounts.transferredTaxes),
        retained: cents(doc.amounts.retainedTaxes),
        iva: cents(doc.amounts.vat16),
        currency: doc.currency,
      },
      {
        subtotal: inv.subTotalC,
        total: inv.totalC,
        transferred: sumC(inv.transfers),
        retained: sumC(inv.retentions),
        iva: sumC(inv.transfers, '002'),
        currency: inv.currency,
      },
    );
    t.equal(cents(doc.balance.total), inv.totalC, 'a PUE invoice: its total');
  });

  /** The public Pagos 1.0 file: its figures as its XML states them. */
  const PAGO10 = file('sw-cfdi33-pago10-usd.xml');
  const pago10 = (() => {
    const root = parseElements(PAGO10);
    const pago = kid(kid(kid(root, 'Complemento'), 'Pagos'), 'Pago')!;
    const doc = kid(pago, 'DoctoRelacionado')!;
    return {
      issuer: kid(root, 'Emisor')!.attrs.Rfc!,
      receiver: kid(root, 'Receptor')!.attrs.Rfc!,
      invoiceUuid: doc.attrs.IdDocumento!.toUpperCase(),
      currencyP: pago.attrs.MonedaP!,
      rateP: num(pago, 'TipoCambioP'),
      before: num(doc, 'ImpSaldoAnt'),
      paid: num(doc, 'ImpPagado'),
      after: num(doc, 'ImpSaldoInsoluto'),
    };
  })();

  const PAY10_UUID = '35350000-0000-4000-8000-000000000010';
  const PAY20_UUID = '35350000-0000-4000-8000-000000000020';

  /** The 3.3 invoice the public Pagos 1.0 pays: PPD, its ImpSaldoAnt as Total (25,862.07 + 16% = 30,000.00). */
  const invoice33 = invoiceXml({
    version: '3.3',
    issuer: pago10.issuer,
    receiver: pago10.receiver,
    uuid: pago10.invoiceUuid,
    fecha: '2017-02-15T10:00:00',
    method: 'PPD',
    lines: [{ desc: 'Flete', amount: 25862.07, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  const pay20 = paymentXml({
    issuer: pago10.issuer,
    receiver: pago10.receiver,
    uuid: PAY20_UUID,
    fecha: '2023-05-10T12:00:00',
    invoiceUuid: pago10.invoiceUuid,
    currency: 'MXN',
    exchangeRate: 1,
    before: pago10.after,
    paid: pago10.after,
  });

  /** The Version attribute of the first element named `el` (any prefix) in a file's text: what the views must expose. */
  const versionIn = (xml: string, el: string): string => new RegExp(`<\\w+:${el}\\s[^>]*?\\bVersion="([^"]+)"`).exec(xml)![1]!;

  async function checkPaid(t: Test, key: string, tenant: string, afterPago10: boolean, afterPago20: boolean): Promise<void> {
    const id = `${tenant}-CFDI-${pago10.invoiceUuid}`;
    const { body: doc } = await get(key, `/api/financial-docs/${encodeURIComponent(id)}`, t, '/api/financial-docs/:id');
    const { body: full } = await get(key, `/api/financial-docs/${encodeURIComponent(id)}?detail=full`, t, '/api/financial-docs/:id');
    const cfdiVersion = versionIn(invoice33.xml, 'Comprobante');
    t.equal(cfdiVersion, '3.3');
    t.equal((doc.invoice as { cfdiVersion?: string }).cfdiVersion, cfdiVersion, 'the summary names the CFDI version');
    t.equal((full.invoice as { cfdiVersion?: string }).cfdiVersion, cfdiVersion, 'the full form names the CFDI version');
    const payments = (full.payments as { kind: string; amount: number; balanceBefore: number; balanceAfter: number; pagosVersion?: string }[]).map((p) => [
      p.kind,
      p.amount,
      p.balanceBefore,
      p.balanceAfter,
      p.pagosVersion ?? '',
    ]);
    const expected: (string | number)[][] = [];
    if (afterPago10) expected.push(['payment', pago10.paid, pago10.before, pago10.after, versionIn(PAGO10, 'Pagos')]);
    if (afterPago20) expected.push(['payment', pago10.after, pago10.after, 0, versionIn(pay20, 'Pagos')]);
    t.same(payments, expected, 'the payments listed, as the complements state them, with their Pagos version');
    const pending = afterPago20 ? 0 : afterPago10 ? pago10.after : pago10.before;
    t.match(doc.balance, { total: pago10.before, pending, isFullyPaid: afterPago20, paymentsCount: expected.length });
  }

  t.test('HTTP: a 3.3 invoice paid by the public Pagos 1.0 (USD) and then by a Pagos 2.0: balance to zero, payments listed', async (t) => {
    t.equal(invoice33.total, pago10.before, 'the built invoice is the balance the Pagos 1.0 file starts from');
    t.equal(pago10.currencyP, 'USD', 'the public payment is in USD');
    const key = await keyOf(pago10.issuer);
    const inv = await post(key, invoice33.xml);
    t.equal(inv.status, 'created', inv.reason ?? 'created');
    await checkPaid(t, key, pago10.issuer, false, false);

    const p1 = await post(key, stamped(PAGO10, PAY10_UUID, '2017-07-25T17:30:00'));
    t.match(
      p1,
      { status: 'created', kind: 'payment', uuid: PAY10_UUID, financialDocIds: [`${pago10.issuer}-CFDI-${pago10.invoiceUuid}`] },
      p1.reason ?? 'created',
    );
    await checkPaid(t, key, pago10.issuer, true, false);

    const p2 = await post(key, pay20);
    t.match(p2, { status: 'created', kind: 'payment', uuid: PAY20_UUID }, p2.reason ?? 'created');
    await checkPaid(t, key, pago10.issuer, true, true);
    const { body: doc } = await get(key, `/api/financial-docs/${encodeURIComponent(`${pago10.issuer}-CFDI-${pago10.invoiceUuid}`)}`);
    t.equal(doc.status.code, 6, 'paid');

    t.test('the unstamped public file itself is refused for the stamp', async (t) => {
      t.match((await post(key, PAGO10)).reason, /not stamped/);
    });
  });

  t.test('HTTP: a 3.3 invoice in USD paid by a Pagos 1.0 in MXN (TipoCambioDR) and a Pagos 2.0 in USD (TipoCambioP)', async (t) => {
    const tenant = 'TUS850101AB1';
    const key = await keyOf(tenant);
    const uuid = '35350000-0000-4000-8000-0000000000A1';
    const inv = invoiceXml({
      version: '3.3',
      issuer: tenant,
      receiver: 'CIN010203KL5',
      uuid,
      fecha: '2021-03-01T10:00:00',
      method: 'PPD',
      currency: 'USD',
      exchangeRate: 20,
      lines: [{ desc: 'Flete', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    t.equal(inv.total, 1160, '1,000.00 + 16% = 1,160.00 USD');
    t.equal((await post(key, inv.xml)).status, 'created');
    // 500.00 USD paid with 10,000.00 MXN: TipoCambioDR 0.05 USD per MXN, i.e. 20.00 MXN per USD.
    // The 660.00 USD left, by a Pagos 2.0 in USD at TipoCambioP 19.50.
    const pay =
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/3" xmlns:pago10="http://www.sat.gob.mx/Pagos" Version="3.3" Fecha="2021-04-01T10:00:00" SubTotal="0" Moneda="XXX" Total="0" TipoDeComprobante="P" LugarExpedicion="91700">` +
      `<cfdi:Emisor Rfc="${tenant}" Nombre="EMISOR" RegimenFiscal="601"/><cfdi:Receptor Rfc="CIN010203KL5" Nombre="RECEPTOR" UsoCFDI="P01"/>` +
      `<cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="ACT" Descripcion="Pago" ValorUnitario="0" Importe="0"/></cfdi:Conceptos>` +
      `<cfdi:Complemento><pago10:Pagos Version="1.0"><pago10:Pago FechaPago="2021-04-01T09:00:00" FormaDePagoP="03" MonedaP="MXN" Monto="10000.00">` +
      `<pago10:DoctoRelacionado IdDocumento="${uuid}" MonedaDR="USD" TipoCambioDR="0.05" MetodoDePagoDR="PPD" NumParcialidad="1" ImpSaldoAnt="1160.00" ImpPagado="500.00" ImpSaldoInsoluto="660.00"/>` +
      `</pago10:Pago></pago10:Pagos></cfdi:Complemento></cfdi:Comprobante>`;
    const r = await post(key, stamped(pay, '35350000-0000-4000-8000-0000000000A2', '2021-04-01T10:00:05'));
    t.equal(r.status, 'created', r.reason ?? 'created');
    const usd = paymentXml({
      issuer: tenant,
      receiver: 'CIN010203KL5',
      uuid: '35350000-0000-4000-8000-0000000000A4',
      fecha: '2023-06-01T10:00:00',
      invoiceUuid: uuid,
      currency: 'USD',
      exchangeRate: 19.5,
      before: 660,
      paid: 660,
    });
    t.equal((await post(key, usd)).status, 'created');
    const { body: doc } = await get(key, `/api/financial-docs/${encodeURIComponent(`${tenant}-CFDI-${uuid}`)}`, t, '/api/financial-docs/:id');
    t.equal(doc.currency, 'USD');
    t.match(doc.balance, { total: 1160, pending: 0, isFullyPaid: true });
    const { body: full } = await get(key, `/api/financial-docs/${encodeURIComponent(`${tenant}-CFDI-${uuid}`)}?detail=full`, t, '/api/financial-docs/:id');
    t.match(
      full.payments,
      [
        { kind: 'payment', amount: 500, balanceBefore: 1160, balanceAfter: 660, exchangeRate: 20 },
        { kind: 'payment', amount: 660, balanceBefore: 660, balanceAfter: 0, exchangeRate: 19.5 },
      ],
      'in USD: the Pagos 1.0 at 1 ÷ 0.05 = 20 MXN per USD, the Pagos 2.0 at its TipoCambioP 19.50',
    );

    t.test('a Pagos 1.0 in another currency without TipoCambioDR is refused', async (t) => {
      const noRate = pay.replace(' TipoCambioDR="0.05"', '');
      t.match((await post(key, stamped(noRate, '35350000-0000-4000-8000-0000000000A3', '2021-04-01T10:00:05'))).reason, /TipoCambioDR is missing/);
    });
  });

  /** The public Carta Porte 2.0 transfer: what its XML says, read here. */
  const CP20 = file('sw-cp20-traslado-auto.xml');
  const cp20 = (() => {
    const root = parseElements(CP20);
    const cp = kid(kid(root, 'Complemento'), 'CartaPorte')!;
    const ubic = kids(kid(cp, 'Ubicaciones'), 'Ubicacion');
    const origin = ubic.find((u) => u.attrs.TipoUbicacion === 'Origen')!;
    const dest = ubic.find((u) => u.attrs.TipoUbicacion === 'Destino')!;
    const merc = kid(cp, 'Mercancias')!;
    const auto = kid(merc, 'Autotransporte')!;
    const ident = kid(auto, 'IdentificacionVehicular')!;
    const fig = kid(kid(cp, 'FiguraTransporte'), 'TiposFigura')!;
    return {
      issuer: kid(root, 'Emisor')!.attrs.Rfc!,
      origin: { id: origin.attrs.IDUbicacion!, state: kid(origin, 'Domicilio')!.attrs.Estado! },
      destination: { id: dest.attrs.IDUbicacion!, state: kid(dest, 'Domicilio')!.attrs.Estado! },
      distanceKm: num(dest, 'DistanciaRecorrida'),
      goods: kids(merc, 'Mercancia').map((m) => [m.attrs.BienesTransp!, Number(m.attrs.Cantidad)]),
      plate: ident.attrs.PlacaVM!,
      config: ident.attrs.ConfigVehicular!,
      trailers: kids(kid(auto, 'Remolques'), 'Remolque').map((r) => r.attrs.Placa!),
      driverRfc: fig.attrs.RFCFigura!,
    };
  })();
  const CP20_UUID = '35350000-0000-4000-8000-000000000C20';

  async function checkTrip(t: Test, key: string, tripId: string): Promise<void> {
    const { status, body: trip } = await get(key, `/api/shipments/${encodeURIComponent(tripId)}`, t, '/api/shipments/:id');
    t.equal(status, 200);
    t.match(trip.route.origin, cp20.origin, 'origin as the XML');
    t.match(trip.route.destination, cp20.destination, 'destination as the XML');
    t.equal(trip.shipments.length, 1, 'one leg per Destino');
    const leg = trip.shipments[0];
    t.equal(leg.distanceKm, cp20.distanceKm, 'DistanciaRecorrida');
    t.equal(leg.vehicle, cp20.plate, 'PlacaVM');
    t.same(
      leg.volumes.products.map((p: { code: string; loaded: number }) => [p.code, p.loaded]),
      cp20.goods,
      'the goods (BienesTransp, Cantidad)',
    );
    // The stored trip: vehicle configuration, trailers and the driver's RFC (TiposFigura 01).
    const stored = await trips(h.db).findOne({ _id: tripId });
    t.match(stored, { vehicle: { plate: cp20.plate, config: cp20.config, trailers: cp20.trailers }, driver: { id: cp20.driverRfc } });
  }

  t.test('HTTP: the public Carta Porte 2.0 transfer by road makes its trip; by air it is refused', async (t) => {
    const key = await keyOf(cp20.issuer);
    const r = await post(key, stamped(CP20, CP20_UUID, '2022-02-23T00:20:00'));
    t.match(r, { status: 'created', kind: 'transfer', tripId: `${cp20.issuer}-CP-${CP20_UUID}` }, r.reason ?? 'created');
    await checkTrip(t, key, r.tripId!);

    const air = await post(key, stamped(file('sw-cp20-traslado-aereo.xml'), '35350000-0000-4000-8000-000000000A10', '2022-02-23T00:20:00'));
    t.equal(air.status, 'rejected');
    t.match(air.reason, /Carta Porte by air \(TransporteAereo\)/);

    const unknown = await post(
      key,
      stamped(
        CP20.replaceAll('http://www.sat.gob.mx/CartaPorte20', 'http://www.sat.gob.mx/CartaPorte40'),
        '35350000-0000-4000-8000-000000000A11',
        '2022-02-23T00:20:00',
      ),
    );
    t.equal(unknown.status, 'rejected', 'an unknown Carta Porte version is not accepted without its trip');
    t.match(unknown.reason, /unsupported Carta Porte complement: namespace http:\/\/www\.sat\.gob\.mx\/CartaPorte40/);
  });

  t.test('HTTP: Carta Porte 2.0 without IDUbicacion (optional in 2.0) makes its trip, its places numbered by position', async (t) => {
    // The SAT's Carta Porte 2.0 schema (and its cadena original) has IDUbicacion "Opcional"; with one origin and one
    // destination no CantidadTransporta is needed either. The public transfer without both: the same trip, its origin
    // OR000001 and its destination DE000001 (as Carta Porte 1.0 numbers them).
    const key = await keyOf(cp20.issuer);
    const uuid = '35350000-0000-4000-8000-000000000C21';
    const noIds = CP20.replace(/ IDUbicacion="[^"]*"/g, '').replace(/<cartaporte20:CantidadTransporta [^>]*\/>/g, '');
    t.not(noIds, CP20, 'IDUbicacion and CantidadTransporta taken out');
    const r = await post(key, stamped(noIds, uuid, '2022-02-23T00:20:00'));
    t.match(r, { status: 'created', kind: 'transfer', tripId: `${cp20.issuer}-CP-${uuid}` }, r.reason ?? 'created');
    const { body: trip } = await get(key, `/api/shipments/${encodeURIComponent(`${cp20.issuer}-CP-${uuid}`)}`);
    t.match(trip.route.origin, { id: 'OR000001', state: cp20.origin.state });
    t.match(trip.route.destination, { id: 'DE000001', state: cp20.destination.state });
    t.equal(trip.shipments[0].distanceKm, cp20.distanceKm, 'DistanciaRecorrida');
    t.same(
      trip.shipments[0].volumes.products.map((p: { code: string; loaded: number }) => [p.code, p.loaded]),
      cp20.goods,
      'the goods as the XML',
    );
  });

  /** A built CFDI 3.3 transfer (T) with a Carta Porte 1.0 by road: no public one was found. */
  const CP10_UUID = '35350000-0000-4000-8000-000000000C10';
  const CP10 =
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/3" xmlns:cartaporte="http://www.sat.gob.mx/CartaPorte" Version="3.3" Serie="CP" Folio="77" Fecha="2021-09-01T06:00:00" SubTotal="0" Moneda="XXX" Total="0" TipoDeComprobante="T" LugarExpedicion="91700">` +
    `<cfdi:Emisor Rfc="TCP850101AB1" Nombre="TRANSPORTES CP" RegimenFiscal="601"/><cfdi:Receptor Rfc="TCP850101AB1" Nombre="TRANSPORTES CP" UsoCFDI="P01"/>` +
    `<cfdi:Conceptos><cfdi:Concepto ClaveProdServ="15101505" Cantidad="30000" ClaveUnidad="LTR" Descripcion="Diesel" ValorUnitario="0" Importe="0"/></cfdi:Conceptos>` +
    `<cfdi:Complemento><cartaporte:CartaPorte Version="1.0" TranspInternac="No" TotalDistRec="412.5"><cartaporte:Ubicaciones>` +
    `<cartaporte:Ubicacion TipoEstacion="02"><cartaporte:Origen IDOrigen="OR000001" RFCRemitente="PEM990101AA1" NombreRemitente="TAR TUXPAN" FechaHoraSalida="2021-09-01T07:00:00"/>` +
    `<cartaporte:Domicilio Calle="Carretera Tuxpan" Municipio="189" Estado="VER" Pais="MEX" CodigoPostal="92800"/></cartaporte:Ubicacion>` +
    `<cartaporte:Ubicacion DistanciaRecorrida="412.5"><cartaporte:Destino IDDestino="DE000001" RFCDestinatario="GAS010101AB2" NombreDestinatario="GASOLINERA NORTE" FechaHoraProgLlegada="2021-09-01T15:00:00"/>` +
    `<cartaporte:Domicilio Calle="Av. Norte" NumeroExterior="12" Municipio="039" Estado="NLE" Pais="MEX" CodigoPostal="64000"/></cartaporte:Ubicacion>` +
    `</cartaporte:Ubicaciones><cartaporte:Mercancias NumTotalMercancias="1">` +
    `<cartaporte:Mercancia BienesTransp="15101505" Descripcion="Diesel" Cantidad="30000" ClaveUnidad="LTR" PesoEnKg="25200" ValorMercancia="600000"/>` +
    `<cartaporte:AutotransporteFederal PermSCT="TPAF01" NumPermisoSCT="P-1" NombreAseg="ASEG" NumPolizaSeguro="1"><cartaporte:IdentificacionVehicular ConfigVehicular="T3S2" PlacaVM="XB1234A" AnioModeloVM="2019"/>` +
    `<cartaporte:Remolques><cartaporte:Remolque SubTipoRem="CTR020" Placa="RT1001A"/><cartaporte:Remolque SubTipoRem="CTR020" Placa="RT1002A"/></cartaporte:Remolques></cartaporte:AutotransporteFederal>` +
    `</cartaporte:Mercancias><cartaporte:FiguraTransporte CveTransporte="01"><cartaporte:Operadores><cartaporte:Operador RFCOperador="HEGR800101AB3" NombreOperador="RAUL HERNANDEZ" NumLicencia="LF-998877"/></cartaporte:Operadores></cartaporte:FiguraTransporte>` +
    `</cartaporte:CartaPorte></cfdi:Complemento></cfdi:Comprobante>`;

  t.test('HTTP: a 3.3 transfer with Carta Porte 1.0 makes its trip (origin, destination, distance, goods, vehicle, trailers, driver)', async (t) => {
    const key = await keyOf('TCP850101AB1');
    const r = await post(key, stamped(CP10, CP10_UUID, '2021-09-01T06:00:05'));
    t.match(r, { status: 'created', kind: 'transfer', tripId: `TCP850101AB1-CP-${CP10_UUID}` }, r.reason ?? 'created');
    const { body: trip } = await get(key, `/api/shipments/${encodeURIComponent(r.tripId!)}`, t, '/api/shipments/:id');
    t.match(trip.route.origin, { id: 'OR000001', state: 'VER' });
    t.match(trip.route.destination, { id: 'DE000001', state: 'NLE' });
    t.equal(trip.driver, 'RAUL HERNANDEZ');
    t.equal(trip.shipments[0].distanceKm, 412.5);
    t.equal(trip.shipments[0].vehicle, 'XB1234A');
    t.same(
      trip.shipments[0].volumes.products.map((p: { code: string; loaded: number }) => [p.code, p.loaded]),
      [['15101505', 30000]],
    );
    t.match(await trips(h.db).findOne({ _id: r.tripId! }), {
      client: 'GAS010101AB2',
      vehicle: { plate: 'XB1234A', config: 'T3S2', trailers: ['RT1001A', 'RT1002A'] },
      driver: { id: 'HEGR800101AB3', name: 'RAUL HERNANDEZ', license: 'LF-998877' },
    });
    const noDriver = CP10.replace(' RFCOperador="HEGR800101AB3"', '');
    t.match((await post(key, stamped(noDriver, '35350000-0000-4000-8000-000000000C11', '2021-09-01T06:00:05'))).reason, /Operador@RFCOperador is missing/);
  });

  t.test('HTTP: a 3.3 freight invoice carrying the public Carta Porte 2.0, and a 3.3 credit note against it', async (t) => {
    const tenant = cp20.issuer;
    const key = await keyOf(tenant);
    const uuid = '35350000-0000-4000-8000-0000000000B1';
    const inv = invoiceXml({
      version: '3.3',
      issuer: tenant,
      receiver: 'CIN010203KL5',
      uuid,
      fecha: '2022-02-22T10:00:00',
      method: 'PPD',
      lines: [{ desc: 'Flete', amount: 5000, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] }],
    });
    t.equal(inv.total, 5600, '5,000.00 + 800.00 − 200.00');
    // The public Carta Porte 2.0 element, namespace declared on it, after the invoice's stamp.
    const cp = CP20.slice(CP20.indexOf('<cartaporte20:CartaPorte '), CP20.indexOf('</cfdi:Complemento>')).replace(
      '<cartaporte20:CartaPorte ',
      '<cartaporte20:CartaPorte xmlns:cartaporte20="http://www.sat.gob.mx/CartaPorte20" ',
    );
    const xml = inv.xml.replace('</cfdi:Complemento>', `${cp}</cfdi:Complemento>`);
    const r = await post(key, xml);
    t.match(r, { status: 'created', kind: 'invoice', tripId: `${tenant}-CP-${uuid}` }, r.reason ?? 'created');
    const { body: trip } = await get(key, `/api/shipments/${encodeURIComponent(r.tripId!)}`, t, '/api/shipments/:id');
    t.match(trip.financialLinked, { id: `${tenant}-CFDI-${uuid}`, total: 5600 }, 'the trip links to its 3.3 invoice');
    t.equal(trip.shipments[0].distanceKm, cp20.distanceKm);

    // A 3.3 credit note (E, CfdiRelacionados 01) of 1,160.00 against it: balance 5,600.00 → 4,440.00.
    const ncUuid = '35350000-0000-4000-8000-0000000000B2';
    const nc =
      `<?xml version="1.0" encoding="UTF-8"?>\n` +
      `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/3" Version="3.3" Serie="NC" Folio="1" Fecha="2022-03-01T10:00:00" SubTotal="1000.00" Moneda="MXN" Total="1160.00" TipoDeComprobante="E" MetodoPago="PUE" LugarExpedicion="91700">` +
      `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${uuid}"/></cfdi:CfdiRelacionados>` +
      `<cfdi:Emisor Rfc="${tenant}" Nombre="EMISOR" RegimenFiscal="601"/><cfdi:Receptor Rfc="CIN010203KL5" Nombre="RECEPTOR" UsoCFDI="G02"/>` +
      `<cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="ACT" Descripcion="Bonificacion" ValorUnitario="1000.00" Importe="1000.00">` +
      `<cfdi:Impuestos><cfdi:Traslados><cfdi:Traslado Base="1000.00" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="160.00"/></cfdi:Traslados></cfdi:Impuestos></cfdi:Concepto></cfdi:Conceptos>` +
      `<cfdi:Impuestos TotalImpuestosTrasladados="160.00"><cfdi:Traslados><cfdi:Traslado Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="160.00"/></cfdi:Traslados></cfdi:Impuestos>` +
      `<cfdi:Complemento></cfdi:Complemento></cfdi:Comprobante>`;
    const n = await post(key, stamped(nc, ncUuid, '2022-03-01T10:00:05'));
    t.match(n, { status: 'created', kind: 'creditNote' }, n.reason ?? 'created');
    const { body: doc } = await get(key, `/api/financial-docs/${encodeURIComponent(`${tenant}-CFDI-${uuid}`)}`, t, '/api/financial-docs/:id');
    t.match(doc.balance, { total: 5600, pending: 4440 }, '5,600.00 − 1,160.00');
  });

  t.test('MCP: importDocuments reads a 3.3 invoice, Pagos 1.0 and 2.0, and a Carta Porte 2.0 trip', async (t) => {
    await Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({})]);
    const base = await listen(await h.rebuild());
    const key = await keyOf(pago10.issuer);
    const client = await connect(t, base, 'streamable', { 'x-api-key': key });
    const files = [
      { name: 'factura-33.xml', content: invoice33.xml },
      { name: 'pago10.xml', content: stamped(PAGO10, PAY10_UUID, '2017-07-25T17:30:00') },
      { name: 'pago20.xml', content: pay20 },
      { name: 'cartaporte20.xml', content: stamped(CP20, CP20_UUID, '2022-02-23T00:20:00') },
    ];
    const res = (await client.callTool({ name: 'importDocuments', arguments: { body: { files } } })) as unknown as {
      structuredContent: Report;
      isError?: boolean;
    };
    t.notOk(res.isError);
    t.same(res.structuredContent.summary, { files: 4, created: 4, updated: 0, skipped: 0, rejected: 0, ignored: 0, rejectedLines: 0 });
    const tripId = res.structuredContent.files[3]!.tripId!;
    t.equal(tripId, `${cp20.issuer}-CP-${CP20_UUID}`);
    await checkPaid(t, key, pago10.issuer, true, true);
    await checkTrip(t, key, tripId);
    const doc = (await client.callTool({ name: 'getFinancialDoc', arguments: { id: `${pago10.issuer}-CFDI-${pago10.invoiceUuid}` } })) as unknown as {
      structuredContent: { balance: { pending: number; paymentsCount: number }; invoice: { cfdiVersion?: string } };
    };
    t.match(doc.structuredContent.balance, { pending: 0, paymentsCount: 2 }, 'getFinancialDoc: paid by both complements');
    t.equal(doc.structuredContent.invoice.cfdiVersion, versionIn(invoice33.xml, 'Comprobante'), 'getFinancialDoc: the CFDI version');
  });
}
