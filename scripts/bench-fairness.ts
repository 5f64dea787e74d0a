/**
 * `npm run bench -- --fairness`: does one tenant's year-long reports slow another tenant's
 * lists (issue 33 point 7), and do the per-tenant report turns (lib/http/tenant-concurrency.ts)
 * keep them apart?
 *
 * Tenant A (the demo tenant TGO, loaded by scripts/bench.ts) runs K loops of year-long reports,
 * each loop with its own API key of A, cycling through the tax summary and the five audits over
 * 366 days (a 429 is counted and the loop waits its retry-after, or 1 s). Meanwhile one client of
 * tenant B (FNO) requests `GET /api/financial-docs?limit=50` back to back. Three phases, one
 * after the other on the same data, each with a freshly built app listening on 127.0.0.1:0 and
 * requests over real HTTP (keep-alive, one connection per client), so the HTTP stack under
 * concurrency is measured too:
 *   baseline  B's list alone (no A load), default report settings;
 *   before    REPORT_MAX_CONCURRENT_PER_TENANT=1000 (no per-tenant turn: the behaviour before);
 *   after     the defaults (REPORT_MAX_CONCURRENT_PER_TENANT=1, REPORT_QUEUE_PER_TENANT=10).
 * RATE_LIMIT_MAX, RATE_LIMIT_IP_MAX and REPORT_RATE_LIMIT_MAX are high in every phase, so only
 * the turns differ.
 */
import http from 'node:http';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import type { Db } from 'mongodb';
import { buildApp } from '../handlers/app.ts';
import { loadConfig } from '../lib/config.ts';
import { percentile } from '../lib/analytics/stats.ts';

export const FAIRNESS_REPORTS: readonly [string, string][] = [
  ['tax-summary 366 days', '/api/tax-summary?startDate=2025-11-15&endDate=2026-11-15'],
  ['cash-inflow-forecast 366d monthly', '/api/analytics/cash-inflow-forecast?startDate=2025-11-15&endDate=2026-11-15&bucket=month'],
  ['discounts-and-shrinkage 366d', '/api/analytics/discounts-and-shrinkage?startDate=2025-11-15&endDate=2026-11-15'],
  ['fleet-utilization 366d', '/api/analytics/fleet-utilization?startDate=2025-11-15&endDate=2026-11-15'],
  ['dispatch-to-bill 366d', '/api/analytics/dispatch-to-bill?startDate=2025-11-15&endDate=2026-11-15'],
  ['unit-economics 366d', '/api/analytics/unit-economics?startDate=2025-11-15&endDate=2026-11-15'],
];
const LIST_URL = '/api/financial-docs?limit=50';

export interface FairnessOptions {
  db: Db;
  now: Date;
  /** API keys of tenant A, one per report loop. */
  reportKeys: string[];
  /** API key of tenant B. */
  listKey: string;
  seconds: number;
  log: (line: string) => void;
}

export interface PhaseResult {
  phase: string;
  settings: string;
  list: { count: number; errors: number; p50: number; p95: number; p99: number; max: number; perSecond: number };
  reports: { answered: number; rejected429: number; otherErrors: number; p50: number | null; p95: number | null };
  loadAverage: number;
}

interface Answer {
  status: number;
  ms: number;
  retryAfter: string | undefined;
}

/** One GET over a keep-alive agent; the time includes reading the whole body. */
function get(port: number, agent: http.Agent, url: string, key: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const start = performance.now();
    const req = http.request(
      { host: '127.0.0.1', port, path: url, method: 'GET', agent, headers: { 'x-api-key': key, 'accept-encoding': 'identity' } },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve({ status: res.statusCode ?? 0, ms: performance.now() - start, retryAfter: res.headers['retry-after'] }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** The benches' service configuration: limits raised (the bench saturates one key), long timeouts, `env` on top. */
export function benchConfig(env: Record<string, string> = {}): ReturnType<typeof loadConfig> {
  return loadConfig({
    LOG_LEVEL: 'silent',
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_IP_MAX: '10000000',
    REPORT_RATE_LIMIT_MAX: '10000000',
    QUERY_TIMEOUT_MS: '600000',
    REQUEST_TIMEOUT_MS: '600000',
    DOCUMENT_BASE_URL: 'http://localhost:3000/files',
    ...env,
  });
}

const round = (x: number | null): number => Math.round((x ?? 0) * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runPhase(opts: FairnessOptions, phase: string, env: Record<string, string>, withReports: boolean): Promise<PhaseResult> {
  const config = benchConfig(env);
  const app = await buildApp({ config, db: opts.db, logger: false, now: () => opts.now });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const port = (app.server.address() as AddressInfo).port;
  const agents: http.Agent[] = [];
  const agent = () => {
    const a = new http.Agent({ keepAlive: true, maxSockets: 1 });
    agents.push(a);
    return a;
  };
  try {
    // Warm-up: a few lists (and, with reports, each report once) before the clock starts.
    const listAgent = agent();
    for (let i = 0; i < 5; i++) await get(port, listAgent, LIST_URL, opts.listKey);

    const deadline = performance.now() + opts.seconds * 1000;
    const reportTimes: number[] = [];
    let answered = 0;
    let rejected429 = 0;
    let otherErrors = 0;
    const reportLoop = async (key: string, offset: number) => {
      const a = agent();
      for (let i = offset; performance.now() < deadline; i++) {
        const [, url] = FAIRNESS_REPORTS[i % FAIRNESS_REPORTS.length]!;
        const r = await get(port, a, url, key).catch(() => ({ status: 0, ms: 0, retryAfter: undefined }));
        const inWindow = performance.now() <= deadline;
        if (r.status === 200) {
          if (inWindow) {
            answered += 1;
            reportTimes.push(r.ms);
          }
        } else if (r.status === 429) {
          rejected429 += 1;
          const wait = Number(r.retryAfter);
          await sleep(Math.min(Number.isFinite(wait) && wait > 0 ? wait * 1000 : 1000, Math.max(0, deadline - performance.now())));
        } else otherErrors += 1;
      }
    };
    const listTimes: number[] = [];
    let listErrors = 0;
    const listLoop = async () => {
      while (performance.now() < deadline) {
        const r = await get(port, listAgent, LIST_URL, opts.listKey).catch(() => ({ status: 0, ms: 0, retryAfter: undefined }));
        if (r.status === 200) listTimes.push(r.ms);
        else listErrors += 1;
      }
    };
    const started = performance.now();
    const loops = withReports ? opts.reportKeys.map((key, i) => reportLoop(key, i)) : [];
    await listLoop();
    const loadAverage = os.loadavg()[0]!;
    const elapsed = (performance.now() - started) / 1000;
    // Reports in flight at the deadline finish (not counted) before the next phase starts.
    await Promise.all(loops);
    const result: PhaseResult = {
      phase,
      settings:
        Object.entries(env)
          .map(([k, v]) => `${k}=${v}`)
          .join(' ') || 'defaults',
      list: {
        count: listTimes.length,
        errors: listErrors,
        p50: round(percentile(listTimes, 50)),
        p95: round(percentile(listTimes, 95)),
        p99: round(percentile(listTimes, 99)),
        max: round(listTimes.length ? Math.max(...listTimes) : 0),
        perSecond: round(listTimes.length / elapsed),
      },
      reports: {
        answered,
        rejected429,
        otherErrors,
        p50: reportTimes.length ? round(percentile(reportTimes, 50)) : null,
        p95: reportTimes.length ? round(percentile(reportTimes, 95)) : null,
      },
      loadAverage: round(loadAverage),
    };
    opts.log(
      `  ${phase}: B list p50 ${result.list.p50} ms, p95 ${result.list.p95} ms, p99 ${result.list.p99} ms, max ${result.list.max} ms (${result.list.count}); A reports ${answered} answered, ${rejected429} × 429, ${otherErrors} other`,
    );
    return result;
  } finally {
    for (const a of agents) a.destroy();
    await app.close();
  }
}

export async function runFairness(opts: FairnessOptions): Promise<PhaseResult[]> {
  const high = { REPORT_RATE_LIMIT_MAX: '10000000' };
  // Warm the engine's cache with each report once (A's data read from disk) before any phase.
  {
    const config = benchConfig();
    const app = await buildApp({ config, db: opts.db, logger: false, now: () => opts.now });
    for (const [name, url] of FAIRNESS_REPORTS) {
      const t = performance.now();
      const res = await app.inject({ method: 'GET', url, headers: { 'x-api-key': opts.reportKeys[0]! } });
      if (res.statusCode !== 200) throw new Error(`${name}: ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      opts.log(`  warm-up ${name}: ${Math.round(performance.now() - t)} ms`);
    }
    const res = await app.inject({ method: 'GET', url: LIST_URL, headers: { 'x-api-key': opts.listKey } });
    if (res.statusCode !== 200) throw new Error(`${LIST_URL} (tenant B) answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    await app.close();
  }
  return [
    await runPhase(opts, 'baseline (B alone)', high, false),
    await runPhase(opts, 'before (no per-tenant turn)', { ...high, REPORT_MAX_CONCURRENT_PER_TENANT: '1000' }, true),
    await runPhase(opts, 'after (defaults: 1 running, 10 waiting)', { ...high, REPORT_MAX_CONCURRENT_PER_TENANT: '1', REPORT_QUEUE_PER_TENANT: '10' }, true),
  ];
}

export function formatFairness(results: PhaseResult[]): string {
  const w = Math.max(...results.map((r) => r.phase.length));
  const n = (x: number | null, width: number) => String(x ?? '–').padStart(width);
  return [
    `| ${'phase'.padEnd(w)} | B list p50 ms | p95 ms | p99 ms | max ms | B lists | B lists/s | A reports answered | A 429 | A report p50 ms | A report p95 ms | load (1 min) |`,
    `| ${'-'.repeat(w)} | -----------: | -----: | -----: | -----: | ------: | --------: | -----------------: | ----: | --------------: | --------------: | -----------: |`,
    ...results.map(
      (r) =>
        `| ${r.phase.padEnd(w)} | ${n(r.list.p50, 12)} | ${n(r.list.p95, 6)} | ${n(r.list.p99, 6)} | ${n(r.list.max, 6)} | ${n(r.list.count, 7)} | ${n(r.list.perSecond, 9)} | ${n(r.phase.startsWith('baseline') ? null : r.reports.answered, 18)} | ${n(r.phase.startsWith('baseline') ? null : r.reports.rejected429, 5)} | ${n(r.reports.p50, 15)} | ${n(r.reports.p95, 15)} | ${n(r.loadAverage, 12)} |`,
    ),
    ...results.flatMap((r) =>
      r.list.errors || r.reports.otherErrors ? [`${r.phase}: ${r.list.errors} list errors, ${r.reports.otherErrors} report answers other than 200/429`] : [],
    ),
  ].join('\n');
}
