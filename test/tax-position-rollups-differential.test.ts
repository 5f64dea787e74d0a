/**
 * The tax position, its lines and the DIOT from the months kept on write (docs/rollups.md, "Tax
 * position and DIOT") against the same answers computed from the month's documents: after a
 * random sequence of writes of every kind that moves them — issued invoices (PUE, PPD, MXN, USD),
 * their payment complements, credit notes, cancellations and SAT status answers; received CFDIs
 * from companies, personas físicas, foreign and public suppliers (fuel paid in cash or not, S01,
 * IVA and ISR retained, leasing, exempt), the suppliers' payment complements and credit notes,
 * their cancellations by acknowledgement and by the SAT's metadata, a change of the category
 * rules, writes that fail halfway on both sides, a restart — every position (HTTP and MCP),
 * random pages of random figures' lines, and the DIOT in JSON and CSV answer the same, and
 * `taxPositionRollups.verify` finds every kept month equal. Then writes bypass the marks, and both
 * checks must see them (the test can fail). A failing seed is printed: TAX_POSITION_SEED=<n> replays it.
 */
import t from 'tap';
import { KEY_A, TENANT_A } from './helpers/harness.ts';
import { invoiceXml, paymentXml, satAcuseXml, type LineSpec } from './helpers/cfdi-builder.ts';
import { comparable, compareRounds, onTheWire } from './helpers/differential.ts';
import { drainAll, getOk, importer, mcpClient, restarter, startDifferential } from './helpers/differential-service.ts';
import {
  answerCancellation,
  asCreditNote,
  cancellationFiles,
  crashAfterWrite,
  putCategoryRules,
  sequence,
  STATUS_ANSWERS,
  uuids,
} from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites, verifier } from './helpers/differential-rounds.ts';
import { financialDocs } from '../lib/db/collections.ts';
import { receivedDocs } from '../lib/received/received-repo.ts';
import { writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { writeMarkingReceivedDays } from '../lib/received/received-doc-days.ts';
import { getTaxPosition } from '../lib/tax/get-tax-position.ts';
import { listTaxPositionLines } from '../lib/tax/list-tax-position-lines.ts';
import { diotFile, getDiot } from '../lib/tax/get-diot.ts';
import { POSITION_FIGURES } from '../lib/tax/tax-position.ts';
import { taxPositionRollups } from '../lib/tax/tax-position-rollup-kind.ts';

const s = await startDifferential(t, { seedEnv: 'TAX_POSITION_SEED', seed: 20261129, timeout: 600_000, build: (db) => taxPositionRollups.rebuild(db) });
const { h, ctx, rnd, pick, int } = s;
const importFiles = importer(h);
const restart = restarter(h);

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'PEGJ800101AB2', 'XAXX010101000'];
// Companies, a persona física (13 characters: fees with ISR retained are type 03), a foreign and the public RFC.
const SUPPLIERS = ['PGA010101AB1', 'MAN010101AB1', 'TRA920101XY3', 'MAPJ800101AB2', 'XEXX010101000', 'XAXX010101000'];
const uuidOf = uuids('6F8B22E1');
// Foreign suppliers all carry XEXX010101000: each is its own DIOT row by name, one supplier whatever the case or spacing.
const FOREIGN_NAMES = ['ACME LLC', 'GLOBEX GMBH', '  acme   llc ', 'Globex GmbH'];
let foreignNames = 0;
const nameOf = (supplier: string, name: string): string => (supplier === 'XEXX010101000' ? FOREIGN_NAMES[foreignNames++ % FOREIGN_NAMES.length]! : name);
const wall = (month: number, day: number, hour: number): string => `2026-0${month}-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00`;
const vat16 = [{ tax: '002' as const, rate: 0.16 }];

interface Cfdi {
  uuid: string;
  fecha: string;
  total: number;
  paid: number;
  method: 'PUE' | 'PPD';
  currency: string;
  party: string;
  cancelled: boolean;
  payments: string[];
}
const issued: Cfdi[] = [];
const received: Cfdi[] = [];
const next = sequence();

function issuedLines(): LineSpec[] {
  const lines: LineSpec[] = [];
  for (let i = 0, n = int(1, 3); i < n; i++) {
    const amount = int(500, 90_000) + int(0, 99) / 100;
    const freight = rnd() < 0.7;
    lines.push({
      code: freight ? '78101802' : '78141500',
      desc: freight ? 'Flete' : 'Maniobras',
      amount,
      transfers: [{ tax: '002', rate: pick([0.16, 0.16, 0.08, 0]) }],
      ...(freight && rnd() < 0.7 ? { retentions: [{ tax: '002' as const, rate: 0.04 }, ...(rnd() < 0.2 ? [{ tax: '001' as const, rate: 0.0125 }] : [])] } : {}),
    });
  }
  return lines;
}

async function writeInvoices(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const uuid = uuidOf(next());
    const fecha = wall(int(1, 3), int(1, 28), int(0, 23));
    const method = pick(['PUE', 'PPD'] as const);
    const currency = rnd() < 0.2 ? 'USD' : 'MXN';
    const receiver = pick(CLIENTS);
    const x = invoiceXml({
      issuer: TENANT_A,
      receiver,
      receiverName: `CLIENTE ${receiver.slice(0, 3)}`,
      uuid,
      fecha,
      method,
      currency,
      ...(currency === 'USD' ? { exchangeRate: pick([17.25, 18.1]) } : {}),
      lines: issuedLines(),
    });
    issued.push({ uuid, fecha, total: x.total, paid: 0, method, currency, party: receiver, cancelled: false, payments: [] });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  await importFiles(files);
  return `${files.length} issued invoices`;
}

/** A payment complement: the carrier's (issued side) or a supplier's (received side). */
async function writePayment(side: 'issued' | 'received'): Promise<string> {
  const list = side === 'issued' ? issued : received;
  const open = list.filter((i) => i.method === 'PPD' && i.paid < i.total);
  if (!open.length) return side === 'issued' ? writeInvoices() : writeReceived();
  const inv = pick(open);
  const paid = Math.min(Math.round((inv.total - inv.paid) * 100) / 100, Math.round(inv.total * pick([0.3, 0.5, 1]) * 100) / 100);
  const month = Math.min(3, Number(inv.fecha.slice(6, 7)) + int(0, 1));
  const fecha = wall(month, int(1, 28), 12);
  const uuid = uuidOf(next());
  await importFiles([
    {
      name: 'pago.xml',
      content: paymentXml({
        issuer: side === 'issued' ? TENANT_A : inv.party,
        receiver: side === 'issued' ? inv.party : TENANT_A,
        uuid,
        fecha: fecha < inv.fecha ? inv.fecha : fecha,
        invoiceUuid: inv.uuid,
        currency: inv.currency,
        exchangeRate: inv.currency === 'USD' ? 18.5 : 1,
        before: Math.round((inv.total - inv.paid) * 100) / 100,
        paid,
        form: pick(['01', '03', '03']),
      }),
    },
  ]);
  inv.paid += paid;
  inv.payments.push(uuid);
  return `${side} payment ${paid} on ${inv.uuid}`;
}

function creditNoteXml(issuer: string, receiver: string, invoiceUuid: string): string {
  const x = invoiceXml({
    issuer,
    receiver,
    uuid: uuidOf(next()),
    fecha: wall(int(1, 3), int(1, 28), 10),
    lines: [{ code: '84111506', desc: 'Bonificacion', amount: int(50, 900), transfers: vat16 }],
  });
  return asCreditNote(x.xml, invoiceUuid, 'emisor');
}

async function writeCreditNote(side: 'issued' | 'received'): Promise<string> {
  const list = side === 'issued' ? issued : received;
  if (!list.length) return side === 'issued' ? writeInvoices() : writeReceived();
  const inv = pick(list);
  await importFiles([
    { name: 'nc.xml', content: side === 'issued' ? creditNoteXml(TENANT_A, inv.party, inv.uuid) : creditNoteXml(inv.party, TENANT_A, inv.uuid) },
  ]);
  return `${side} credit note on ${inv.uuid}`;
}

async function writeCancellation(): Promise<string> {
  const candidates = issued.filter((i) => !i.cancelled);
  if (!candidates.length) return writeInvoices();
  const inv = pick(candidates);
  inv.cancelled = true;
  const files = cancellationFiles(TENANT_A, inv.uuid, '2026-03-29T09:00:00', rnd() < 0.5 ? '2026-03-29T09:05:00' : undefined);
  await importFiles(files);
  return `cancellation of issued ${inv.uuid} (${files.length} files)`;
}

/** The SAT's answer: rejected or accepted (none still in process). */
const writeStatusAnswer = (): Promise<string> =>
  answerCancellation(
    h,
    s,
    issued.filter((i) => i.cancelled),
    writeCancellation,
    { answers: STATUS_ANSWERS.slice(0, 2) },
  );

function receivedLines(supplier: string): LineSpec[] {
  const amount = int(200, 40_000) + int(0, 99) / 100;
  switch (pick(['fuel', 'freight', 'fees', 'leasing', 'exempt', 'parts', 'noVat'] as const)) {
    case 'fuel':
      return [{ code: pick(['15101505', '15101514']), desc: 'Diesel', amount, transfers: vat16 }];
    case 'freight':
      return [{ code: '78101802', desc: 'Flete subcontratado', amount, transfers: vat16, retentions: [{ tax: '002', rate: 0.04 }] }];
    case 'fees':
      return supplier.length === 13
        ? [
            {
              code: '78181506',
              desc: 'Servicio',
              amount,
              transfers: vat16,
              retentions: [
                { tax: '002', rate: 0.106667 },
                { tax: '001', rate: 0.1 },
              ],
            },
          ]
        : [{ code: '78181500', desc: 'Mantenimiento', amount, transfers: vat16 }];
    case 'leasing':
      return [{ code: '80131502', desc: 'Renta de bodega', amount, transfers: vat16 }];
    case 'exempt':
      return [{ code: '84131500', desc: 'Seguro', amount, transfers: [{ tax: '002', factor: 'Exento' }] }];
    case 'noVat':
      return [{ code: '95111602', desc: 'Caseta', amount, objetoImp: '01' }];
    default:
      return [
        { code: '25172504', desc: 'Llanta', amount, transfers: [{ tax: '002', rate: pick([0.16, 0.08]) }] },
        ...(rnd() < 0.3 ? [{ code: '25172504', desc: 'Llanta', amount: int(100, 900), transfers: [{ tax: '002' as const, rate: 0.08 }] }] : []),
      ];
  }
}

async function writeReceived(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(2, 6); i < n; i++) {
    const uuid = uuidOf(next());
    const supplier = pick(SUPPLIERS);
    const fecha = wall(int(1, 3), int(1, 28), int(0, 23));
    const method = pick(['PUE', 'PPD'] as const);
    const currency = rnd() < 0.15 ? 'USD' : 'MXN';
    const x = invoiceXml({
      issuer: supplier,
      // A supplier's name differs between its CFDIs now and then: the DIOT shows the latest.
      issuerName: nameOf(supplier, `PROVEEDOR ${supplier.slice(0, 3)}${rnd() < 0.3 ? ' SA DE CV' : ''}`),
      receiver: TENANT_A,
      uuid,
      fecha,
      method,
      currency,
      ...(currency === 'USD' ? { exchangeRate: pick([17.25, 18.1]) } : {}),
      ...(method === 'PUE' ? { paymentForm: pick(['01', '03', '04']) } : {}),
      ...(rnd() < 0.15 ? { use: 'S01' } : {}),
      lines: receivedLines(supplier),
    });
    received.push({ uuid, fecha, total: x.total, paid: 0, method, currency, party: supplier, cancelled: false, payments: [] });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  await importFiles(files);
  return `${files.length} received invoices`;
}

/**
 * One received CFDI of every kind the figures and the DIOT tell apart, paid (PUE) in a random
 * month: fuel paid in cash, S01, no VAT shown, a persona física's fees with IVA and ISR retained,
 * leasing, a foreign and a public supplier, subcontracted freight; and one cancelled by the SAT.
 */
async function writeReceivedKinds(): Promise<string> {
  const specs: { supplier: string; form: string; use?: string; lines: LineSpec[] }[] = [
    { supplier: 'PGA010101AB1', form: '01', lines: [{ code: '15101505', desc: 'Diesel', amount: 4_000, transfers: vat16 }] },
    { supplier: 'PGA010101AB1', form: '03', use: 'S01', lines: [{ code: '15101505', desc: 'Diesel', amount: 1_000, transfers: vat16 }] },
    { supplier: 'CAP010101AB1', form: '03', lines: [{ code: '95111602', desc: 'Caseta', amount: 300, objetoImp: '01' }] },
    {
      supplier: 'MAPJ800101AB2',
      form: '03',
      lines: [
        {
          code: '78181506',
          desc: 'Servicio',
          amount: 2_000,
          transfers: vat16,
          retentions: [
            { tax: '002', rate: 0.106667 },
            { tax: '001', rate: 0.1 },
          ],
        },
      ],
    },
    { supplier: 'INM010101AB1', form: '03', lines: [{ code: '80131502', desc: 'Renta de bodega', amount: 10_000, transfers: vat16 }] },
    { supplier: 'XEXX010101000', form: '03', lines: [{ code: '81111500', desc: 'Software', amount: 800, transfers: vat16 }] },
    { supplier: 'XAXX010101000', form: '03', lines: [{ code: '25172504', desc: 'Llanta', amount: 1_200, transfers: vat16 }] },
    {
      supplier: 'TRA920101XY3',
      form: '03',
      lines: [{ code: '78101802', desc: 'Flete', amount: 9_000, transfers: vat16, retentions: [{ tax: '002', rate: 0.04 }] }],
    },
    // Tyres paid in cash over $2,000 (LISR art. 27 fr. III).
    { supplier: 'LLA010101AB1', form: '01', lines: [{ code: '25172504', desc: 'Llantas', amount: 5_000, transfers: vat16 }] },
    // Freight "sin efectos fiscales": its retention is owed, not credited the next month.
    {
      supplier: 'TRA920101XY3',
      form: '03',
      use: 'S01',
      lines: [{ code: '78101802', desc: 'Flete', amount: 3_000, transfers: vat16, retentions: [{ tax: '002', rate: 0.04 }] }],
    },
  ];
  const files: { name: string; content: string }[] = [];
  for (const spec of [...specs, specs[6]!]) {
    const uuid = uuidOf(next());
    const fecha = wall(int(1, 3), int(1, 28), int(0, 23));
    const x = invoiceXml({
      issuer: spec.supplier,
      issuerName: `PROVEEDOR ${spec.supplier.slice(0, 3)}`,
      receiver: TENANT_A,
      uuid,
      fecha,
      method: 'PUE',
      paymentForm: spec.form,
      ...(spec.use ? { use: spec.use } : {}),
      lines: spec.lines,
    });
    received.push({ uuid, fecha, total: x.total, paid: x.total, method: 'PUE', currency: 'MXN', party: spec.supplier, cancelled: false, payments: [] });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  const last = received[received.length - 1]!;
  last.cancelled = true;
  files.push({ name: 'acuse.xml', content: satAcuseXml({ issuer: last.party, fecha: '2026-03-20T12:00:00', folios: [{ uuid: last.uuid, code: '201' }] }) });
  await importFiles(files);
  return `${files.length - 1} received CFDIs of every kind`;
}

/** A supplier's cancellation acknowledged by the SAT: of an invoice, or of one of its payment complements. */
async function writeReceivedCancellation(): Promise<string> {
  // Mostly a CFDI settled in some month: its cancellation moves a figure.
  const settled = received.filter((i) => !i.cancelled && (i.method === 'PUE' || i.paid > 0));
  const candidates = settled.length && rnd() < 0.8 ? settled : received.filter((i) => !i.cancelled);
  if (!candidates.length) return writeReceived();
  const inv = pick(candidates);
  const target = inv.payments.length && rnd() < 0.4 ? pick(inv.payments) : inv.uuid;
  if (target === inv.uuid) inv.cancelled = true;
  const code = pick(['201', '202']);
  await importFiles([{ name: 'acuse.xml', content: satAcuseXml({ issuer: inv.party, fecha: '2026-03-20T12:00:00', folios: [{ uuid: target, code }] }) }]);
  return `received cancellation ${code} of ${target}`;
}

/** A line of the SAT's bulk-download metadata cancelling a received invoice. */
async function writeReceivedMetadata(): Promise<string> {
  const candidates = received.filter((i) => !i.cancelled);
  if (!candidates.length) return writeReceived();
  const inv = pick(candidates);
  inv.cancelled = true;
  const header =
    'Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion';
  const line = `${inv.uuid}~${inv.party}~PROVEEDOR~${TENANT_A}~TRANSPORTISTA~SAT970701NN3~2026-01-14 11:00:00~2026-01-14 11:02:00~${inv.total.toFixed(2)}~I~0~2026-03-21 12:00:00`;
  await importFiles([{ name: 'metadata.txt', content: [header, line].join('\r\n') }]);
  return `metadata cancels ${inv.uuid}`;
}

/** The tenant's category rules: diesel as fuel or not (fuel paid in cash is not creditable). */
async function writeCategoryRules(): Promise<string> {
  const rules = pick([[], [{ code: '15101505', category: 'maintenance' }], [{ code: '251725', category: 'fuel' }], [{ code: '1510', category: 'other' }]]);
  await putCategoryRules(h, rules);
  return `category rules ${JSON.stringify(rules)}`;
}

/** A write of an issued document that changes it and then fails before it is acknowledged. */
async function writeThatFails(): Promise<string> {
  const doc = await financialDocs(h.db).findOne({ company: TENANT_A });
  if (!doc) return writeInvoices();
  const changed = { ...doc, iTax1: Math.round((doc.iTax1 + 1.23) * 100) / 100, iTax2: Math.round((doc.iTax2 + 0.5) * 100) / 100 };
  await crashAfterWrite(h.db, writeMarkingDays, [doc, changed], () => financialDocs(h.db).replaceOne({ _id: doc._id }, changed));
  return `failed issued write on ${doc._id}`;
}

/** A write of a received document that changes it (its use becomes S01) and then fails. */
async function writeReceivedThatFails(): Promise<string> {
  const doc = await receivedDocs(h.db).findOne({ tenant: TENANT_A, 'settlements.0': { $exists: true } });
  if (!doc) return writeReceived();
  const changed = { ...doc, use: doc.use === 'S01' ? 'G03' : 'S01' };
  await crashAfterWrite(h.db, writeMarkingReceivedDays, [doc, changed], () => receivedDocs(h.db).replaceOne({ _id: doc._id }, changed));
  return `failed received write on ${doc._id}`;
}

/** Random positions, pages of lines and DIOTs over HTTP, each compared with the same computed from the documents; answers how many differ. */
async function answers(label: string, n: number): Promise<number> {
  return compareRounds(t, label, n, async (differs) => {
    const month = `2026-0${int(1, 4)}`;
    switch (pick(['position', 'lines', 'lines', 'diot'] as const)) {
      case 'position': {
        const limit = pick([0, 1, 3, 100]);
        const res = await getOk(h, '/api/tax/position', { month, limit: String(limit) });
        differs(
          comparable(res.json()),
          comparable(await getTaxPosition(ctx, TENANT_A, { month, limit }, { fromDocuments: true })),
          `position ${month} limit ${limit}`,
        );
        break;
      }
      case 'lines': {
        const figure = pick(POSITION_FIGURES);
        const limit = pick([1, 2, 5, 100]);
        const page = int(1, 4);
        const res = await getOk(h, '/api/tax/position/lines', { month, figure, page: String(page), limit: String(limit) });
        differs(
          res.json(),
          onTheWire(await listTaxPositionLines(ctx, TENANT_A, { month, figure, page, limit }, { fromDocuments: true })),
          `${figure} ${month} page ${page}×${limit}`,
        );
        break;
      }
      case 'diot': {
        const reference = await getDiot(ctx, TENANT_A, { month }, { fromDocuments: true });
        const res = await getOk(h, '/api/tax/diot', { month, format: 'json' });
        differs(res.json(), onTheWire(reference), `DIOT ${month} json`);
        const csv = await getOk(h, '/api/tax/diot', { month, format: 'csv' });
        differs(csv.body, diotFile(reference), `DIOT ${month} csv`);
        break;
      }
    }
  });
}

const WRITES = [
  writeInvoices,
  writeInvoices,
  () => writePayment('issued'),
  () => writePayment('issued'),
  () => writeCreditNote('issued'),
  writeCancellation,
  writeStatusAnswer,
  writeReceived,
  writeReceived,
  writeReceivedKinds,
  () => writePayment('received'),
  () => writePayment('received'),
  () => writePayment('received'),
  () => writeCreditNote('received'),
  writeReceivedCancellation,
  writeReceivedMetadata,
  writeCategoryRules,
  writeThatFails,
  writeReceivedThatFails,
  restart,
];

t.test('every position, page of lines and DIOT equals the documents after random writes of every kind', async (t) => {
  t.ok(await taxPositionRollups.ready(h.db), 'the empty store is recorded as built: the answers read the kept months');
  const done = await randomWrites(t, [await writeReceivedKinds()], { steps: 80, every: 10, answers: 8, writes: WRITES, pick, check: answers, what: 'answers' });
  await eachWrite(done, WRITES);
  t.equal(await answers('final', 40), 0, `40 random answers agree after ${done.length} writes`);
  // Every figure of every month, and every DIOT, once.
  for (const month of ['2026-01', '2026-02', '2026-03', '2026-04']) {
    for (const figure of POSITION_FIGURES) {
      const res = await h.app.inject({
        method: 'GET',
        url: `/api/tax/position/lines?month=${month}&figure=${figure}&limit=100`,
        headers: { 'x-api-key': KEY_A },
      });
      t.same(
        res.json(),
        onTheWire(await listTaxPositionLines(ctx, TENANT_A, { month, figure, page: 1, limit: 100 }, { fromDocuments: true })),
        `${month} ${figure}`,
      );
    }
  }
  const v = await taxPositionRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept month equals its documents (${v.checked} months)`);
  // What the writes produced covers every figure, every warning and every kind of DIOT row (else the comparisons prove little).
  const figures = new Set<string>();
  const warnings = new Set<string>();
  const kinds = new Set<string>();
  for (const month of ['2026-01', '2026-02', '2026-03', '2026-04']) {
    const p = await getTaxPosition(ctx, TENANT_A, { month, limit: 0 }, { fromDocuments: true });
    for (const f of p.figures) if (f.lineCount > 0) figures.add(f.figure);
    for (const figure of ['vatCollected', 'creditableVat'] as const) {
      const all = await listTaxPositionLines(ctx, TENANT_A, { month, figure, page: 1, limit: 100 }, { fromDocuments: true });
      if (all.data.some((l) => l.settlement === 'creditNote')) figures.add(`${figure} given back by a credit note`);
    }
    for (const code of Object.keys(p.warnings.byCode)) warnings.add(code);
    const rows = (await getDiot(ctx, TENANT_A, { month }, { fromDocuments: true })).rows;
    for (const r of rows) kinds.add(`${r.thirdPartyType}/${r.operationType}`).add(r.returnsAndDiscounts ? 'returns' : 'none');
    // Two foreign suppliers with the same type of operation in one month: two rows.
    const foreign = rows.filter((r) => r.thirdPartyType === '05').map((r) => r.operationType);
    if (new Set(foreign).size < foreign.length) kinds.add('05 twice');
  }
  t.same(
    [...figures].sort(),
    [...POSITION_FIGURES, 'vatCollected given back by a credit note', 'creditableVat given back by a credit note'].sort(),
    'every figure has lines in some month, and credit notes give back on both sides',
  );
  t.same([...warnings].sort(), ['CASH_OVER_LIMIT', 'DOCUMENT_CANCELLED', 'FUEL_PAID_IN_CASH', 'NO_VAT_SHOWN', 'USE_S01'], 'every warning occurs');
  for (const k of ['04/85', '04/02', '04/03', '04/06', '05/02', '05/07', '15/87', 'returns', '05 twice']) t.ok(kinds.has(k), `a DIOT row ${k}`);

  // The MCP tool reads the same kept months.
  const client = await mcpClient(t, h);
  for (const month of ['2026-02', '2026-03', '2026-04']) {
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month, limit: 5 } })) as unknown as { structuredContent: unknown };
    t.same(comparable(r.structuredContent), comparable(await getTaxPosition(ctx, TENANT_A, { month, limit: 5 }, { fromDocuments: true })), `MCP ${month}`);
  }
});

t.test('the drain settles what writes mark; a store forgotten is rebuilt with progress', async (t) => {
  await eachWrite([], [writeInvoices, writeReceived, () => writePayment('received'), () => writePayment('issued'), writeCategoryRules]);
  t.ok((await taxPositionRollups.outstanding(h.db)) > 0, 'the writes left marks');
  const passes = await drainAll(taxPositionRollups, h.db, 7);
  t.equal(await taxPositionRollups.outstanding(h.db), 0, `drained in ${passes} passes of at most 7 marks`);
  t.same((await taxPositionRollups.verify(h.db, TENANT_A)).mismatched, [], 'every kept month equals its documents');
  await taxPositionRollups.forget(h.db);
  t.notOk(await taxPositionRollups.ready(h.db), 'forgotten: the answers read the documents');
  t.equal(await answers('forgotten', 6), 0, 'and agree');
  const progress: string[] = [];
  const r = await taxPositionRollups.rebuild(h.db, { onProgress: (p) => progress.push(`${p.phase} ${p.done}/${p.total}`) });
  t.match(r, { tenants: 1, stopped: false }, `rebuilt ${r.units} months`);
  t.equal(progress.at(-1), `computing ${r.units}/${r.units}`, 'progress up to the last month');
  t.ok(await taxPositionRollups.ready(h.db), 'the store holds this version again');
  t.equal(await answers('rebuilt', 15), 0, 'the answers from the rebuilt months agree');
});

t.test('a change of the category rules alone moves the position and the DIOT', async (t) => {
  // Tyres paid in cash: creditable while tyres, fuel paid in cash once the rules call class 251725 fuel.
  const uuid = uuidOf(next());
  const x = invoiceXml({
    issuer: 'LLA010101AB1',
    issuerName: 'LLANTAS DEL NORTE',
    receiver: TENANT_A,
    uuid,
    fecha: '2026-02-11T10:00:00',
    method: 'PUE',
    paymentForm: '01',
    lines: [{ code: '25172504', desc: 'Llanta', amount: 3_000, transfers: vat16 }],
  });
  await importFiles([{ name: `${uuid}.xml`, content: x.xml }]);
  const rules = async (list: unknown[]): Promise<void> => {
    const res = await h.app.inject({
      method: 'PUT',
      url: '/api/received-category-rules',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: JSON.stringify({ rules: list }),
    });
    t.equal(res.statusCode, 200, `rules ${JSON.stringify(list)}`);
  };
  const position = async (): Promise<{ warnings: { byCode: Record<string, number> } }> => {
    const res = await h.app.inject({ method: 'GET', url: '/api/tax/position?month=2026-02&limit=100', headers: { 'x-api-key': KEY_A } });
    t.same(
      comparable(res.json()),
      comparable(await getTaxPosition(ctx, TENANT_A, { month: '2026-02', limit: 100 }, { fromDocuments: true })),
      'position equals the documents',
    );
    const diot = await h.app.inject({ method: 'GET', url: '/api/tax/diot?month=2026-02', headers: { 'x-api-key': KEY_A } });
    t.same(diot.json(), onTheWire(await getDiot(ctx, TENANT_A, { month: '2026-02' }, { fromDocuments: true })), 'DIOT equals the documents');
    return res.json();
  };
  await rules([]);
  await drainAll(taxPositionRollups, h.db, 100);
  const before = (await position()).warnings.byCode.FUEL_PAID_IN_CASH ?? 0;
  await rules([{ code: '251725', category: 'fuel' }]);
  const after = (await position()).warnings.byCode.FUEL_PAID_IN_CASH ?? 0;
  t.ok(after > before, `tyres paid in cash are fuel paid in cash now (${before} → ${after})`);
  await rules([]);
  t.equal((await position()).warnings.byCode.FUEL_PAID_IN_CASH ?? 0, before, 'and back');
});

t.test('writes that bypass the marks are caught: the check can fail', async (t) => {
  const docs = await receivedDocs(h.db)
    .find({ tenant: TENANT_A, cancellationStatus: 'none', 'settlements.0': { $exists: true } })
    .limit(10)
    .toArray();
  t.ok(docs.length > 0, 'received documents to break');
  for (const d of docs) await receivedDocs(h.db).updateOne({ _id: d._id }, { $set: { use: d.use === 'S01' ? 'G03' : 'S01' } });
  const issuedDocs = await financialDocs(h.db)
    .find({ company: TENANT_A, 'canceled.0': { $exists: false } })
    .limit(10)
    .toArray();
  for (const d of issuedDocs) await financialDocs(h.db).updateOne({ _id: d._id }, { $set: { iTax1: Math.round((d.iTax1 + 7.77) * 100) / 100 } });
  await bypassCaught(t, {
    verify: verifier(taxPositionRollups, h.db),
    check: answers,
    bypassed: 30,
    repaired: 15,
    units: 'months',
    answers: 'answers',
    sameKeys: true,
  });
});
