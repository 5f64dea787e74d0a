/**
 * Fleet utilization from the days kept on write (docs/rollups.md) against the same report
 * computed from every trip of the period: after a random sequence of trip writes (Carta Porte
 * imports of several legs, clients, vehicles and drivers, multi-day legs, legs in transit,
 * deliveries recorded later through both delivery operations, re-imports that change a trip, a
 * delivery dated before the loading, a write that fails halfway, a restart), every report for
 * random periods, groupings, filters and litres bases answers the same over HTTP (and once over
 * MCP), and `fleetUtilizationRollups.verify` finds every kept day equal. Then one write bypasses the marks,
 * and both checks must see it (the test can fail). FLEET_ROLLUP_SEED=<n> replays a seed.
 */
import t from 'tap';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { trips } from '../lib/db/collections.ts';
import { auditFleetUtilization, type FleetUtilizationInput } from '../lib/analytics/audit-fleet-utilization.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { fleetUtilizationRollups } from '../lib/analytics/fleet-utilization-rollup-kind.ts';
import type { ServiceContext } from '../lib/context.ts';
import { mxDateString } from '../lib/time/mexico-city.ts';
import { connect, listen } from './helpers/mcp.ts';
import { comparable, seeded, tally } from './helpers/differential.ts';

const { rnd, pick, int } = seeded(t, 'FLEET_ROLLUP_SEED', 20261128);

t.setTimeout(400_000);
const h = await startHarness(t);
await fleetUtilizationRollups.rebuild(h.db); // an empty store: recorded as built, every write from here keeps the days
const ctx: ServiceContext = { db: h.db, config: h.config, now: () => new Date() };

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
const PLATES = ['XA1234B', 'XB5678C', 'XC9012D', 'XD3456E'];
const DRIVERS: [string, string][] = [
  ['HEGR751212AB3', 'RAUL HERNANDEZ GARCIA'],
  ['LOMJ800303CD4', 'JUAN LOPEZ MARTINEZ'],
  ['PERA820505EF5', 'ANA PEREZ RUIZ'],
];
const DAY = 86_400_000;
/** Day 0 is 2026-08-01 (Mexico City, UTC−6); trips fall on days 0..100, all before today. */
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
let next = 1;
const uuidOf = (n: number): string => `F1EE7000-${String(n).padStart(4, '0')}-4000-8000-${String(n).padStart(12, '0')}`;
const money = (c: number): string => (c / 100).toFixed(2);

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

async function importPlans(ps: TripPlan[]): Promise<{ created: number; updated: number; skipped: number }> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: { files: ps.map((p) => ({ name: `${p.uuid}.xml`, content: cartaPorteXml(p) })) },
  });
  if (res.statusCode !== 200) throw new Error(`import ${res.statusCode}: ${res.body}`);
  const body = res.json<{ summary: { rejected: number; created: number; updated: number; skipped: number } }>();
  if (body.summary.rejected > 0) throw new Error(`import rejected: ${res.body.slice(0, 2000)}`);
  return body.summary;
}

function randomLeg(load: number): LegPlan {
  const r = rnd();
  // In transit; delivered the same day or days later (now and then beyond the 31 credited); or, bad data, before loading.
  const unload =
    r < 0.3
      ? null
      : r < 0.6
        ? load + int(2, 10) * 3_600_000
        : r < 0.85
          ? load + int(1, 5) * DAY + 3_600_000
          : r < 0.93
            ? load + int(32, 45) * DAY
            : load - int(1, 40) * DAY;
  return { km: int(20, 900) + int(0, 9) / 10, litres: int(5_000, 32_000) + int(0, 999) / 1000, freightC: int(100_000, 4_000_000), unload };
}

async function writeTrips(): Promise<string> {
  const ps: TripPlan[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    const p: TripPlan = {
      uuid: uuidOf(next++),
      client: pick(CLIENTS),
      plate: pick(PLATES),
      driver: pick(DRIVERS),
      load,
      legs: Array.from({ length: int(1, 3) }, () => randomLeg(load)),
    };
    ps.push(p);
  }
  await importPlans(ps);
  plans.push(...ps);
  return `${ps.length} trips`;
}

/** The same Carta Porte again with other content: another vehicle, driver or loading day, a leg's delivery now in the addenda. */
async function reimport(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  const r = rnd();
  if (r < 0.3) p.plate = pick(PLATES);
  else if (r < 0.5) p.driver = pick(DRIVERS);
  else if (r < 0.7) p.load += int(-20, 20) * DAY;
  else for (const l of p.legs) if (l.unload === null) l.unload = p.load + int(1, 3) * DAY;
  const summary = await importPlans([p]);
  return `re-import of ${p.uuid} (${summary.updated} updated)`;
}

/** A delivery recorded later through PUT …/delivery or POST /api/deliveries. */
async function deliver(): Promise<string> {
  const stored = await trips(h.db).find({ company: TENANT_A, 'shipments.unloadDate': null }).toArray();
  if (!stored.length) return writeTrips();
  const trip = pick(stored);
  const legIndex = trip.shipments.findIndex((l) => l.unloadDate === null);
  const leg = trip.shipments[legIndex]!;
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
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/deliveries/csv',
    headers: { 'x-api-key': KEY_A, 'content-type': 'text/csv' },
    payload: csv,
  });
  if (res.statusCode >= 300) throw new Error(`deliveries ${res.statusCode}: ${res.body}`);
  return `deliveries of ${leg.shipment}`;
}

/** A write that changes a stored trip and then fails before it is acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  const trip = await trips(h.db).findOne({ company: TENANT_A });
  if (!trip) return writeTrips();
  const changed = {
    ...trip,
    shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 1.5, loadDate: l.loadDate === null ? null : l.loadDate + 2 * DAY })),
  };
  await writeMarkingTripDays(h.db, TENANT_A, [trip, changed], async () => {
    await trips(h.db).replaceOne({ _id: trip._id }, changed);
    throw new Error('crashed after the write');
  }).catch(() => undefined);
  return `failed write on ${trip._id}`;
}

/** The rollup worker's pass over the marks, or a rebuild of the whole store (as after an upgrade). */
async function worker(): Promise<string> {
  if (rnd() < 0.7) return `drained ${await fleetUtilizationRollups.drain(h.db, 50, 60_000)} marks`;
  const r = await fleetUtilizationRollups.rebuild(h.db);
  if (!(await fleetUtilizationRollups.ready(h.db))) throw new Error('a rebuild of every tenant leaves the store built');
  return `rebuilt ${r.units} days`;
}

async function restart(): Promise<string> {
  await h.rebuild();
  return 'restart';
}

async function reports(label: string, n: number): Promise<number> {
  const answers = tally(t, label);
  for (let i = 0; i < n; i++) {
    const q: Record<string, string> = {};
    const r = rnd();
    if (r < 0.15) {
      // Ending today: the idle check reads every leg of its trips.
      q.startDate = dayOf(int(0, 90));
    } else if (r < 0.25) {
      q.startDate = dayOf(int(-300, 0));
      q.endDate = dayOf(int(60, 130));
    } else {
      const a = int(-10, 110);
      const b = int(-10, 110);
      q.startDate = dayOf(Math.min(a, b));
      q.endDate = dayOf(Math.max(a, b));
    }
    q.groupBy = pick(['vehicle', 'driver']);
    q.litresBasis = pick(['loaded', 'offloaded']);
    if (rnd() < 0.3) q.client = pick(CLIENTS);
    if (rnd() < 0.25) q.vehicle = pick(PLATES);
    if (rnd() < 0.25) q.driver = pick(DRIVERS)[0];
    const res = await h.app.inject({
      method: 'GET',
      url: `/api/analytics/fleet-utilization?${new URLSearchParams(q).toString()}`,
      headers: { 'x-api-key': KEY_A },
    });
    if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
    const input: FleetUtilizationInput = {
      groupBy: q.groupBy as 'vehicle' | 'driver',
      litresBasis: q.litresBasis as 'loaded' | 'offloaded',
      ...(q.startDate ? { startDate: q.startDate } : {}),
      ...(q.endDate ? { endDate: q.endDate } : {}),
      ...(q.client ? { client: q.client } : {}),
      ...(q.vehicle ? { vehicle: q.vehicle } : {}),
      ...(q.driver ? { driver: q.driver } : {}),
    };
    const kept = comparable(res.json());
    const reference = comparable(await auditFleetUtilization(ctx, TENANT_A, input, { fromDocuments: true }));
    // A period ending today is as of now: the two answers are a few milliseconds apart.
    if (!q.endDate || q.endDate >= mxDateString(Date.now())) for (const x of [kept, reference]) delete x.asOf;
    answers.differs(kept, reference, JSON.stringify(q));
  }
  return answers.count;
}

const WRITES = [writeTrips, writeTrips, writeTrips, reimport, reimport, deliver, deliver, deliver, writeThatFails, worker, restart];

t.test('every fleet utilization report equals the trips after random writes', async (t) => {
  const done: string[] = [];
  for (let step = 0; step < 40; step++) {
    done.push(await pick(WRITES)());
    if (step % 10 === 9) t.equal(await reports(`after step ${step} (${done.slice(-3).join('; ')})`, 8), 0, `reports agree after step ${step}`);
  }
  for (const w of [writeTrips, reimport, deliver, writeThatFails, worker, restart]) done.push(await w());
  // The writes made every shape of leg the kept days must count once.
  const legs = (await trips(h.db).find({ company: TENANT_A }).toArray()).flatMap((trip) => trip.shipments);
  const kinds = {
    inTransit: legs.filter((l) => l.unloadDate === null).length,
    oneDay: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate >= l.loadDate && l.unloadDate - l.loadDate < DAY / 2).length,
    multiDay: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate - l.loadDate > DAY).length,
    beyond31: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate - l.loadDate > 32 * DAY).length,
    unloadedBeforeLoading: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate < l.loadDate - DAY).length,
  };
  t.ok(
    Object.values(kinds).every((n) => n > 0),
    `every shape of leg is there: ${JSON.stringify(kinds)}`,
  );
  t.ok(
    done.some((d) => d.startsWith('delivery of')) &&
      done.some((d) => d.startsWith('deliveries of')) &&
      done.some((d) => d.startsWith('re-import') && d.endsWith('(1 updated)')),
    'both delivery operations and re-imports ran',
  );
  t.equal(await reports('final', 30), 0, `30 random reports agree after ${done.length} writes`);
  const v = await fleetUtilizationRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day equals its trips (${v.checked} days)`);
  t.ok(v.checked > 30, 'the trips touch many days');

  // The MCP tool reads the same kept days.
  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
  const input: FleetUtilizationInput = { groupBy: 'driver', litresBasis: 'offloaded', startDate: dayOf(0), endDate: dayOf(100) };
  const r = (await client.callTool({ name: 'auditFleetUtilization', arguments: { ...input } })) as unknown as {
    structuredContent: { totals: unknown; rows: unknown; idleVehicles: unknown };
  };
  const reference = JSON.parse(JSON.stringify(await auditFleetUtilization(ctx, TENANT_A, input, { fromDocuments: true }))) as typeof r.structuredContent;
  t.same(r.structuredContent.totals, reference.totals, 'MCP: totals');
  t.same(r.structuredContent.rows, reference.rows, 'MCP: rows');
  t.same(r.structuredContent.idleVehicles, reference.idleVehicles, 'MCP: idle vehicles');
});

t.test('a write that bypasses the marks is caught: the check can fail', async (t) => {
  const some = await trips(h.db).find({ company: TENANT_A }).limit(10).toArray();
  t.ok(some.length > 0, 'trips to break');
  for (const trip of some)
    await trips(h.db).updateOne({ _id: trip._id }, { $set: { shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 77 })) } });
  const v = await fleetUtilizationRollups.verify(h.db, TENANT_A);
  t.ok(v.mismatched.length > 0, `verification finds the unmarked days (${v.mismatched.length})`);
  t.ok((await reports('bypass', 15)) > 0, 'some report differs from the trips');
  const repaired = await fleetUtilizationRollups.verify(h.db, TENANT_A, { repair: true });
  t.equal(repaired.mismatched.length, v.mismatched.length, 'repair rewrites the days that differ');
  t.same((await fleetUtilizationRollups.verify(h.db, TENANT_A)).mismatched, [], 'after repair every day is equal');
  t.equal(await reports('after repair', 10), 0, 'and the reports agree again');
});
