/**
 * The tax summary from the totals kept on write (docs/rollups.md) against the same summary
 * reconciled from every document of the period: after a random sequence of writes of every
 * kind that moves it (invoices in MXN and USD with right and wrong taxes, payment complements,
 * credit notes, cancellation requests and acknowledgements, SAT status answers, a settings
 * change, a write that fails halfway, a restart), every summary for random periods, clients,
 * finding kinds and limits answers the same over HTTP, and `taxSummaryRollups.verify` finds every kept
 * day equal. Then one write bypasses the marks, and both checks must see it (the test can fail).
 * A failing seed is printed: TAX_ROLLUP_SEED=<n> replays it.
 */
import t from 'tap';
import { TENANT_A } from './helpers/harness.ts';
import { invoiceXml, paymentXml, type LineSpec } from './helpers/cfdi-builder.ts';
import { financialDocs } from '../lib/db/collections.ts';
import { getTaxSummary, type TaxSummaryInput } from '../lib/tax/get-tax-summary.ts';
import { taxSummaryRollups } from '../lib/tax/tax-summary-rollup-kind.ts';
import { writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { comparable, compareRounds } from './helpers/differential.ts';
import { getOk, importer, mcpClient, restarter, startDifferential } from './helpers/differential-service.ts';
import { answerCancellation, asCreditNote, cancellationFiles, changeSettings, crashAfterWrite, sequence, uuids } from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites, verifier } from './helpers/differential-rounds.ts';

// Forty writes and some eighty summaries, each compared with the documents: minutes on a loaded machine.
const s = await startDifferential(t, { seedEnv: 'TAX_ROLLUP_SEED', seed: 20261128, timeout: 400_000, build: (db) => taxSummaryRollups.rebuild(db) });
const { h, ctx, rnd, pick, int } = s;
const importFiles = importer(h);
const restart = restarter(h);

// Companies (12 characters: retention due), a persona física (13), the generic public RFC.
const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'PEGJ800101AB2', 'XAXX010101000'];
const uuidOf = uuids('5E7A11D0');
const wall = (month: number, day: number, hour: number): string => `2026-0${month}-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00`;

interface Issued {
  uuid: string;
  fecha: string;
  total: number;
  paid: number;
  method: 'PUE' | 'PPD';
  currency: string;
  receiver: string;
  cancelRequested: boolean;
}
const issued: Issued[] = [];
const next = sequence();

function randomLines(): LineSpec[] {
  const lines: LineSpec[] = [];
  for (let i = 0, n = int(1, 3); i < n; i++) {
    const amount = int(500, 90_000) + int(0, 99) / 100;
    const kind = pick(['freight', 'freight', 'accessorial', 'shortage'] as const);
    if (kind === 'shortage') {
      lines.push({ code: '78101802', desc: 'Faltante de mercancia', amount, objetoImp: '01' });
      continue;
    }
    const vatRate = pick([0.16, 0.16, 0.08, 0]);
    // Now and then a wrong tax amount: a discrepancy to list.
    const off = rnd() < 0.2 ? int(1, 900) / 100 : 0;
    lines.push({
      code: kind === 'freight' ? '78101802' : '78141500',
      desc: kind === 'freight' ? 'Flete' : 'Maniobras',
      amount,
      ...(rnd() < 0.2 ? { discount: int(1, 400) } : {}),
      transfers: [{ tax: '002', rate: vatRate, ...(off ? { amount: Math.round(((amount - 0) * vatRate + off) * 100) / 100 } : {}) }],
      ...(kind === 'freight' && rnd() < 0.7 ? { retentions: [{ tax: '002' as const, rate: 0.04 }] } : {}),
    });
  }
  return lines;
}

async function writeInvoices(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(1, 6); i < n; i++) {
    const uuid = uuidOf(next());
    const fecha = wall(int(1, 3), int(1, 28), int(0, 23));
    const method = pick(['PUE', 'PPD'] as const);
    const currency = rnd() < 0.2 ? 'USD' : 'MXN';
    const receiver = pick(CLIENTS);
    const x = invoiceXml({
      issuer: TENANT_A,
      issuerName: rnd() < 0.5 ? 'TRANSPORTES DEL GOLFO' : 'TRANSPORTES DEL GOLFO SA DE CV',
      receiver,
      receiverName: `CLIENTE ${receiver.slice(0, 3)} ${int(1, 3)}`,
      uuid,
      fecha,
      method,
      currency,
      ...(currency === 'USD' ? { exchangeRate: pick([17.25, 18.1, 19.033]) } : {}),
      lines: randomLines(),
    });
    issued.push({ uuid, fecha, total: x.total, paid: 0, method, currency, receiver, cancelRequested: false });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  await importFiles(files);
  return `${files.length} invoices`;
}

async function writePayment(): Promise<string> {
  const open = issued.filter((i) => i.method === 'PPD' && i.paid < i.total);
  if (!open.length) return writeInvoices();
  const inv = pick(open);
  const paid = Math.min(inv.total - inv.paid, Math.round(inv.total * pick([0.3, 0.5, 1]) * 100) / 100);
  const month = Math.min(3, Number(inv.fecha.slice(6, 7)) + int(0, 1));
  const fecha = wall(month, int(Number(inv.fecha.slice(8, 10)), 28), 12);
  await importFiles([
    {
      name: 'pago.xml',
      content: paymentXml({
        issuer: TENANT_A,
        receiver: inv.receiver,
        uuid: uuidOf(next()),
        fecha: fecha < inv.fecha ? inv.fecha : fecha,
        invoiceUuid: inv.uuid,
        currency: inv.currency,
        exchangeRate: inv.currency === 'USD' ? 18.5 : 1,
        before: inv.total - inv.paid,
        paid,
      }),
    },
  ]);
  inv.paid += paid;
  return `payment ${paid} on ${inv.uuid}`;
}

async function writeCreditNote(): Promise<string> {
  if (!issued.length) return writeInvoices();
  const inv = pick(issued);
  const uuid = uuidOf(next());
  const x = invoiceXml({
    issuer: TENANT_A,
    receiver: inv.receiver,
    uuid,
    fecha: wall(3, 28, 10),
    lines: [{ code: '78101802', desc: 'Bonificacion', amount: 100, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  await importFiles([{ name: 'nc.xml', content: asCreditNote(x.xml, inv.uuid, 'start') }]);
  return `credit note on ${inv.uuid}`;
}

async function writeCancellation(): Promise<string> {
  const candidates = issued.filter((i) => !i.cancelRequested);
  if (!candidates.length) return writeInvoices();
  const inv = pick(candidates);
  inv.cancelRequested = true;
  // An acknowledgement of 201 (cancelled) now and then; else the request alone (pending).
  const files = cancellationFiles(TENANT_A, inv.uuid, '2026-03-29T09:00:00', rnd() < 0.5 ? '2026-03-29T09:05:00' : undefined);
  await importFiles(files);
  return `cancellation of ${inv.uuid} (${files.length} files)`;
}

const writeStatusAnswer = (): Promise<string> =>
  answerCancellation(
    h,
    s,
    issued.filter((i) => i.cancelRequested),
    writeCancellation,
  );

async function writeSettings(): Promise<string> {
  const discrepancyTolerance = pick([0.01, 0.5, 5]);
  await changeSettings(h.db, (settings) => ({ ...settings, discrepancyTolerance }));
  return `tolerance ${discrepancyTolerance}`;
}

/** A write that changes a stored document and then fails before it is acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  const doc = await financialDocs(h.db).findOne({ company: TENANT_A });
  if (!doc) return writeInvoices();
  const changed = { ...doc, iTax2: Math.round((doc.iTax2 + 1.23) * 100) / 100 };
  await crashAfterWrite(h.db, writeMarkingDays, [doc, changed], () => financialDocs(h.db).replaceOne({ _id: doc._id }, changed));
  return `failed write on ${doc._id}`;
}

async function summaries(label: string, n: number): Promise<number> {
  return compareRounds(t, label, n, async (differs) => {
    const month = int(1, 3);
    const q: Record<string, string> = {};
    if (rnd() < 0.5) q.targetMonth = `2026-0${month}`;
    else {
      const a = wall(int(1, 3), int(1, 28), 0).slice(0, 10);
      const b = wall(int(1, 3), int(1, 28), 0).slice(0, 10);
      q.startDate = a < b ? a : b;
      q.endDate = a < b ? b : a;
    }
    if (rnd() < 0.4) q.client = pick(CLIENTS);
    if (rnd() < 0.3) q.findingKind = pick(['discrepancy', 'warning', 'info']);
    q.limit = String(pick([1, 3, 10, 100]));
    // The payment basis keeps whole months: a targetMonth reads them, a range reconciles the documents.
    if (rnd() < 0.4) q.basis = 'payment';
    const res = await getOk(h, '/api/tax-summary', q);
    const input: TaxSummaryInput = {
      basis: q.basis === 'payment' ? 'payment' : 'invoice',
      limit: Number(q.limit),
      ...(q.targetMonth ? { targetMonth: q.targetMonth } : {}),
      ...(q.startDate ? { startDate: q.startDate, endDate: q.endDate } : {}),
      ...(q.client ? { client: q.client } : {}),
      ...(q.findingKind ? { findingKind: q.findingKind as TaxSummaryInput['findingKind'] & string } : {}),
    };
    differs(comparable(res.json()), comparable(await getTaxSummary(ctx, TENANT_A, input, { fromDocuments: true })), JSON.stringify(q));
  });
}

const WRITES = [
  writeInvoices,
  writeInvoices,
  writeInvoices,
  writePayment,
  writePayment,
  writeCreditNote,
  writeCancellation,
  writeStatusAnswer,
  writeSettings,
  writeThatFails,
  restart,
];

t.test('every summary equals the documents after random writes of every kind', async (t) => {
  const done = await randomWrites(t, [], { steps: 40, every: 10, answers: 6, writes: WRITES, pick, check: summaries, what: 'summaries' });
  await eachWrite(done, [writeInvoices, writePayment, writeCreditNote, writeCancellation, writeStatusAnswer, writeSettings, writeThatFails, restart]);
  t.equal(await summaries('final', 25), 0, `25 random summaries agree after ${done.length} writes`);
  const v = await taxSummaryRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day equals its documents (${v.checked} days and months)`);

  // The MCP tool reads the same kept days: its figures equal the documents' too.
  const client = await mcpClient(t, h);
  for (const [month, basis] of [
    ['2026-01', 'invoice'],
    ['2026-02', 'payment'],
    ['2026-03', 'invoice'],
    ['2026-03', 'payment'],
  ] as const) {
    const r = (await client.callTool({ name: 'getTaxSummary', arguments: { targetMonth: month, basis, limit: 5 } })) as unknown as {
      structuredContent: { totals: unknown; findings: { total: number; byKind: unknown; byCode: unknown } };
    };
    const reference = await getTaxSummary(ctx, TENANT_A, { basis, limit: 5, targetMonth: month }, { fromDocuments: true });
    t.same(r.structuredContent.totals, reference.totals, `MCP ${month} ${basis}: totals`);
    t.same(
      { total: r.structuredContent.findings.total, byKind: r.structuredContent.findings.byKind, byCode: r.structuredContent.findings.byCode },
      { total: reference.findings.total, byKind: reference.findings.byKind, byCode: reference.findings.byCode },
      `MCP ${month} ${basis}: findings counted`,
    );
  }
});

t.test('a write that bypasses the marks is caught: the check can fail', async (t) => {
  const docs = await financialDocs(h.db)
    .find({ company: TENANT_A, 'canceled.0': { $exists: false } })
    .limit(20)
    .toArray();
  t.ok(docs.length > 0, 'documents to break');
  for (const d of docs) await financialDocs(h.db).updateOne({ _id: d._id }, { $set: { iTax1: Math.round((d.iTax1 + 7.77) * 100) / 100 } });
  await bypassCaught(t, { verify: verifier(taxSummaryRollups, h.db), check: summaries, bypassed: 15, repaired: 10, answers: 'summaries' });
});

t.test('a rebuild keeps what the writes kept: every summary from the rebuilt days and months equals the documents', async (t) => {
  // The rebuild's runs skip days without documents and read months three at a time: a wrong split shows here.
  await taxSummaryRollups.forget(h.db);
  const r = await taxSummaryRollups.rebuild(h.db);
  t.ok(await taxSummaryRollups.ready(h.db), `rebuilt ${r.units} days`);
  t.equal(await summaries('rebuilt', 15), 0, 'every summary agrees');
  t.same((await taxSummaryRollups.verify(h.db, TENANT_A)).mismatched, [], 'and every kept day and month equals its documents');
});

t.test('days recomputed under other settings by an invoice-basis summary: the payment-basis month is added up again', async (t) => {
  const input: TaxSummaryInput = { basis: 'payment', targetMonth: '2026-03', limit: 100 };
  const paymentMarch = async (label: string): Promise<void> => {
    const res = await getOk(h, '/api/tax-summary', { basis: 'payment', targetMonth: '2026-03', limit: '100' });
    t.same(comparable(res.json()), comparable(await getTaxSummary(ctx, TENANT_A, input, { fromDocuments: true })), label);
  };
  const tolerance = async (discrepancyTolerance: number): Promise<void> => changeSettings(h.db, (settings) => ({ ...settings, discrepancyTolerance }));
  const invoiceMarch = async (): Promise<number> => (await getOk(h, '/api/tax-summary', { targetMonth: '2026-03', limit: '100' })).statusCode;
  // Both bases of March kept under a tolerance of 0.01.
  await tolerance(0.01);
  t.equal(await invoiceMarch(), 200);
  await paymentMarch('March on the payment basis, kept under a tolerance of 0.01');
  const strict = await getTaxSummary(ctx, TENANT_A, input, { fromDocuments: true });
  // Under 5 most wrong taxes of this sequence are within tolerance: other findings. March's days are recomputed by
  // an invoice-basis summary (its days and, with them, their shares of the payment-basis month).
  await tolerance(5);
  t.not(
    JSON.stringify((await getTaxSummary(ctx, TENANT_A, input, { fromDocuments: true })).findings),
    JSON.stringify(strict.findings),
    'other findings under 5',
  );
  t.equal(await invoiceMarch(), 200);
  await tolerance(0.01);
  await paymentMarch('back under 0.01: the month and the findings it lists agree');
});
