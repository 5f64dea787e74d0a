/**
 * Receivables aging and the cash inflow forecast from the kept open items and days
 * (docs/rollups.md "Receivables") against the same reports computed from every document: after a
 * random sequence of writes of every kind that moves them (PUE and PPD invoices in MXN and USD,
 * partial payments on various dates, credit notes, cancellation requests and acknowledgements of
 * invoices and of payments, SAT status answers, a credit-terms change, a write that fails
 * halfway, a restart), both reports for random as-of days, periods, clients, buckets and limits
 * answer the same over HTTP (and MCP), and `receivablesRollups.verify` finds every kept day
 * equal. Then a write bypasses the marks, and both checks must see it (the test can fail).
 * A failing seed is printed: RECEIVABLES_ROLLUP_SEED=<n> replays it.
 */
import t from 'tap';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { invoiceXml, paymentXml, requestXml, satAcuseXml } from './helpers/cfdi-builder.ts';
import { financialDocs } from '../lib/db/collections.ts';
import { getReceivablesAging } from '../lib/analytics/get-receivables-aging.ts';
import { getCashInflowForecast, type CashInflowInput } from '../lib/analytics/get-cash-inflow-forecast.ts';
import { writeMarkingDays } from '../lib/finance/financial-doc-days.ts';
import { receivablesRollups } from '../lib/analytics/receivables-rollup-kind.ts';
import { getTenantSettings, saveTenantSettings } from '../lib/settings/settings-repo.ts';
import { settingsCache } from '../lib/settings/settings-cache.ts';
import { mxDateString } from '../lib/time/mexico-city.ts';
import type { ServiceContext } from '../lib/context.ts';
import { connect, listen } from './helpers/mcp.ts';
import { comparable, seeded, tally } from './helpers/differential.ts';

const { rnd, pick, int } = seeded(t, 'RECEIVABLES_ROLLUP_SEED', 20261128);

t.setTimeout(600_000);
const h = await startHarness(t);
const ctx: ServiceContext = { db: h.db, config: h.config, now: () => new Date() };
await receivablesRollups.rebuild(h.db); // an empty store: recorded as built, every write from here keeps the open items
t.ok(await receivablesRollups.ready(h.db), 'the kept forms are ready: the reports read them');

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'PEGJ800101AB2', 'XAXX010101000'];
// Names vary between a client's invoices: a report names a client after one of them by a rule that holds whatever order they come in.
const NAMES: Record<string, string> = Object.fromEntries(CLIENTS.map((c) => [c, `CLIENTE ${c.slice(0, 3)}`]));
const uuidOf = (n: number): string => `AE7A11D0-${String(n).padStart(4, '0')}-4000-8000-${String(n).padStart(12, '0')}`;
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
let next = 1;

async function importFiles(files: { name: string; content: string }[]): Promise<void> {
  const res = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: { files },
  });
  if (res.statusCode !== 200) throw new Error(`import ${res.statusCode}: ${res.body}`);
}

async function writeInvoices(): Promise<string> {
  const files: { name: string; content: string }[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const uuid = uuidOf(next++);
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
  const uuid = uuidOf(next++);
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
  const uuid = uuidOf(next++);
  const x = invoiceXml({
    issuer: TENANT_A,
    receiver: inv.receiver,
    uuid,
    fecha: after(inv.fecha, int(0, 60)),
    lines: [{ code: '78101802', desc: 'Bonificacion', amount: pick([100, 1000, 5000]), transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  const xml = x.xml
    .replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
    .replace(/(<cfdi:Comprobante[^>]*>)/, `$1<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${inv.uuid}"/></cfdi:CfdiRelacionados>`);
  await importFiles([{ name: 'nc.xml', content: xml }]);
  return `credit note on ${inv.uuid}`;
}

/** A cancellation request of an invoice on a later day, now and then with the SAT's acknowledgement (201: cancelled). */
async function writeCancellation(): Promise<string> {
  const candidates = issued.filter((i) => !i.cancelRequested);
  if (!candidates.length) return writeInvoices();
  const inv = pick(candidates);
  inv.cancelRequested = true;
  const fecha = after(inv.fecha, int(0, 60));
  const files = [{ name: 'solicitud.xml', content: requestXml({ issuer: TENANT_A, fecha, folios: [{ uuid: inv.uuid, motive: '02' }] }) }];
  if (rnd() < 0.6) files.push({ name: 'acuse.xml', content: satAcuseXml({ issuer: TENANT_A, fecha, folios: [{ uuid: inv.uuid, code: '201' }] }) });
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
  await importFiles([
    { name: 'solicitud.xml', content: requestXml({ issuer: TENANT_A, fecha, folios: [{ uuid: p.uuid, motive: '02' }] }) },
    { name: 'acuse.xml', content: satAcuseXml({ issuer: TENANT_A, fecha, folios: [{ uuid: p.uuid, code: '201' }] }) },
  ]);
  return `payment ${p.uuid} cancelled at ${fecha}`;
}

async function writeStatusAnswer(): Promise<string> {
  const requested = issued.filter((i) => i.cancelRequested);
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

/** Credit terms read by both reports (due days, delays): nothing kept depends on them. */
async function writeSettings(): Promise<string> {
  const s = await getTenantSettings(h.db, TENANT_A);
  const defaultCreditDays = pick([0, 15, 30, 45]);
  const creditDaysByClient = rnd() < 0.5 ? { [pick(CLIENTS)]: pick([7, 60]) } : {};
  await saveTenantSettings(h.db, { ...s, defaultCreditDays, creditDaysByClient });
  settingsCache(h.db).forget(TENANT_A);
  return `credit days ${defaultCreditDays} ${JSON.stringify(creditDaysByClient)}`;
}

/** A write that changes a stored document (a payment's amount and date) and then fails before it is acknowledged. */
async function writeThatFails(): Promise<string> {
  const doc = await financialDocs(h.db).findOne({ company: TENANT_A, 'payments.0': { $exists: true } });
  if (!doc) return writePayment();
  const [first, ...rest] = doc.payments;
  if (!first) return writePayment();
  const changed = { ...doc, payments: [{ ...first, amount: Math.round(first.amount * 50) / 100, date: first.date + 86_400_000 * 3 }, ...rest] };
  await writeMarkingDays(h.db, TENANT_A, [doc, changed], async () => {
    await financialDocs(h.db).replaceOne({ _id: doc._id }, changed);
    throw new Error('crashed after the write');
  }).catch(() => undefined);
  return `failed write on ${doc._id}`;
}

async function restart(): Promise<string> {
  await h.rebuild();
  return 'restart';
}

const randomDay = (): string => `2026-${pad(int(1, 5))}-${pad(int(1, 28))}`;

/** A JSON copy without the instant it was computed at. */
/** The reference computed at the instant the answer was (an asOf of today, or none, is now). */
const atTheSameNow = (answer: { computedAt: string }): ServiceContext => ({ ...ctx, now: () => new Date(answer.computedAt) });

async function reports(label: string, n: number): Promise<number> {
  const answers = tally(t, label);
  for (let i = 0; i < n; i++) {
    // Receivables aging: a day of the data, today (now), or none (now).
    const qa: Record<string, string> = { limit: String(pick([1, 3, 10, 100])) };
    const r = rnd();
    if (r < 0.7) qa.asOf = randomDay();
    else if (r < 0.85) qa.asOf = TODAY;
    if (rnd() < 0.4) qa.client = pick(CLIENTS);
    const ra = await h.app.inject({ method: 'GET', url: `/api/receivables/aging?${new URLSearchParams(qa).toString()}`, headers: { 'x-api-key': KEY_A } });
    if (ra.statusCode !== 200) throw new Error(`${ra.statusCode} ${ra.body}`);
    const refA = await getReceivablesAging(
      atTheSameNow(ra.json()),
      TENANT_A,
      { limit: Number(qa.limit), ...(qa.asOf ? { asOf: qa.asOf } : {}), ...(qa.client ? { client: qa.client } : {}) },
      { fromDocuments: true },
    );
    answers.differs(comparable(ra.json()), comparable(refA), `aging ${JSON.stringify(qa)}`);

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
    const rf = await h.app.inject({
      method: 'GET',
      url: `/api/analytics/cash-inflow-forecast?${new URLSearchParams(qf).toString()}`,
      headers: { 'x-api-key': KEY_A },
    });
    if (rf.statusCode !== 200) throw new Error(`${rf.statusCode} ${rf.body}`);
    const input: CashInflowInput = {
      bucket: qf.bucket as CashInflowInput['bucket'],
      limit: Number(qf.limit),
      ...(qf.startDate ? { startDate: qf.startDate } : {}),
      ...(qf.endDate ? { endDate: qf.endDate } : {}),
      ...(qf.asOf ? { asOf: qf.asOf } : {}),
      ...(qf.client ? { client: qf.client } : {}),
    };
    const refF = await getCashInflowForecast(atTheSameNow(rf.json()), TENANT_A, input, { fromDocuments: true });
    answers.differs(comparable(rf.json()), comparable(refF), `forecast ${JSON.stringify(qf)}`);
  }
  return answers.count;
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
  const done: string[] = [];
  for (let step = 0; step < 50; step++) {
    done.push(await pick(WRITES)());
    if (step % 10 === 9) t.equal(await reports(`after step ${step} (${done.slice(-3).join('; ')})`, 5), 0, `reports agree after step ${step}`);
  }
  for (const w of [
    writeInvoices,
    writePayment,
    writeCreditNote,
    writeCancellation,
    writePaymentCancellation,
    writeStatusAnswer,
    writeSettings,
    writeThatFails,
    restart,
  ])
    done.push(await w());
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
  while ((await receivablesRollups.drain(h.db, 50, 60_000)) > 0);
  t.equal(await receivablesRollups.outstanding(h.db), 0, 'drained');
  const v = await receivablesRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day and open item equals its documents (${v.checked} days)`);
  const openItems = await h.db.collection('openItems').countDocuments({ tenant: TENANT_A });
  t.ok(openItems > 10, `the open-items index holds the invoices ever open (${openItems})`);

  // The MCP tool reads the same open items: its figures equal the documents' too.
  const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
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
  const v = await receivablesRollups.verify(h.db, TENANT_A);
  t.ok(v.mismatched.length > 0, `verification finds the unmarked days (${v.mismatched.length})`);
  t.ok((await reports('bypass', 10)) > 0, 'some report differs from the documents');
  const repaired = await receivablesRollups.verify(h.db, TENANT_A, { repair: true });
  t.equal(repaired.mismatched.length, v.mismatched.length, 'repair rewrites the days that differ');
  t.same((await receivablesRollups.verify(h.db, TENANT_A)).mismatched, [], 'after repair every day is equal');
  t.equal(await reports('after repair', 6), 0, 'and the reports agree again');
});
