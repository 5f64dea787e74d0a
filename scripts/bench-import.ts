/**
 * `npm run bench:import -- [--files N] [--mix] [--data-dir DIR] [--json]`
 *
 * The import on the `npm start` path: starts `scripts/start.ts` in a child
 * process (on-disk embedded engine in a temporary DATA_DIR, default heap,
 * demo tenants loaded with DEMO_INVOICES/DEMO_TRIPS = 200), builds a zip of N
 * files (default 10,000) from the hand-written fixtures with distinct UUIDs
 * (scripts/cfdi-corpus.ts), and sends it to POST /api/imports as tenant TGO.
 * With `--mix`, the zip holds both sides of the books in both CFDI versions:
 * copies of the fixtures issued in 4.0, issued in 3.3 (Pagos 1.0), received in
 * 4.0 and received in 3.3, a quarter each (scripts/cfdi-corpus.ts).
 * Reports files/s, wall time, the report summary, and the resident memory of
 * the service process and of the engine's JVM (before, peak during, after;
 * sampled every 100 ms from /proc), and the CPU time both used, until the import's
 * answer and then until both are back to their idle rate, net of that rate (the kept totals the
 * rollup worker settles after the answer are part of an import's cost; on a loaded machine CPU
 * time compares where wall time does not). Then sends the same zip again (every file skipped), then N other
 * files (a service that has imported before: its code compiled, as a running service's is), and
 * reports those too.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { corpusFiles, corpusZip } from './cfdi-corpus.ts';
import { DEMO_TENANTS } from './demo/load.ts';
import { childPid, cpuMs, rssMb as rssMiB } from './proc-stats.ts';

const { values } = parseArgs({
  options: {
    files: { type: 'string', default: '10000' },
    mix: { type: 'boolean', default: false },
    'data-dir': { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const files = Number(values.files);
if (!Number.isInteger(files) || files < 1) {
  console.error('usage: npm run bench:import -- [--files N] [--mix] [--data-dir DIR] [--json]');
  process.exit(2);
}
const ROOT = path.join(import.meta.dirname, '..');
const tenant = DEMO_TENANTS[0]!;
const dataDir = values['data-dir'] ?? (await mkdtemp(path.join(os.tmpdir(), 'bench-import-')));

const rssMb = (pid: number | null): number | null => {
  const mb = rssMiB(pid);
  return mb === null ? null : Math.round(mb);
};

type Pids = { service: number | null; engine: number | null };
type Cpu = { service: number; engine: number };
const cpuOf = (p: Pids): Cpu => ({ service: cpuMs(p.service), engine: cpuMs(p.engine) });

/**
 * CPU ms per second each process uses (the median of `seconds` one-second samples) while nothing is asked of the service: its own
 * polling (the job queues, the rollup worker's probe each second), about 25 ms/s together. An
 * import's cost after its answer is measured net of it.
 */
async function idleRates(pids: Pids, seconds = 11): Promise<Cpu> {
  const samples: Cpu[] = [];
  for (let i = 0, last = cpuOf(pids); i < seconds; i++) {
    await sleep(1000);
    const now = cpuOf(pids);
    samples.push({ service: now.service - last.service, engine: now.engine - last.engine });
    last = now;
  }
  // The median second: a background flush or collection left by the previous import is not the idle rate.
  const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
  return { service: median(samples.map((c) => c.service)), engine: median(samples.map((c) => c.engine)) };
}

/**
 * Waits until both processes together used at most `idleMsPerS` more than their idle rate in each
 * of 5 seconds in a row (at most 120 s): the work an answer left behind is done. Not one quiet
 * second: the rollup worker waits for 2 s without a new mark before it recomputes an import's
 * days (lib/rollups/rollup-worker.ts). Answers the seconds waited.
 */
async function untilIdle(pids: Pids, idle: Cpu, idleMsPerS = 20): Promise<number> {
  const total = () => cpuMs(pids.service) + cpuMs(pids.engine);
  const t0 = performance.now();
  for (let i = 0, quiet = 0, last = total(); i < 120 && quiet < 5; i++) {
    await sleep(1000);
    const now = total();
    quiet = now - last <= idle.service + idle.engine + idleMsPerS ? quiet + 1 : 0;
    last = now;
  }
  return (performance.now() - t0) / 1000;
}

const env: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_OPTIONS: '',
  HOST: '127.0.0.1',
  PORT: '0',
  LOG_LEVEL: 'warn',
  DATA_DIR: dataDir,
  DEMO_INVOICES: '200',
  DEMO_TRIPS: '200',
};
delete env.MONGODB_URI;
const child = spawn(process.execPath, ['--import', 'tsx/esm', 'scripts/start.ts'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
let out = '';
child.stderr.on('data', (d: Buffer) => (out += d.toString()));
const base = await new Promise<string>((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`the service did not start in 180 s\n${out}`)), 180_000);
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const m = /listening on (http:\/\/\S+)/.exec(out);
    if (m) {
      clearTimeout(timer);
      resolve(m[1]!);
    }
  });
  child.once('exit', (code) => reject(new Error(`the service exited (${code}) before listening\n${out}`)));
});

try {
  const pids: Pids = { service: child.pid!, engine: childPid(child.pid!, 'embedded-mongo') };
  // What start-up left running (the kept totals of the demo data, rebuilt in the background) is not the import's cost.
  await untilIdle(pids, { service: 0, engine: 0 }, 50);
  const zip = await corpusZip(files, { mix: values.mix });
  const other = await corpusZip(files, { mix: values.mix, from: files });
  const variants: Record<string, number> = {};
  for (const f of corpusFiles(files, { mix: values.mix })) variants[f.variant] = (variants[f.variant] ?? 0) + 1;
  const run = async (zip: Buffer) => {
    const idle = await idleRates(pids);
    const engine = pids.engine;
    const before = { service: rssMb(child.pid!), engine: rssMb(engine) };
    const peak = { service: before.service ?? 0, engine: before.engine ?? 0 };
    const sampler = setInterval(() => {
      peak.service = Math.max(peak.service, rssMb(child.pid!) ?? 0);
      peak.engine = Math.max(peak.engine, rssMb(engine) ?? 0);
    }, 100);
    const cpu0 = cpuOf(pids);
    const started = performance.now();
    const res = await fetch(`${base}/api/imports`, { method: 'POST', headers: { 'x-api-key': tenant.apiKey, 'content-type': 'application/zip' }, body: zip });
    const body = (await res.json()) as { summary?: Record<string, number>; files?: { status: string; reason?: string }[] };
    const wallS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const cpu1 = cpuOf(pids);
    const waited = await untilIdle(pids, idle);
    // Net of the idle polling over the wait (the answer's own seconds are the import's, polling and all).
    const cpu2 = { service: cpuMs(pids.service) - idle.service * waited, engine: cpuMs(pids.engine) - idle.engine * waited };
    const cpuS = (a: Cpu, b: Cpu) => ({
      service: Number(((b.service - a.service) / 1000).toFixed(1)),
      engine: Number(((b.engine - a.engine) / 1000).toFixed(1)),
    });
    const after = { service: rssMb(child.pid!), engine: rssMb(engine) };
    if (res.status !== 200) throw new Error(`POST /api/imports answered ${res.status}: ${JSON.stringify(body).slice(0, 500)}`);
    // Why files were refused, by reason (a mixed archive is meant to import whole: a reason here is a finding).
    const rejections: Record<string, number> = {};
    for (const f of body.files ?? []) if (f.status === 'rejected') rejections[f.reason ?? ''] = (rejections[f.reason ?? ''] ?? 0) + 1;
    return {
      status: res.status,
      summary: body.summary,
      rejections,
      wallS: Number(wallS.toFixed(1)),
      filesPerS: Math.round(files / wallS),
      rssMb: { before, peak, after },
      /** CPU seconds until the answer, and after it until idle (net of the idle rate over that wait). */
      cpuS: { untilAnswer: cpuS(cpu0, cpu1), afterAnswer: cpuS(cpu1, cpu2) },
      /** The idle service's CPU ms per second before the import, and the seconds waited after the answer. */
      idleMsPerS: { service: Math.round(idle.service), engine: Math.round(idle.engine) },
      waitedS: Math.round(waited),
      cpuMsPerFile: Math.round((cpu2.service - cpu0.service + cpu2.engine - cpu0.engine) / files),
    };
  };
  // The machine's load (1, 5, 15 min) before and after: on a shared machine the figure means little without it.
  const load = () => os.loadavg().map((x) => Number(x.toFixed(1)));
  const loadBefore = load();
  const first = await run(zip);
  const again = await run(zip);
  const another = await run(other);
  const result = {
    files,
    variants,
    zipBytes: zip.length,
    node: process.version,
    cores: os.cpus().length,
    loadAverage: { before: loadBefore, after: load() },
    first,
    again,
    another,
  };
  if (values.json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(
      `${files} files ${JSON.stringify(variants)} (${(zip.length / 1048576).toFixed(1)} MiB zip), on-disk engine, Node ${process.version}, ${result.cores} cores, load average ${result.loadAverage.before.join(' ')} before, ${result.loadAverage.after.join(' ')} after`,
    );
    for (const [label, r] of [
      ['first import', first],
      ['same zip again', again],
      [`${files} other files`, another],
    ] as const) {
      console.log(
        `${label}: ${r.wallS} s, ${r.filesPerS} files/s, ${JSON.stringify(r.summary)}; service RSS ${r.rssMb.before.service} → peak ${r.rssMb.peak.service} → ${r.rssMb.after.service} MiB; engine RSS ${r.rssMb.before.engine} → peak ${r.rssMb.peak.engine} → ${r.rssMb.after.engine} MiB; CPU until the answer: service ${r.cpuS.untilAnswer.service} s, engine ${r.cpuS.untilAnswer.engine} s, after it: ${r.cpuS.afterAnswer.service} s + ${r.cpuS.afterAnswer.engine} s (${r.cpuMsPerFile} CPU ms per file; after the answer ${r.waitedS} s until idle, net of the idle ${r.idleMsPerS.service} + ${r.idleMsPerS.engine} ms/s)${
          Object.keys(r.rejections).length ? `; rejected: ${JSON.stringify(r.rejections)}` : ''
        }`,
      );
    }
  }
} finally {
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  if (!values['data-dir']) await rm(dataDir, { recursive: true, force: true });
}
