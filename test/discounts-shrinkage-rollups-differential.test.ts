/**
 * The discounts and shrinkage audit from the days kept on write (docs/rollups.md "Discounts and
 * shrinkage") against the same audit computed from every invoice and trip of the period: after
 * a random sequence of writes of every kind that moves it (Carta Porte imports whose invoices
 * carry shortage, demurrage and handling lines, re-imports, deliveries by PUT and CSV with
 * shrinkage in and beyond tolerance, plain invoices in MXN and USD with discounts, credit notes,
 * cancellation requests, acknowledgements and SAT status answers — on the invoices linked to
 * trips too —, tolerance, price and recovery-mode settings changes, writes that fail halfway,
 * the worker's drain, a rebuild, a restart), every audit for random periods, clients and limits
 * answers the same over HTTP (and once over MCP), and `verifyDiscountsShrinkageRollups` finds
 * every kept day equal. Then writes that bypass the marks are caught by both checks (the test
 * can fail). DISCOUNTS_ROLLUP_SEED=<n> replays a seed.
 */
import t from 'tap';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { invoiceXml, requestXml, satAcuseXml, type LineSpec } from './helpers/cfdi-builder.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { auditDiscountsAndShrinkage, type DiscountsShrinkageInput } from '../lib/analytics/audit-discounts-and-shrinkage.ts';
import { rebuildDiscountsShrinkageRollups, verifyDiscountsShrinkageRollups } from '../lib/analytics/refresh-discounts-shrinkage-rollups.ts';
import { discountsShrinkageRollups } from '../lib/analytics/discounts-shrinkage-rollup-kind.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { getTenantSettings, saveTenantSettings } from '../lib/settings/settings-repo.ts';
import { settingsCache } from '../lib/settings/settings-cache.ts';
import type { ServiceContext } from '../lib/context.ts';
import { connect, listen } from './helpers/mcp.ts';
import { BYPASS, comparable, onTheWire, seeded, tally } from './helpers/differential.ts';

const { rnd, pick, int } = seeded(t, 'DISCOUNTS_ROLLUP_SEED', 20261129);

t.setTimeout(500_000);
const h = await startHarness(t);
await rebuildDiscountsShrinkageRollups(h.db); // an empty store: recorded as built, every write from here keeps the days
const ctx: ServiceContext = { db: h.db, config: h.config, now: () => new Date() };

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
const PRODUCTS = ['15101505', '15101505', '15101514'];
const DAY = 86_400_000;
/** Day 0 is 2026-08-01 (Mexico City, UTC−6); everything falls on days 0..100, before today. */
const BASE = Date.parse('2026-08-01T00:00:00-06:00');
const wallOf = (ms: number): string => new Date(ms - 6 * 3_600_000).toISOString().slice(0, 19);
const dayOf = (n: number): string => wallOf(BASE + n * DAY).slice(0, 10);
const money = (c: number): string => (c / 100).toFixed(2);

interface LegPlan {
  litres: number;
  product: string;
  freightC: number;
  /** Offloaded litres and instant, or null (in transit). */
  unload: { at: number; offloaded: number } | null;
}
interface TripPlan {
  uuid: string;
  client: string;
  load: number;
  legs: LegPlan[];
  /** Shortage (faltante) lines billed on the trip's own invoice: litres and cents. */
  shortage: { litres: number; c: number }[];
  demurrageC: number;
  cancelRequested: boolean;
}
const plans: TripPlan[] = [];
const invoices: { uuid: string; cancelRequested: boolean }[] = [];
let next = 1;
const uuidOf = (n: number): string => `D15C0000-${String(n).padStart(4, '0')}-4000-8000-${String(n).padStart(12, '0')}`;

/** Offloaded litres: within tolerance, beyond it (up to 1.5 %), or a gain. */
/** Shapes the next delivered legs must take (the final writes: every seed makes both). */
const forced: ('beyond' | 'gain')[] = [];
const offloadedOf = (litres: number): number => {
  const shape = forced.shift();
  const r = shape === 'beyond' ? 0.5 : shape === 'gain' ? 0.9 : rnd();
  const lost = r < 0.4 ? (litres * int(0, 20)) / 10_000 : r < 0.85 ? (litres * int(20, 150)) / 10_000 : -int(1, 40);
  return Math.round((litres - lost) * 1000) / 1000;
};

/** The trip's invoice: a Carta Porte 3.1, a freight line per leg, shortage and demurrage lines, deliveries in the addenda. */
function cartaPorteXml(p: TripPlan): string {
  const lines = [
    ...p.legs.map((l, i) => ({ code: '78101802', desc: `Flete tramo ${i + 1}`, qty: '1', c: l.freightC })),
    ...p.shortage.map((s) => ({ code: '78101802', desc: 'Faltante de producto', qty: String(s.litres), c: s.c })),
    ...(p.demurrageC ? [{ code: '78141500', desc: 'Estadia', qty: '1', c: p.demurrageC }] : []),
  ];
  const subC = lines.reduce((s, l) => s + l.c, 0);
  const concepts = lines
    .map(
      (l) =>
        `<cfdi:Concepto ClaveProdServ="${l.code}" Cantidad="${l.qty}" ClaveUnidad="E48" Descripcion="${l.desc}" ValorUnitario="${money(Math.round(l.c / Number(l.qty)))}" Importe="${money(l.c)}" ObjetoImp="01"/>`,
    )
    .join('');
  const dests = p.legs
    .map(
      (_l, i) =>
        `<cartaporte31:Ubicacion TipoUbicacion="Destino" IDUbicacion="DE00000${i + 1}" RFCRemitenteDestinatario="${p.client}" NombreRemitenteDestinatario="ESTACION ${i + 1}" FechaHoraSalidaLlegada="${wallOf(p.load + 6 * 3_600_000)}" DistanciaRecorrida="100"><cartaporte31:Domicilio Calle="Av. Uno" NumeroExterior="1" Localidad="15" Municipio="087" Estado="VER" Pais="MEX" CodigoPostal="91000"/></cartaporte31:Ubicacion>`,
    )
    .join('');
  const goods = p.legs
    .map(
      (l, i) =>
        `<cartaporte31:Mercancia BienesTransp="${l.product}" Descripcion="Combustible" Cantidad="${l.litres}" ClaveUnidad="LTR" MaterialPeligroso="Si" CveMaterialPeligroso="1202" Embalaje="Z01" PesoEnKg="1000" ValorMercancia="1000.00" Moneda="MXN"><cartaporte31:CantidadTransporta Cantidad="${l.litres}" IDOrigen="OR000001" IDDestino="DE00000${i + 1}"/></cartaporte31:Mercancia>`,
    )
    .join('');
  const deliveries = p.legs
    .map((l, i) =>
      l.unload === null
        ? ''
        : `<fb:Entrega IDDestino="DE00000${i + 1}" BienesTransp="${l.product}" CantidadDescargada="${l.unload.offloaded}" FechaHoraDescarga="${wallOf(l.unload.at)}"/>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:cartaporte31="http://www.sat.gob.mx/CartaPorte31" Version="4.0" Serie="F" Folio="${p.uuid.slice(9, 13)}" Fecha="${wallOf(p.load + 3_600_000)}" FormaPago="03" NoCertificado="00001000000500000001" SubTotal="${money(subC)}" Moneda="MXN" Total="${money(subC)}" TipoDeComprobante="I" Exportacion="01" MetodoPago="PUE" LugarExpedicion="91700" Sello="AAAA" Certificado="AAAA">
  <cfdi:Emisor Rfc="${TENANT_A}" Nombre="TRANSPORTES DEL GOLFO" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="${p.client}" Nombre="CLIENTE ${p.client.slice(0, 3)}" DomicilioFiscalReceptor="91000" RegimenFiscalReceptor="601" UsoCFDI="G03"/>
  <cfdi:Conceptos>${concepts}</cfdi:Conceptos>
  <cfdi:Complemento>
    <cartaporte31:CartaPorte Version="3.1" IdCCP="CCC${p.uuid.slice(3)}" TranspInternac="No" TotalDistRec="${(p.legs.length * 100).toFixed(1)}">
      <cartaporte31:Ubicaciones><cartaporte31:Ubicacion TipoUbicacion="Origen" IDUbicacion="OR000001" RFCRemitenteDestinatario="PRE920716IU5" NombreRemitenteDestinatario="TERMINAL VERACRUZ" FechaHoraSalidaLlegada="${wallOf(p.load)}"><cartaporte31:Domicilio Calle="Av. Marina" NumeroExterior="210" Localidad="24" Municipio="193" Estado="VER" Pais="MEX" CodigoPostal="91700"/></cartaporte31:Ubicacion>${dests}</cartaporte31:Ubicaciones>
      <cartaporte31:Mercancias PesoBrutoTotal="1000" UnidadPeso="KGM" NumTotalMercancias="${p.legs.length}">${goods}
        <cartaporte31:Autotransporte PermSCT="TPAF01" NumPermisoSCT="0X2XTXZ0X5X0X3X2X1X0"><cartaporte31:IdentificacionVehicular ConfigVehicular="T3S2" PesoBrutoVehicular="48" PlacaVM="XA1234B" AnioModeloVM="2022"/><cartaporte31:Seguros AseguraRespCivil="SEGUROS DEL GOLFO" PolizaRespCivil="RC-55501"/></cartaporte31:Autotransporte>
      </cartaporte31:Mercancias>
      <cartaporte31:FiguraTransporte><cartaporte31:TiposFigura TipoFigura="01" RFCFigura="HEGR751212AB3" NumLicencia="VER0012345" NombreFigura="RAUL HERNANDEZ GARCIA"/></cartaporte31:FiguraTransporte>
    </cartaporte31:CartaPorte>
    <tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${p.uuid}" FechaTimbrado="${wallOf(p.load + 3_600_000)}" RfcProvCertif="SAT970701NN3" SelloCFD="AAAA" NoCertificadoSAT="00001000000509846663" SelloSAT="BBBB"/>
  </cfdi:Complemento>${deliveries ? `\n  <cfdi:Addenda><fb:Entregas xmlns:fb="urn:freight-backoffice:entregas:1">${deliveries}</fb:Entregas></cfdi:Addenda>` : ''}
</cfdi:Comprobante>`;
}

async function importFiles(files: { name: string; content: string }[]): Promise<{ created: number; updated: number }> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: { files },
  });
  if (res.statusCode !== 200) throw new Error(`import ${res.statusCode}: ${res.body}`);
  const body = res.json<{ summary: { rejected: number; created: number; updated: number } }>();
  if (body.summary.rejected > 0) throw new Error(`import rejected: ${res.body.slice(0, 2000)}`);
  return body.summary;
}

function randomLeg(load: number): LegPlan {
  const litres = int(5_000, 32_000) + int(0, 999) / 1000;
  const delivered = forced.length > 0 || rnd() < 0.75;
  return {
    litres,
    product: pick(PRODUCTS),
    freightC: int(100_000, 4_000_000),
    unload: delivered ? { at: load + int(2, 60) * 3_600_000, offloaded: offloadedOf(litres) } : null,
  };
}

async function writeTrips(): Promise<string> {
  const ps: TripPlan[] = [];
  for (let i = 0, n = int(1, 4); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    ps.push({
      uuid: uuidOf(next++),
      client: pick(CLIENTS),
      load,
      legs: Array.from({ length: int(1, 3) }, () => randomLeg(load)),
      shortage: rnd() < 0.4 ? Array.from({ length: int(1, 2) }, () => ({ litres: int(5, 80), c: int(10_000, 200_000) })) : [],
      demurrageC: rnd() < 0.3 ? int(50_000, 300_000) : 0,
      cancelRequested: false,
    });
  }
  await importFiles(ps.map((p) => ({ name: `${p.uuid}.xml`, content: cartaPorteXml(p) })));
  plans.push(...ps);
  return `${ps.length} trips`;
}

/** The same Carta Porte again with other content: a later loading day, deliveries now known, other shortage lines. */
async function reimport(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  const r = rnd();
  if (r < 0.3) {
    const shift = int(-10, 10) * DAY;
    p.load += shift;
    for (const l of p.legs) if (l.unload) l.unload.at += shift;
  } else if (r < 0.6) for (const l of p.legs) l.unload ??= { at: p.load + int(1, 3) * DAY, offloaded: offloadedOf(l.litres) };
  else p.shortage = rnd() < 0.5 ? [] : [{ litres: int(5, 80), c: int(10_000, 200_000) }];
  const summary = await importFiles([{ name: `${p.uuid}.xml`, content: cartaPorteXml(p) }]);
  return `re-import of ${p.uuid} (${summary.updated} updated)`;
}

/** A delivery recorded later through PUT …/delivery or POST /api/deliveries/csv. */
async function deliver(): Promise<string> {
  const stored = await trips(h.db).find({ company: TENANT_A, 'shipments.unloadDate': null }).toArray();
  if (!stored.length) return writeTrips();
  const trip = pick(stored);
  const leg = trip.shipments.find((l) => l.unloadDate === null)!;
  const offloadDate = new Date((leg.loadDate ?? BASE) + int(1, 72) * 3_600_000).toISOString();
  const products = leg.products.map((x) => ({ code: x.code, offloaded: offloadedOf(x.loaded) }));
  if (rnd() < 0.5) {
    const res = await h.app.inject({
      method: 'PUT',
      url: `/api/shipments/${encodeURIComponent(trip._id)}/legs/${encodeURIComponent(leg.shipment)}/delivery`,
      headers: { 'x-api-key': KEY_A },
      payload: { offloadDate, ticket: `REC-${next++}`, products },
    });
    if (res.statusCode !== 200) throw new Error(`delivery ${res.statusCode}: ${res.body}`);
    return `delivery of ${leg.shipment}`;
  }
  const csv = [
    'tripId,shipmentId,productCode,offloaded,offloadDate,ticket',
    ...products.map((x) => `${trip._id},${leg.shipment},${x.code},${x.offloaded},${offloadDate},REC-${next}`),
  ].join('\n');
  next += 1;
  const res = await h.app.inject({ method: 'POST', url: '/api/deliveries/csv', headers: { 'x-api-key': KEY_A, 'content-type': 'text/csv' }, payload: csv });
  if (res.statusCode >= 300) throw new Error(`deliveries ${res.statusCode}: ${res.body}`);
  return `deliveries of ${leg.shipment}`;
}

function randomLines(): LineSpec[] {
  const lines: LineSpec[] = [];
  for (let i = 0, n = int(1, 4); i < n; i++) {
    const amount = int(500, 90_000) + int(0, 99) / 100;
    const kind = pick(['freight', 'freight', 'demurrage', 'handling', 'shortage', 'other'] as const);
    if (kind === 'freight')
      lines.push({ code: pick(['78101802', '78101800']), desc: 'Flete', amount, ...(rnd() < 0.5 ? { discount: int(1, 400) + int(0, 99) / 100 } : {}) });
    else if (kind === 'demurrage') lines.push({ code: '78141500', desc: 'Estadia', amount });
    else if (kind === 'handling') lines.push({ code: '78141501', desc: 'Maniobras de descarga', amount, ...(rnd() < 0.3 ? { discount: 10 } : {}) });
    else if (kind === 'shortage') lines.push({ code: '78101802', desc: 'Faltante de mercancia', amount, objetoImp: '01' });
    else lines.push({ code: '81141601', desc: 'Servicio', amount });
  }
  return lines;
}

/** Plain invoices (no trip), MXN and USD, with discounts, demurrage, handling and shortage lines. */
async function writeInvoices(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const uuid = uuidOf(next++);
    const currency = rnd() < 0.25 ? 'USD' : 'MXN';
    const receiver = pick(CLIENTS);
    const x = invoiceXml({
      issuer: TENANT_A,
      receiver,
      uuid,
      fecha: wallOf(BASE + int(0, 100) * DAY + int(0, 23) * 3_600_000),
      currency,
      ...(currency === 'USD' ? { exchangeRate: pick([17.25, 18.1, 19.033]) } : {}),
      lines: randomLines(),
    });
    invoices.push({ uuid, cancelRequested: false });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  await importFiles(files);
  return `${files.length} invoices`;
}

async function writeCreditNote(): Promise<string> {
  if (!invoices.length) return writeInvoices();
  const inv = pick([...invoices, ...plans]);
  const x = invoiceXml({
    issuer: TENANT_A,
    receiver: pick(CLIENTS),
    uuid: uuidOf(next++),
    fecha: wallOf(BASE + int(0, 100) * DAY),
    lines: [{ code: '78101802', desc: 'Bonificacion', amount: int(50, 900) }],
  });
  const xml = x.xml
    .replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
    .replace(/(<cfdi:Comprobante[^>]*>)/, `$1<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${inv.uuid}"/></cfdi:CfdiRelacionados>`);
  await importFiles([{ name: 'nc.xml', content: xml }]);
  return `credit note on ${inv.uuid}`;
}

/** A cancellation request, now and then acknowledged (201), of a plain invoice or a trip's own. */
async function writeCancellation(): Promise<string> {
  const candidates = [...invoices, ...plans].filter((i) => !i.cancelRequested);
  if (!candidates.length) return writeInvoices();
  const inv = pick(candidates);
  inv.cancelRequested = true;
  const files = [
    { name: 'solicitud.xml', content: requestXml({ issuer: TENANT_A, fecha: '2026-11-02T09:00:00', folios: [{ uuid: inv.uuid, motive: '02' }] }) },
  ];
  if (rnd() < 0.5)
    files.push({ name: 'acuse.xml', content: satAcuseXml({ issuer: TENANT_A, fecha: '2026-11-02T09:05:00', folios: [{ uuid: inv.uuid, code: '201' }] }) });
  await importFiles(files);
  return `cancellation of ${inv.uuid} (${files.length} files)`;
}

/** The SAT's answer on a requested cancellation: rejected, accepted or in process. */
async function writeStatusAnswer(): Promise<string> {
  const requested = [...invoices, ...plans].filter((i) => i.cancelRequested);
  if (!requested.length) return writeCancellation();
  const inv = pick(requested);
  const list = await h.app.inject({ method: 'GET', url: `/api/financial-docs?uuid=${inv.uuid}`, headers: { 'x-api-key': KEY_A } });
  const id = list.json<{ data: { id: string }[] }>().data[0]?.id;
  if (!id) return 'no document';
  const answer = pick([
    { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada' },
    { estado: 'Cancelado', estatusCancelacion: 'Cancelado con aceptación' },
    { estado: 'Vigente', estatusCancelacion: 'En proceso' },
  ]);
  const res = await h.app.inject({
    method: 'PUT',
    url: `/api/financial-docs/${encodeURIComponent(id)}/cancellation`,
    headers: { 'x-api-key': KEY_A },
    payload: { ...answer, consultedAt: new Date().toISOString() },
  });
  return `status ${answer.estatusCancelacion} on ${inv.uuid}: ${res.statusCode}`;
}

/** The tolerance (default, a client's rule), the recovery mode or a price changed. */
async function writeSettings(): Promise<string> {
  const s = await getTenantSettings(h.db, TENANT_A);
  const r = rnd();
  const changed =
    r < 0.3
      ? { ...s, shrinkageTolerancePct: pick([0, 0.2, 0.5]) }
      : r < 0.6
        ? {
            ...s,
            toleranceRules:
              rnd() < 0.3
                ? []
                : [
                    { client: pick(CLIENTS), pct: pick([0.3, 0.8]) },
                    { productCode: '15101514', pct: 0.4 },
                  ],
          }
        : r < 0.8
          ? { ...s, shrinkageRecoveryMode: pick(['excess', 'all'] as const) }
          : { ...s, pricePerLitre: { ...s.pricePerLitre, '15101505': pick([24.5, 22.13, 26]) } };
  await saveTenantSettings(h.db, changed);
  settingsCache(h.db).forget(TENANT_A);
  return `settings (${r.toFixed(2)})`;
}

/** A write that changes a stored trip or invoice and then fails before it is acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  if (rnd() < 0.5) {
    const trip = await trips(h.db).findOne({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } });
    if (!trip) return writeTrips();
    const changed = { ...trip, shipments: trip.shipments.map((l) => ({ ...l, products: l.products.map((p) => ({ ...p, loaded: p.loaded + 55 })) })) };
    await writeMarkingTripDays(h.db, TENANT_A, [trip, changed], async () => {
      await trips(h.db).replaceOne({ _id: trip._id }, changed);
      throw new Error('crashed after the write');
    }).catch(() => undefined);
    return `failed write on trip ${trip._id}`;
  }
  const doc = await financialDocs(h.db).findOne({ company: TENANT_A });
  if (!doc) return writeInvoices();
  const changed = { ...doc, iDesc: Math.round((doc.iDesc + 12.34) * 100) / 100 };
  await writeMarkingDays(h.db, TENANT_A, [doc, changed], async () => {
    await financialDocs(h.db).replaceOne({ _id: doc._id }, changed);
    throw new Error('crashed after the write');
  }).catch(() => undefined);
  return `failed write on document ${doc._id}`;
}

async function worker(): Promise<string> {
  if (rnd() < 0.7) return `drained ${await discountsShrinkageRollups.drain(h.db, 50, 60_000)} marks`;
  const r = await discountsShrinkageRollups.rebuild(h.db);
  if (!(await discountsShrinkageRollups.ready(h.db))) throw new Error('a rebuild of every tenant leaves the store built');
  return `rebuilt ${r.units} days`;
}

async function restart(): Promise<string> {
  await h.rebuild();
  return 'restart';
}

async function audits(label: string, n: number): Promise<number> {
  const answers = tally(t, label);
  for (let i = 0; i < n; i++) {
    const q: Record<string, string> = {};
    const r = rnd();
    if (r < 0.1) q.startDate = dayOf(int(0, 90));
    else if (r < 0.2) {
      q.startDate = dayOf(int(-300, 0));
      q.endDate = dayOf(int(60, 130));
    } else {
      const a = int(-10, 110);
      const b = int(-10, 110);
      q.startDate = dayOf(Math.min(a, b));
      q.endDate = dayOf(Math.max(a, b));
    }
    if (rnd() < 0.35) q.client = pick(CLIENTS);
    q.limit = String(pick([1, 3, 10, 100]));
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/analytics/discounts-and-shrinkage?${new URLSearchParams(q).toString()}`,
      headers: { 'x-api-key': KEY_A },
    });
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    const input: DiscountsShrinkageInput = {
      limit: Number(q.limit),
      ...(q.startDate ? { startDate: q.startDate } : {}),
      ...(q.endDate ? { endDate: q.endDate } : {}),
      ...(q.client ? { client: q.client } : {}),
    };
    const reference = comparable(await auditDiscountsAndShrinkage(ctx, TENANT_A, input, { fromDocuments: true }));
    answers.differs(comparable(res.json()), reference, JSON.stringify(q));
  }
  return answers.count;
}

const WRITES = [
  writeTrips,
  writeTrips,
  writeTrips,
  reimport,
  deliver,
  deliver,
  writeInvoices,
  writeInvoices,
  writeCreditNote,
  writeCancellation,
  writeCancellation,
  writeStatusAnswer,
  writeSettings,
  writeThatFails,
  worker,
  restart,
];

t.test('every discounts and shrinkage audit equals the documents after random writes', async (t) => {
  const done: string[] = [];
  for (let step = 0; step < 45; step++) {
    done.push(await pick(WRITES)());
    if (step % 15 === 14) t.equal(await audits(`after step ${step} (${done.slice(-3).join('; ')})`, 8), 0, `audits agree after step ${step}`);
  }
  // Then one of each (trips and invoices thrice): whatever the seed, every shape is there.
  forced.push('beyond', 'gain', 'beyond', 'gain');
  for (const w of [
    writeTrips,
    writeTrips,
    writeTrips,
    reimport,
    deliver,
    writeInvoices,
    writeInvoices,
    writeInvoices,
    writeCreditNote,
    writeCancellation,
    writeStatusAnswer,
    writeSettings,
    writeThatFails,
    worker,
    restart,
  ])
    done.push(await w());
  t.comment(done.join(' | '));
  t.equal(await audits('final', 25), 0, `25 random audits agree after ${done.length} writes`);

  // The writes made what the kept days must count: legs beyond tolerance, recovered shortage, cancelled trip invoices.
  const whole = (await auditDiscountsAndShrinkage(ctx, TENANT_A, { limit: 100, startDate: dayOf(-5), endDate: dayOf(110) }, { fromDocuments: true })) as {
    shrinkage: { totals: { legsOutOfTolerance: number; legsWithGain: number; recovered: { invoices: number } } };
    discounts: { totals: { documentsWithDiscount: number } };
  };
  t.ok(whole.shrinkage.totals.legsOutOfTolerance > 0 && whole.shrinkage.totals.legsWithGain > 0, 'legs beyond tolerance and gains');
  t.ok(whole.shrinkage.totals.recovered.invoices > 0, 'recovered shortage');
  t.ok(whole.discounts.totals.documentsWithDiscount > 0, 'discounts');
  t.ok(
    ['delivery of', 'deliveries of', 'settings', 'failed write on trip', 'failed write on document', 'cancellation of', 'credit note'].every((k) =>
      done.some((d) => d.startsWith(k)),
    ),
    'every kind of write ran',
  );

  const v = await verifyDiscountsShrinkageRollups(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day equals its documents (${v.checked} days)`);
  t.ok(v.checked > 30, 'the documents touch many days');

  // The MCP tool reads the same kept days.
  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
  const input = { limit: 5, startDate: dayOf(0), endDate: dayOf(100) };
  const r = (await client.callTool({ name: 'auditDiscountsAndShrinkage', arguments: { ...input } })) as unknown as {
    structuredContent: { discounts: unknown; demurrage: unknown; shrinkage: unknown };
  };
  const reference = onTheWire(await auditDiscountsAndShrinkage(ctx, TENANT_A, input, { fromDocuments: true })) as typeof r.structuredContent;
  t.same(r.structuredContent.discounts, reference.discounts, 'MCP: discounts');
  t.same(r.structuredContent.demurrage, reference.demurrage, 'MCP: demurrage');
  t.same(r.structuredContent.shrinkage, reference.shrinkage, 'MCP: shrinkage');
});

t.test('writes that bypass the marks are caught: the check can fail', async (t) => {
  const some = await trips(h.db)
    .find({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } })
    .limit(10)
    .toArray();
  t.ok(some.length > 0, 'trips to break');
  for (const trip of some)
    await trips(h.db).updateOne(
      { _id: trip._id },
      { $set: { shipments: trip.shipments.map((l) => ({ ...l, products: l.products.map((p) => ({ ...p, loaded: p.loaded + 333 })) })) } },
    );
  await financialDocs(h.db).updateMany({ company: TENANT_A, 'invoice.concepts.kind': 'freight' }, { $inc: { iDesc: 7 } });
  const v = await verifyDiscountsShrinkageRollups(h.db, TENANT_A);
  t.ok(
    v.mismatched.some((k) => k.startsWith('shrinkage|')) && v.mismatched.some((k) => k.startsWith('discounts|')),
    `verification finds the unmarked days (${v.mismatched.length})`,
  );
  t.ok((await audits(BYPASS, 15)) > 0, 'some audit differs from the documents');
  const repaired = await verifyDiscountsShrinkageRollups(h.db, TENANT_A, { repair: true });
  t.equal(repaired.mismatched.length, v.mismatched.length, 'repair rewrites the days that differ');
  t.same((await verifyDiscountsShrinkageRollups(h.db, TENANT_A)).mismatched, [], 'after repair every day is equal');
  t.equal(await audits('after repair', 10), 0, 'and the audits agree again');
});
