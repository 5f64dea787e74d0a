/** CFDI reading and mapping (pure): hand-written fixtures in, stored shapes out. */
import t from 'tap';
import { parseXmlTree, XmlTreeBuilder } from '../../lib/imports/xml-tree.ts';
import { keepNamespace, readImportFile, type CancellationAck, type Cfdi } from '../../lib/imports/cfdi.ts';
import { cancellationFacts, conceptKind, creditNoteFact, invoiceFact, paymentFact } from '../../lib/imports/financial-mapping.ts';
import { buildFinancialDocument } from '../../lib/finance/ledger/documents.ts';
import { tripFromCfdi } from '../../lib/imports/trip-mapping.ts';
import { ImportRejection } from '../../lib/imports/rejection.ts';
import { fixture } from '../helpers/cfdi-fixtures.ts';

const TENANT = 'TGO850101AB1';
const read = (name: string) => readImportFile(parseXmlTree(fixture(name), keepNamespace));
const cfdi = (name: string) => read(name) as Cfdi;

t.test('streaming in 7-byte chunks gives the same tree as one write', async (t) => {
  const xml = fixture('11-carta-porte-two-products.xml');
  const b = new XmlTreeBuilder(keepNamespace);
  for (let i = 0; i < xml.length; i += 7) b.write(xml.subarray(i, i + 7));
  t.same(b.end(), parseXmlTree(xml, keepNamespace));
});

t.test('DTDs, undeclared entities, depth and element limits are refused', async (t) => {
  t.throws(() => parseXmlTree('<!DOCTYPE a [<!ENTITY b "c">]><a>&b;</a>', keepNamespace), ImportRejection);
  t.throws(() => parseXmlTree('<a>&b;</a>', keepNamespace), /malformed XML/);
  t.throws(() => parseXmlTree('<a>'.repeat(40) + '</a>'.repeat(40), () => true), /nested deeper than 32/);
  t.throws(() => parseXmlTree(`<a>${'<b/>'.repeat(20)}</a>`, () => true, { maxDepth: 32, maxElements: 10 }), /more than 10 XML elements/);
});

t.test('invoice with 4% retention: amounts, concept taxes, dates', async (t) => {
  const c = cfdi('01-freight-invoice-retention.xml');
  t.match(c, {
    type: 'I',
    uuid: '1A2B3C4D-0001-4000-8000-000000000001',
    paymentMethod: 'PUE',
    subTotal: 20000,
    total: 22400,
    issuer: { rfc: TENANT },
    receiver: { rfc: 'GDI920315QR4' },
  });
  t.equal(new Date(c.date).toISOString(), '2026-10-05T16:00:00.000Z', 'Fecha is Mexico City wall time');
  const fact = invoiceFact(TENANT, c);
  t.match(fact.base, { _id: `${TENANT}-CFDI-${c.uuid}`, iSub: 20000, iTax1: 3200, iTax2: 800, iTot: 22400, iDesc: 0, iFalt: 0 });
  t.same(fact.base.invoice.concepts[0], {
    code: '78101802',
    kind: 'freight',
    desc: 'Flete Coatzacoalcos - Minatitlan',
    quantity: 1,
    unitPrice: 20000,
    amount: 20000,
    discount: 0,
    objetoImp: '02',
    vatRate: 0.16,
    vat: 3200,
    retentionRate: 0.04,
    retention: 800,
    taxes: {
      transfers: [{ tax: 'IVA', factor: 'Tasa', rate: 0.16, base: 20000, amount: 3200 }],
      retentions: [{ tax: 'IVA', factor: 'Tasa', rate: 0.04, base: 20000, amount: 800 }],
    },
  });
  t.match(fact.base, { currency: 'MXN', taxTotals: { transferred: 3200, retained: 800 } });
  t.notOk('exchangeRate' in fact.base, 'an MXN document stores no rate (1)');
});

t.test('shortage line: ObjetoImp 01, no taxes, counted in SubTotal and iFalt; tariff per litre from the LTR freight line', async (t) => {
  const fact = invoiceFact(TENANT, cfdi('02-invoice-shortage-line.xml'));
  t.match(fact.base, { iSub: 26970, iFalt: 1470, iTax1: 4080, iTax2: 1020, iTot: 30030, tarif1: 0.85 });
  t.match(fact.base.invoice.concepts[1], { kind: 'shortage', objetoImp: '01', vat: 0, retention: 0, amount: 1470 });
});

t.test('concept kinds', async (t) => {
  const k = (code: string, description: string, objetoImp: '01' | '02' = '02') => conceptKind({ code, description, objetoImp });
  t.equal(k('78101807', 'Flete'), 'freight');
  t.equal(k('95111603', 'Casetas'), 'toll');
  t.equal(k('78141500', 'Estadías'), 'demurrage');
  t.equal(k('78101802', 'Maniobras de descarga'), 'freight', 'a freight key wins over words');
  t.equal(k('72154000', 'Maniobras de descarga'), 'handling');
  t.equal(k('15101505', 'Faltante', '01'), 'shortage');
  t.equal(k('84111506', 'Indemnización por daño', '01'), 'indemnity');
});

t.test('a PPD invoice rebuilt from payments, credit note and cancellations, in any order', async (t) => {
  const inv = invoiceFact(TENANT, cfdi('04-ppd-invoice.xml'));
  const p1 = paymentFact(cfdi('05-payment-complement-1.xml'));
  const p2 = paymentFact(cfdi('07-payment-complement-2.xml'));
  const nc = creditNoteFact(cfdi('06-credit-note.xml'));
  t.match(
    p1.records,
    [{ invoiceUuid: '1A2B3C4D-0004-4000-8000-000000000004', amount: 20000, balanceBefore: 56000, balanceAfter: 36000 }],
    'IdDocumento upper-cased',
  );
  const doc = buildFinancialDocument(inv, [p2, p1], [nc], []);
  t.same(doc, buildFinancialDocument(inv, [p1, p2], [nc], []), 'order of facts does not matter');
  t.equal(doc.status, 6);
  t.same(
    doc.payments.map((p) => [p.kind, p.amount, p.balanceBefore, p.balanceAfter]),
    [
      ['payment', 20000, 56000, 36000],
      ['creditNote', 5600, 36000, 30400],
      ['payment', 30400, 30400, 0],
    ],
  );
  t.equal(doc.lastUpdate, '2026-11-05T18:00:00.000Z');
  // The second complement cancelled: not counted, status back to invoiced.
  const cancel = cancellationFacts([{ uuid: p2.uuid, motive: '02', replacementUuid: null, code: '201' }], Date.UTC(2026, 10, 6));
  const withCancel = buildFinancialDocument(inv, [p1, p2], [nc], cancel);
  t.equal(withCancel.status, 4);
  t.match(withCancel.payments[2], { uuid: p2.uuid, canceled: true });
  t.match(withCancel.canceled, [
    { target: 'payment', uuid: p2.uuid, motive: '02', replacementUuid: null, status: 'accepted', statusSource: 'acknowledgement', satStatus: '201' },
  ]);
});

t.test('cancellation acknowledgement: motive 01 with its replacement; SAT refusal and missing replacement rejected', async (t) => {
  const ack = read('10-cancellation-acuse-motive-01.xml');
  t.match(ack, {
    file: 'cancellation',
    issuerRfc: TENANT,
    folios: [{ uuid: '1A2B3C4D-0008-4000-8000-000000000008', motive: '01', replacementUuid: '1A2B3C4D-0009-4000-8000-000000000009', code: '201' }],
  });
  const refused = fixture('10-cancellation-acuse-motive-01.xml').toString().replace('EstatusUUID="201"', 'EstatusUUID="205"');
  t.throws(
    () => readImportFile(parseXmlTree(refused, keepNamespace)),
    /the SAT did not accept the cancellation of 1A2B3C4D-0008-4000-8000-000000000008 \(EstatusUUID 205: the UUID is not known to the SAT\)/,
  );
  const noReplacement = fixture('10-cancellation-acuse-motive-01.xml')
    .toString()
    .replace(/ FolioSustitucion="[^"]*"/, '');
  t.throws(() => readImportFile(parseXmlTree(noReplacement, keepNamespace)), /motive 01 needs FolioSustitucion/);
  const inv = invoiceFact(TENANT, cfdi('08-invoice-cancelled.xml'));
  const doc = buildFinancialDocument(inv, [], [], cancellationFacts((ack as CancellationAck).folios, 0));
  t.equal(doc.status, 9);
  t.same(doc.payments, [], 'a cancelled PUE invoice has no receipt');
});

t.test('credit note must relate exactly one invoice with TipoRelacion 01', async (t) => {
  const c = cfdi('06-credit-note.xml');
  t.throws(() => creditNoteFact({ ...c, related: [] }), /without CfdiRelacionados TipoRelacion 01/);
  t.throws(() => creditNoteFact({ ...c, related: [{ relation: '01', uuids: ['A', 'B'] }] }), /relates 2 invoices/);
});

t.test('Carta Porte: one leg, two products, delivered volumes from the addenda, pricing from the invoice', async (t) => {
  const trip = tripFromCfdi(TENANT, cfdi('11-carta-porte-two-products.xml'))!;
  t.match(trip, {
    _id: `${TENANT}-CP-1A2B3C4D-0011-4000-8000-000000000011`,
    idFinan: `${TENANT}-CFDI-1A2B3C4D-0011-4000-8000-000000000011`,
    client: 'DPE950607MN8',
    driver: { id: 'HEGR751212AB3', name: 'RAUL HERNANDEZ GARCIA', license: 'VER0012345' },
    vehicle: { plate: 'XA1234B', config: 'T3S2', trailers: ['12UE8K'] },
    origin: { id: 'OR000001', address: { state: 'VER', municipality: '193', province: 'Veracruz' } },
    destination: { id: 'DE000001', address: { municipality: '087' } },
  });
  t.equal(trip.shipments.length, 1);
  t.match(trip.shipments[0], {
    date: 20261020,
    status: 4,
    distanceKm: 105,
    region: 'VER',
    pricing: { tarifUnit: 0.9, billedFreight: 28800, totalFreight: 28800, merchandiseValue: 776800 },
  });
  t.same(
    trip.shipments[0]!.products.map((p) => [p.code, p.loaded, p.offloaded]),
    [
      ['15101505', 20000, 19940],
      ['15101514', 12000, 11990],
    ],
  );
  t.equal(tripFromCfdi(TENANT, cfdi('01-freight-invoice-retention.xml')), null, 'no Carta Porte, no trip');
});

t.test('encodings: the declared one is read, byte by byte too; anything else is refused, never mangled', async (t) => {
  const doc = (decl: string, name: string) => `<?xml version="1.0" encoding="${decl}"?><a Nombre="${name}"/>`;
  const feed = (bytes: Buffer, step: number) => {
    const b = new XmlTreeBuilder(() => true);
    for (let i = 0; i < bytes.length; i += step) b.write(bytes.subarray(i, i + step));
    return b.end();
  };
  const latin = Buffer.from(doc('ISO-8859-1', 'MARÍTIMOS Ñandú'), 'latin1');
  t.equal(feed(latin, 1).attrs.Nombre, 'MARÍTIMOS Ñandú', 'ISO-8859-1, one byte at a time');
  t.equal(feed(Buffer.from(doc('utf-8', 'MARÍTIMOS Ñandú')), 1).attrs.Nombre, 'MARÍTIMOS Ñandú', 'UTF-8 split inside a character');
  const cp1252 = Buffer.concat([Buffer.from('<?xml version="1.0" encoding="windows-1252"?><a Nombre="'), Buffer.from([0x93, 0x41, 0x94]), Buffer.from('"/>')]);
  t.equal(parseXmlTree(cp1252, () => true).attrs.Nombre, '\u201cA\u201d', 'windows-1252 quotes');
  t.throws(() => parseXmlTree(Buffer.from(doc('UTF-8', 'MARÍTIMOS'), 'latin1'), () => true), /not valid UTF-8/);
  t.throws(() => parseXmlTree(Buffer.from(`<a Nombre="MAR${'\u00cd'}TIMOS"/>`, 'latin1'), () => true), /not valid UTF-8 \(declared, or the default/);
  t.throws(() => parseXmlTree(Buffer.from(doc('Shift_JIS', 'x')), () => true), /encoding "shift_jis", which is not read here/);
  t.throws(() => parseXmlTree(Buffer.from('\ufeff<a/>', 'utf16le'), () => true), /UTF-16/);
  t.equal(parseXmlTree(Buffer.from('\ufeff<a b="é"/>'), () => true).attrs.b, 'é', 'a UTF-8 byte order mark is fine');
});

t.test('Carta Porte by air, sea or rail: refused, because only road transport makes a trip', async (t) => {
  const road = fixture('11-carta-porte-two-products.xml').toString('utf8');
  const prefix = /<(\w+):Autotransporte/.exec(road)![1]!;
  const air = road.replace(
    new RegExp(`<${prefix}:Autotransporte[\\s\\S]*?</${prefix}:Autotransporte>`),
    `<${prefix}:TransporteAereo PermSCT="TPAF01" NumPermisoSCT="1" MatriculaAeronave="XA-ABC" NumeroGuia="1" CodigoTransportista="CA001"/>`,
  );
  t.not(air, road);
  t.throws(
    () => readImportFile(parseXmlTree(air, keepNamespace)),
    /Carta Porte by air \(TransporteAereo\): only road transport \(Autotransporte\) makes a trip/,
  );
});

t.test('Pagos 1.0 (CFDI 3.3): ImpPagado left out is the Monto; balances required; other versions refused by namespace', async (t) => {
  const uuid = '35350000-0000-4000-8000-0000000000D1';
  const pago = (docto: string, pagos = 'xmlns:pago10="http://www.sat.gob.mx/Pagos" Version="1.0"', monto = '500.00') =>
    readImportFile(
      parseXmlTree(
        `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/3" Version="3.3" Fecha="2019-05-01T10:00:00" SubTotal="0" Moneda="XXX" Total="0" TipoDeComprobante="P">` +
          `<cfdi:Emisor Rfc="${TENANT}"/><cfdi:Receptor Rfc="CIN010203KL5"/>` +
          `<cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="ACT" Descripcion="Pago" ValorUnitario="0" Importe="0"/></cfdi:Conceptos>` +
          `<cfdi:Complemento><tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" UUID="${uuid}" FechaTimbrado="2019-05-01T10:00:05"/>` +
          `<pago10:Pagos ${pagos}><pago10:Pago FechaPago="2019-05-01T09:00:00" FormaDePagoP="03" MonedaP="MXN" Monto="${monto}">${docto}</pago10:Pago></pago10:Pagos>` +
          `</cfdi:Complemento></cfdi:Comprobante>`,
        keepNamespace,
      ),
    ) as Cfdi;
  const doc = (attrs: string) => `<pago10:DoctoRelacionado IdDocumento="1A2B3C4D-0004-4000-8000-000000000004" MonedaDR="MXN" MetodoDePagoDR="PPD" ${attrs}/>`;
  const c = pago(doc('NumParcialidad="2" ImpSaldoAnt="1500.00" ImpSaldoInsoluto="1000.00"'));
  t.match(c, { version: '3.3', type: 'P', uuid });
  t.same(
    paymentFact(c).records.map((r) => [r.invoiceUuid, r.amount, r.balanceBefore, r.balanceAfter]),
    [['1A2B3C4D-0004-4000-8000-000000000004', 500, 1500, 1000]],
  );
  t.throws(() => pago(doc('ImpPagado="500.00"')), /ImpSaldoAnt and ImpSaldoInsoluto are missing/);
  t.throws(
    () => pago(doc('ImpSaldoAnt="1500.00" ImpSaldoInsoluto="1000.00"') + doc('ImpSaldoAnt="1500.00" ImpSaldoInsoluto="1000.00"')),
    /ImpPagado is missing/,
  );
  t.throws(() => pago(doc('ImpSaldoAnt="1500.00" ImpPagado="400.00" ImpSaldoInsoluto="1000.00"')), /ImpSaldoInsoluto 1000 ≠ ImpSaldoAnt 1500 − ImpPagado 400/);
  t.throws(
    () => pago(doc('ImpSaldoAnt="1.00" ImpPagado="1.00" ImpSaldoInsoluto="0"'), 'xmlns:pago10="http://www.sat.gob.mx/Pagos30" Version="3.0"'),
    /unsupported payment complement: namespace http:\/\/www\.sat\.gob\.mx\/Pagos30/,
  );
  t.throws(
    () => pago(doc('ImpSaldoAnt="1.00" ImpPagado="1.00" ImpSaldoInsoluto="0"'), 'xmlns:pago10="http://www.sat.gob.mx/Pagos" Version="2.0"'),
    /Pagos@Version "2.0" is not 1.0/,
  );
});

t.test('local taxes (implocal 1.0): their totals are kept; another version, two complements or a missing total are refused', async (t) => {
  const uuid = '1A2B3C4D-0091-4000-8000-000000000091';
  const invoice = (complement: string) =>
    readImportFile(
      parseXmlTree(
        `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" xmlns:implocal="http://www.sat.gob.mx/implocal" Version="4.0" Fecha="2026-08-12T10:00:00" SubTotal="100.00" Moneda="MXN" Total="118.50" TipoDeComprobante="I" Exportacion="01" MetodoPago="PUE" LugarExpedicion="91700">` +
          `<cfdi:Emisor Rfc="${TENANT}"/><cfdi:Receptor Rfc="GDI920315QR4" UsoCFDI="G03"/>` +
          `<cfdi:Conceptos><cfdi:Concepto ClaveProdServ="78101802" Cantidad="1" ClaveUnidad="E48" Descripcion="Flete" ValorUnitario="100.00" Importe="100.00" ObjetoImp="02"/></cfdi:Conceptos>` +
          `<cfdi:Complemento><tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" UUID="${uuid}" FechaTimbrado="2026-08-12T10:00:05"/>${complement}</cfdi:Complemento></cfdi:Comprobante>`,
        keepNamespace,
      ),
    ) as Cfdi;
  const local = (attrs: string) =>
    `<implocal:ImpuestosLocales ${attrs}><implocal:TrasladosLocales ImpLocTrasladado="ISH" TasadeTraslado="3.00" Importe="3.00"/></implocal:ImpuestosLocales>`;
  t.same(invoice(local('version="1.0" TotaldeRetenciones="0.50" TotaldeTraslados="3.00"')).localTaxes, { transferred: 3, retained: 0.5 });
  t.equal(invoice('').localTaxes, null, 'none without the complement');
  t.same(
    invoiceFact(TENANT, invoice(local('version="1.0" TotaldeRetenciones="0.00" TotaldeTraslados="3.00"'))).base.localTaxes,
    { transferred: 3, retained: 0 },
    'stored',
  );
  t.throws(() => invoice(local('version="2.0" TotaldeRetenciones="0" TotaldeTraslados="3.00"')), /ImpuestosLocales@version "2.0" is not 1.0/);
  t.throws(() => invoice(local('version="1.0" TotaldeTraslados="3.00"')), /TotaldeRetenciones/);
  t.throws(() => invoice(local('version="1.0" TotaldeRetenciones="0" TotaldeTraslados="3.00"').repeat(2)), /2 ImpuestosLocales complements/);
});
