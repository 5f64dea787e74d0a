/**
 * `npm run soak -- [--seconds 60] [--connections 32] [--invoices 3000] [--json]`
 *
 * A bounded soak against loopback: an in-memory embedded engine with the demo
 * dataset of the tenant it calls as, the service built and configured exactly as scripts/start.ts does
 * (buildApp + alerts plugin, configuration from the environment), listening
 * on 127.0.0.1, and autocannon (in a worker thread, so it has its own event
 * loop and heap) at saturation cycling over both lists and an audit. Every
 * second the service's heap is measured after a full garbage collection
 * (the only memory figure that shows a leak rather than the collector's
 * mood); resident memory is reported too. Prints throughput, latency, status
 * counts and the memory trend; exits 1 on any connection error, timeout,
 * non-2xx answer, or a steady heap growth after warm-up (least-squares slope
 * over the last two thirds of the run).
 *
 * test/soak.test.ts runs the same thing for a few seconds in `npm test`.
 */
import { childPid, rssMb } from './proc-stats.ts';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import vm from 'node:vm';
import autocannon from 'autocannon';
import { startEmbeddedMongo } from './embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from './demo/load.ts';
import { buildApp } from '../handlers/app.ts';
import { loadConfig } from '../lib/config.ts';
import { alertsPlugin } from '../lib/alerts/plugin.ts';

export const SOAK_PATHS = ['/api/financial-docs?limit=20', '/api/shipments?limit=20', '/api/analytics/cash-inflow-forecast'];
/** The demo tenant every request of the soak calls as. */
const SOAK_TENANT = DEMO_TENANTS[0]!;

export interface SoakOptions {
  seconds: number;
  connections: number;
  invoices: number;
  /** Largest accepted heap growth after warm-up, MB per minute (default 10). */
  maxGrowthMbPerMin?: number;
  /** The engine lives only as long as a short run (test/soak.test.ts): C1 only (launcher.ts `shortLived`). */
  shortLivedEngine?: boolean;
  log?: (line: string) => void;
}

export interface SoakResult {
  seconds: number;
  connections: number;
  paths: string[];
  requests: number;
  requestsPerSecond: number;
  latencyMs: { p50: number; p90: number; p99: number; max: number };
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  non2xx: number;
  memory: {
    heapStartMb: number;
    heapEndMb: number;
    heapSlopeMbPerMin: number;
    rssStartMb: number;
    rssEndMb: number;
    rssPeakMb: number;
    engineRssMb: number | null;
  };
  problems: string[];
}

const MB = 1024 * 1024;

/** `gc()` without starting node with --expose-gc. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

/** Least-squares slope of y over x. */
function slope(points: { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

export async function runSoak(opts: SoakOptions): Promise<SoakResult> {
  const log = opts.log ?? (() => {});
  const gc = collector();
  const engine = await startEmbeddedMongo({ shortLived: opts.shortLivedEngine === true });
  try {
    const { client, db } = await connectMongo(engine.uri, 'soak');
    try {
      await ensureIndexes(db);
      // Only the tenant the soak calls as (its key in every request): the other's documents and
      // totals would be read by nothing, and were half of the load.
      log(`loading the demo dataset (${opts.invoices} invoices and trips of ${SOAK_TENANT.rfc})`);
      await loadDemoData(db, { invoices: opts.invoices, trips: opts.invoices, tenants: [SOAK_TENANT.rfc] });
      // Production configuration; the rate limit is raised for the run (one key at saturation), not switched off,
      // and so are the tenant's report turns (one report at a time would leave every connection queued on one).
      const config = loadConfig({
        ...process.env,
        RATE_LIMIT_MAX: '10000000',
        RATE_LIMIT_IP_MAX: '10000000',
        REPORT_RATE_LIMIT_MAX: '10000000',
        REPORT_MAX_CONCURRENT_PER_TENANT: '1000',
        REPORT_QUEUE_PER_TENANT: '10000',
        LOG_LEVEL: 'warn',
        PORT: '0',
        HOST: '127.0.0.1',
      });
      const app = await buildApp({ config, db, plugins: [alertsPlugin({ worker: config.worker })] });
      try {
        await app.listen({ port: 0, host: '127.0.0.1' });
        const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
        const enginePid = childPid(process.pid, 'embedded-mongo.jar');
        const heap: { x: number; y: number }[] = [];
        const rss: number[] = [];
        const t0 = Date.now();
        const sample = () => {
          gc();
          heap.push({ x: (Date.now() - t0) / 60_000, y: process.memoryUsage().heapUsed / MB });
          rss.push(process.memoryUsage().rss / MB);
        };
        const sampler = setInterval(sample, 1000);
        log(`autocannon: ${opts.connections} connections for ${opts.seconds} s over ${SOAK_PATHS.join(', ')} against ${base}`);
        const result = await autocannon({
          url: base,
          connections: opts.connections,
          duration: opts.seconds,
          timeout: 10,
          workers: 1,
          headers: { 'x-api-key': SOAK_TENANT.apiKey },
          requests: SOAK_PATHS.map((path) => ({ method: 'GET', path })),
        });
        clearInterval(sampler);
        // Requests autocannon abandoned at the end may still be running: let them finish before closing.
        await new Promise((r) => setTimeout(r, 1500));
        sample();
        const engineRss = rssMb(enginePid);
        // Warm-up (JIT, connection pools, caches filling) is the first third: not a trend.
        const steady = heap.filter((p) => p.x >= heap[heap.length - 1]!.x / 3);
        const growth = slope(steady);
        const statusCodes = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, v.count]));
        const problems: string[] = [];
        if (result.errors) problems.push(`${result.errors} connection errors`);
        if (result.timeouts) problems.push(`${result.timeouts} timeouts`);
        if (result.non2xx) problems.push(`${result.non2xx} non-2xx answers: ${JSON.stringify(statusCodes)}`);
        if (result.requests.total === 0) problems.push('no request completed');
        const maxGrowth = opts.maxGrowthMbPerMin ?? 10;
        if (growth > maxGrowth) problems.push(`the heap grows ${growth.toFixed(1)} MB/min after warm-up (limit ${maxGrowth})`);
        return {
          seconds: opts.seconds,
          connections: opts.connections,
          paths: SOAK_PATHS,
          requests: result.requests.total,
          requestsPerSecond: Math.round(result.requests.average),
          latencyMs: { p50: result.latency.p50, p90: result.latency.p90, p99: result.latency.p99, max: result.latency.max },
          statusCodes,
          errors: result.errors,
          timeouts: result.timeouts,
          non2xx: result.non2xx,
          memory: {
            heapStartMb: Math.round(steady[0]?.y ?? 0),
            heapEndMb: Math.round(heap[heap.length - 1]?.y ?? 0),
            heapSlopeMbPerMin: Math.round(growth * 10) / 10,
            rssStartMb: Math.round(rss[0] ?? 0),
            rssEndMb: Math.round(rss[rss.length - 1] ?? 0),
            rssPeakMb: Math.round(Math.max(...rss)),
            engineRssMb: engineRss === null ? null : Math.round(engineRss),
          },
          problems,
        };
      } finally {
        await app.close();
      }
    } finally {
      await client.close();
    }
  } finally {
    await engine.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string', default: '60' },
      connections: { type: 'string', default: '32' },
      invoices: { type: 'string', default: '3000' },
      json: { type: 'boolean', default: false },
    },
  });
  const result = await runSoak({
    seconds: Number(values.seconds),
    connections: Number(values.connections),
    invoices: Number(values.invoices),
    log: (l) => process.stderr.write(`[soak] ${l}\n`),
  });
  if (values.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    const m = result.memory;
    process.stdout.write(
      [
        `soak: ${result.seconds} s, ${result.connections} connections, ${result.paths.length} paths (${result.paths.join(', ')})`,
        `  requests      ${result.requests} (${result.requestsPerSecond}/s)`,
        `  latency ms    p50 ${result.latencyMs.p50}  p90 ${result.latencyMs.p90}  p99 ${result.latencyMs.p99}  max ${result.latencyMs.max}`,
        `  statuses      ${JSON.stringify(result.statusCodes)}  errors ${result.errors}  timeouts ${result.timeouts}  non-2xx ${result.non2xx}`,
        `  service heap  ${m.heapStartMb} MB after warm-up → ${m.heapEndMb} MB at the end (after GC), trend ${m.heapSlopeMbPerMin} MB/min`,
        `  service RSS   ${m.rssStartMb} → ${m.rssEndMb} MB (peak ${m.rssPeakMb} MB); engine JVM RSS ${m.engineRssMb ?? '?'} MB`,
        result.problems.length ? `  PROBLEMS      ${result.problems.join('; ')}` : '  result        ok: no error, no non-2xx, no heap growth',
        '',
      ].join('\n'),
    );
  }
  process.exit(result.problems.length ? 1 : 0);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) await main();
