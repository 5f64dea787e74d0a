/**
 * Unit economics (GET /api/analytics/unit-economics, MCP getFreightUnitEconomics) from the days
 * kept on write (docs/rollups.md "Unit economics") against the same report computed from every
 * trip and received CFDI of the period: after a random sequence of writes of every kind —
 * Carta Porte imports (the freight invoices linking their trips) of several legs, clients,
 * vehicles and drivers, legs delivered on different days, re-imports, deliveries through both
 * operations, cancellations and credit notes of the freight invoices, received CFDIs of every cost
 * category (plates named in the concepts, discounts, USD), their cancellations and credit notes,
 * trips whose vehicle carries another plate (one of its own, or another vehicle's: a vehicle with
 * several plates in a period, a plate two vehicles carried),
 * assignments to vehicles and trips moved between them (one, many as CSV and JSON, unassigned), a
 * change of the category rules, writes that fail halfway (trips, received CFDIs, assignments),
 * the worker's drain, a rebuild and a restart — every report for random periods (up to 366 days),
 * filters, litres bases and limits answers the same over HTTP (and over MCP), and
 * `unitEconomicsRollups.verify` finds every kept day equal. Then writes bypass the marks and both
 * checks must see them (the test can fail). UNIT_ECONOMICS_SEED=<n> replays a seed.
 */
import t from 'tap';
import { KEY_A, TENANT_A } from './helpers/harness.ts';
import { invoiceXml, satAcuseXml } from './helpers/cfdi-builder.ts';
import { trips } from '../lib/db/collections.ts';
import { receivedDocs } from '../lib/received/received-repo.ts';
import { receivedAssignments } from '../lib/received/received-assignments-repo.ts';
import { getFreightUnitEconomics, type UnitEconomicsInput } from '../lib/analytics/get-freight-unit-economics.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { writeMarkingAssignmentDays, writeMarkingReceivedDays } from '../lib/received/received-doc-days.ts';
import { unitEconomicsRollups } from '../lib/analytics/unit-economics-rollup-kind.ts';
import { comparable, compareRounds, mulberry32 } from './helpers/differential.ts';
import { getOk, importer, mcpClient, restarter, startDifferential, workerPass } from './helpers/differential-service.ts';
import { asCreditNote, cancellationFiles, crashAfterWrite, putCategoryRules, recordDelivery, sequence, uuids } from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites, verifier, type WriteStep } from './helpers/differential-rounds.ts';
import { BASE, DAY, dayOf, wallOf } from './helpers/differential-days.ts';
import { plannedTripXml, type PlannedLeg, type PlannedTrip } from './helpers/carta-porte-xml.ts';

const s = await startDifferential(t, { seedEnv: 'UNIT_ECONOMICS_SEED', seed: 20261129, timeout: 600_000, build: (db) => unitEconomicsRollups.rebuild(db) });
const { h, ctx, rnd, pick, int } = s;
const importFiles = importer(h);
const restart = restarter(h);

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
const PLATES = ['XA1234B', 'XB5678C', 'XC9012D', 'XD3456E'];
const DRIVERS: [string, string][] = [
  ['HEGR751212AB3', 'RAUL HERNANDEZ GARCIA'],
  ['LOMJ800303CD4', 'JUAN LOPEZ MARTINEZ'],
  ['PERA820505EF5', 'ANA PEREZ RUIZ'],
  // The same driver with the name written another way: one driver, two labels (the report shows the greatest).
  ['HEGR751212AB3', 'RAUL HERNANDEZ G.'],
];
const SUPPLIERS = ['PGA010101AB1', 'CAP010101AB1', 'MAN010101AB1', 'TRA920101XY3'];
/** Trips and received CFDIs fall on days 0..100 (helpers/differential-days.ts), all before today. */
const plans: PlannedTrip[] = [];
interface Received {
  uuid: string;
  supplier: string;
}
const received: Received[] = [];
const next = sequence();
const uuidOf = uuids('0417EC00');
const vat16 = [{ tax: '002' as const, rate: 0.16 }];

async function importPlans(ps: PlannedTrip[]): Promise<{ created: number; updated: number; skipped: number }> {
  const summary = await importFiles(ps.map((p) => ({ name: `${p.uuid}.xml`, content: plannedTripXml(p) })));
  if (summary.rejected > 0) throw new Error(`import rejected ${summary.rejected}`);
  return summary;
}

function randomLeg(load: number): PlannedLeg {
  const r = rnd();
  // In transit; delivered the same day, days later or weeks later (a trip delivered on several days).
  const unload = r < 0.25 ? null : r < 0.55 ? load + int(2, 10) * 3_600_000 : r < 0.85 ? load + int(1, 5) * DAY + 3_600_000 : load + int(20, 45) * DAY;
  return { km: int(20, 900) + int(0, 9) / 10, litres: int(5_000, 32_000) + int(0, 999) / 1000, freightC: int(100_000, 4_000_000), unload };
}

async function writeTrips(): Promise<string> {
  const ps: PlannedTrip[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    ps.push({
      uuid: uuidOf(next()),
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
const deliver = (): Promise<string> => recordDelivery(h, s, next, { hours: 72, base: BASE, fallback: writeTrips });

/** A freight invoice's cancellation (request, sometimes the SAT's acknowledgement) or a credit note on it: no change to the report, but written. */
async function writeInvoiceChange(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  if (rnd() < 0.5) {
    await importFiles(cancellationFiles(TENANT_A, p.uuid, '2026-11-20T09:00:00', rnd() < 0.5 ? '2026-11-20T09:05:00' : undefined));
    return `cancellation of freight invoice ${p.uuid}`;
  }
  await importFiles([{ name: 'nc.xml', content: creditNoteXml(TENANT_A, p.client, p.uuid) }]);
  return `credit note on freight invoice ${p.uuid}`;
}

function creditNoteXml(issuer: string, receiver: string, invoiceUuid: string): string {
  const x = invoiceXml({
    issuer,
    receiver,
    uuid: uuidOf(next()),
    fecha: wallOf(BASE + int(0, 100) * DAY + 10 * 3_600_000),
    lines: [{ code: '84111506', desc: 'Bonificacion', amount: int(50, 900), transfers: vat16 }],
  });
  return asCreditNote(x.xml, invoiceUuid, 'emisor');
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
    const uuid = uuidOf(next());
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
  await putCategoryRules(h, rules);
  return `category rules ${JSON.stringify(rules)}`;
}

/** Writes that change a trip, a received CFDI or an assignment and then fail before they are acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  const r = rnd();
  if (r < 0.4) {
    const trip = await trips(h.db).findOne({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } });
    if (!trip) return writeTrips();
    const changed = {
      ...trip,
      shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 1.5, unloadDate: l.unloadDate === null ? null : l.unloadDate + 2 * DAY })),
    };
    await crashAfterWrite(h.db, writeMarkingTripDays, [trip, changed], () => trips(h.db).replaceOne({ _id: trip._id }, changed));
    return `failed trip write on ${trip._id}`;
  }
  if (r < 0.7) {
    const doc = await receivedDocs(h.db).findOne({ tenant: TENANT_A, category: { $ne: 'other' } });
    if (!doc) return writeReceived();
    const changed = { ...doc, subTotal: doc.subTotal + 123.45, date: doc.date - 3 * DAY };
    await crashAfterWrite(h.db, writeMarkingReceivedDays, [doc, changed], () => receivedDocs(h.db).replaceOne({ _id: doc._id }, changed));
    return `failed received write on ${doc._id}`;
  }
  const doc = await receivedDocs(h.db).findOne({ tenant: TENANT_A });
  if (!doc) return writeReceived();
  await crashAfterWrite(h.db, writeMarkingAssignmentDays, [doc], () =>
    receivedAssignments(h.db).replaceOne(
      { _id: doc._id, tenant: TENANT_A },
      { tenant: TENANT_A, vehicle: pick(PLATES), tripId: null, assignedAt: new Date().toISOString() },
      { upsert: true },
    ),
  );
  return `failed assignment write on ${doc._id}`;
}

/**
 * Plates a trip's vehicle carries besides its id (an import sets the plate as the id): drawn from a
 * generator of their own, so the test's sequence of writes and reports is the one it always was.
 */
const side = mulberry32(s.seed ^ 0x5a17e5);
const sidePick = <T>(xs: readonly T[]): T => xs[Math.floor(side() * xs.length)] as T;
/** A plate no import gives (a vehicle's second plate of its own), and one named in a received CFDI of its own. */
const EXTRA_PLATE = 'XE7890F';
const nextSide = sequence();
const sideUuidOf = uuids('0417EC01');

/**
 * A delivered trip's vehicle now carries another plate (its id stays): `own`, a plate only it carries
 * besides its usual one (named by a received CFDI); `shared`, another vehicle's plate (that plate
 * then names neither). Marked as a trip write.
 */
async function replate(kind: 'own' | 'shared' = side() < 0.5 ? 'own' : 'shared'): Promise<string> {
  const delivered = await trips(h.db)
    .find({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } })
    .sort({ _id: 1 })
    .toArray();
  if (!delivered.length) return 'no trip to re-plate';
  const trip = sidePick(delivered);
  const plate = kind === 'own' ? EXTRA_PLATE : sidePick(PLATES.filter((p) => p !== trip.vehicle.id));
  const changed = { ...trip, vehicle: { ...trip.vehicle, plate } };
  await writeMarkingTripDays(h.db, TENANT_A, [trip, changed], () => trips(h.db).replaceOne({ _id: trip._id }, changed));
  if (kind === 'own') {
    const x = invoiceXml({
      issuer: sidePick(SUPPLIERS),
      receiver: TENANT_A,
      uuid: sideUuidOf(nextSide()),
      fecha: wallOf(BASE + Math.floor(side() * 101) * DAY + 12 * 3_600_000),
      method: 'PUE',
      lines: [
        {
          code: sidePick(COST_LINES.slice(0, 4)).code,
          desc: `Servicio unidad ${sidePick([EXTRA_PLATE, 'XE-7890-F'])}`,
          amount: 1_000 + Math.floor(side() * 5_000),
          transfers: vat16,
        },
      ],
    });
    await importFiles([{ name: 'own-plate.xml', content: x.xml }]);
  }
  return `re-plate of ${trip._id} (vehicle ${trip.vehicle.id}) as ${plate}`;
}

/**
 * A supplier's credit note on a received cost invoice, dated another day (a negative cost kept on its
 * own day, placed as its invoice; `day`: after every received CFDI's issue day, so only the note
 * marks it), then the invoice assigned to a vehicle: the note's day moves too.
 */
async function noteThenReassign(day = Math.floor(side() * 101)): Promise<string> {
  const docs = await receivedDocs(h.db)
    .find({ tenant: TENANT_A, category: { $ne: 'other' }, paymentState: { $ne: 'cancelled' } })
    .sort({ _id: 1 })
    .toArray();
  if (!docs.length) return 'no received invoice to credit';
  const inv = sidePick(docs);
  const x = invoiceXml({
    issuer: inv.supplier.rfc,
    receiver: TENANT_A,
    uuid: sideUuidOf(nextSide()),
    fecha: wallOf(BASE + day * DAY + 11 * 3_600_000),
    lines: [{ code: '84111506', desc: 'Bonificacion', amount: 100 + Math.floor(side() * 900), transfers: vat16 }],
  });
  await importFiles([{ name: 'nc-side.xml', content: asCreditNote(x.xml, inv.uuid, 'emisor') }]);
  // The note's day kept before the assignment moves it (else the import's mark, still pending, would hide a missed one).
  await workerPass(unitEconomicsRollups, h.db, false);
  const vehicle = sidePick(PLATES);
  const res = await h.app.inject({
    method: 'PUT',
    url: `/api/received-docs/${inv._id}/assignment`,
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: JSON.stringify({ vehicle }),
  });
  if (res.statusCode !== 200 && res.statusCode !== 404) throw new Error(`assignment ${res.statusCode}: ${res.body}`);
  return `credit note on ${inv.uuid}, then assigned to ${vehicle} (${res.statusCode})`;
}

/** A write, then now and then (the side generator's draw) a re-plate. */
const alsoReplating =
  (w: WriteStep): WriteStep =>
  async () => {
    const did = await w();
    return side() < 0.15 ? `${did}; ${await replate()}` : did;
  };

/** The rollup worker's pass over the marks, or a rebuild of the whole store (as after an upgrade). */
const worker = (): Promise<string> => workerPass(unitEconomicsRollups, h.db, rnd() >= 0.7);

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
  return compareRounds(t, label, n, async (differs) => {
    const q = randomQuery();
    const res = await getOk(h, '/api/analytics/unit-economics', q);
    differs(comparable(res.json()), comparable(await getFreightUnitEconomics(ctx, TENANT_A, inputOf(q), { fromDocuments: true })), JSON.stringify(q));
  });
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
].map(alsoReplating);

t.test('every unit economics report equals the documents after random writes', async (t) => {
  const done = await eachWrite([], [writeTrips, writeTrips, writeReceived, writeReceived]);
  await randomWrites(t, done, { steps: 50, every: 10, answers: 6, writes: WRITES, pick, check: reports, what: 'reports' });
  await eachWrite(done, [
    writeTrips,
    reimport,
    deliver,
    writeInvoiceChange,
    writeReceived,
    writeReceivedChange,
    writeAssignment,
    writeCategoryRules,
    writeThatFails,
    () => replate('own'),
    () => replate('shared'),
    () => noteThenReassign(),
    () => noteThenReassign(102),
    // A rebuild marks every day the documents touch: a note's own day too.
    () => workerPass(unitEconomicsRollups, h.db, true),
    worker,
    restart,
  ]);
  t.ok(await unitEconomicsRollups.ready(h.db), 'the report reads the kept days');
  // Vehicles that carried several plates, and a plate two vehicles carried, among the delivered trips.
  const platesOf = new Map<string, Set<string>>();
  const vehiclesOf = new Map<string, Set<string>>();
  for (const trip of await trips(h.db)
    .find({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } })
    .toArray()) {
    platesOf.set(trip.vehicle.id, (platesOf.get(trip.vehicle.id) ?? new Set()).add(trip.vehicle.plate));
    vehiclesOf.set(trip.vehicle.plate, (vehiclesOf.get(trip.vehicle.plate) ?? new Set()).add(trip.vehicle.id));
  }
  t.ok(
    [...platesOf.values()].some((p) => p.size > 1) && [...vehiclesOf.values()].some((v) => v.size > 1),
    'a vehicle with several plates and a plate two vehicles carried',
  );
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
  const client = await mcpClient(t, h);
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
  await bypassCaught(t, { verify: verifier(unitEconomicsRollups, h.db), check: reports, bypassed: 15, repaired: 10 });
});
