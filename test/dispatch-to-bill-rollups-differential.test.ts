/**
 * Dispatch-to-bill from the days kept on write (docs/rollups.md "Dispatch-to-bill") against the
 * same audit computed from every trip of the period: after a random sequence of writes of every
 * kind that moves it — Carta Porte imports (a trip and the invoice billing it), re-imports that
 * move the loading, the invoice's date or a delivery, deliveries by PUT and by CSV, trips written
 * through the repository with no link, a legacy link, a link to an invoice imported later (the
 * trip before its invoice) or to one imported earlier (the trip after it), legs unloaded without
 * their volumes (in transit), payments, credit notes, cancellations through their states (request,
 * acknowledgement, the SAT's answers), a write that fails halfway, the worker's drain, a rebuild
 * and a restart — every audit for random periods, clients and limits answers the same over HTTP
 * (and over MCP), and `verify` finds every kept day equal; so do they after invoices re-dated with
 * the document marks an older version made (an upgraded store). Then a write bypasses the marks, and
 * both checks must see it (the test can fail). DTB_ROLLUP_SEED=<n> replays a seed.
 */
import t from 'tap';
import { TENANT_A } from './helpers/harness.ts';
import { invoiceXml, paymentXml } from './helpers/cfdi-builder.ts';
import { makeTrip, leg, diesel } from './fixtures/documents.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { auditDispatchToBill, type DispatchToBillInput } from '../lib/analytics/audit-dispatch-to-bill.ts';
import { dispatchToBillRollups } from '../lib/analytics/dispatch-to-bill-rollup-kind.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { financialDocDays, LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE, writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { markDays } from '../lib/db/rollup-marks.ts';
import { financialDocId } from '../lib/finance/ledger/facts.ts';
import type { TripDocument } from '../lib/model/trip-document.ts';
import { comparable, compareRounds } from './helpers/differential.ts';
import { getOk, importer, mcpClient, restarter, startDifferential, workerPass } from './helpers/differential-service.ts';
import { answerCancellation, asCreditNote, cancellationFiles, crashAfterWrite, recordDelivery, sequence, uuids } from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites, verifier } from './helpers/differential-rounds.ts';
import { BASE, DAY, HOUR, dayOf, wallOf } from './helpers/differential-days.ts';
import { cartaPorteXml, ONE_DRIVER, ONE_PLATE } from './helpers/carta-porte-xml.ts';
import { insertTrips } from './fixtures/stored-trips.ts';

const s = await startDifferential(t, { seedEnv: 'DTB_ROLLUP_SEED', seed: 20261129, timeout: 600_000, build: (db) => dispatchToBillRollups.rebuild(db) });
const { h, ctx, rnd, pick, int } = s;
t.ok(await dispatchToBillRollups.ready(h.db), 'the kept days are ready: the audit reads them');
const importFiles = importer(h, { strict: true });
const restart = restarter(h);

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
/** Trips fall on days 0..100 (helpers/differential-days.ts), all before today. */
const next = sequence();
const uuidOf = uuids('D7B11000');

interface LegPlan {
  litres: number;
  freightC: number;
  /** Delivery instant in the addenda, or null (in transit). */
  unload: number | null;
}
interface TripPlan {
  uuid: string;
  client: string;
  load: number;
  /** Hours after loading the invoice is issued (negative: the invoice first). */
  invoiceAfterH: number;
  legs: LegPlan[];
}
const plans: TripPlan[] = [];
/** Invoices (Carta Porte or plain) that can be cancelled, paid or credited. */
const invoices: { uuid: string; client: string; fecha: string; total: number; method: 'PUE' | 'PPD'; cancelRequested: boolean }[] = [];
/** Plain invoices a trip written through the repository names before they are imported. */
const awaited: { uuid: string; client: string; fecha: string }[] = [];

/** The trip's Carta Porte: a freight concept per leg (120 km each), invoiced `invoiceAfterH` hours after the loading, deliveries in the addenda. */
const cartaPorteOf = (p: TripPlan): string =>
  cartaPorteXml({
    uuid: p.uuid,
    client: p.client,
    load: p.load,
    issued: p.load + p.invoiceAfterH * HOUR,
    plate: ONE_PLATE,
    driver: ONE_DRIVER,
    concepts: p.legs.map((l, i) => ({ code: '78101807', desc: `Flete tramo ${i + 1}`, qty: '1', c: l.freightC })),
    legs: p.legs.map((l) => ({
      km: 120,
      product: '15101505',
      productDesc: 'Combustible diesel',
      litres: l.litres,
      unload: l.unload === null ? null : { at: l.unload, offloaded: Math.round((l.litres - 7.25) * 1000) / 1000 },
    })),
  });

function randomLeg(load: number): LegPlan {
  const r = rnd();
  // In transit; delivered hours or days later; now and then (bad data) before loading.
  const unload =
    r < 0.25 ? null : r < 0.55 ? load + int(2, 10) * 3_600_000 : r < 0.9 ? load + int(1, 12) * DAY + int(0, 23) * 3_600_000 : load - int(1, 20) * DAY;
  return { litres: int(5_000, 32_000) + int(0, 999) / 1000, freightC: int(100_000, 4_000_000), unload };
}

/** Carta Porte imports: each a trip and the invoice that bills it (issued at dispatch, hours after, or days after the delivery). */
async function writeTrips(): Promise<string> {
  const ps: TripPlan[] = [];
  for (let i = 0, n = int(1, 4); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    ps.push({
      uuid: uuidOf(next()),
      client: pick(CLIENTS),
      load,
      invoiceAfterH: pick([-2, 1, 5, 30, 200]),
      legs: Array.from({ length: int(1, 3) }, () => randomLeg(load)),
    });
  }
  await importFiles(ps.map((p) => ({ name: `${p.uuid}.xml`, content: cartaPorteOf(p) })));
  plans.push(...ps);
  for (const p of ps)
    invoices.push({
      uuid: p.uuid,
      client: p.client,
      fecha: wallOf(p.load + p.invoiceAfterH * 3_600_000),
      total: p.legs.reduce((s, l) => s + l.freightC, 0) / 100,
      method: 'PUE',
      cancelRequested: false,
    });
  return `${ps.length} trips`;
}

/** The same Carta Porte again: the loading moved (and the invoice's date with it), the invoice issued later, or a delivery now in the addenda. */
async function reimport(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  const r = rnd();
  if (r < 0.35) p.load += int(-10, 10) * DAY;
  else if (r < 0.65) p.invoiceAfterH = pick([-30, 3, 48, 500]);
  else for (const l of p.legs) if (l.unload === null) l.unload = p.load + int(1, 3) * DAY;
  const inv = invoices.find((i) => i.uuid === p.uuid);
  if (inv) inv.fecha = wallOf(p.load + p.invoiceAfterH * 3_600_000);
  const summary = await importFiles([{ name: `${p.uuid}.xml`, content: cartaPorteOf(p) }]);
  return `re-import of ${p.uuid} (${summary.updated} updated)`;
}

/** A delivery recorded later through PUT …/delivery or POST /api/deliveries/csv. */
const deliver = (via: 'put' | 'csv' = rnd() < 0.5 ? 'put' : 'csv'): Promise<string> =>
  recordDelivery(h, s, next, { hours: 200, base: BASE, via, fallback: writeTrips });

/**
 * Trips written through the repository (as a migration or a legacy loader does): no link, a
 * legacy id the tenant has no document for, a link to an invoice imported later (the trip first),
 * or to a plain invoice imported before (the trip after its invoice); now and then a leg unloaded
 * without its volumes (still in transit).
 */
async function writeRepositoryTrips(forced?: 'legacy link'): Promise<string> {
  const docs: TripDocument[] = [];
  const kinds: string[] = [];
  for (let i = 0, n = int(1, 3); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    const client = pick(CLIENTS);
    const r = forced ? 0.3 : rnd();
    let idFinan: string | null = null;
    if (r < 0.25) kinds.push('no link');
    else if (r < 0.45) {
      idFinan = `LEGACY-${next()}`;
      kinds.push('legacy link');
    } else if (r < 0.75) {
      const uuid = uuidOf(next());
      awaited.push({ uuid, client, fecha: wallOf(load + pick([-5, 4, 60]) * 3_600_000) });
      idFinan = financialDocId(TENANT_A, uuid);
      kinds.push('link before its invoice');
    } else {
      const inv = invoices.length ? pick(invoices) : undefined;
      idFinan = inv ? financialDocId(TENANT_A, inv.uuid) : null;
      kinds.push(inv ? 'link after its invoice' : 'no link');
    }
    const legs = Array.from({ length: int(1, 2) }, (_x, k) => {
      const unload = load + (k + 1) * int(3, 40) * 3_600_000;
      const inTransit = !forced && rnd() < 0.25;
      return leg({
        loadDate: load,
        unloadDate: !forced && rnd() < 0.1 ? null : unload,
        products: [diesel(20_000, inTransit ? null : 19_950)] as ReturnType<typeof diesel<number>>[],
        pricing: { billedFreight: int(1_000, 40_000) + int(0, 99) / 100, toll: pick([0, 250.5]) },
      });
    });
    docs.push(makeTrip({ tenant: TENANT_A, _id: `${TENANT_A}-REPO-${next()}`, client, idFinan, legs }));
  }
  await writeMarkingTripDays(h.db, TENANT_A, docs, async () => {
    await insertTrips(h.db, docs);
  });
  return `repository trips: ${kinds.join(', ')}`;
}

/** Plain invoices: one a trip already names (it resolves), or a new one later trips may name. */
async function writePlainInvoices(): Promise<string> {
  const wanted = awaited.length && rnd() < 0.7 ? awaited.splice(Math.floor(rnd() * awaited.length), 1)[0] : undefined;
  const uuid = wanted?.uuid ?? uuidOf(next());
  const client = wanted?.client ?? pick(CLIENTS);
  const fecha = wanted?.fecha ?? wallOf(BASE + int(0, 100) * DAY + int(0, 23) * 3_600_000);
  const method = pick(['PUE', 'PPD'] as const);
  const x = invoiceXml({
    issuer: TENANT_A,
    receiver: client,
    uuid,
    fecha,
    method,
    lines: [{ code: '78101802', desc: 'Flete', amount: int(900, 40_000), transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  await importFiles([{ name: `${uuid}.xml`, content: x.xml }]);
  invoices.push({ uuid, client, fecha, total: x.total, method, cancelRequested: false });
  return wanted ? `awaited invoice ${uuid}` : `invoice ${uuid}`;
}

function after(fecha: string, days: number): string {
  const d = new Date(`${fecha}Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 19);
}

async function writePayment(): Promise<string> {
  const open = invoices.filter((i) => i.method === 'PPD');
  if (!open.length) return writePlainInvoices();
  const inv = pick(open);
  await importFiles([
    {
      name: 'pago.xml',
      content: paymentXml({
        issuer: TENANT_A,
        receiver: inv.client,
        uuid: uuidOf(next()),
        fecha: after(inv.fecha, int(0, 30)),
        invoiceUuid: inv.uuid,
        currency: 'MXN',
        exchangeRate: 1,
        before: inv.total,
        paid: Math.round(inv.total * 50) / 100,
      }),
    },
  ]);
  inv.method = 'PUE'; // paid once
  return `payment on ${inv.uuid}`;
}

async function writeCreditNote(): Promise<string> {
  if (!invoices.length) return writePlainInvoices();
  const inv = pick(invoices);
  const uuid = uuidOf(next());
  const x = invoiceXml({
    issuer: TENANT_A,
    receiver: inv.client,
    uuid,
    fecha: after(inv.fecha, int(0, 20)),
    lines: [{ code: '78101802', desc: 'Bonificacion', amount: 100, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  await importFiles([{ name: 'nc.xml', content: asCreditNote(x.xml, inv.uuid, 'start') }]);
  return `credit note on ${inv.uuid}`;
}

/** A cancellation request of a billing invoice, now and then with the SAT's acknowledgement (201: cancelled). */
async function writeCancellation(acknowledged = rnd() < 0.5): Promise<string> {
  const all = invoices.filter((i) => !i.cancelRequested);
  // Mostly an invoice that bills a trip (a Carta Porte's).
  const billing = all.filter((i) => plans.some((p) => p.uuid === i.uuid));
  const candidates = billing.length && rnd() < 0.8 ? billing : all;
  if (!candidates.length) return writeTrips();
  const inv = pick(candidates);
  inv.cancelRequested = true;
  const fecha = after(inv.fecha, int(0, 20));
  const files = cancellationFiles(TENANT_A, inv.uuid, fecha, acknowledged ? fecha : undefined);
  await importFiles(files);
  return `cancellation of ${inv.uuid} (${files.length} files)`;
}

/** The SAT's answer on a requested cancellation: rejected, accepted or still in process. */
const writeStatusAnswer = (): Promise<string> =>
  answerCancellation(
    h,
    s,
    invoices.filter((i) => i.cancelRequested),
    writeCancellation,
    { byId: true },
  );

/** Writes that change a stored invoice's date, or a trip's delivery, and then fail before they are acknowledged. */
async function writeThatFails(): Promise<string> {
  if (rnd() < 0.5) {
    const doc = await financialDocs(h.db).findOne({ company: TENANT_A });
    if (!doc) return writeTrips();
    const changed = { ...doc, date: doc.date + 3 * DAY };
    await crashAfterWrite(h.db, writeMarkingDays, [doc, changed], () => financialDocs(h.db).replaceOne({ _id: doc._id }, changed));
    return `failed invoice write on ${doc._id}`;
  }
  const trip = await trips(h.db).findOne({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } });
  if (!trip) return writeTrips();
  const changed = { ...trip, shipments: trip.shipments.map((l) => ({ ...l, unloadDate: l.unloadDate === null ? null : l.unloadDate + 2 * DAY })) };
  await crashAfterWrite(h.db, writeMarkingTripDays, [trip, changed], () => trips(h.db).replaceOne({ _id: trip._id }, changed));
  return `failed trip write on ${trip._id}`;
}

const worker = (rebuild = rnd() < 0.2): Promise<string> => workerPass(dispatchToBillRollups, h.db, rebuild);

function randomQuery(): Record<string, string> {
  const q: Record<string, string> = {};
  const r = rnd();
  if (r < 0.1) {
    // The default period (90 days to today).
  } else if (r < 0.2) q.startDate = dayOf(int(0, 90));
  else if (r < 0.3) {
    q.startDate = dayOf(int(-300, 0));
    q.endDate = dayOf(int(60, 130)); // now and then longer than 366 days: cut
  } else if (r < 0.35) {
    q.startDate = dayOf(int(50, 60));
    q.endDate = dayOf(int(10, 40)); // inverted: an empty period
  } else {
    const a = int(-5, 110);
    const b = int(-5, 110);
    q.startDate = dayOf(Math.min(a, b));
    q.endDate = dayOf(Math.max(a, b));
  }
  if (rnd() < 0.35) q.client = pick(CLIENTS);
  if (rnd() < 0.7) q.limit = String(pick([1, 2, 5, 100]));
  return q;
}

const inputOf = (q: Record<string, string>): DispatchToBillInput => ({
  limit: q.limit ? Number(q.limit) : 20,
  ...(q.startDate ? { startDate: q.startDate } : {}),
  ...(q.endDate ? { endDate: q.endDate } : {}),
  ...(q.client ? { client: q.client } : {}),
});

async function reports(label: string, n: number): Promise<number> {
  return compareRounds(t, label, n, async (differs) => {
    const q = randomQuery();
    const res = await getOk(h, '/api/analytics/dispatch-to-bill', q);
    const answer = res.json<{ computedAt: string }>();
    // The reference at the instant the answer was computed (the days since each delivery, a period ending today).
    const reference = await auditDispatchToBill({ ...ctx, now: () => new Date(answer.computedAt) }, TENANT_A, inputOf(q), { fromDocuments: true });
    differs(comparable(answer), comparable(reference), JSON.stringify(q));
  });
}

const WRITES = [
  writeTrips,
  writeTrips,
  writeTrips,
  reimport,
  reimport,
  deliver,
  deliver,
  writeRepositoryTrips,
  writeRepositoryTrips,
  writePlainInvoices,
  writePlainInvoices,
  writePayment,
  writeCreditNote,
  writeCancellation,
  writeCancellation,
  writeStatusAnswer,
  writeThatFails,
  worker,
  restart,
];

t.test('every dispatch-to-bill audit equals the trips after random writes', async (t) => {
  const done = await randomWrites(t, [], { steps: 60, every: 15, answers: 8, writes: WRITES, pick, check: reports, what: 'audits' });
  await eachWrite(done, [
    () => writeRepositoryTrips('legacy link'),
    writePlainInvoices,
    writeTrips,
    () => writeCancellation(true),
    writeStatusAnswer,
    () => deliver('put'),
    () => deliver('csv'),
    reimport,
    writeThatFails,
    () => worker(false), // a rebuild here would hide a write whose marks missed: the drain only
    restart,
  ]);
  t.comment(done.join('\n'));
  // The writes made every link state and shape the kept days must count.
  const reference = await auditDispatchToBill(ctx, TENANT_A, { limit: 100, startDate: dayOf(-30), endDate: dayOf(140) }, { fromDocuments: true });
  const s = reference.summary;
  t.ok(
    s.billedTrips > 0 && s.preBilledCount > 0 && s.unbilledNoLink > 0 && s.unbilledCancelledLink > 0 && s.unresolvedLinks.count > 0 && s.notDeliveredCount > 0,
    `every link state is there: ${JSON.stringify(s)}`,
  );
  t.ok(
    done.some((d) => d.startsWith('delivery of')) &&
      done.some((d) => d.startsWith('deliveries of')) &&
      done.some((d) => d.startsWith('re-import') && d.endsWith('(1 updated)')) &&
      done.some((d) => d.startsWith('awaited invoice')) &&
      done.some((d) => d.includes('link after its invoice')),
    'both delivery operations, re-imports and invoices arriving before and after their trips ran',
  );
  t.equal(await reports('final', 30), 0, `30 random audits agree after ${done.length} writes`);
  const v = await dispatchToBillRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day equals its trips (${v.checked} days)`);
  t.ok(v.checked > 30, 'the trips touch many days');

  // The MCP tool reads the same kept days.
  const client = await mcpClient(t, h);
  for (const input of [
    { limit: 5, startDate: dayOf(0), endDate: dayOf(100) },
    { limit: 100, startDate: dayOf(20), endDate: dayOf(60), client: CLIENTS[0] as string },
  ]) {
    const r = (await client.callTool({ name: 'auditDispatchToBill', arguments: { ...input } })) as unknown as { structuredContent: { computedAt: string } };
    const ref = await auditDispatchToBill({ ...ctx, now: () => new Date(r.structuredContent.computedAt) }, TENANT_A, input, { fromDocuments: true });
    t.same(comparable(r.structuredContent), comparable(ref), `MCP: ${JSON.stringify(input)}`);
  }
});

t.test('a trip listed as unbilled leaves the list once it is billed: its kept entry is removed', async (t) => {
  const inv = invoices.find((i) => !i.cancelRequested);
  if (!inv) throw new Error('the random writes imported no invoice');
  const load = BASE + 30 * DAY + 9 * HOUR;
  const unloadDay = dayOf(31);
  const trip = makeTrip({
    tenant: TENANT_A,
    _id: `${TENANT_A}-BILLED-LATER`,
    client: inv.client,
    idFinan: null,
    legs: [leg({ loadDate: load, unloadDate: load + 26 * HOUR, products: [diesel(20_000, 19_950)] as ReturnType<typeof diesel<number>>[] })],
  });
  await writeMarkingTripDays(h.db, TENANT_A, [trip], () => insertTrips(h.db, [trip]));
  await worker(false);
  const q = { startDate: unloadDay, endDate: unloadDay, client: inv.client, limit: '100' };
  const listed = async (): Promise<boolean> => {
    const res = await getOk(h, '/api/analytics/dispatch-to-bill', q);
    const answer = res.json<{ computedAt: string; unbilledTrips: { data: { tripId: string }[] } }>();
    const reference = await auditDispatchToBill({ ...ctx, now: () => new Date(answer.computedAt) }, TENANT_A, inputOf(q), { fromDocuments: true });
    t.same(comparable(answer), comparable(reference), 'the audit equals the trips');
    return answer.unbilledTrips.data.some((u) => u.tripId === trip._id);
  };
  t.equal(await listed(), true, 'delivered without a link: listed as unbilled');
  const billed = { ...trip, idFinan: financialDocId(TENANT_A, inv.uuid) };
  await writeMarkingTripDays(h.db, TENANT_A, [trip, billed], async () => {
    await trips(h.db).deleteOne({ _id: trip._id });
    await insertTrips(h.db, [billed]);
  });
  await worker(false);
  t.equal(await listed(), false, 'linked to its invoice: no longer listed');
  const v = await dispatchToBillRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], 'every kept day equals its trips');
});

t.test('document marks an older version left are settled as it meant: the linked trips recomputed', async (t) => {
  const linked = await trips(h.db)
    .find({ company: TENANT_A, idFinan: { $type: 'string' } })
    .limit(8)
    .toArray();
  const docs = await financialDocs(h.db)
    .find({ company: TENANT_A, _id: { $in: linked.map((x) => String(x.idFinan)) } })
    .toArray();
  t.ok(docs.length > 0, 'invoices billing trips');
  for (const d of docs) {
    // As an older version wrote an invoice: its days marked under its own source, before and after; no trip day marked.
    const moved = d.date + 3 * DAY;
    const days = [...financialDocDays(d), ...financialDocDays({ ...d, date: moved })];
    await markDays(h.db, TENANT_A, LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE, days);
    await financialDocs(h.db).updateOne({ _id: d._id }, { $set: { date: moved } });
    await markDays(h.db, TENANT_A, LEGACY_DISPATCH_TO_BILL_DOCS_SOURCE, days);
  }
  t.equal(await reports('older marks', 10), 0, 'the audits agree');
  const v = await dispatchToBillRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], 'every kept day equals its trips');
});

t.test('a write that bypasses the marks is caught: the check can fail', async (t) => {
  // Invoices re-dated and trips repriced behind the repositories' back.
  const docs = await financialDocs(h.db).find({ company: TENANT_A }).limit(10).toArray();
  for (const d of docs) await financialDocs(h.db).updateOne({ _id: d._id }, { $set: { date: d.date + 5 * DAY } });
  const some = await trips(h.db).find({ company: TENANT_A }).limit(10).toArray();
  for (const trip of some)
    await trips(h.db).updateOne(
      { _id: trip._id },
      { $set: { shipments: trip.shipments.map((l) => ({ ...l, pricing: { ...l.pricing, totalFreight: l.pricing.totalFreight + 77 } })) } },
    );
  await bypassCaught(t, { verify: verifier(dispatchToBillRollups, h.db), check: reports, bypassed: 15, repaired: 10, answers: 'audits', from: 'trips' });
});
