/**
 * `npm run bench:deliveries -- [--trips N] [--json]`
 *
 * POST /api/deliveries on the on-disk embedded engine (a temporary data
 * directory, as `npm start` runs it): N trips (default 10,000) of two legs each,
 * on the road, then one CSV with a row per leg (2 × N rows; the default is the
 * 20,000 rows one request may hold). Reports the wall time and the service's
 * resident memory of the first send (every leg applied) and of the same file
 * again (every leg unchanged, nothing written), and the CPU time of this process
 * and of the engine's JVM during each (what compares on a loaded machine). The kept totals
 * (docs/rollups.md) are built before the first send, and after each send the days it marked are
 * recomputed as the service's rollup worker would, every kind drained in turn: its CPU is reported
 * apart, as part of what recording the deliveries costs.
 */
import { cpuMs } from './proc-stats.ts';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedMongo } from './embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { buildApp } from '../handlers/app.ts';
import { loadConfig } from '../lib/config.ts';
import { storeApiKey } from '../lib/auth/api-keys.ts';
import { trips } from '../lib/db/collections.ts';
import type { TripDocument } from '../lib/model/trip-document.ts';
import { withOffloadMonths } from '../lib/trips/offload-months.ts';
import { DEMO_TENANTS } from './demo/load.ts';
import { ROLLUP_KINDS } from '../lib/rollups/kinds.ts';
import { rebuildRollups } from '../lib/rollups/rebuild-rollups.ts';

const { values } = parseArgs({ options: { trips: { type: 'string', default: '10000' }, json: { type: 'boolean', default: false } } });
const n = Number(values.trips);
if (!Number.isInteger(n) || n < 1 || n > 10_000) {
  console.error('usage: npm run bench:deliveries -- [--trips N (1–10000: two rows each, at most 20,000 rows)] [--json]');
  process.exit(2);
}
/** CPU time (user + system, ms) of this process and of the engine's JVM so far. */
function cpuNow(enginePid: number): { service: number; engine: number } {
  const own = process.cpuUsage();
  return { service: (own.user + own.system) / 1000, engine: cpuMs(enginePid) };
}

const tenant = DEMO_TENANTS[0]!;
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'bench-deliveries-'));
const engine = await startEmbeddedMongo({ dataDir });
const { client, db } = await connectMongo(engine.uri, 'bench');
try {
  await ensureIndexes(db);
  await storeApiKey(db, { key: tenant.apiKey, tenant: tenant.rfc, label: 'bench' });
  const load = Date.parse('2026-03-09T14:00:00Z');
  const place = {
    id: 'OR000001',
    nif: 'PEM000101AAA',
    name: 'Terminal',
    address: { street: 'Km 1', city: 'Tuxpan', municipality: '189', province: 'Veracruz', state: 'VER', country: 'MEX', zip: '92800' },
  };
  const trip = (i: number): TripDocument => ({
    _id: `BENCH-${i}`,
    idFinan: null,
    nCed: `CED-${i}`,
    nRel: `REL-${i}`,
    company: tenant.rfc,
    client: 'CLI010101AB1',
    createdAt: load,
    lastUpdate: new Date(load).toISOString(),
    driver: { id: 'D1', name: 'Driver', license: 'L1' },
    vehicle: { id: 'V1', plate: 'P1', config: 'T3S2', trailers: [] },
    origin: place,
    destination: { ...place, id: 'DE000001' },
    shipments: [1, 2].map((k) => ({
      id: `BENCH-${i}-${k}`,
      shipment: `S-${i}-${k}`,
      date: 20260309,
      loadDate: load,
      unloadDate: null,
      region: 'GOLFO',
      status: 2,
      distanceKm: 300,
      pricing: { merchandiseValue: 490_000, pricingModel: 'volume' as const, tarifUnit: 0.5, toll: 0, billedFreight: 10_000, totalFreight: 10_000 },
      products: [{ desc: 'Diésel', code: '15101505', unit: 'LTR', loaded: 20_000, offloaded: null }],
    })),
  });
  for (let i = 0; i < n; i += 1000) await trips(db).insertMany(Array.from({ length: Math.min(1000, n - i) }, (_, k) => withOffloadMonths(trip(i + k))));
  // Written around the marks, as a bulk load is: the kept totals are built from them before the first send.
  await rebuildRollups(db, { tenants: [tenant.rfc] });
  const app = await buildApp({ config: loadConfig({ LOG_LEVEL: 'silent', RATE_LIMIT_MAX: '100000' }), db, logger: false });
  let csv = 'tripId,shipmentId,productCode,offloaded,offloadDate,ticket\n';
  for (let i = 0; i < n; i++) for (const k of [1, 2]) csv += `BENCH-${i},S-${i}-${k},15101505,19950,2026-03-10 09:00,TK-${i}-${k}\n`;
  const results = [];
  for (const run of ['first send (applied)', 'same file again (unchanged)']) {
    const c0 = cpuNow(engine.pid);
    const t0 = performance.now();
    const res = await app.inject({ method: 'POST', url: '/api/deliveries', headers: { 'x-api-key': tenant.apiKey, 'content-type': 'text/csv' }, payload: csv });
    const ms = Math.round(performance.now() - t0);
    const c1 = cpuNow(engine.pid);
    // What the rollup worker does after it (without its quiet window): every mark the send left, kind by kind.
    for (const kind of ROLLUP_KINDS) while ((await kind.drain(db, 1000, 120_000)) === 1000);
    const c2 = cpuNow(engine.pid);
    results.push({
      run,
      status: res.statusCode,
      rows: 2 * n,
      csvBytes: Buffer.byteLength(csv),
      ms,
      rowsPerSecond: Math.round((2 * n * 1000) / ms),
      summary: res.json<{ summary: unknown }>().summary,
      serviceRssMb: Math.round(process.memoryUsage().rss / 1_048_576),
      cpuMs: { service: Math.round(c1.service - c0.service), engine: Math.round(c1.engine - c0.engine) },
      recomputeCpuMs: { service: Math.round(c2.service - c1.service), engine: Math.round(c2.engine - c1.engine) },
    });
  }
  await app.close();
  if (values.json) console.log(JSON.stringify(results, null, 2));
  else
    for (const r of results)
      console.log(
        `${r.run}: ${r.status}, ${r.rows} rows (${(r.csvBytes / 1_048_576).toFixed(1)} MiB) in ${r.ms} ms = ${r.rowsPerSecond} rows/s, ${JSON.stringify(r.summary)}, service RSS ${r.serviceRssMb} MB, CPU service ${r.cpuMs.service} ms + engine ${r.cpuMs.engine} ms, then the kept totals' recompute ${r.recomputeCpuMs.service} ms + ${r.recomputeCpuMs.engine} ms`,
      );
} finally {
  await client.close();
  await engine.stop();
  await rm(dataDir, { recursive: true, force: true });
}
