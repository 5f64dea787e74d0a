/**
 * The export cases of `npm run bench` (scripts/bench.ts): an export of all of the tenant's rows of a
 * list (POST /api/exports/datasets/<dataset>), timed until its file is ready (the export worker runs in the bench's
 * process, as with ALERT_WORKER=true), then downloaded over real HTTP (streamed and hashed, never
 * held whole, so the process's peak RSS is the service's and not a buffer of the file). Reports the
 * build and download times, rows per second, and the peak RSS of this process (service + worker)
 * and of the engine's JVM during the case: each peak is reset first (Linux `clear_refs` 5), so a
 * store loaded earlier in the run does not hide it.
 */
import { createHash } from 'node:crypto';
import { peakRssMb, resetPeakRss } from './proc-stats.ts';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

export interface ExportCase {
  name: string;
  /** The export operation's path and query (POST /api/exports/datasets/<dataset>?format=…&<filters>). */
  url: string;
}

export const EXPORT_CASES: ExportCase[] = [
  { name: 'export financial-docs csv', url: '/api/exports/datasets/financial-docs?format=csv' },
  { name: 'export shipments csv', url: '/api/exports/datasets/shipments?format=csv' },
];

export interface ExportResult {
  name: string;
  rows: number;
  bytes: number;
  /** POST until the export reads ready. */
  buildSeconds: number;
  downloadSeconds: number;
  totalSeconds: number;
  rowsPerSecond: number;
  /** Peak RSS during the case (null where /proc cannot tell). */
  servicePeakRssMb: number | null;
  enginePeakRssMb: number | null;
  /** Whether both peaks were reset before the case (else they are peaks since the processes started). */
  peaksReset: boolean;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const seconds = (from: number) => Math.round((performance.now() - from) / 100) / 10;

export async function runExportCase(opts: { app: FastifyInstance; apiKey: string; jvmPid: number | null; case: ExportCase }): Promise<ExportResult> {
  const { app, apiKey, jvmPid } = opts;
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const headers = { 'x-api-key': apiKey };
  const peaksReset = resetPeakRss(process.pid) && jvmPid !== null && resetPeakRss(jvmPid);

  const t0 = performance.now();
  const created = await fetch(`${base}${opts.case.url}`, { method: 'POST', headers });
  if (created.status !== 202) throw new Error(`${opts.case.name}: POST ${opts.case.url} answered ${created.status}: ${(await created.text()).slice(0, 500)}`);
  const { id } = (await created.json()) as { id: string };
  let view: { status: string; progress: { rows: number }; file: { size: number; sha256: string } | null; failure: string | null };
  for (;;) {
    view = (await (await fetch(`${base}/api/exports/${id}`, { headers })).json()) as typeof view;
    if (view.status === 'ready') break;
    if (view.status !== 'queued' && view.status !== 'running') throw new Error(`${opts.case.name}: the export is ${view.status}: ${view.failure ?? ''}`);
    await sleep(50);
  }
  const buildSeconds = seconds(t0);

  const d0 = performance.now();
  const file = await fetch(`${base}/api/exports/${id}/file`, { headers });
  if (file.status !== 200 || !file.body) throw new Error(`${opts.case.name}: the file answered ${file.status}`);
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of file.body as AsyncIterable<Uint8Array>) {
    hash.update(chunk);
    bytes += chunk.length;
  }
  const digest = hash.digest('hex');
  if (bytes !== view.file!.size || digest !== view.file!.sha256) throw new Error(`${opts.case.name}: the download is not the file the export announced`);
  const downloadSeconds = seconds(d0);
  const totalSeconds = seconds(t0);
  return {
    name: opts.case.name,
    rows: view.progress.rows,
    bytes,
    buildSeconds,
    downloadSeconds,
    totalSeconds,
    rowsPerSecond: Math.round(view.progress.rows / Math.max(totalSeconds, 0.001)),
    servicePeakRssMb: peakRssMb(process.pid),
    enginePeakRssMb: peakRssMb(jvmPid),
    peaksReset,
  };
}

export function formatExportResults(results: ExportResult[]): string {
  if (!results.length) return '';
  const w = Math.max(...results.map((r) => r.name.length), 9);
  const num = (x: number | null, n: number) => String(x ?? 'n/a').padStart(n);
  return [
    `| ${'export'.padEnd(w)} | rows | MB | build s | download s | total s | rows/s | service peak RSS MB | engine peak RSS MB |`,
    `| ${'-'.repeat(w)} | ---: | -: | ------: | ---------: | ------: | -----: | ------------------: | -----------------: |`,
    ...results.map(
      (r) =>
        `| ${r.name.padEnd(w)} | ${num(r.rows, 4)} | ${num(Math.round(r.bytes / 1e5) / 10, 2)} | ${num(r.buildSeconds, 7)} | ${num(r.downloadSeconds, 10)} | ${num(r.totalSeconds, 7)} | ${num(r.rowsPerSecond, 6)} | ${num(r.servicePeakRssMb, 19)} | ${num(r.enginePeakRssMb, 18)} |`,
    ),
    results.every((r) => r.peaksReset)
      ? 'Peak RSS: reset before each export (clear_refs), so each is the peak during that export: the service (this process: API, export worker, the streamed download) and the engine JVM.'
      : 'Peak RSS: since the processes started (the kernel did not let the bench reset them).',
  ].join('\n');
}
