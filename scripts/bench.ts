/**
 * `npm run bench -- [--invoices N] [--trips N] [--runs N] [--warmup N] [--only SUBSTR] [--json]
 *                  [--data-dir DIR] [--db NAME] [--memory] [--compare [--seconds N]]`
 *
 * Starts the embedded engine as `npm start` does (on-disk store, default heap;
 * `--memory`: the in-memory backend), loads ONE demo tenant (TGO) with N
 * invoices and N trips through the demo generator (scripts/demo) unless the store
 * in --data-dir already holds that tenant (then it is reused, e.g. a store
 * made by `npm run seed`, and the restart is timed), builds the app
 * exactly as production does and times every read operation through
 * `app.inject` (HTTP stack included: auth, validation, serialisation): both
 * lists (summary/full, with filters), the tax summary and the five audits.
 * Prints a table of median / p95 / min / max per operation and the peak
 * resident memory of this Node process and of the engine's JVM.
 *
 * `--fairness` runs scripts/bench-fairness.ts instead: a second demo tenant (FNO, a tenth of the
 * counts) is loaded too, and FNO's list latency is measured alone, then while TGO runs year-long
 * reports from K keys, without and with the per-tenant report turns (real HTTP on 127.0.0.1:0).
 *
 * The export cases (scripts/bench-export.ts, e.g. `--only 'export financial-docs csv'`): a CSV of
 * all the tenant's rows of a list, built by the export worker in this process, downloaded over
 * real HTTP; time, rows per second, and the service's and the engine's peak RSS during each.
 *
 * `--mcp` runs scripts/bench-mcp.ts instead: every MCP tool called by the SDK's client over
 * Streamable HTTP (real HTTP on 127.0.0.1), reads with their defaults and the tenant's own ids.
 *
 * `--compare` runs scripts/bench-compare.ts instead: the service side by side
 * with bare baselines (autocannon at 1, 10 and 50 connections), same engine and data.
 *
 * The clock is pinned to the day after the dataset ends (2026-11-16 12:00
 * Mexico City), so the default periods (last 90 days, current month) cover data.
 */
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { startEmbeddedMongo } from './embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { prepareDatabase } from '../lib/prepare-database.ts';
import { ROLLUP_KINDS } from '../lib/rollups/kinds.ts';
import { rebuildRollups } from '../lib/rollups/rebuild-rollups.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { storeApiKey } from '../lib/auth/api-keys.ts';
import { buildApp } from '../handlers/app.ts';
import { generateTenant } from './demo/generate.ts';
import { DEFAULT_DEMO_SEED, DEMO_TENANTS, insertTenantData } from './demo/load.ts';
import { percentile } from '../lib/analytics/stats.ts';
import { progressReporter } from './progress.ts';
import { childPid, cpuMs, peakRssMb } from './proc-stats.ts';
import { formatCompare, runCompare } from './bench-compare.ts';
import { benchConfig, formatFairness, runFairness } from './bench-fairness.ts';
import { EXPORT_CASES, formatExportResults, runExportCase, type ExportResult } from './bench-export.ts';
import { exportsPlugin } from '../lib/exports/plugin.ts';
import { formatMcpResults, runMcpCases } from './bench-mcp.ts';

const USAGE = `usage: npm run bench -- [--invoices N] [--trips N] [--runs N] [--warmup N] [--only SUBSTR] [--json]

  --invoices N   financial documents of the tenant (default 100000)
  --trips N      trips of the tenant (default 100000)
  --runs N       timed runs per operation (default 5)
  --warmup N     untimed runs first (default 1)
  --only S       only operations whose name contains S (the export cases: 'export financial-docs csv',
                 'export shipments csv'; each runs once, --runs and --warmup do not apply)
  --json         print the results as JSON instead of a table
  --skip-rollups leave the kept totals unbuilt (docs/rollups.md): only with --only naming export cases,
                 which read the documents, not the totals (a 1M-row export without hours of rebuilding)
  --data-dir DIR on-disk store to use (default: a new temporary one); a store that already holds the
                 tenant is reused as it is (no loading): the restart is what is timed
  --db NAME      database in the store (default bench; \`npm run seed\` writes freight)
  --memory       in-memory backend instead of the on-disk store
  --skip-exports the read operations only, not the export cases (at 1M rows each export takes minutes)
  --mcp          every MCP tool through the SDK's client (Streamable HTTP on 127.0.0.1): reads with their
                 defaults and the tenant's own ids, --runs times each; writes once each (the spec's examples
                 on real documents; the webhook, alert job and exports it makes are removed); --only filters tools
  --compare      the service vs bare baselines on the same data (lists vs a bare Fastify route replaying
                 the captured driver commands, reports vs their pipelines, /health vs hello-world,
                 deepest page vs page 1); autocannon at 1, 10 and 50 connections
  --seconds N    autocannon duration per measurement with --compare (default 5); with --fairness, per phase (default 30)
  --fairness     tenant B's list (GET /api/financial-docs?limit=50, one client back to back) alone, then while
                 tenant A runs year-long reports from --report-clients keys: without the per-tenant report turn
                 (REPORT_MAX_CONCURRENT_PER_TENANT=1000) and with the defaults (1 running, 10 waiting);
                 --invoices/--trips default to 20000 for A, B gets a tenth; real HTTP on 127.0.0.1:0
  --report-clients K  concurrent report loops of tenant A with --fairness, each with its own key (default 6)

Environment: EMBEDDED_MONGO_XMX (engine heap, default 1024m as for npm start), EMBEDDED_MONGO_CACHE_MB.`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

const { values } = (() => {
  try {
    return parseArgs({
      options: {
        invoices: { type: 'string' },
        trips: { type: 'string' },
        runs: { type: 'string' },
        warmup: { type: 'string' },
        only: { type: 'string' },
        json: { type: 'boolean', default: false },
        'skip-rollups': { type: 'boolean', default: false },
        mcp: { type: 'boolean', default: false },
        'skip-exports': { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
        db: { type: 'string' },
        memory: { type: 'boolean', default: false },
        compare: { type: 'boolean', default: false },
        fairness: { type: 'boolean', default: false },
        'report-clients': { type: 'string' },
        seconds: { type: 'string' },
        help: { type: 'boolean', short: 'h', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    return fail((err as Error).message);
  }
})();
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const int = (name: string, raw: string | undefined, fallback: number, min: number): number => {
  if (raw === undefined) return fallback;
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < min || n > 10_000_000) fail(`--${name} must be an integer ≥ ${min} (got "${raw}")`);
  return n;
};
const invoices = int('invoices', values.invoices, values.fairness ? 20_000 : 100_000, 0);
const tripCount = int('trips', values.trips, values.fairness ? 20_000 : 100_000, 0);
const runs = int('runs', values.runs, 5, 1);
const warmup = int('warmup', values.warmup, 1, 0);
const seconds = int('seconds', values.seconds, values.fairness ? 30 : 5, 1);
const reportClients = int('report-clients', values['report-clients'], 6, 1);
// Every list and report reads the kept totals or would answer from partial ones: only the export cases (named
// 'export …', and no other case's name contains 'export') may run without them.
const skipRollups = values['skip-rollups'];
if (skipRollups && !(values.only?.startsWith('export') && !values.fairness && !values.compare))
  fail('--skip-rollups runs only the export cases: pass --only with an export case name (e.g. --only export)');
// --compare captures the service's driver commands: command monitoring on (for both sides alike).
const driverOptions = values.compare ? { driver: { monitorCommands: true } } : {};

const tenant = DEMO_TENANTS[0]!;
const t0 = performance.now();
const dataDir = values.memory ? undefined : (values['data-dir'] ?? (await mkdtemp(path.join(os.tmpdir(), 'bench-store-'))));
const engine = await startEmbeddedMongo(dataDir ? { dataDir } : {});
const { client, db } = await connectMongo(engine.uri, values.db ?? 'bench', { serverSelectionTimeoutMS: 5000, ...driverOptions });
await prepareDatabase(db, { log: (m) => process.stderr.write(`${m}\n`) });
const existing = await financialDocs(db).countDocuments({ company: tenant.rfc });
let inserted = { financialDocs: existing, trips: await trips(db).countDocuments({ company: tenant.rfc }) };
let loadSeconds = 0;
if (existing === 0) {
  const generated = generateTenant({ tenant: tenant.rfc, name: tenant.name, seed: DEFAULT_DEMO_SEED, invoices, trips: tripCount });
  const loadStart = performance.now();
  inserted = await insertTenantData(db, generated, progressReporter(`loading ${tenant.rfc}`));
  // Loaded in bulk, not through the repositories: its kept totals are built from the documents (docs/rollups.md).
  if (!skipRollups) await rebuildRollups(db, { tenants: [tenant.rfc] });
  loadSeconds = (performance.now() - loadStart) / 1000;
}
await storeApiKey(db, { key: tenant.apiKey, tenant: tenant.rfc, label: 'bench' });
// --fairness: a second tenant (a tenth of the counts) and one key of A per report loop.
const tenantB = DEMO_TENANTS[1]!;
const fairnessKeys = Array.from({ length: reportClients }, (_, i) => `bench_fairness_${tenant.rfc.toLowerCase()}_${i}`);
let insertedB = { financialDocs: 0, trips: 0 };
if (values.fairness) {
  insertedB = {
    financialDocs: await financialDocs(db).countDocuments({ company: tenantB.rfc }),
    trips: await trips(db).countDocuments({ company: tenantB.rfc }),
  };
  if (insertedB.financialDocs === 0) {
    const generated = generateTenant({
      tenant: tenantB.rfc,
      name: tenantB.name,
      seed: DEFAULT_DEMO_SEED + 1,
      invoices: Math.ceil(invoices / 10),
      trips: Math.ceil(tripCount / 10),
    });
    insertedB = await insertTenantData(db, generated, progressReporter(`loading ${tenantB.rfc}`));
    await rebuildRollups(db, { tenants: [tenantB.rfc] });
  }
  await storeApiKey(db, { key: tenantB.apiKey, tenant: tenantB.rfc, label: 'bench' });
  for (const key of fairnessKeys) await storeApiKey(db, { key, tenant: tenant.rfc, label: 'bench fairness' });
}

// Restart, as after `npm run seed` then `npm start`: engine open + indexes and backfill (prepareDatabase) + app ready.
let restartSeconds: number | null = null;
let engineRef = engine;
let clientRef = client;
let dbRef = db;
if (dataDir) {
  await client.close(true);
  await engine.stop();
  const r0 = performance.now();
  engineRef = await startEmbeddedMongo({ dataDir });
  ({ client: clientRef, db: dbRef } = await connectMongo(engineRef.uri, values.db ?? 'bench', { serverSelectionTimeoutMS: 5000, ...driverOptions }));
  await prepareDatabase(dbRef, { log: (m) => process.stderr.write(`${m}\n`) });
  restartSeconds = (performance.now() - r0) / 1000;
}

// The totals kept on write (docs/rollups.md): each kind not built is rebuilt, as the rollup worker would on a store written without them.
let rollupSeconds: number | null = null;
for (const kind of skipRollups ? [] : ROLLUP_KINDS) {
  if (await kind.ready(dbRef)) continue;
  const r0 = performance.now();
  await kind.rebuild(dbRef, { onProgress: (p) => process.stderr.write(`rollups ${p.kind}: ${p.tenant} ${p.phase} ${p.done}/${p.total}\n`) });
  const seconds = (performance.now() - r0) / 1000;
  rollupSeconds = (rollupSeconds ?? 0) + seconds;
  process.stderr.write(`rollups ${kind.name} rebuilt in ${seconds.toFixed(1)} s\n`);
}

const now = new Date('2026-11-16T12:00:00-06:00');
const exportCases =
  values.fairness || values.compare || values.mcp || values['skip-exports'] ? [] : EXPORT_CASES.filter((c) => !values.only || c.name.includes(values.only));
// The export worker only when an export case runs (its polling stays out of the other timings); it polls often, so the wait is the build's.
// --mcp queues an export per export tool (discarded after): no cap on them.
const config = benchConfig(
  exportCases.length
    ? { EXPORT_PROCESS_EVERY_MS: '50' }
    : values.mcp
      ? { EXPORT_MAX_ACTIVE: '1000', WEBHOOK_ENCRYPTION_KEY: randomBytes(32).toString('hex') }
      : {},
);
const appStart = performance.now();
const app = await buildApp({ config, db: dbRef, logger: false, now: () => now, plugins: exportCases.length ? [exportsPlugin({ worker: true })] : [] });
if (restartSeconds !== null) restartSeconds += (performance.now() - appStart) / 1000;

const top = await financialDocs(dbRef)
  .aggregate<{ _id: string }>([{ $match: { company: tenant.rfc } }, { $group: { _id: '$client', n: { $sum: 1 } } }, { $sort: { n: -1 } }, { $limit: 1 }])
  .toArray();
const topClient = top[0]?._id ?? 'XAXX010101000';

const CASES: [string, string][] = [
  ['financial-docs summary', '/api/financial-docs'],
  ['financial-docs full limit=100', '/api/financial-docs?detail=full&limit=100'],
  ['financial-docs client+90d', `/api/financial-docs?client=${topClient}&startDate=2026-08-18&endDate=2026-11-15`],
  ['financial-docs paymentStatus=partial', '/api/financial-docs?paymentStatus=partial'],
  ['financial-docs cancelled=true', '/api/financial-docs?cancelled=true'],
  ['financial-docs cancelled=false', '/api/financial-docs?cancelled=false'],
  ['financial-docs cancellationStatus=pending', '/api/financial-docs?cancellationStatus=pending'],
  ['financial-docs page 50', '/api/financial-docs?page=50&limit=100'],
  ['financial-docs openAsOf=2026-10-31', '/api/financial-docs?openAsOf=2026-10-31'],
  ['financial-docs openAsOf=2026-10-31 client', `/api/financial-docs?openAsOf=2026-10-31&client=${topClient}`],
  ['shipments summary', '/api/shipments'],
  ['shipments full limit=100', '/api/shipments?detail=full&limit=100'],
  ['shipments client+offload 90d', `/api/shipments?client=${topClient}&dateFilterBy=offload&startDate=2026-08-18&endDate=2026-11-15`],
  ['shipments status=2 (in transit)', '/api/shipments?status=2'],
  ['shipments offload month', '/api/shipments?dateFilterBy=offload&startDate=2026-10-01&endDate=2026-10-31'],
  ['shipments offload month page 20', '/api/shipments?dateFilterBy=offload&startDate=2026-10-01&endDate=2026-10-31&page=20'],
  ['tax-summary month (invoice basis)', '/api/tax-summary?targetMonth=2026-10'],
  ['tax-summary month (payment basis)', '/api/tax-summary?targetMonth=2026-10&basis=payment'],
  ['tax-summary month, one client', `/api/tax-summary?targetMonth=2026-10&client=${topClient}`],
  ['tax-summary 366 days', '/api/tax-summary?startDate=2025-11-15&endDate=2026-11-15'],
  ['tax-position month', '/api/tax/position?month=2026-10'],
  ['tax-position lines vatCollected page 5', '/api/tax/position/lines?month=2026-10&figure=vatCollected&page=5&limit=100'],
  ['tax-diot month', '/api/tax/diot?month=2026-10'],
  ['tax-diot month csv', '/api/tax/diot?month=2026-10&format=csv'],
  ['cash-inflow-forecast 90d', '/api/analytics/cash-inflow-forecast'],
  ['cash-inflow-forecast 366d monthly', '/api/analytics/cash-inflow-forecast?startDate=2025-11-15&endDate=2026-11-15&bucket=month'],
  ['cash-inflow-forecast as of 2026-06-30', '/api/analytics/cash-inflow-forecast?startDate=2026-04-01&endDate=2026-06-30&asOf=2026-06-30'],
  ['discounts-and-shrinkage 90d', '/api/analytics/discounts-and-shrinkage'],
  ['discounts-and-shrinkage 366d', '/api/analytics/discounts-and-shrinkage?startDate=2025-11-15&endDate=2026-11-15'],
  ['fleet-utilization 90d by vehicle', '/api/analytics/fleet-utilization'],
  ['fleet-utilization 366d by driver', '/api/analytics/fleet-utilization?startDate=2025-11-15&endDate=2026-11-15&groupBy=driver'],
  ['dispatch-to-bill 90d', '/api/analytics/dispatch-to-bill'],
  ['dispatch-to-bill 366d', '/api/analytics/dispatch-to-bill?startDate=2025-11-15&endDate=2026-11-15'],
  ['unit-economics 90d', '/api/analytics/unit-economics'],
  ['unit-economics 366d offloaded', '/api/analytics/unit-economics?startDate=2025-11-15&endDate=2026-11-15&litresBasis=offloaded'],
  ['receivables-aging today', '/api/receivables/aging'],
  ['receivables-aging as of 2026-10-31', '/api/receivables/aging?asOf=2026-10-31'],
  ['receivables-aging as of 2026-03-15, one client', `/api/receivables/aging?asOf=2026-03-15&client=${topClient}`],
];

if (values.fairness) {
  await app.close();
  const load0 = os.loadavg();
  process.stderr.write(`fairness: ${reportClients} report loops of ${tenant.rfc}, ${seconds} s per phase\n`);
  const phases = await runFairness({
    db: dbRef,
    now,
    reportKeys: fairnessKeys,
    listKey: tenantB.apiKey,
    seconds,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const load1 = os.loadavg();
  await clientRef.close(true);
  await engineRef.stop();
  if (dataDir && !values['data-dir']) await rm(dataDir, { recursive: true, force: true });
  const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(', ');
  const head = [
    `Tenant A ${tenant.rfc}: ${inserted.financialDocs} invoices, ${inserted.trips} trips; tenant B ${tenantB.rfc}: ${insertedB.financialDocs} invoices, ${insertedB.trips} trips; ${dataDir ? 'on-disk' : 'in-memory'} engine (heap cap ${engineRef.maxHeap}); Node ${process.version}.`,
    `Real HTTP on 127.0.0.1 (keep-alive, one connection per client), a freshly built app per phase; ${seconds} s per phase; B: one client, GET /api/financial-docs?limit=50 back to back;`,
    `A: ${reportClients} loops, one key each, cycling the tax summary and the five audits over 366 days (429: wait retry-after); RATE_LIMIT_MAX, RATE_LIMIT_IP_MAX, REPORT_RATE_LIMIT_MAX 10000000 in every phase.`,
    `Load average (1, 5, 15 min) before the phases ${la(load0)}, after ${la(load1)} (${os.cpus().length} cores; a shared machine).`,
  ].join('\n');
  process.stdout.write(values.json ? `${JSON.stringify({ head, phases }, null, 2)}\n` : `${head}\n\n${formatFairness(phases)}\n`);
  process.exit(0);
}

if (values.mcp) {
  const jvm = childPid(process.pid, 'embedded-mongo');
  const load0 = os.loadavg();
  const results = await runMcpCases({ app, db: dbRef, apiKey: tenant.apiKey, jvmPid: jvm, runs, warmup, ...(values.only ? { only: values.only } : {}) });
  const nodePeak = Math.round(process.resourceUsage().maxRSS / 1024);
  const jvmPeak = peakRssMb(jvm);
  await app.close();
  await clientRef.close(true);
  await engineRef.stop();
  if (dataDir && !values['data-dir']) await rm(dataDir, { recursive: true, force: true });
  const la = (l: number[]) => l.map((x) => x.toFixed(1)).join(', ');
  const slowest = results.reduce((a, b) => (b.maxMs > a.maxMs ? b : a), results[0]!);
  const head = [
    `Tenant ${tenant.rfc}: ${inserted.financialDocs} invoices, ${inserted.trips} trips; ${dataDir ? 'on-disk' : 'in-memory'} engine (heap cap ${engineRef.maxHeap}); MCP over Streamable HTTP; reads ${runs} runs after ${warmup} warm-up, writes once; Node ${process.version}.`,
    `${results.length} tools; slowest call ${slowest.tool} ${slowest.maxMs} ms; over 5 s: ${
      results
        .filter((r) => r.maxMs > 5000)
        .map((r) => r.tool)
        .join(', ') || 'none'
    }.`,
    `Load average before ${la(load0)}, after ${la(os.loadavg())} (${os.cpus().length} cores); peak RSS Node ${nodePeak} MB (service + client), engine ${jvmPeak ?? 'n/a'} MB.`,
  ].join('\n');
  process.stdout.write(values.json ? `${JSON.stringify({ head, results }, null, 2)}\n` : `${head}\n\n${formatMcpResults(results)}\n`);
  process.exit(0);
}

if (values.compare) {
  const pick = (names: string[]) => CASES.filter(([n]) => names.includes(n)).map(([name, url]) => ({ name, url }));
  const deepest = (total: number) => Math.min(500, Math.max(1, Math.ceil(total / 100)));
  const report = await runCompare({
    app,
    client: clientRef,
    db: dbRef,
    apiKey: tenant.apiKey,
    lists: pick([
      'financial-docs summary',
      'financial-docs full limit=100',
      'financial-docs client+90d',
      'shipments summary',
      'shipments full limit=100',
      'shipments status=2 (in transit)',
    ]),
    reports: CASES.filter(([n]) => n.startsWith('tax-') || (n.includes('90d') && !n.includes('client'))).map(([name, url]) => ({ name, url })),
    depth: [
      [
        { name: 'financial-docs', url: '/api/financial-docs?limit=100' },
        { name: 'financial-docs', url: `/api/financial-docs?limit=100&page=${deepest(inserted.financialDocs)}` },
      ],
      [
        { name: 'shipments', url: '/api/shipments?limit=100' },
        { name: 'shipments', url: `/api/shipments?limit=100&page=${deepest(inserted.trips)}` },
      ],
    ],
    seconds,
    connections: [1, 10, 50],
    runs,
    log: (line) => process.stderr.write(`${line}\n`),
  });
  const nodePeak = Math.round(process.resourceUsage().maxRSS / 1024);
  const jvmPeak = peakRssMb(childPid(process.pid, 'embedded-mongo'));
  await app.close();
  await clientRef.close(true);
  await engineRef.stop();
  if (dataDir && !values['data-dir']) await rm(dataDir, { recursive: true, force: true });
  const head = `Tenant ${tenant.rfc}: ${inserted.financialDocs} invoices, ${inserted.trips} trips; ${dataDir ? 'on-disk' : 'in-memory'} engine; autocannon ${seconds} s per measurement; ${runs} timed runs per report; Node ${process.version}; load average at the end ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(', ')} (${os.cpus().length} cores); peak RSS Node ${nodePeak} MB (bench process: service + autocannon worker), engine ${jvmPeak ?? 'n/a'} MB`;
  process.stdout.write(values.json ? `${JSON.stringify({ head, report }, null, 2)}\n` : `${head}\n\n${formatCompare(report)}\n`);
  process.exit(0);
}

interface Result {
  name: string;
  url: string;
  medianMs: number;
  p95Ms: number;
  minMs: number;
  maxMs: number;
  cpuMs: number;
  bytes: number;
}
const jvmPid = childPid(process.pid, 'embedded-mongo');
const results: Result[] = [];
for (const [name, url] of CASES) {
  if (values.only && !name.includes(values.only)) continue;
  const times: number[] = [];
  const cpu: number[] = [];
  let bytes = 0;
  for (let i = 0; i < warmup + runs; i++) {
    const start = performance.now();
    const nodeCpu0 = process.cpuUsage();
    const jvmCpu0 = cpuMs(jvmPid);
    const res = await app.inject({ method: 'GET', url, headers: { 'x-api-key': tenant.apiKey } });
    const ms = performance.now() - start;
    const nodeCpu = process.cpuUsage(nodeCpu0);
    if (i >= warmup) cpu.push((nodeCpu.user + nodeCpu.system) / 1000 + cpuMs(jvmPid) - jvmCpu0);
    if (res.statusCode !== 200) throw new Error(`${name}: ${url} answered ${res.statusCode}: ${res.body.slice(0, 500)}`);
    bytes = res.rawPayload.length;
    if (i >= warmup) times.push(ms);
  }
  const r = (x: number | null): number => Math.round((x ?? 0) * 10) / 10;
  results.push({
    name,
    url,
    medianMs: r(percentile(times, 50)),
    p95Ms: r(percentile(times, 95)),
    minMs: r(Math.min(...times)),
    maxMs: r(Math.max(...times)),
    cpuMs: r(percentile(cpu, 50)),
    bytes,
  });
  if (!values.json) process.stderr.write(`  ${name}: median ${r(percentile(times, 50))} ms, cpu ${r(percentile(cpu, 50))} ms\n`);
}

// Last: each resets the peaks of RSS it reports, so the whole run's peaks are read first.
const nodePeakMb = Math.round(process.resourceUsage().maxRSS / 1024);
const jvmPeakMb = peakRssMb(jvmPid);
const exportResults: ExportResult[] = [];
if (exportCases.length) await app.ready();
for (const c of exportCases) {
  const r = await runExportCase({ app, apiKey: tenant.apiKey, jvmPid, case: c });
  exportResults.push(r);
  if (!values.json)
    process.stderr.write(
      `  ${r.name}: ${r.rows} rows in ${r.totalSeconds} s (${r.rowsPerSecond} rows/s), peak RSS service ${r.servicePeakRssMb ?? 'n/a'} MB, engine ${r.enginePeakRssMb ?? 'n/a'} MB\n`,
    );
}
await app.close();
await clientRef.close(true);
await engineRef.stop();
if (dataDir && !values['data-dir']) await rm(dataDir, { recursive: true, force: true });

const summary = {
  tenant: tenant.rfc,
  invoices: inserted.financialDocs,
  trips: inserted.trips,
  loadSeconds: Math.round(loadSeconds),
  engine: dataDir ? `on-disk (${dataDir})` : 'in-memory',
  restartSeconds: restartSeconds === null ? null : Math.round(restartSeconds * 10) / 10,
  runs,
  warmup,
  node: process.version,
  nodePeakRssMb: nodePeakMb,
  engineJvmPeakRssMb: jvmPeakMb,
  loadAverage: os.loadavg().map((x) => Math.round(x * 10) / 10),
  totalSeconds: Math.round((performance.now() - t0) / 1000),
};
if (values.json) {
  process.stdout.write(`${JSON.stringify({ summary, results, exports: exportResults }, null, 2)}\n`);
} else {
  const pad = (s: string, n: number) => s.padEnd(n);
  const num = (x: number, n: number) => String(x).padStart(n);
  const w = Math.max(...results.map((r) => r.name.length), 9);
  const lines = [
    `Tenant ${summary.tenant}: ${summary.invoices} invoices, ${summary.trips} trips (${loadSeconds ? `loaded in ${summary.loadSeconds} s` : 'already in the store'}); ${summary.engine} engine${restartSeconds === null ? '' : `, restart (engine open + indexes + app ready) ${summary.restartSeconds} s`}; ${runs} runs after ${warmup} warm-up; Node ${summary.node}`,
    ...(results.length
      ? [
          '',
          `| ${pad('operation', w)} | median ms | p95 ms | min ms | max ms | CPU ms (median) | response bytes |`,
          `| ${'-'.repeat(w)} | --------: | -----: | -----: | -----: | --------------: | -------------: |`,
          ...results.map(
            (r) =>
              `| ${pad(r.name, w)} | ${num(r.medianMs, 9)} | ${num(r.p95Ms, 6)} | ${num(r.minMs, 6)} | ${num(r.maxMs, 6)} | ${num(r.cpuMs, 15)} | ${num(r.bytes, 14)} |`,
          ),
        ]
      : []),
    ...(exportResults.length ? ['', formatExportResults(exportResults)] : []),
    '',
    `Peak RSS: Node process ${nodePeakMb} MB; embedded engine JVM ${jvmPeakMb === null ? 'n/a' : `${jvmPeakMb} MB`} (heap cap ${engineRef.maxHeap}). Total ${summary.totalSeconds} s. Load average at the end: ${summary.loadAverage.join(', ')} (${os.cpus().length} cores).`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
