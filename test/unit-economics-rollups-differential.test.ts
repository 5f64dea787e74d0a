/**
 * Unit economics (GET /api/analytics/unit-economics, MCP getFreightUnitEconomics) from the days
 * kept on write (docs/rollups.md "Unit economics") against the same report computed from every
 * trip and received CFDI of the period: after a random sequence of writes of every kind —
 * Carta Porte imports (the freight invoices linking their trips) of several legs, clients,
 * vehicles and drivers, legs delivered on different days, re-imports, deliveries through both
 * operations, cancellations and credit notes of the freight invoices, received CFDIs of every cost
 * category (plates named in the concepts, discounts, USD), their cancellations and credit notes,
 * assignments to vehicles and trips moved between them (one, many as CSV and JSON, unassigned), a
 * change of the category rules, writes that fail halfway (trips, received CFDIs, assignments),
 * the worker's drain, a rebuild and a restart — every report for random periods (up to 366 days),
 * filters, litres bases and limits answers the same over HTTP (and over MCP), and
 * `unitEconomicsRollups.verify` finds every kept day equal. Then writes bypass the marks and both
 * checks must see them (the test can fail). UNIT_ECONOMICS_SEED=<n> replays a seed.
 */
import t from 'tap';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { invoiceXml, requestXml, satAcuseXml } from './helpers/cfdi-builder.ts';
import { trips } from '../lib/db/collections.ts';
import { receivedDocs } from '../lib/received/received-repo.ts';
import { receivedAssignments } from '../lib/received/received-assignments-repo.ts';
import { getFreightUnitEconomics, type UnitEconomicsInput } from '../lib/analytics/get-freight-unit-economics.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { writeMarkingAssignmentDays, writeMarkingReceivedDays } from '../lib/received/received-doc-days.ts';
import { unitEconomicsRollups } from '../lib/analytics/unit-economics-rollup-kind.ts';
import type { ServiceContext } from '../lib/context.ts';
import { connect, listen } from './helpers/mcp.ts';
import { BYPASS, comparable, seeded, tally } from './helpers/differential.ts';

const { rnd, pick, int } = seeded(t, 'UNIT_ECONOMICS_SEED', 20261129);

t.setTimeout(600_000);
const h = await startHarness(t);
await unitEconomicsRollups.rebuild(h.db); // an empty store: recorded as built, every write from here keeps the days
const ctx: ServiceContext = { db: h.db, config: h.config, now: () => new Date() };

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
const PLATES = ['XA1234B', 'XB5678C', 'XC9012D', 'XD3456E'];
const DRIVERS: [string, string][] = [
  ['HEGR751212AB3', 'RAUL HERNANDEZ GARCIA'],
  ['LOMJ800303CD4', 'JUAN LOPEZ MARTINEZ'],
  ['PERA820505EF5', 'ANA PEREZ RUIZ'],
];
const SUPPLIERS = ['PGA010101AB1', 'CAP010101AB1', 'MAN010101AB1', 'TRA920101XY3'];
const DAY = 86_400_000;
/** Day 0 is 2026-08-01 (Mexico City, UTC−6); trips and received CFDIs fall on days 0..100, all before today. */
const BASE = Date.parse('2026-08-01T00:00:00-06:00');
const wallOf = (ms: number): string => new Date(ms - 6 * 3_600_000).toISOString().slice(0, 19);
const dayOf = (n: number): string => wallOf(BASE + n * DAY).slice(0, 10);

interface LegPlan {
  km: number;
  litres: number;
  freightC: number;
  /** Delivery instant in the addenda, or null (in transit). */
  unload: number | null;
}
interface TripPlan {
  uuid: string;
  client: string;
  plate: string;
  driver: [string, string];
  load: number;
  legs: LegPlan[];
}
const plans: TripPlan[] = [];
interface Received {
  uuid: string;
  supplier: string;
}
const received: Received[] = [];
let next = 1;
const uuidOf = (n: number): string => `0417EC00-${String(n).padStart(4, '0')}-4000-8000-${String(n).padStart(12, '0')}`;
const money = (c: number): string => (c / 100).toFixed(2);
const vat16 = [{ tax: '002' as const, rate: 0.16 }];

/** A freight invoice (type I, no taxes) with a Carta Porte 3.1: one destination, product and freight line per leg, deliveries in the addenda. */
function cartaPorteXml(p: TripPlan): string {
  const subC = p.legs.reduce((s, l) => s + l.freightC, 0);
  const concepts = p.legs
    .map(
      (l, i) =>
        `<cfdi:Concepto ClaveProdServ="78101807" Cantidad="1" ClaveUnidad="E48" Descripcion="Flete tramo ${i + 1}" ValorUnitario="${money(l.freightC)}" Importe="${money(l.freightC)}" ObjetoImp="01"/>`,
    )
    .join('');
  const dests = p.legs
    .map(
      (l, i) =>
        `<cartaporte31:Ubicacion TipoUbicacion="Destino" IDUbicacion="DE00000${i + 1}" RFCRemitenteDestinatario="${p.client}" NombreRemitenteDestinatario="ESTACION ${i + 1}" FechaHoraSalidaLlegada="${wallOf(p.load + 6 * 3_600_000)}" DistanciaRecorrida="${l.km}"><cartaporte31:Domicilio Calle="Av. Uno" NumeroExterior="1" Localidad="15" Municipio="087" Estado="VER" Pais="MEX" CodigoPostal="91000"/></cartaporte31:Ubicacion>`,
    )
    .join('');
  const goods = p.legs
    .map(
      (l, i) =>
        `<cartaporte31:Mercancia BienesTransp="15101505" Descripcion="Combustible diesel" Cantidad="${l.litres}" ClaveUnidad="LTR" MaterialPeligroso="Si" CveMaterialPeligroso="1202" Embalaje="Z01" PesoEnKg="1000" ValorMercancia="1000.00" Moneda="MXN"><cartaporte31:CantidadTransporta Cantidad="${l.litres}" IDOrigen="OR000001" IDDestino="DE00000${i + 1}"/></cartaporte31:Mercancia>`,
    )
    .join('');
  const deliveries = p.legs
    .map((l, i) =>
      l.unload === null
        ? ''
        : `<fb:Entrega IDDestino="DE00000${i + 1}" BienesTransp="15101505" CantidadDescargada="${Math.round((l.litres - 7.25) * 1000) / 1000}" FechaHoraDescarga="${wallOf(l.unload)}"/>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:cartaporte31="http://www.sat.gob.mx/CartaPorte31" Version="4.0" Serie="F" Folio="${p.uuid.slice(9, 13)}" Fecha="${wallOf(p.load + 3_600_000)}" FormaPago="03" NoCertificado="00001000000500000001" SubTotal="${money(subC)}" Moneda="MXN" Total="${money(subC)}" TipoDeComprobante="I" Exportacion="01" MetodoPago="PUE" LugarExpedicion="91700" Sello="AAAA" Certificado="AAAA">
  <cfdi:Emisor Rfc="${TENANT_A}" Nombre="TRANSPORTES DEL GOLFO" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="${p.client}" Nombre="CLIENTE ${p.client.slice(0, 3)}" DomicilioFiscalReceptor="91000" RegimenFiscalReceptor="601" UsoCFDI="G03"/>
  <cfdi:Conceptos>${concepts}</cfdi:Conceptos>
  <cfdi:Complemento>
    <cartaporte31:CartaPorte Version="3.1" IdCCP="CCC${p.uuid.slice(3)}" TranspInternac="No" TotalDistRec="${(p.legs.reduce((s, l) => s + l.km * 10, 0) / 10).toFixed(1)}">
      <cartaporte31:Ubicaciones><cartaporte31:Ubicacion TipoUbicacion="Origen" IDUbicacion="OR000001" RFCRemitenteDestinatario="PRE920716IU5" NombreRemitenteDestinatario="TERMINAL VERACRUZ" FechaHoraSalidaLlegada="${wallOf(p.load)}"><cartaporte31:Domicilio Calle="Av. Marina" NumeroExterior="210" Localidad="24" Municipio="193" Estado="VER" Pais="MEX" CodigoPostal="91700"/></cartaporte31:Ubicacion>${dests}</cartaporte31:Ubicaciones>
      <cartaporte31:Mercancias PesoBrutoTotal="1000" UnidadPeso="KGM" NumTotalMercancias="${p.legs.length}">${goods}
        <cartaporte31:Autotransporte PermSCT="TPAF01" NumPermisoSCT="0X2XTXZ0X5X0X3X2X1X0"><cartaporte31:IdentificacionVehicular ConfigVehicular="T3S2" PesoBrutoVehicular="48" PlacaVM="${p.plate}" AnioModeloVM="2022"/><cartaporte31:Seguros AseguraRespCivil="SEGUROS DEL GOLFO" PolizaRespCivil="RC-55501"/></cartaporte31:Autotransporte>
      </cartaporte31:Mercancias>
      <cartaporte31:FiguraTransporte><cartaporte31:TiposFigura TipoFigura="01" RFCFigura="${p.driver[0]}" NumLicencia="VER0012345" NombreFigura="${p.driver[1]}"/></cartaporte31:FiguraTransporte>
    </cartaporte31:CartaPorte>
    <tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${p.uuid}" FechaTimbrado="${wallOf(p.load + 3_600_000)}" RfcProvCertif="SAT970701NN3" SelloCFD="AAAA" NoCertificadoSAT="00001000000509846663" SelloSAT="BBBB"/>
  </cfdi:Complemento>${deliveries ? `\n  <cfdi:Addenda><fb:Entregas xmlns:fb="urn:freight-backoffice:entregas:1">${deliveries}</fb:Entregas></cfdi:Addenda>` : ''}
</cfdi:Comprobante>`;
}

async function importFiles(files: { name: string; content: string }[]): Promise<{ rejected: number; created: number; updated: number; skipped: number }> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: { files },
  });
  if (res.statusCode !== 200) throw new Error(`import ${res.statusCode}: ${res.body}`);
  return res.json<{ summary: { rejected: number; created: number; updated: number; skipped: number } }>().summary;
}

async function importPlans(ps: TripPlan[]): Promise<{ created: number; updated: number; skipped: number }> {
  const summary = await importFiles(ps.map((p) => ({ name: `${p.uuid}.xml`, content: cartaPorteXml(p) })));
  if (summary.rejected > 0) throw new Error(`import rejected ${summary.rejected}`);
  return summary;
}

function randomLeg(load: number): LegPlan {
  const r = rnd();
  // In transit; delivered the same day, days later or weeks later (a trip delivered on several days).
  const unload = r < 0.25 ? null : r < 0.55 ? load + int(2, 10) * 3_600_000 : r < 0.85 ? load + int(1, 5) * DAY + 3_600_000 : load + int(20, 45) * DAY;
  return { km: int(20, 900) + int(0, 9) / 10, litres: int(5_000, 32_000) + int(0, 999) / 1000, freightC: int(100_000, 4_000_000), unload };
}

async function writeTrips(): Promise<string> {
  const ps: TripPlan[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    ps.push({
      uuid: uuidOf(next++),
      client: pick(CLIENTS),
      plate: pick(PLATES),
      driver: pick(DRIVERS),
      load,
      legs: Array.from({ length: int(1, 3) }, () => randomLeg(load)),
    });
  }
  await importPlans(ps);
  plans.push(...ps);
  return `${ps.length} trips`;
}

/** The same Carta Porte again with other content: another vehicle, client, driver or loading day, a leg now delivered. */
async function reimport(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  const r = rnd();
  if (r < 0.25) p.plate = pick(PLATES);
  else if (r < 0.4) p.driver = pick(DRIVERS);
  else if (r < 0.5) p.client = pick(CLIENTS);
  else if (r < 0.7) p.load += int(-20, 20) * DAY;
  else for (const l of p.legs) if (l.unload === null) l.unload = p.load + int(1, 3) * DAY;
  const summary = await importPlans([p]);
  return `re-import of ${p.uuid} (${summary.updated} updated)`;
}

/** A delivery recorded later through PUT …/delivery or POST /api/deliveries/csv. */
async function deliver(): Promise<string> {
  const stored = await trips(h.db).find({ company: TENANT_A, 'shipments.unloadDate': null }).toArray();
  if (!stored.length) return writeTrips();
  const trip = pick(stored);
  const leg = trip.shipments.find((l) => l.unloadDate === null)!;
  const offloadDate = new Date((leg.loadDate ?? BASE) + int(1, 72) * 3_600_000).toISOString();
  const products = leg.products.map((x) => ({ code: x.code, offloaded: Math.round((x.loaded - int(0, 40) / 4) * 1000) / 1000 }));
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

/** A freight invoice's cancellation (request, sometimes the SAT's acknowledgement) or a credit note on it: no change to the report, but written. */
async function writeInvoiceChange(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  if (rnd() < 0.5) {
    const files = [
      { name: 'solicitud.xml', content: requestXml({ issuer: TENANT_A, fecha: '2026-11-20T09:00:00', folios: [{ uuid: p.uuid, motive: '02' }] }) },
    ];
    if (rnd() < 0.5)
      files.push({ name: 'acuse.xml', content: satAcuseXml({ issuer: TENANT_A, fecha: '2026-11-20T09:05:00', folios: [{ uuid: p.uuid, code: '201' }] }) });
    await importFiles(files);
    return `cancellation of freight invoice ${p.uuid}`;
  }
  await importFiles([{ name: 'nc.xml', content: creditNoteXml(TENANT_A, p.client, p.uuid) }]);
  return `credit note on freight invoice ${p.uuid}`;
}

function creditNoteXml(issuer: string, receiver: string, invoiceUuid: string): string {
  const x = invoiceXml({
    issuer,
    receiver,
    uuid: uuidOf(next++),
    fecha: wallOf(BASE + int(0, 100) * DAY + 10 * 3_600_000),
    lines: [{ code: '84111506', desc: 'Bonificacion', amount: int(50, 900), transfers: vat16 }],
  });
  return x.xml
    .replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
    .replace('<cfdi:Emisor', `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${invoiceUuid}"/></cfdi:CfdiRelacionados><cfdi:Emisor`);
}

/** Concepts of every cost category (and one that is not a cost), naming a plate now and then. */
const COST_LINES: { code: string; desc: string }[] = [
  { code: '15101505', desc: 'Diesel' },
  { code: '95111603', desc: 'Caseta' },
  { code: '78181506', desc: 'Alineacion y balanceo' },
  { code: '25172504', desc: 'Llanta' },
  { code: '84131503', desc: 'Seguro de camion' },
  { code: '78101802', desc: 'Flete subcontratado' },
  { code: '80131502', desc: 'Renta de oficina' },
];

async function writeReceived(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(2, 6); i < n; i++) {
    const uuid = uuidOf(next++);
    const supplier = pick(SUPPLIERS);
    const currency = rnd() < 0.15 ? 'USD' : 'MXN';
    const lines = Array.from({ length: int(1, 2) }, () => {
      const l = pick(COST_LINES);
      const r = rnd();
      // A plate named in the text ("XA-1234-B" is the same plate), two plates, or none.
      const desc =
        r < 0.3
          ? `${l.desc} placas ${pick(PLATES)}`
          : r < 0.4
            ? `${l.desc} unidad ${pick(PLATES).replace(/^(..)(....)/, '$1-$2-')}`
            : r < 0.45
              ? `${l.desc} ${pick(PLATES)} y ${pick(PLATES)}`
              : l.desc;
      const amount = int(100, 20_000) + int(0, 99) / 100;
      return { code: l.code, desc, amount, ...(rnd() < 0.2 ? { discount: Math.round(amount * 10) / 100 } : {}), transfers: vat16 };
    });
    const x = invoiceXml({
      issuer: supplier,
      issuerName: `PROVEEDOR ${supplier.slice(0, 3)}`,
      receiver: TENANT_A,
      uuid,
      fecha: wallOf(BASE + int(0, 100) * DAY + int(0, 23) * 3_600_000),
      method: 'PUE',
      paymentForm: pick(['01', '03']),
      currency,
      ...(currency === 'USD' ? { exchangeRate: pick([17.25, 18.1]) } : {}),
      lines,
    });
    received.push({ uuid, supplier });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  await importFiles(files);
  return `${files.length} received CFDIs`;
}

/** A supplier's cancellation acknowledged by the SAT, or a supplier's credit note. */
async function writeReceivedChange(): Promise<string> {
  if (!received.length) return writeReceived();
  const inv = pick(received);
  if (rnd() < 0.6) {
    const code = pick(['201', '202']);
    await importFiles([
      { name: 'acuse.xml', content: satAcuseXml({ issuer: inv.supplier, fecha: '2026-11-20T12:00:00', folios: [{ uuid: inv.uuid, code }] }) },
    ]);
    return `received cancellation ${code} of ${inv.uuid}`;
  }
  await importFiles([{ name: 'nc.xml', content: creditNoteXml(inv.supplier, TENANT_A, inv.uuid) }]);
  return `received credit note on ${inv.uuid}`;
}

const rid = (uuid: string): string => `${TENANT_A}-RCFDI-${uuid}`;

/** Assignments moved between vehicles, trips and none: one (PUT, DELETE), many (JSON rows, CSV). */
async function writeAssignment(): Promise<string> {
  if (!received.length) return writeReceived();
  const tripIds = (
    await trips(h.db)
      .find({ company: TENANT_A }, { projection: { _id: 1 } })
      .toArray()
  ).map((x) => x._id);
  if (!tripIds.length) return writeTrips();
  const target = (): { vehicle?: string; tripId?: string } => (rnd() < 0.5 ? { vehicle: pick(PLATES) } : { tripId: pick(tripIds) });
  const r = rnd();
  const headers = { 'x-api-key': KEY_A, 'content-type': 'application/json' };
  if (r < 0.35) {
    const doc = pick(received);
    const res = await h.app.inject({ method: 'PUT', url: `/api/received-docs/${rid(doc.uuid)}/assignment`, headers, payload: JSON.stringify(target()) });
    // A vehicle on no trip yet is "not found": a write refused, nothing changes.
    if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`assignment ${res.statusCode}: ${res.body}`);
    return `assignment of ${doc.uuid}`;
  }
  if (r < 0.5) {
    const doc = pick(received);
    const res = await h.app.inject({ method: 'DELETE', url: `/api/received-docs/${rid(doc.uuid)}/assignment`, headers: { 'x-api-key': KEY_A } });
    if (res.statusCode !== 200) throw new Error(`unassignment ${res.statusCode}: ${res.body}`);
    return `unassignment of ${doc.uuid}`;
  }
  const rows = Array.from({ length: int(1, 6) }, () => ({ uuid: pick(received).uuid, ...(rnd() < 0.2 ? {} : target()) }));
  const csv = rnd() < 0.5;
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/received-assignments',
    headers: csv ? { 'x-api-key': KEY_A, 'content-type': 'text/csv' } : headers,
    payload: csv ? ['uuid,vehicle,tripId', ...rows.map((x) => `${x.uuid},${x.vehicle ?? ''},${x.tripId ?? ''}`)].join('\n') : JSON.stringify({ rows }),
  });
  if (res.statusCode !== 200) throw new Error(`assignments ${res.statusCode}: ${res.body}`);
  return `${rows.length} assignments (${csv ? 'CSV' : 'JSON'})`;
}

/** The tenant's category rules: diesel or tolls counted elsewhere, or no cost at all. */
async function writeCategoryRules(): Promise<string> {
  const rules = pick([
    [],
    [{ code: '15101505', category: 'maintenance' }],
    [{ code: '9511', category: 'other' }],
    [{ code: '80131502', category: 'insurance' }],
  ]);
  const res = await h.app.inject({
    method: 'PUT',
    url: '/api/received-category-rules',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: JSON.stringify({ rules }),
  });
  if (res.statusCode !== 200) throw new Error(`rules ${res.statusCode}: ${res.body}`);
  return `category rules ${JSON.stringify(rules)}`;
}

/** Writes that change a trip, a received CFDI or an assignment and then fail before they are acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  const r = rnd();
  const crash = (): never => {
    throw new Error('crashed after the write');
  };
  if (r < 0.4) {
    const trip = await trips(h.db).findOne({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } });
    if (!trip) return writeTrips();
    const changed = {
      ...trip,
      shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 1.5, unloadDate: l.unloadDate === null ? null : l.unloadDate + 2 * DAY })),
    };
    await writeMarkingTripDays(h.db, TENANT_A, [trip, changed], async () => {
      await trips(h.db).replaceOne({ _id: trip._id }, changed);
      crash();
    }).catch(() => undefined);
    return `failed trip write on ${trip._id}`;
  }
  if (r < 0.7) {
    const doc = await receivedDocs(h.db).findOne({ tenant: TENANT_A, category: { $ne: 'other' } });
    if (!doc) return writeReceived();
    const changed = { ...doc, subTotal: doc.subTotal + 123.45, date: doc.date - 3 * DAY };
    await writeMarkingReceivedDays(h.db, TENANT_A, [doc, changed], async () => {
      await receivedDocs(h.db).replaceOne({ _id: doc._id }, changed);
      crash();
    }).catch(() => undefined);
    return `failed received write on ${doc._id}`;
  }
  const doc = await receivedDocs(h.db).findOne({ tenant: TENANT_A });
  if (!doc) return writeReceived();
  await writeMarkingAssignmentDays(h.db, TENANT_A, [doc], async () => {
    await receivedAssignments(h.db).replaceOne(
      { _id: doc._id, tenant: TENANT_A },
      { tenant: TENANT_A, vehicle: pick(PLATES), tripId: null, assignedAt: new Date().toISOString() },
      { upsert: true },
    );
    crash();
  }).catch(() => undefined);
  return `failed assignment write on ${doc._id}`;
}

/** The rollup worker's pass over the marks, or a rebuild of the whole store (as after an upgrade). */
async function worker(): Promise<string> {
  if (rnd() < 0.7) return `drained ${await unitEconomicsRollups.drain(h.db, 50, 60_000)} marks`;
  const r = await unitEconomicsRollups.rebuild(h.db);
  if (!(await unitEconomicsRollups.ready(h.db))) throw new Error('a rebuild of every tenant leaves the store built');
  return `rebuilt ${r.units} days`;
}

async function restart(): Promise<string> {
  await h.rebuild();
  return 'restart';
}

function randomQuery(): Record<string, string> {
  const q: Record<string, string> = {};
  const r = rnd();
  if (r < 0.1) q.startDate = dayOf(int(0, 90));
  else if (r < 0.2) {
    // Long periods, cut at 366 days.
    q.startDate = dayOf(int(-300, 0));
    q.endDate = dayOf(int(60, 200));
  } else if (r < 0.25) q.endDate = dayOf(int(0, 100));
  else {
    const a = int(-10, 110);
    const b = int(-10, 110);
    q.startDate = dayOf(Math.min(a, b));
    q.endDate = dayOf(rnd() < 0.05 ? Math.min(a, b) - 1 : Math.max(a, b));
  }
  q.litresBasis = pick(['loaded', 'offloaded']);
  if (rnd() < 0.3) q.client = pick(CLIENTS);
  if (rnd() < 0.3) q.vehicle = pick(PLATES);
  if (rnd() < 0.3) q.limit = String(int(1, 5));
  return q;
}

const inputOf = (q: Record<string, string>): UnitEconomicsInput => ({
  litresBasis: q.litresBasis as 'loaded' | 'offloaded',
  limit: q.limit ? Number(q.limit) : 20,
  ...(q.startDate ? { startDate: q.startDate } : {}),
  ...(q.endDate ? { endDate: q.endDate } : {}),
  ...(q.client ? { client: q.client } : {}),
  ...(q.vehicle ? { vehicle: q.vehicle } : {}),
});

async function reports(label: string, n: number): Promise<number> {
  const diff = tally(t, label);
  for (let i = 0; i < n; i++) {
    const q = randomQuery();
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/analytics/unit-economics?${new URLSearchParams(q).toString()}`,
      headers: { 'x-api-key': KEY_A },
    });
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    diff.differs(comparable(res.json()), comparable(await getFreightUnitEconomics(ctx, TENANT_A, inputOf(q), { fromDocuments: true })), JSON.stringify(q));
  }
  return diff.count;
}

const WRITES = [
  writeTrips,
  writeTrips,
  reimport,
  reimport,
  deliver,
  deliver,
  writeInvoiceChange,
  writeReceived,
  writeReceived,
  writeReceivedChange,
  writeAssignment,
  writeAssignment,
  writeAssignment,
  writeCategoryRules,
  writeThatFails,
  worker,
  restart,
];

t.test('every unit economics report equals the documents after random writes', async (t) => {
  const done: string[] = [];
  for (const w of [writeTrips, writeTrips, writeReceived, writeReceived]) done.push(await w());
  for (let step = 0; step < 50; step++) {
    done.push(await pick(WRITES)());
    if (step % 10 === 9) t.equal(await reports(`after step ${step} (${done.slice(-3).join('; ')})`, 6), 0, `reports agree after step ${step}`);
  }
  for (const w of [
    writeTrips,
    reimport,
    deliver,
    writeInvoiceChange,
    writeReceived,
    writeReceivedChange,
    writeAssignment,
    writeCategoryRules,
    writeThatFails,
    worker,
    restart,
  ])
    done.push(await w());
  t.ok(await unitEconomicsRollups.ready(h.db), 'the report reads the kept days');
  // The writes made what the kept days must place: trips delivered on several days, costs on trips, vehicles, plates and the spread.
  const delivered = (await trips(h.db).find({ company: TENANT_A }).toArray()).filter(
    (trip) =>
      new Set(trip.shipments.flatMap((l) => (typeof l.unloadDate === 'number' ? [new Date(l.unloadDate - 6 * 3_600_000).toISOString().slice(0, 10)] : [])))
        .size > 1,
  );
  const assigned = await receivedAssignments(h.db).find({ tenant: TENANT_A }).toArray();
  t.ok(delivered.length > 0, `trips delivered on several days: ${delivered.length}`);
  t.ok(assigned.some((a) => a.tripId) && assigned.some((a) => a.vehicle), `assignments to trips and vehicles: ${assigned.length}`);
  t.ok(
    done.some((d) => d.startsWith('delivery of')) && done.some((d) => d.startsWith('deliveries of')) && done.some((d) => d.startsWith('category rules')),
    'both delivery operations and a category change ran',
  );
  const all = await getFreightUnitEconomics(ctx, TENANT_A, { litresBasis: 'loaded', limit: 20, startDate: dayOf(0), endDate: dayOf(150) });
  t.ok(
    all.totals.trips > 10 && all.costs.assigned > 0 && all.costs.spread > 0 && all.costs.categories.filter((c) => c.documents > 0).length >= 4,
    `the kept report places costs on trips, vehicles and the spread, of most categories (a rule may move one away) (${all.totals.trips} trips, ${all.costs.assigned} assigned, ${all.costs.spread} spread)`,
  );
  t.equal(await reports('final', 30), 0, `30 random reports agree after ${done.length} writes`);
  const v = await unitEconomicsRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day equals its documents (${v.checked} days)`);
  t.ok(v.checked > 30, 'the documents touch many days');

  // The MCP tool reads the same kept days.
  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
  for (const input of [
    { litresBasis: 'offloaded', startDate: dayOf(0), endDate: dayOf(100) },
    { litresBasis: 'loaded', startDate: dayOf(20), endDate: dayOf(60), vehicle: PLATES[0] },
  ] as const) {
    const r = (await client.callTool({ name: 'getFreightUnitEconomics', arguments: { ...input } })) as unknown as {
      structuredContent: Record<string, unknown>;
    };
    const mcp = comparable(r.structuredContent);
    const reference = comparable(await getFreightUnitEconomics(ctx, TENANT_A, { limit: 20, ...input }, { fromDocuments: true }));
    t.same(mcp, reference, `MCP: ${JSON.stringify(input)}`);
  }
});

t.test('writes that bypass the marks are caught: the check can fail', async (t) => {
  // A hand-made update of assignments (costs move between vehicles) and of trips' km.
  const docs = await receivedDocs(h.db)
    .find({ tenant: TENANT_A, category: { $in: ['fuel', 'tolls', 'maintenance'] }, paymentState: { $ne: 'cancelled' } })
    .limit(10)
    .toArray();
  t.ok(docs.length > 0, 'documents to move');
  for (const d of docs)
    await receivedAssignments(h.db).replaceOne(
      { _id: d._id, tenant: TENANT_A },
      { tenant: TENANT_A, vehicle: PLATES[3]!, tripId: null, assignedAt: new Date().toISOString() },
      { upsert: true },
    );
  const some = await trips(h.db)
    .find({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } })
    .limit(10)
    .toArray();
  for (const trip of some)
    await trips(h.db).updateOne({ _id: trip._id }, { $set: { shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 77 })) } });
  const v = await unitEconomicsRollups.verify(h.db, TENANT_A);
  t.ok(v.mismatched.length > 0, `verification finds the unmarked days (${v.mismatched.length})`);
  t.ok((await reports(BYPASS, 15)) > 0, 'some report differs from the documents');
  const repaired = await unitEconomicsRollups.verify(h.db, TENANT_A, { repair: true });
  t.equal(repaired.mismatched.length, v.mismatched.length, 'repair rewrites the days that differ');
  t.same((await unitEconomicsRollups.verify(h.db, TENANT_A)).mismatched, [], 'after repair every day is equal');
  t.equal(await reports('after repair', 10), 0, 'and the reports agree again');
});
