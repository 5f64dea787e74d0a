/**
 * Tenant isolation as a property (fast-check).
 *
 * Each run generates two tenants with random documents that overlap on purpose
 * (same clients, vehicles, drivers and folios; trips of either tenant linked
 * to the other tenant's invoices), random alert jobs and records for both,
 * and random filters for every data operation of the spec. Then, for tenant
 * A, through REST and through MCP (a real MCP session calling the tools):
 *
 *   - no answer contains any of B's ids, UUIDs, shipments, jobs or its RFC;
 *   - every answer is the same with B's data present and with it deleted
 *     (A's answers do not depend on B in any way: totals, sums, links, pages);
 *   - the MCP tool answers exactly what REST answers;
 *   - B's alert job ids answer 404 to A (cancel), and B's jobs survive it.
 *
 * The clock is fixed so that answers are comparable. Runs: ISOLATION_RUNS (default 40).
 */
import t from 'tap';
import fc from 'fast-check';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { startHarness, KEY_A, KEY_B, TENANT_A, TENANT_B } from './helpers/harness.ts';
import { connect, listen } from './helpers/mcp.ts';
import {
  makeFinancialDoc,
  makeTrip,
  leg,
  diesel,
  freight,
  shortage,
  demurrage,
  payment,
  CLIENT_COMPANY,
  CLIENT_COMPANY_2,
  CLIENT_PERSON,
} from './fixtures/documents.ts';
import { loadSpec } from '../handlers/app.ts';
import { listOperations, type OperationSchemas } from '../lib/spec/operations.ts';
import { isToolOperation } from '../lib/mcp/tools-from-spec.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { withDerivedFields } from '../lib/finance/derived-fields.ts';
import { alertJobs, alertRecords } from '../lib/alerts/alert-jobs-repo.ts';
import type { FinancialDocument } from '../lib/model/financial-document.ts';
import type { TripDocument } from '../lib/model/trip-document.ts';
import { insertTrips } from './fixtures/stored-trips.ts';

t.setTimeout(300_000);

const RUNS = Number(process.env.ISOLATION_RUNS ?? 40);
const NOW = new Date('2026-04-30T18:00:00.000Z');
const h = await startHarness(t, { build: { now: () => NOW } });
const base = await listen(h.app);
const mcp: Client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');

const spec = loadSpec();
const dataOps = listOperations(spec).filter(isToolOperation);
// Reads of one resource by id (a webhook endpoint and its deliveries) are 404 for another tenant's ids: test/notifications/webhooks-api.ts.
const readOps = dataOps.filter((op) => op.method === 'GET' && !op.params);
t.ok(readOps.length >= 10, `${readOps.length} read operations under test: ${readOps.map((o) => o.operationId).join(', ')}`);

// ----------------------------------------------------------------------------- random data

const CLIENTS = [CLIENT_COMPANY, CLIENT_COMPANY_2, CLIENT_PERSON];
const VEHICLES = ['VEH-001', 'VEH-002', 'VEH-003'];
const DRIVERS = ['DRV-001', 'DRV-002'];
const USERS = ['user-1', 'user-2', 'user-3'];
const RULES = ['overdue-invoices', 'shrinkage-over-tolerance', 'tax-findings', 'unbilled-deliveries'];
const CYCLES = ['2026-02', '2026-03', '2026-04'];
const DAY0 = Date.UTC(2026, 0, 1);
const ymd = (day: number) => new Date(DAY0 + day * 86_400_000).toISOString().slice(0, 10);

const docArb = fc.record({
  client: fc.constantFrom(...CLIENTS),
  day: fc.integer({ min: 0, max: 119 }),
  hour: fc.integer({ min: 0, max: 23 }),
  freight: fc.integer({ min: 1_000, max: 60_000 }),
  shortage: fc.option(fc.integer({ min: 50, max: 2_000 }), { nil: undefined }),
  demurrage: fc.option(fc.integer({ min: 100, max: 3_000 }), { nil: undefined }),
  paid: fc.array(fc.record({ share: fc.double({ min: 0.05, max: 1, noNaN: true }), after: fc.integer({ min: 1, max: 45 }) }), { maxLength: 2 }),
  cancelled: fc.boolean().map((b) => b && Math.random() < 0.3),
  status: fc.constantFrom(4, 5, 6, 9),
  ppd: fc.boolean(),
});
const tripArb = fc.record({
  client: fc.constantFrom(...CLIENTS),
  day: fc.integer({ min: 0, max: 119 }),
  legs: fc.array(
    fc.record({
      offset: fc.integer({ min: 0, max: 2 }),
      loaded: fc.integer({ min: 10_000, max: 40_000 }),
      loss: fc.integer({ min: 0, max: 300 }),
      status: fc.constantFrom(2, 4),
    }),
    { minLength: 1, maxLength: 3 },
  ),
  vehicle: fc.constantFrom(...VEHICLES),
  driver: fc.constantFrom(...DRIVERS),
  /** Index of an invoice to link (own tenant's or, for `cross`, the other tenant's). */
  link: fc.option(fc.nat(), { nil: undefined }),
  cross: fc.boolean(),
});
const jobArb = fc.record({ user: fc.constantFrom(...USERS), rule: fc.constantFrom(...RULES), cycle: fc.constantFrom(...CYCLES), withRecord: fc.boolean() });
const tenantArb = fc.record({
  docs: fc.array(docArb, { minLength: 1, maxLength: 8 }),
  trips: fc.array(tripArb, { maxLength: 8 }),
  jobs: fc.uniqueArray(jobArb, { maxLength: 3, selector: (j) => `${j.user}|${j.rule}|${j.cycle}` }),
});

type DocSpec = typeof docArb extends fc.Arbitrary<infer T> ? T : never;
type TripSpec = typeof tripArb extends fc.Arbitrary<infer T> ? T : never;

function buildDoc(tenant: string, d: DocSpec, folio?: string): FinancialDocument {
  const concepts = [freight(d.freight), ...(d.shortage ? [shortage(d.shortage)] : []), ...(d.demurrage ? [demurrage(d.demurrage)] : [])];
  const date = `${ymd(d.day)}T${String(d.hour).padStart(2, '0')}:00`;
  const total = d.freight * 1.12;
  return makeFinancialDoc({
    tenant,
    client: d.client,
    date,
    status: d.status,
    concepts,
    paymentMethod: d.ppd ? 'PPD' : 'PUE',
    payments: d.paid.map((p) => payment(Math.round(total * p.share * 100) / 100, ymd(Math.min(d.day + p.after, 150)))),
    cancelled: d.cancelled,
    ...(folio ? { invoice: { num: folio } } : {}),
  });
}

function buildTrip(tenant: string, s: TripSpec, own: FinancialDocument[], other: FinancialDocument[]): TripDocument {
  const pool = s.cross ? other : own;
  const linked = s.link !== undefined && pool.length > 0 ? pool[s.link % pool.length]!.id : null;
  return makeTrip({
    tenant,
    client: s.client,
    idFinan: linked,
    vehicle: { id: s.vehicle },
    driver: { id: s.driver },
    legs: s.legs.map((l) => leg({ date: ymd(s.day + l.offset), products: [diesel(l.loaded, l.loaded - l.loss)], status: l.status })),
  });
}

// ----------------------------------------------------------------------------- random filters

/** Values worth filtering on: both tenants' (B's must never match anything for A). */
interface Pools {
  folio: string[];
  uuid: string[];
  shipmentId: string[];
  /** Both tenants' document and trip ids, for the get-by-id operations (B's must be 404 for A). */
  docId: string[];
  tripId: string[];
}

function paramArb(name: string, schema: Record<string, unknown>, pools: Pools): fc.Arbitrary<string> {
  const pick = (values: string[]) => (values.length ? fc.constantFrom(...values) : fc.constant('none'));
  if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum.map(String));
  if (schema.format === 'date') return fc.integer({ min: -30, max: 150 }).map(ymd);
  if (name === 'limit') return fc.integer({ min: 1, max: 100 }).map(String);
  if (name === 'page') return fc.integer({ min: 1, max: 3 }).map(String);
  if (schema.type === 'integer') return fc.constantFrom('2', '4', '5', '6', '9');
  if (schema.type === 'boolean') return fc.constantFrom('true', 'false');
  if (name === 'client') return fc.constantFrom(...CLIENTS);
  if (name === 'targetMonth' || name === 'cycleKey') return fc.constantFrom('2026-01', ...CYCLES);
  if (name === 'vehicle') return fc.constantFrom(...VEHICLES);
  if (name === 'driver') return fc.constantFrom(...DRIVERS);
  if (name === 'userId') return fc.constantFrom(...USERS);
  if (name === 'folio') return pick(pools.folio);
  if (name === 'uuid') return pick(pools.uuid);
  if (name === 'shipmentId') return pick(pools.shipmentId);
  return fc.string({ minLength: 1, maxLength: 8 });
}

type Filters = { query: Record<string, string>; headers: Record<string, string>; path: Record<string, string> };

function filtersArb(op: OperationSchemas, pools: Pools): fc.Arbitrary<Filters> {
  const q = (op.querystring?.properties ?? {}) as Record<string, Record<string, unknown>>;
  const hd = (op.headers?.properties ?? {}) as Record<string, Record<string, unknown>>;
  // Each parameter is present one time in four: combinations stay mostly satisfiable, so answers carry data.
  const sometimes = (entries: [string, fc.Arbitrary<string>][]) =>
    fc
      .tuple(...entries.map(([n, arb]) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: 3 }), arb)))
      .map((picked) => Object.fromEntries(picked.filter(([, p]) => p === 0).map(([n, , v]) => [n, v])) as Record<string, string>);
  const query = sometimes(Object.entries(q).map(([n, s]) => [n, paramArb(n, s, pools)]));
  const headers = sometimes(
    Object.entries(hd)
      .filter(([n]) => n === 'x-api-version')
      .map(([n, s]) => [n, paramArb(n, s, pools)]),
  );
  // The path id, when there is one: any id of either tenant, or one that exists nowhere.
  const ids = op.path.startsWith('/api/shipments') ? pools.tripId : pools.docId;
  const path = op.params ? fc.constantFrom(...ids, 'NO-SUCH-ID').map((id) => ({ id })) : fc.constant({});
  return fc.record({ query, headers, path });
}

// ----------------------------------------------------------------------------- calls

async function rest(op: OperationSchemas, key: string, f: Filters) {
  const url = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(f.path[name] ?? ''));
  const res = await h.app.inject({ method: op.method as 'GET', url, query: f.query, headers: { 'x-api-key': key, ...f.headers } });
  return { status: res.statusCode, body: res.body };
}

/** The tool arguments of a REST request: the same names, with the schema's types (the only header, the deprecated x-api-version, is no tool argument). */
function toolArgs(op: OperationSchemas, f: Filters): Record<string, unknown> {
  const q = (op.querystring?.properties ?? {}) as Record<string, { type?: string }>;
  const args: Record<string, unknown> = { ...f.path };
  for (const [name, value] of Object.entries(f.query)) {
    const type = q[name]?.type;
    args[name] = type === 'integer' || type === 'number' ? Number(value) : type === 'boolean' ? value === 'true' : value;
  }
  return args;
}

async function viaMcp(op: OperationSchemas, f: Filters) {
  const res = await mcp.callTool({ name: op.operationId, arguments: toolArgs(op, f) });
  const structured = res.structuredContent as Record<string, unknown> | undefined;
  if (res.isError) return { status: (structured?.error as { code?: number } | undefined)?.code ?? 0, json: structured };
  const json = structured && Object.keys(structured).length === 1 && Array.isArray(structured.result) ? structured.result : structured;
  return { status: 200, json };
}

async function clearAll(): Promise<void> {
  await Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), alertJobs(h.db).deleteMany({}), alertRecords(h.db).deleteMany({})]);
}

async function schedule(
  key: string,
  jobs: { user: string; rule: string; cycle: string }[],
): Promise<{ id: string; user: string; rule: string; cycle: string }[]> {
  const out: { id: string; user: string; rule: string; cycle: string }[] = [];
  for (const j of jobs) {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/alerts/schedule',
      headers: { 'x-api-key': key },
      payload: { userIds: [j.user], ruleId: j.rule, cycleKey: j.cycle, nameAlert: `iso ${j.rule}` },
    });
    if (res.statusCode !== 200) throw new Error(`schedule failed: ${res.statusCode} ${res.body}`);
    out.push({ id: res.json().jobs[0].jobId, ...j });
  }
  return out;
}

async function insertRecord(tenant: string, job: { id: string; user: string; rule: string; cycle: string }): Promise<void> {
  await alertRecords(h.db).insertOne({
    _id: job.id,
    jobId: job.id,
    tenant,
    userId: job.user,
    ruleId: job.rule as never,
    cycleKey: job.cycle,
    nameAlert: `iso ${job.rule}`,
    individual: true,
    extraData: {},
    dueDate: NOW,
    evaluatedAt: NOW,
    status: 'clear',
    message: 'nothing found',
    summary: { findings: 0, critical: 0, warning: 0, info: 0, amount: 0 },
    findings: [],
    truncated: false,
    attempts: 1,
    worker: 'isolation-test',
  } as never);
}

// ----------------------------------------------------------------------------- the property

let answered200 = 0;
const parsedOrText = (body: string): unknown => {
  try {
    return JSON.parse(body) as unknown;
  } catch {
    return { result: body };
  }
};

let answered = 0;

t.test('tenant A never sees, nor depends on, tenant B (REST and MCP)', async (t) => {
  const world = fc.tuple(tenantArb, tenantArb, fc.array(fc.nat(), { minLength: 0, maxLength: 3 })).chain(([a, b, sharedFolios]) => {
    // Materialise documents now so the filters can draw from their values.
    const aDocs = a.docs.map((d) => buildDoc(TENANT_A, d));
    const bDocs = b.docs.map((d, i) => buildDoc(TENANT_B, d, sharedFolios.includes(i) && aDocs.length ? aDocs[i % aDocs.length]!.invoice.num : undefined));
    const aTrips = a.trips.map((s) => buildTrip(TENANT_A, s, aDocs, bDocs));
    const bTrips = b.trips.map((s) => buildTrip(TENANT_B, s, bDocs, aDocs));
    const pools: Pools = {
      folio: [...aDocs, ...bDocs].map((d) => d.invoice.num),
      uuid: [...aDocs, ...bDocs].map((d) => d.invoice.uuid),
      shipmentId: [...aTrips, ...bTrips].flatMap((tr) => tr.shipments.map((s) => s.shipment)),
      docId: [...aDocs, ...bDocs].map((d) => d.id),
      tripId: [...aTrips, ...bTrips].map((tr) => tr._id),
    };
    return fc.record({
      data: fc.constant({ aDocs, bDocs, aTrips, bTrips, aJobs: a.jobs, bJobs: b.jobs }),
      filters: fc.tuple(...readOps.map((op) => filtersArb(op, pools))),
    });
  });

  const out = await fc.check(
    fc.asyncProperty(world, async ({ data, filters }) => {
      await clearAll();
      await financialDocs(h.db).insertMany([...data.aDocs, ...data.bDocs].map(withDerivedFields));
      if (data.aTrips.length + data.bTrips.length) await insertTrips(h.db, [...data.aTrips, ...data.bTrips]);
      const aJobs = await schedule(KEY_A, data.aJobs);
      const bJobs = await schedule(KEY_B, data.bJobs);
      for (const [i, j] of aJobs.entries()) if (data.aJobs[i]!.withRecord) await insertRecord(TENANT_A, j);
      for (const [i, j] of bJobs.entries()) if (data.bJobs[i]!.withRecord) await insertRecord(TENANT_B, j);

      // A's own trips may name B's invoice ids (a cross-tenant link A stored): those ids are A's data, B's content is not.
      const namedByA = new Set(data.aTrips.map((tr) => tr.idFinan));
      const markers = [
        TENANT_B,
        ...data.bDocs.flatMap((d) => [...(namedByA.has(d.id) ? [] : [d.id]), d.invoice.uuid, d.invoice.uuid.toLowerCase(), d.invoice.uuid.toUpperCase()]),
        ...data.bTrips.flatMap((tr) => [tr._id, ...tr.shipments.map((s) => s.shipment)]),
        ...bJobs.map((j) => j.id),
      ];
      const leaks = (body: string) => markers.filter((m) => body.includes(m));

      // With B present: REST and MCP agree, nothing of B shows.
      const withB: { status: number; body: string }[] = [];
      for (const [i, op] of readOps.entries()) {
        const f = filters[i]!;
        const res = await rest(op, KEY_A, f);
        answered += 1;
        if (res.status === 200) answered200 += 1;
        // 404 only for an id that is not A's (get-by-id).
        if (![200, 400, ...(op.params ? [404] : [])].includes(res.status))
          throw new Error(`${op.operationId} ${JSON.stringify(f)} → ${res.status}: ${res.body.slice(0, 300)}`);
        const leaked = leaks(res.body);
        if (leaked.length) throw new Error(`${op.operationId} ${JSON.stringify(f)} leaks tenant B data: ${leaked.slice(0, 5).join(', ')}`);
        // Tools answer the current version: the REST request they stand for has no version header.
        const current = Object.keys(f.headers).length ? await rest(op, KEY_A, { ...f, headers: {} }) : res;
        if (leaks(current.body).length) throw new Error(`${op.operationId} ${JSON.stringify(f)} (current version) leaks tenant B data`);
        const tool = await viaMcp(op, f);
        // A text answer (the DIOT as CSV) is a tool's `{result: text}`, as toToolResult carries it.
        if (tool.status !== current.status || JSON.stringify(tool.json) !== JSON.stringify(parsedOrText(current.body))) {
          throw new Error(
            `${op.operationId} ${JSON.stringify(f)}: MCP answered ${tool.status} ${JSON.stringify(tool.json).slice(0, 200)}, REST ${current.status} ${current.body.slice(0, 200)}`,
          );
        }
        withB.push(res);
      }

      // B's job ids are not A's: 404, and nothing happens to them.
      for (const j of bJobs) {
        const res = await h.app.inject({ method: 'DELETE', url: `/api/alerts/jobs/${j.id}`, headers: { 'x-api-key': KEY_A } });
        if (res.statusCode !== 404) throw new Error(`cancelling B's job ${j.id} with A's key answered ${res.statusCode}`);
      }
      if (bJobs.length && (await alertJobs(h.db).countDocuments({ 'data.tenant': TENANT_B })) !== bJobs.length) throw new Error("A's cancel removed B's jobs");

      // Without B: the very same answers.
      await Promise.all([
        financialDocs(h.db).deleteMany({ company: TENANT_B }),
        trips(h.db).deleteMany({ company: TENANT_B }),
        alertJobs(h.db).deleteMany({ 'data.tenant': TENANT_B }),
        alertRecords(h.db).deleteMany({ tenant: TENANT_B }),
      ]);
      for (const [i, op] of readOps.entries()) {
        const again = await rest(op, KEY_A, filters[i]!);
        if (again.status !== withB[i]!.status || again.body !== withB[i]!.body) {
          throw new Error(
            `${op.operationId} ${JSON.stringify(filters[i])} depends on tenant B's data:\n with B:    ${withB[i]!.body.slice(0, 400)}\n without B: ${again.body.slice(0, 400)}`,
          );
        }
      }
    }),
    { numRuns: RUNS, endOnFailure: true },
  );
  if (out.failed) {
    // The counterexample (whole documents) is long: the error says what broke, the seed reproduces it.
    t.fail(`${(out.errorInstance as Error | undefined)?.message ?? 'property failed'}\n(fast-check seed ${out.seed}, path ${out.counterexamplePath})`);
    return;
  }
  t.pass(`${RUNS} random worlds, ${answered} requests per transport (${answered200} answered 200)`);
  t.ok(answered200 >= answered / 2, `most random filters are valid requests (${answered200}/${answered}), so the property is about data, not validation`);
});
