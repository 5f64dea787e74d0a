/**
 * Receivables aging and the cash inflow forecast from the kept open items and days
 * (docs/rollups.md "Receivables") against the same reports computed from every document: after a
 * random sequence of writes of every kind that moves them (PUE and PPD invoices in MXN and USD,
 * partial payments on various dates, credit notes, cancellation requests and acknowledgements of
 * invoices and of payments, SAT status answers, a credit-terms change, a write that fails
 * halfway, a restart), both reports for random as-of days, periods, clients, buckets and limits
 * (and as of now, every round: the kept sums of the invoices open now) answer the same over HTTP (and MCP), and `receivablesRollups.verify` finds every kept day
 * equal. Then a write bypasses the marks, and both checks must see it (the test can fail).
 * A failing seed is printed: RECEIVABLES_ROLLUP_SEED=<n> replays it.
 */
import t from 'tap';
import { TENANT_A } from './helpers/harness.ts';
import { invoiceXml, paymentXml } from './helpers/cfdi-builder.ts';
import { financialDocs } from '../lib/db/collections.ts';
import { getReceivablesAging } from '../lib/analytics/get-receivables-aging.ts';
import { getCashInflowForecast, type CashInflowInput } from '../lib/analytics/get-cash-inflow-forecast.ts';
import { listFinancialDocs, type ListFinancialDocsInput } from '../lib/finance/list-financial-docs.ts';
import { writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { receivablesRollups } from '../lib/analytics/receivables-rollup-kind.ts';
import { keptOpenSums } from '../lib/analytics/kept-receivables.ts';
import { mxAddDays, mxDateString, mxDayEnd } from '../lib/time/mexico-city.ts';
import type { ServiceContext } from '../lib/context.ts';
import { BYPASS, comparable, compareRounds, onTheWire } from './helpers/differential.ts';
import { drainAll, getOk, importer, mcpClient, restarter, startDifferential } from './helpers/differential-service.ts';
import { answerCancellation, asCreditNote, cancellationFiles, changeSettings, crashAfterWrite, sequence, uuids } from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites, verifier } from './helpers/differential-rounds.ts';

// An empty store recorded as built: every write from here keeps the open items.
const s = await startDifferential(t, { seedEnv: 'RECEIVABLES_ROLLUP_SEED', seed: 20261128, timeout: 600_000, build: (db) => receivablesRollups.rebuild(db) });
const { h, ctx, rnd, pick, int } = s;
const importFiles = importer(h);
const restart = restarter(h);
t.ok(await receivablesRollups.ready(h.db), 'the kept forms are ready: the reports read them');

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'PEGJ800101AB2', 'XAXX010101000'];
// Names vary between a client's invoices: a report names a client after one of them by a rule that holds whatever order they come in.
const NAMES: Record<string, string> = Object.fromEntries(CLIENTS.map((c) => [c, `CLIENTE ${c.slice(0, 3)}`]));
const uuidOf = uuids('AE7A11D0');
const pad = (n: number): string => String(n).padStart(2, '0');
/** A wall time of 2026 (Mexico City), January to April. */
const wall = (month: number, day: number, hour: number, minute = 0): string => `2026-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:00`;
const randomWall = (): string => wall(int(1, 4), int(1, 28), int(0, 23), int(0, 59));
/** Today (Mexico City) a little after midnight: before now, so a report of today (asOf = now) cuts its day short. */
const TODAY = mxDateString(Date.now());
const todayWall = (): string => `${TODAY}T00:00:${pad(int(0, 30))}`;
/** A wall time `days` days and some hours after another (record dates later than their invoice: the as-of answers change on them). */
function after(fecha: string, days: number): string {
  const d = new Date(`${fecha}Z`);
  d.setUTCDate(d.getUTCDate() + days);
  d.setUTCHours(int(0, 23), int(0, 59));
  const s = d.toISOString().slice(0, 19);
  return s < fecha ? fecha : s;
}

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
const payments: { uuid: string; invoice: Issued; fecha: string; cancelled: boolean }[] = [];
const next = sequence();

async function writeInvoices(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const uuid = uuidOf(next());
    const fecha = rnd() < 0.1 ? todayWall() : randomWall();
    const method = pick(['PUE', 'PPD', 'PPD'] as const);
    const currency = rnd() < 0.25 ? 'USD' : 'MXN';
    const receiver = pick(CLIENTS);
    const amount = int(500, 90_000) + int(0, 99) / 100;
    const x = invoiceXml({
      issuer: TENANT_A,
      receiver,
      receiverName: `${NAMES[receiver]} ${int(1, 3)}`,
      uuid,
      fecha,
      method,
      currency,
      ...(currency === 'USD' ? { exchangeRate: pick([17.25, 18.1, 19.033]) } : {}),
      lines: [
        {
          code: '78101802',
          desc: 'Flete',
          amount,
          ...(rnd() < 0.2 ? { discount: int(1, 400) } : {}),
          transfers: [{ tax: '002', rate: 0.16 }],
          ...(rnd() < 0.7 ? { retentions: [{ tax: '002' as const, rate: 0.04 }] } : {}),
        },
        ...(rnd() < 0.2 ? [{ code: '78101802', desc: 'Faltante de mercancia', amount: int(100, 900), objetoImp: '01' as const }] : []),
      ],
    });
    issued.push({ uuid, fecha, total: x.total, paid: 0, method, currency, receiver, cancelRequested: false });
    files.push({ name: `${uuid}.xml`, content: x.xml });
  }
  await importFiles(files);
  return `${files.length} invoices`;
}

/** A payment complement of part or all of an open PPD invoice, dated from its day to weeks later (or today). */
async function writePayment(): Promise<string> {
  const open = issued.filter((i) => i.method === 'PPD' && i.paid < i.total);
  if (!open.length) return writeInvoices();
  const inv = pick(open);
  const paid = Math.min(Math.round((inv.total - inv.paid) * 100) / 100, Math.round(inv.total * pick([0.25, 0.5, 1]) * 100) / 100);
  const fecha = rnd() < 0.15 ? todayWall() : after(inv.fecha, int(0, 75));
  const uuid = uuidOf(next());
  await importFiles([
    {
      name: 'pago.xml',
      content: paymentXml({
        issuer: TENANT_A,
        receiver: inv.receiver,
        uuid,
        fecha,
        invoiceUuid: inv.uuid,
        currency: inv.currency,
        exchangeRate: inv.currency === 'USD' ? 18.5 : 1,
        before: Math.round((inv.total - inv.paid) * 100) / 100,
        paid,
      }),
    },
  ]);
  inv.paid = Math.round((inv.paid + paid) * 100) / 100;
  payments.push({ uuid, invoice: inv, fecha, cancelled: false });
  return `payment ${paid} on ${inv.uuid} at ${fecha}`;
}

async function writeCreditNote(): Promise<string> {
  if (!issued.length) return writeInvoices();
  const inv = pick(issued);
  const uuid = uuidOf(next());
  const x = invoiceXml({
    issuer: TENANT_A,
    receiver: inv.receiver,
    uuid,
    fecha: after(inv.fecha, int(0, 60)),
    lines: [{ code: '78101802', desc: 'Bonificacion', amount: pick([100, 1000, 5000]), transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  await importFiles([{ name: 'nc.xml', content: asCreditNote(x.xml, inv.uuid, 'start') }]);
  return `credit note on ${inv.uuid}`;
}

/** A cancellation request of an invoice on a later day, now and then with the SAT's acknowledgement (201: cancelled). */
async function writeCancellation(): Promise<string> {
  const candidates = issued.filter((i) => !i.cancelRequested);
  if (!candidates.length) return writeInvoices();
  const inv = pick(candidates);
  inv.cancelRequested = true;
  const fecha = after(inv.fecha, int(0, 60));
  const files = cancellationFiles(TENANT_A, inv.uuid, fecha, rnd() < 0.6 ? fecha : undefined);
  await importFiles(files);
  return `cancellation of ${inv.uuid} at ${fecha} (${files.length} files)`;
}

/** A payment complement cancelled (request and acknowledgement): the invoice owes that payment again from then on. */
async function writePaymentCancellation(): Promise<string> {
  const candidates = payments.filter((p) => !p.cancelled);
  if (!candidates.length) return writePayment();
  const p = pick(candidates);
  p.cancelled = true;
  const fecha = after(p.fecha, int(0, 40));
  await importFiles(cancellationFiles(TENANT_A, p.uuid, fecha, fecha));
  return `payment ${p.uuid} cancelled at ${fecha}`;
}

const writeStatusAnswer = (): Promise<string> =>
  answerCancellation(
    h,
    s,
    issued.filter((i) => i.cancelRequested),
    writeCancellation,
  );

/** Credit terms read by both reports (due days, delays): nothing kept depends on them. */
async function writeSettings(): Promise<string> {
  const defaultCreditDays = pick([0, 15, 30, 45]);
  const creditDaysByClient = rnd() < 0.5 ? { [pick(CLIENTS)]: pick([7, 60]) } : {};
  await changeSettings(h.db, (settings) => ({ ...settings, defaultCreditDays, creditDaysByClient }));
  return `credit days ${defaultCreditDays} ${JSON.stringify(creditDaysByClient)}`;
}

/** A write that changes a stored document (a payment's amount and date) and then fails before it is acknowledged. */
async function writeThatFails(): Promise<string> {
  const doc = await financialDocs(h.db).findOne({ company: TENANT_A, 'payments.0': { $exists: true } });
  if (!doc) return writePayment();
  const [first, ...rest] = doc.payments;
  if (!first) return writePayment();
  const changed = { ...doc, payments: [{ ...first, amount: Math.round(first.amount * 50) / 100, date: first.date + 86_400_000 * 3 }, ...rest] };
  await crashAfterWrite(h.db, writeMarkingDays, [doc, changed], () => financialDocs(h.db).replaceOne({ _id: doc._id }, changed));
  return `failed write on ${doc._id}`;
}

const randomDay = (): string => `2026-${pad(int(1, 5))}-${pad(int(1, 28))}`;

/** A JSON copy without the instant it was computed at. */
/** The reference computed at the instant the answer was (an asOf of today, or none, is now). */
const atTheSameNow = (answer: { computedAt: string }): ServiceContext => ({ ...ctx, now: () => new Date(answer.computedAt) });

async function reports(label: string, n: number): Promise<number> {
  return compareRounds(t, label, n, async (differs) => {
    // Receivables aging: a day of the data, today (now), or none (now).
    const qa: Record<string, string> = { limit: String(pick([1, 3, 10, 100])) };
    const r = rnd();
    if (r < 0.7) qa.asOf = randomDay();
    else if (r < 0.85) qa.asOf = TODAY;
    if (rnd() < 0.4) qa.client = pick(CLIENTS);
    const ra = await getOk(h, '/api/receivables/aging', qa);
    const refA = await getReceivablesAging(
      atTheSameNow(ra.json()),
      TENANT_A,
      { limit: Number(qa.limit), ...(qa.asOf ? { asOf: qa.asOf } : {}), ...(qa.client ? { client: qa.client } : {}) },
      { fromDocuments: true },
    );
    differs(comparable(ra.json()), comparable(refA), `aging ${JSON.stringify(qa)}`);

    // Cash inflow forecast: a period of the data (or the default: the last 90 days to now), an as-of day or not.
    const qf: Record<string, string> = { bucket: pick(['week', 'month']), limit: String(pick([1, 5, 50])) };
    if (rnd() < 0.7) {
      const a = randomDay();
      const b = randomDay();
      qf.startDate = a < b ? a : b;
      qf.endDate = a < b ? b : a;
    } else if (rnd() < 0.5) qf.startDate = randomDay();
    if (rnd() < 0.3) qf.asOf = rnd() < 0.5 ? randomDay() : TODAY;
    if (rnd() < 0.4) qf.client = pick(CLIENTS);
    const rf = await getOk(h, '/api/analytics/cash-inflow-forecast', qf);
    const input: CashInflowInput = {
      bucket: qf.bucket as CashInflowInput['bucket'],
      limit: Number(qf.limit),
      ...(qf.startDate ? { startDate: qf.startDate } : {}),
      ...(qf.endDate ? { endDate: qf.endDate } : {}),
      ...(qf.asOf ? { asOf: qf.asOf } : {}),
      ...(qf.client ? { client: qf.client } : {}),
    };
    const refF = await getCashInflowForecast(atTheSameNow(rf.json()), TENANT_A, input, { fromDocuments: true });
    differs(comparable(rf.json()), comparable(refF), `forecast ${JSON.stringify(qf)}`);

    // Both as of now (no as-of day, no end): the kept sums of the invoices open now and the entries of their first items.
    const qn: Record<string, string> = { limit: String(pick([1, 2, 5, 20, 100])) };
    if (rnd() < 0.4) qn.client = pick(CLIENTS);
    const rn = await getOk(h, '/api/receivables/aging', qn);
    const refN = await getReceivablesAging(
      atTheSameNow(rn.json()),
      TENANT_A,
      { limit: Number(qn.limit), ...(qn.client ? { client: qn.client } : {}) },
      { fromDocuments: true },
    );
    differs(comparable(rn.json()), comparable(refN), `aging now ${JSON.stringify(qn)}`);
    const qfn: Record<string, string> = { ...qn, bucket: pick(['week', 'month']), ...(rnd() < 0.5 ? { startDate: randomDay() } : {}) };
    const rfn = await getOk(h, '/api/analytics/cash-inflow-forecast', qfn);
    const inputN: CashInflowInput = {
      bucket: qfn.bucket as CashInflowInput['bucket'],
      limit: Number(qfn.limit),
      ...(qfn.startDate ? { startDate: qfn.startDate } : {}),
      ...(qfn.client ? { client: qfn.client } : {}),
    };
    differs(
      comparable(rfn.json()),
      comparable(await getCashInflowForecast(atTheSameNow(rfn.json()), TENANT_A, inputN, { fromDocuments: true })),
      `forecast now ${JSON.stringify(qfn)}`,
    );

    await listsAgree(differs);
  });
}

/**
 * The financial-docs list with `openAsOf` (read from the kept spans over HTTP) against the same
 * list evaluated on every document (the service context without the kept reader): a page by
 * number, then the next one by the cursor the answer gave.
 */
async function listsAgree(differs: (kept: unknown, reference: unknown, what: string) => void): Promise<void> {
  const r = rnd();
  const q: Record<string, string> = {
    openAsOf: r < 0.6 ? randomDay() : r < 0.8 ? TODAY : '2027-06-30',
    limit: String(pick([1, 2, 5, 100])),
    page: String(pick([1, 1, 2, 3])),
    detail: pick(['summary', 'full']),
  };
  if (rnd() < 0.4) q.client = pick(CLIENTS);
  const input = (extra: Record<string, string>): ListFinancialDocsInput => {
    const all = { ...q, ...extra };
    const { page, limit, detail, cursor, ...filters } = all;
    return { page: Number(page), limit: Number(limit), detail: detail as ListFinancialDocsInput['detail'], ...(cursor ? { cursor } : {}), ...filters };
  };
  // The answer as HTTP gives it (the detail level at the top too, handlers/api-version.ts).
  const reference = async (extra: Record<string, string>) => {
    const page = await listFinancialDocs({ ...ctx, now: () => new Date() }, TENANT_A, input(extra));
    return onTheWire({ detail: page.meta.detail, ...page });
  };
  const first = await getOk(h, '/api/financial-docs', q);
  differs(first.json(), await reference({}), `list ${JSON.stringify(q)}`);
  const cursor = first.json<{ meta: { nextCursor: string | null } }>().meta.nextCursor;
  if (cursor === null) return;
  const next = await getOk(h, '/api/financial-docs', { ...q, page: '1', cursor });
  differs(next.json(), await reference({ page: '1', cursor }), `list ${JSON.stringify(q)} next page`);
}

const WRITES = [
  writeInvoices,
  writeInvoices,
  writeInvoices,
  writePayment,
  writePayment,
  writePayment,
  writePayment,
  writeCreditNote,
  writeCancellation,
  writePaymentCancellation,
  writeStatusAnswer,
  writeSettings,
  writeThatFails,
  restart,
];

t.test('both reports equal the documents after random writes of every kind', async (t) => {
  const done = await randomWrites(t, [], { steps: 50, every: 10, answers: 5, writes: WRITES, pick, check: reports, what: 'reports' });
  await eachWrite(done, [
    writeInvoices,
    writePayment,
    writeCreditNote,
    writeCancellation,
    writePaymentCancellation,
    writeStatusAnswer,
    writeSettings,
    writeThatFails,
    restart,
  ]);
  t.comment(done.join('\n'));
  t.comment(
    JSON.stringify(
      await financialDocs(h.db)
        .find({ company: TENANT_A, 'canceled.0': { $exists: true } }, { projection: { date: 1, canceled: 1, iTot: 1, payments: 1 } })
        .toArray(),
    ),
  );
  t.equal(await reports('final', 20), 0, `20 random pairs of reports agree after ${done.length} writes`);
  // The rollup worker's drain (through the registry) settles what the last writes marked.
  done.push(await writeInvoices());
  t.ok((await receivablesRollups.outstanding(h.db)) > 0, 'a write leaves marks');
  await drainAll(receivablesRollups, h.db, 50);
  t.equal(await receivablesRollups.outstanding(h.db), 0, 'drained');
  const v = await receivablesRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day and open item equals its documents (${v.checked} days)`);
  const openItems = await h.db.collection('openItems').countDocuments({ tenant: TENANT_A });
  t.ok(openItems > 10, `the open-items index holds the invoices ever open (${openItems})`);
  const sums = await keptOpenSums(h.db, TENANT_A, Date.now(), undefined, 10_000);
  t.ok(
    sums.late !== 'all' && sums.days.length > 3,
    `the reports of now read the sums of the invoices open (${sums.days.length} days, ${sums.late === 'all' ? 'all' : sums.late.size} of them from their entries)`,
  );
  // As of a day whose later records changed more days than the late path sums: the months of open items.
  const back = await keptOpenSums(h.db, TENANT_A, mxDayEnd('2026-01-31'), undefined, 10_000);
  t.equal(back.late, 'all', `as of 31 January the sums come from the months of open items (${back.days.length} days)`);
  // Every day of the data, not a random few: a balance that changes on a day (a payment, a cancellation) is seen the day before and after.
  const everyDay = await compareRounds(t, 'every day', 1, async (differs) => {
    for (let day = '2026-01-01'; day <= '2026-05-31'; day = mxAddDays(day, 1)) {
      const q = { asOf: day, limit: '100' };
      const r = await getOk(h, '/api/receivables/aging', q);
      differs(
        comparable(r.json()),
        comparable(await getReceivablesAging(atTheSameNow(r.json()), TENANT_A, { asOf: day, limit: 100 }, { fromDocuments: true })),
        `aging as of ${day}`,
      );
    }
  });
  t.equal(everyDay, 0, 'aging as of every day from January to May equals the documents');
  // The forecast's payment delays as of every other day: a payment (or its invoice) cancelled after the day still counts on it.
  const everyOtherDay = await compareRounds(t, 'every other day', 1, async (differs) => {
    for (let day = '2026-01-02'; day <= '2026-05-31'; day = mxAddDays(day, 2)) {
      const q = { startDate: '2026-01-01', endDate: day, asOf: day, limit: '5' };
      const r = await getOk(h, '/api/analytics/cash-inflow-forecast', q);
      const input: CashInflowInput = { bucket: 'week', limit: 5, startDate: '2026-01-01', endDate: day, asOf: day };
      differs(
        comparable(r.json()),
        comparable(await getCashInflowForecast(atTheSameNow(r.json()), TENANT_A, input, { fromDocuments: true })),
        `forecast as of ${day}`,
      );
    }
  });
  t.equal(everyOtherDay, 0, 'the forecast as of every other day from January to May equals the documents');
  // The revenue of a period that ended (credit sales of DSO, shares, HHI) as of later days: an invoice cancelled after the
  // day is still revenue on it, one cancelled by then is not, whichever form the answer reads (the cancellations above
  // fall up to 60 days after their invoice, so these as-of days fall before and after many of them).
  const periodAsOfLater = await compareRounds(t, 'a past period as of later days', 1, async (differs) => {
    for (let day = '2026-02-28'; day <= '2026-05-31'; day = mxAddDays(day, 3)) {
      const q = { startDate: '2026-01-01', endDate: '2026-02-28', asOf: day, limit: '5' };
      const r = await getOk(h, '/api/analytics/cash-inflow-forecast', q);
      const input: CashInflowInput = { bucket: 'week', limit: 5, startDate: '2026-01-01', endDate: '2026-02-28', asOf: day };
      differs(
        comparable(r.json()),
        comparable(await getCashInflowForecast(atTheSameNow(r.json()), TENANT_A, input, { fromDocuments: true })),
        `forecast of January–February as of ${day}`,
      );
    }
  });
  t.equal(periodAsOfLater, 0, 'the forecast of January–February (DSO, shares, HHI) as of every third day to May equals the documents');

  // The MCP tool reads the same open items: its figures equal the documents' too.
  const client = await mcpClient(t, h);
  for (const asOf of ['2026-02-15', '2026-03-31', TODAY]) {
    const r = (await client.callTool({ name: 'getReceivablesAging', arguments: { asOf, limit: 5 } })) as unknown as {
      structuredContent: { totals: unknown; clients: { total: number } };
    };
    const reference = await getReceivablesAging(ctx, TENANT_A, { asOf, limit: 5 }, { fromDocuments: true });
    t.same(r.structuredContent.totals, reference.totals, `MCP aging as of ${asOf}: totals`);
    t.equal(r.structuredContent.clients.total, reference.clients.total, `MCP aging as of ${asOf}: clients`);
  }
});

t.test('a write that bypasses the marks is caught: the check can fail', async (t) => {
  // Payments halved and invoice totals raised behind the marks' back: balances as of any later day change.
  const docs = await financialDocs(h.db)
    .find({ company: TENANT_A, 'payments.0': { $exists: true } })
    .limit(20)
    .toArray();
  t.ok(docs.length > 0, 'documents to break');
  for (const d of docs) await financialDocs(h.db).updateOne({ _id: d._id }, { $set: { iTot: Math.round((d.iTot + 777.77) * 100) / 100 } });
  const lists = await compareRounds(t, BYPASS, 20, (differs) => listsAgree(differs));
  t.ok(lists > 0, `the openAsOf list reads the kept spans: it differs from the documents too (${lists} answers in 20 rounds)`);
  await bypassCaught(t, { verify: verifier(receivablesRollups, h.db), check: reports, bypassed: 10, repaired: 6 });
});

t.test('the openAsOf list evaluates the documents while the kind is not built', async (t) => {
  await receivablesRollups.forget(h.db);
  t.notOk(await receivablesRollups.ready(h.db), 'forgotten: not ready');
  t.equal(await compareRounds(t, 'not built', 10, (differs) => listsAgree(differs)), 0, 'every list equals the documents');
  await receivablesRollups.rebuild(h.db);
  t.equal(await compareRounds(t, 'rebuilt', 10, (differs) => listsAgree(differs)), 0, 'and again once rebuilt');
  // The rebuild's runs skip the days without documents: every day and open item it kept equals its documents.
  t.same((await receivablesRollups.verify(h.db, TENANT_A)).mismatched, [], 'every rebuilt day and open item equals its documents');
});
