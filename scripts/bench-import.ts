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
 * answer and then until both have been idle for a second (the kept totals the rollup worker
 * settles after the answer are part of an import's cost; on a loaded machine CPU time compares
 * where wall time does not). Then sends the same zip again (every file skipped), then N other
 * files (a service that has imported before: its code compiled, as a running service's is), and
 * reports those too.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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

/**
 * Waits until `pids` together used under 20 ms of CPU in each of 5 seconds in a row (at most 120 s):
 * the work an answer left behind is done. Not one idle second: the rollup worker waits for 2 s
 * without a new mark before it recomputes an import's days (lib/rollups/rollup-worker.ts).
 */
async function untilIdle(pids: (number | null)[]): Promise<void> {
  const total = () => pids.reduce((s: number, p) => s + cpuMs(p), 0);
  for (let i = 0, idle = 0, last = total(); i < 120 && idle < 5; i++) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = total();
    idle = now - last < 20 ? idle + 1 : 0;
    last = now;
  }
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
  const engine = childPid(child.pid!, 'embedded-mongo');
  // What start-up left running (the kept totals of the demo data, rebuilt in the background) is not the import's cost.
  await untilIdle([child.pid!, engine]);
  const zip = await corpusZip(files, { mix: values.mix });
  const other = await corpusZip(files, { mix: values.mix, from: files });
  const variants: Record<string, number> = {};
  for (const f of corpusFiles(files, { mix: values.mix })) variants[f.variant] = (variants[f.variant] ?? 0) + 1;
  const run = async (zip: Buffer) => {
    const before = { service: rssMb(child.pid!), engine: rssMb(engine) };
    const peak = { service: before.service ?? 0, engine: before.engine ?? 0 };
    const sampler = setInterval(() => {
      peak.service = Math.max(peak.service, rssMb(child.pid!) ?? 0);
      peak.engine = Math.max(peak.engine, rssMb(engine) ?? 0);
    }, 100);
    const cpu0 = { service: cpuMs(child.pid), engine: cpuMs(engine) };
    const started = performance.now();
    const res = await fetch(`${base}/api/imports`, { method: 'POST', headers: { 'x-api-key': tenant.apiKey, 'content-type': 'application/zip' }, body: zip });
    const body = (await res.json()) as { summary?: Record<string, number>; files?: { status: string; reason?: string }[] };
    const wallS = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const cpu1 = { service: cpuMs(child.pid), engine: cpuMs(engine) };
    await untilIdle([child.pid!, engine]);
    const cpu2 = { service: cpuMs(child.pid), engine: cpuMs(engine) };
    const cpuS = (a: { service: number; engine: number }, b: { service: number; engine: number }) => ({
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
      /** CPU seconds until the answer, and after it until idle. */
      cpuS: { untilAnswer: cpuS(cpu0, cpu1), afterAnswer: cpuS(cpu1, cpu2) },
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
        `${label}: ${r.wallS} s, ${r.filesPerS} files/s, ${JSON.stringify(r.summary)}; service RSS ${r.rssMb.before.service} → peak ${r.rssMb.peak.service} → ${r.rssMb.after.service} MiB; engine RSS ${r.rssMb.before.engine} → peak ${r.rssMb.peak.engine} → ${r.rssMb.after.engine} MiB; CPU until the answer: service ${r.cpuS.untilAnswer.service} s, engine ${r.cpuS.untilAnswer.engine} s, after it: ${r.cpuS.afterAnswer.service} s + ${r.cpuS.afterAnswer.engine} s (${r.cpuMsPerFile} CPU ms per file)${
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
