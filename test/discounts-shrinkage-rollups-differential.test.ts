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
 * every kept day equal; so do they after linked invoices changed with the document marks an older
 * version made (an upgraded store). Then writes that bypass the marks are caught by both checks (the test
 * can fail). DISCOUNTS_ROLLUP_SEED=<n> replays a seed.
 */
import t from 'tap';
import { TENANT_A } from './helpers/harness.ts';
import { invoiceXml, type LineSpec } from './helpers/cfdi-builder.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { auditDiscountsAndShrinkage, type DiscountsShrinkageInput } from '../lib/analytics/audit-discounts-and-shrinkage.ts';
import { rebuildDiscountsShrinkageRollups, verifyDiscountsShrinkageRollups } from '../lib/analytics/refresh-discounts-shrinkage-rollups.ts';
import { discountsShrinkageRollups } from '../lib/analytics/discounts-shrinkage-rollup-kind.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { financialDocDays, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE, writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { markDays } from '../lib/db/rollup-marks.ts';
import type { TenantSettings } from '../lib/model/tenant-settings.ts';
import { comparable, compareRounds, onTheWire } from './helpers/differential.ts';
import { getOk, importer, mcpClient, restarter, startDifferential, workerPass } from './helpers/differential-service.ts';
import {
  answerCancellation,
  asCreditNote,
  cancellationFiles,
  changeSettings,
  crashAfterWrite,
  recordDelivery,
  sequence,
  uuids,
} from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites } from './helpers/differential-rounds.ts';
import { BASE, DAY, HOUR, dayOf, wallOf } from './helpers/differential-days.ts';
import { cartaPorteXml, ONE_DRIVER, ONE_PLATE } from './helpers/carta-porte-xml.ts';

const s = await startDifferential(t, {
  seedEnv: 'DISCOUNTS_ROLLUP_SEED',
  seed: 20261129,
  timeout: 500_000,
  build: (db) => rebuildDiscountsShrinkageRollups(db),
});
const { h, ctx, rnd, pick, int } = s;
const importFiles = importer(h, { strict: true });
const restart = restarter(h);

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
const PRODUCTS = ['15101505', '15101505', '15101514'];
/** Everything falls on days 0..100 (helpers/differential-days.ts), before today. */

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
const next = sequence();
const uuidOf = uuids('D15C0000');

/** Offloaded litres: within tolerance, beyond it (up to 1.5 %), or a gain. */
/** Shapes the next delivered legs must take (the final writes: every seed makes both). */
const forced: ('beyond' | 'gain')[] = [];
const offloadedOf = (litres: number): number => {
  const shape = forced.shift();
  const r = shape === 'beyond' ? 0.5 : shape === 'gain' ? 0.9 : rnd();
  const lost = r < 0.4 ? (litres * int(0, 20)) / 10_000 : r < 0.85 ? (litres * int(20, 150)) / 10_000 : -int(1, 40);
  return Math.round((litres - lost) * 1000) / 1000;
};

/** The trip's invoice: a Carta Porte 3.1 (100 km a leg), a freight line per leg, shortage and demurrage lines, deliveries in the addenda. */
const cartaPorteOf = (p: TripPlan): string =>
  cartaPorteXml({
    uuid: p.uuid,
    client: p.client,
    load: p.load,
    issued: p.load + HOUR,
    plate: ONE_PLATE,
    driver: ONE_DRIVER,
    concepts: [
      ...p.legs.map((l, i) => ({ code: '78101802', desc: `Flete tramo ${i + 1}`, qty: '1', c: l.freightC })),
      ...p.shortage.map((s) => ({ code: '78101802', desc: 'Faltante de producto', qty: String(s.litres), c: s.c })),
      ...(p.demurrageC ? [{ code: '78141500', desc: 'Estadia', qty: '1', c: p.demurrageC }] : []),
    ],
    legs: p.legs.map((l) => ({ km: 100, product: l.product, productDesc: 'Combustible', litres: l.litres, unload: l.unload })),
  });

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
      uuid: uuidOf(next()),
      client: pick(CLIENTS),
      load,
      legs: Array.from({ length: int(1, 3) }, () => randomLeg(load)),
      shortage: rnd() < 0.4 ? Array.from({ length: int(1, 2) }, () => ({ litres: int(5, 80), c: int(10_000, 200_000) })) : [],
      demurrageC: rnd() < 0.3 ? int(50_000, 300_000) : 0,
      cancelRequested: false,
    });
  }
  await importFiles(ps.map((p) => ({ name: `${p.uuid}.xml`, content: cartaPorteOf(p) })));
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
  const summary = await importFiles([{ name: `${p.uuid}.xml`, content: cartaPorteOf(p) }]);
  return `re-import of ${p.uuid} (${summary.updated} updated)`;
}

/** A delivery recorded later through PUT …/delivery or POST /api/deliveries/csv. */
const deliver = (): Promise<string> => recordDelivery(h, s, next, { hours: 72, offloaded: offloadedOf, base: BASE, fallback: writeTrips });

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
    const uuid = uuidOf(next());
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
    uuid: uuidOf(next()),
    fecha: wallOf(BASE + int(0, 100) * DAY),
    lines: [{ code: '78101802', desc: 'Bonificacion', amount: int(50, 900) }],
  });
  await importFiles([{ name: 'nc.xml', content: asCreditNote(x.xml, inv.uuid, 'start') }]);
  return `credit note on ${inv.uuid}`;
}

/** A cancellation request, now and then acknowledged (201), of a plain invoice or a trip's own. */
async function writeCancellation(): Promise<string> {
  const candidates = [...invoices, ...plans].filter((i) => !i.cancelRequested);
  if (!candidates.length) return writeInvoices();
  const inv = pick(candidates);
  inv.cancelRequested = true;
  const files = cancellationFiles(TENANT_A, inv.uuid, '2026-11-02T09:00:00', rnd() < 0.5 ? '2026-11-02T09:05:00' : undefined);
  await importFiles(files);
  return `cancellation of ${inv.uuid} (${files.length} files)`;
}

/** The SAT's answer on a requested cancellation: rejected, accepted or in process. */
const writeStatusAnswer = (): Promise<string> =>
  answerCancellation(
    h,
    s,
    [...invoices, ...plans].filter((i) => i.cancelRequested),
    writeCancellation,
  );

/** The tolerance (default, a client's rule), the recovery mode or a price changed. */
async function writeSettings(): Promise<string> {
  const r = rnd();
  const change = (settings: TenantSettings): TenantSettings =>
    r < 0.3
      ? { ...settings, shrinkageTolerancePct: pick([0, 0.2, 0.5]) }
      : r < 0.6
        ? {
            ...settings,
            toleranceRules:
              rnd() < 0.3
                ? []
                : [
                    { client: pick(CLIENTS), pct: pick([0.3, 0.8]) },
                    { productCode: '15101514', pct: 0.4 },
                  ],
          }
        : r < 0.8
          ? { ...settings, shrinkageRecoveryMode: pick(['excess', 'all'] as const) }
          : { ...settings, pricePerLitre: { ...settings.pricePerLitre, '15101505': pick([24.5, 22.13, 26]) } };
  await changeSettings(h.db, change);
  return `settings (${r.toFixed(2)})`;
}

/** A write that changes a stored trip or invoice and then fails before it is acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  if (rnd() < 0.5) {
    const trip = await trips(h.db).findOne({ company: TENANT_A, 'shipments.unloadDate': { $ne: null } });
    if (!trip) return writeTrips();
    const changed = { ...trip, shipments: trip.shipments.map((l) => ({ ...l, products: l.products.map((p) => ({ ...p, loaded: p.loaded + 55 })) })) };
    await crashAfterWrite(h.db, writeMarkingTripDays, [trip, changed], () => trips(h.db).replaceOne({ _id: trip._id }, changed));
    return `failed write on trip ${trip._id}`;
  }
  const doc = await financialDocs(h.db).findOne({ company: TENANT_A });
  if (!doc) return writeInvoices();
  const changed = { ...doc, iDesc: Math.round((doc.iDesc + 12.34) * 100) / 100 };
  await crashAfterWrite(h.db, writeMarkingDays, [doc, changed], () => financialDocs(h.db).replaceOne({ _id: doc._id }, changed));
  return `failed write on document ${doc._id}`;
}

const worker = (): Promise<string> => workerPass(discountsShrinkageRollups, h.db, rnd() >= 0.7);

/**
 * Invoices recovering shortage also linked by a delivered trip of each other client (an invoice
 * billed for several trips: no import makes one), written through the trips' marking wrapper:
 * answers how many links were made.
 */
async function linkSharedInvoices(): Promise<number> {
  const all = await trips(h.db).find({ company: TENANT_A }).toArray();
  const delivered = all.filter((x) => x.shipments.length > 0 && x.shipments.every((l) => l.unloadDate != null));
  const linked = delivered.filter((x) => typeof x.idFinan === 'string');
  const recovering = await financialDocs(h.db)
    .find({ company: TENANT_A, _id: { $in: linked.map((x) => String(x.idFinan)) }, 'invoice.concepts.kind': 'shortage' }, { projection: { _id: 1 } })
    .limit(6)
    .toArray();
  let n = 0;
  for (const { _id: invoiceId } of recovering) {
    const clients = new Set(linked.filter((x) => x.idFinan === invoiceId).map((x) => x.client));
    for (const other of CLIENTS.filter((c) => !clients.has(c))) {
      const trip = delivered.find((x) => x.client === other && x.idFinan !== invoiceId);
      if (!trip) continue;
      const changed = { ...trip, idFinan: String(invoiceId) };
      await writeMarkingTripDays(h.db, TENANT_A, [trip, changed], () => trips(h.db).replaceOne({ _id: trip._id }, changed));
      trip.idFinan = String(invoiceId);
      n += 1;
    }
  }
  return n;
}

/**
 * Each client's filtered audit, kept and from the documents, against the client's row of the
 * unfiltered audit from the documents: every shrinkage, discount and demurrage figure the same
 * (an invoice linked by trips of several clients counts for one of them, filtered or not).
 * Answers how many figures differ.
 */
async function filteredAsRows(label: string, period: { startDate: string; endDate: string }): Promise<number> {
  const whole = onTheWire(await auditDiscountsAndShrinkage(ctx, TENANT_A, { limit: 100, ...period }, { fromDocuments: true })) as Record<
    'discounts' | 'demurrage' | 'shrinkage',
    { totals: Record<string, unknown>; byClient: { data: ({ client: string } & Record<string, unknown>)[] } }
  >;
  let differ = 0;
  for (const client of CLIENTS) {
    const kept = (await getOk(h, '/api/analytics/discounts-and-shrinkage', { ...period, client, limit: '100' })).json();
    const docs = onTheWire(await auditDiscountsAndShrinkage(ctx, TENANT_A, { limit: 100, ...period, client }, { fromDocuments: true })) as typeof kept;
    for (const part of ['discounts', 'demurrage', 'shrinkage'] as const) {
      const row = whole[part].byClient.data.find((r) => r.client === client);
      if (!row) continue;
      const { client: _c, ...figures } = row;
      for (const [source, answer] of [
        ['kept', kept],
        ['documents', docs],
      ] as const) {
        const totals = answer[part].totals;
        // The discounts' totals are the row's figures (byClientMonth aside).
        if (JSON.stringify(totals) === JSON.stringify(figures)) continue;
        differ += 1;
        t.same(totals, figures, `${label}: ${client} ${part} (${source}) = its unfiltered row`);
      }
    }
  }
  return differ;
}

async function audits(label: string, n: number): Promise<number> {
  return compareRounds(t, label, n, async (differs) => {
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
    const res = await getOk(h, '/api/analytics/discounts-and-shrinkage', q);
    const input: DiscountsShrinkageInput = {
      limit: Number(q.limit),
      ...(q.startDate ? { startDate: q.startDate } : {}),
      ...(q.endDate ? { endDate: q.endDate } : {}),
      ...(q.client ? { client: q.client } : {}),
    };
    const reference = comparable(await auditDiscountsAndShrinkage(ctx, TENANT_A, input, { fromDocuments: true }));
    differs(comparable(res.json()), reference, JSON.stringify(q));
  });
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
  const done = await randomWrites(t, [], { steps: 45, every: 15, answers: 8, writes: WRITES, pick, check: audits, what: 'audits' });
  // Then one of each (trips and invoices thrice): whatever the seed, every shape is there.
  forced.push('beyond', 'gain', 'beyond', 'gain');
  await eachWrite(done, [
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
  ]);
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
  const client = await mcpClient(t, h);
  const input = { limit: 5, startDate: dayOf(0), endDate: dayOf(100) };
  const r = (await client.callTool({ name: 'auditDiscountsAndShrinkage', arguments: { ...input } })) as unknown as {
    structuredContent: { discounts: unknown; demurrage: unknown; shrinkage: unknown };
  };
  const reference = onTheWire(await auditDiscountsAndShrinkage(ctx, TENANT_A, input, { fromDocuments: true })) as typeof r.structuredContent;
  t.same(r.structuredContent.discounts, reference.discounts, 'MCP: discounts');
  t.same(r.structuredContent.demurrage, reference.demurrage, 'MCP: demurrage');
  t.same(r.structuredContent.shrinkage, reference.shrinkage, 'MCP: shrinkage');

  // Invoices linked by trips of several clients: each is credited once; a filter by client keeps what is credited to it.
  const links = await linkSharedInvoices();
  t.ok(links > 0, `${links} trips of other clients linked to invoices recovering shortage`);
  const whole2 = { startDate: dayOf(-40), endDate: dayOf(140) };
  t.equal(await filteredAsRows('shared invoices', whole2), 0, 'every client filtered answers its unfiltered row');
  t.equal(await audits('shared invoices', 10), 0, 'the audits agree');
  const v2 = await verifyDiscountsShrinkageRollups(h.db, TENANT_A);
  t.same(v2.mismatched, [], 'every kept day equals its documents after the links');
});

t.test('document marks an older version left are settled as it meant: the linked trips recomputed', async (t) => {
  const linked = await trips(h.db)
    .find({ company: TENANT_A, idFinan: { $type: 'string' } })
    .toArray();
  const docs = await financialDocs(h.db)
    .find({ company: TENANT_A, _id: { $in: linked.map((x) => String(x.idFinan)) }, 'invoice.concepts.kind': 'shortage' })
    .limit(6)
    .toArray();
  t.ok(docs.length > 0, 'invoices recovering shortage of trips');
  for (const d of docs) {
    // As an older version wrote an invoice: its days marked under its own source, before and after; no trip day marked.
    const concepts = d.invoice.concepts.map((c) => (c.kind === 'shortage' ? { ...c, amount: c.amount + 111 } : c));
    await markDays(h.db, TENANT_A, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE, financialDocDays(d));
    await financialDocs(h.db).updateOne({ _id: d._id }, { $set: { 'invoice.concepts': concepts } });
    await markDays(h.db, TENANT_A, LEGACY_DISCOUNTS_SHRINKAGE_DOCS_SOURCE, financialDocDays(d));
  }
  t.equal(await audits('older marks', 10), 0, 'the audits agree');
  const v = await verifyDiscountsShrinkageRollups(h.db, TENANT_A);
  t.same(v.mismatched, [], 'every kept day equals its documents and trips');
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
  await bypassCaught(t, {
    verify: (opts) => verifyDiscountsShrinkageRollups(h.db, TENANT_A, opts),
    check: audits,
    bypassed: 15,
    repaired: 10,
    answers: 'audits',
    // Both units of the kind: the shrinkage days and the discounts days.
    sees: (mismatched) => mismatched.some((k) => k.startsWith('shrinkage|')) && mismatched.some((k) => k.startsWith('discounts|')),
  });
});
