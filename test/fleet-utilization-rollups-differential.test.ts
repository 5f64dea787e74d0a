/**
 * Fleet utilization from the days kept on write (docs/rollups.md) against the same report
 * computed from every trip of the period: after a random sequence of trip writes (Carta Porte
 * imports of several legs, clients, vehicles and drivers, multi-day legs, legs in transit,
 * deliveries recorded later through both delivery operations, re-imports that change a trip, a
 * delivery dated before the loading, a write that fails halfway, a restart), every report for
 * random periods, groupings, filters and litres bases answers the same over HTTP (and once over
 * MCP), and `fleetUtilizationRollups.verify` finds every kept day equal. Then one write bypasses the marks,
 * and both checks must see it (the test can fail). FLEET_ROLLUP_SEED=<n> replays a seed.
 */
import t from 'tap';
import { TENANT_A } from './helpers/harness.ts';
import { trips } from '../lib/db/collections.ts';
import { auditFleetUtilization, type FleetUtilizationInput } from '../lib/analytics/audit-fleet-utilization.ts';
import { writeMarkingTripDays } from '../lib/trips/trip-days.ts';
import { fleetUtilizationRollups } from '../lib/analytics/fleet-utilization-rollup-kind.ts';
import { mxDateString } from '../lib/time/mexico-city.ts';
import { comparable, compareRounds } from './helpers/differential.ts';
import { getOk, importer, mcpClient, restarter, startDifferential, workerPass } from './helpers/differential-service.ts';
import { crashAfterWrite, recordDelivery, sequence, uuids } from './helpers/differential-writes.ts';
import { bypassCaught, eachWrite, randomWrites, verifier } from './helpers/differential-rounds.ts';
import { BASE, DAY, dayOf } from './helpers/differential-days.ts';
import { plannedTripXml, type PlannedLeg, type PlannedTrip } from './helpers/carta-porte-xml.ts';

const s = await startDifferential(t, { seedEnv: 'FLEET_ROLLUP_SEED', seed: 20261128, timeout: 400_000, build: (db) => fleetUtilizationRollups.rebuild(db) });
const { h, ctx, rnd, pick, int } = s;
const importFiles = importer(h, { strict: true });
const restart = restarter(h);

const CLIENTS = ['CIN010203KL5', 'LOG990101AA1', 'DPE950607MN8'];
const PLATES = ['XA1234B', 'XB5678C', 'XC9012D', 'XD3456E'];
const DRIVERS: [string, string][] = [
  ['HEGR751212AB3', 'RAUL HERNANDEZ GARCIA'],
  ['LOMJ800303CD4', 'JUAN LOPEZ MARTINEZ'],
  ['PERA820505EF5', 'ANA PEREZ RUIZ'],
];
/** Trips fall on days 0..100 (helpers/differential-days.ts), all before today. */
const plans: PlannedTrip[] = [];
const next = sequence();
const uuidOf = uuids('F1EE7000');

const importPlans = (ps: PlannedTrip[]): Promise<{ created: number; updated: number; skipped: number }> =>
  importFiles(ps.map((p) => ({ name: `${p.uuid}.xml`, content: plannedTripXml(p) })));

function randomLeg(load: number): PlannedLeg {
  const r = rnd();
  // In transit; delivered the same day or days later (now and then beyond the 31 credited); or, bad data, before loading.
  const unload =
    r < 0.3
      ? null
      : r < 0.6
        ? load + int(2, 10) * 3_600_000
        : r < 0.85
          ? load + int(1, 5) * DAY + 3_600_000
          : r < 0.93
            ? load + int(32, 45) * DAY
            : load - int(1, 40) * DAY;
  return { km: int(20, 900) + int(0, 9) / 10, litres: int(5_000, 32_000) + int(0, 999) / 1000, freightC: int(100_000, 4_000_000), unload };
}

async function writeTrips(): Promise<string> {
  const ps: PlannedTrip[] = [];
  for (let i = 0, n = int(1, 5); i < n; i++) {
    const load = BASE + int(0, 100) * DAY + int(6, 20) * 3_600_000;
    const p: PlannedTrip = {
      uuid: uuidOf(next()),
      client: pick(CLIENTS),
      plate: pick(PLATES),
      driver: pick(DRIVERS),
      load,
      legs: Array.from({ length: int(1, 3) }, () => randomLeg(load)),
    };
    ps.push(p);
  }
  await importPlans(ps);
  plans.push(...ps);
  return `${ps.length} trips`;
}

/** The same Carta Porte again with other content: another vehicle, driver or loading day, a leg's delivery now in the addenda. */
async function reimport(): Promise<string> {
  if (!plans.length) return writeTrips();
  const p = pick(plans);
  const r = rnd();
  if (r < 0.3) p.plate = pick(PLATES);
  else if (r < 0.5) p.driver = pick(DRIVERS);
  else if (r < 0.7) p.load += int(-20, 20) * DAY;
  else for (const l of p.legs) if (l.unload === null) l.unload = p.load + int(1, 3) * DAY;
  const summary = await importPlans([p]);
  return `re-import of ${p.uuid} (${summary.updated} updated)`;
}

/** A delivery recorded later through PUT …/delivery or POST /api/deliveries. */
const deliver = (): Promise<string> => recordDelivery(h, s, next, { hours: 72, base: BASE, fallback: writeTrips });

/** A write that changes a stored trip and then fails before it is acknowledged (a crash halfway). */
async function writeThatFails(): Promise<string> {
  const trip = await trips(h.db).findOne({ company: TENANT_A });
  if (!trip) return writeTrips();
  const changed = {
    ...trip,
    shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 1.5, loadDate: l.loadDate === null ? null : l.loadDate + 2 * DAY })),
  };
  await crashAfterWrite(h.db, writeMarkingTripDays, [trip, changed], () => trips(h.db).replaceOne({ _id: trip._id }, changed));
  return `failed write on ${trip._id}`;
}

/** The rollup worker's pass over the marks, or a rebuild of the whole store (as after an upgrade). */
const worker = (): Promise<string> => workerPass(fleetUtilizationRollups, h.db, rnd() >= 0.7);

async function reports(label: string, n: number): Promise<number> {
  return compareRounds(t, label, n, async (differs) => {
    const q: Record<string, string> = {};
    const r = rnd();
    if (r < 0.15) {
      // Ending today: the idle check reads every leg of its trips.
      q.startDate = dayOf(int(0, 90));
    } else if (r < 0.25) {
      q.startDate = dayOf(int(-300, 0));
      q.endDate = dayOf(int(60, 130));
    } else {
      const a = int(-10, 110);
      const b = int(-10, 110);
      q.startDate = dayOf(Math.min(a, b));
      q.endDate = dayOf(Math.max(a, b));
    }
    q.groupBy = pick(['vehicle', 'driver']);
    q.litresBasis = pick(['loaded', 'offloaded']);
    if (rnd() < 0.3) q.client = pick(CLIENTS);
    if (rnd() < 0.25) q.vehicle = pick(PLATES);
    if (rnd() < 0.25) q.driver = pick(DRIVERS)[0];
    const res = await getOk(h, '/api/analytics/fleet-utilization', q);
    const input: FleetUtilizationInput = {
      groupBy: q.groupBy as 'vehicle' | 'driver',
      litresBasis: q.litresBasis as 'loaded' | 'offloaded',
      ...(q.startDate ? { startDate: q.startDate } : {}),
      ...(q.endDate ? { endDate: q.endDate } : {}),
      ...(q.client ? { client: q.client } : {}),
      ...(q.vehicle ? { vehicle: q.vehicle } : {}),
      ...(q.driver ? { driver: q.driver } : {}),
    };
    const kept = comparable(res.json());
    const reference = comparable(await auditFleetUtilization(ctx, TENANT_A, input, { fromDocuments: true }));
    // A period ending today is as of now: the two answers are a few milliseconds apart.
    if (!q.endDate || q.endDate >= mxDateString(Date.now())) for (const x of [kept, reference]) delete x.asOf;
    differs(kept, reference, JSON.stringify(q));
  });
}

const WRITES = [writeTrips, writeTrips, writeTrips, reimport, reimport, deliver, deliver, deliver, writeThatFails, worker, restart];

t.test('every fleet utilization report equals the trips after random writes', async (t) => {
  const done = await randomWrites(t, [], { steps: 40, every: 10, answers: 8, writes: WRITES, pick, check: reports, what: 'reports' });
  await eachWrite(done, [writeTrips, reimport, deliver, writeThatFails, worker, restart]);
  // The writes made every shape of leg the kept days must count once.
  const legs = (await trips(h.db).find({ company: TENANT_A }).toArray()).flatMap((trip) => trip.shipments);
  const kinds = {
    inTransit: legs.filter((l) => l.unloadDate === null).length,
    oneDay: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate >= l.loadDate && l.unloadDate - l.loadDate < DAY / 2).length,
    multiDay: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate - l.loadDate > DAY).length,
    beyond31: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate - l.loadDate > 32 * DAY).length,
    unloadedBeforeLoading: legs.filter((l) => l.unloadDate !== null && l.loadDate !== null && l.unloadDate < l.loadDate - DAY).length,
  };
  t.ok(
    Object.values(kinds).every((n) => n > 0),
    `every shape of leg is there: ${JSON.stringify(kinds)}`,
  );
  t.ok(
    done.some((d) => d.startsWith('delivery of')) &&
      done.some((d) => d.startsWith('deliveries of')) &&
      done.some((d) => d.startsWith('re-import') && d.endsWith('(1 updated)')),
    'both delivery operations and re-imports ran',
  );
  t.equal(await reports('final', 30), 0, `30 random reports agree after ${done.length} writes`);
  const v = await fleetUtilizationRollups.verify(h.db, TENANT_A);
  t.same(v.mismatched, [], `every kept day equals its trips (${v.checked} days)`);
  t.ok(v.checked > 30, 'the trips touch many days');

  // The MCP tool reads the same kept days.
  const client = await mcpClient(t, h);
  const input: FleetUtilizationInput = { groupBy: 'driver', litresBasis: 'offloaded', startDate: dayOf(0), endDate: dayOf(100) };
  const r = (await client.callTool({ name: 'auditFleetUtilization', arguments: { ...input } })) as unknown as {
    structuredContent: { totals: unknown; rows: unknown; idleVehicles: unknown };
  };
  const reference = JSON.parse(JSON.stringify(await auditFleetUtilization(ctx, TENANT_A, input, { fromDocuments: true }))) as typeof r.structuredContent;
  t.same(r.structuredContent.totals, reference.totals, 'MCP: totals');
  t.same(r.structuredContent.rows, reference.rows, 'MCP: rows');
  t.same(r.structuredContent.idleVehicles, reference.idleVehicles, 'MCP: idle vehicles');
  // A page through the tool: the second row alone, the totals of all (the reference's second row and totals).
  const paged = (await client.callTool({ name: 'auditFleetUtilization', arguments: { ...input, limit: 1, page: 2 } })) as unknown as typeof r;
  t.ok((reference.rows as unknown[]).length >= 2, 'the reference has two rows or more');
  t.same(paged.structuredContent.rows, (reference.rows as unknown[]).slice(1, 2), 'MCP: limit 1, page 2 is the second row');
  t.same(paged.structuredContent.totals, reference.totals, 'MCP: the totals of every row');
});

t.test('a write that bypasses the marks is caught: the check can fail', async (t) => {
  const some = await trips(h.db).find({ company: TENANT_A }).limit(10).toArray();
  t.ok(some.length > 0, 'trips to break');
  for (const trip of some)
    await trips(h.db).updateOne({ _id: trip._id }, { $set: { shipments: trip.shipments.map((l) => ({ ...l, distanceKm: l.distanceKm + 77 })) } });
  await bypassCaught(t, { verify: verifier(fleetUtilizationRollups, h.db), check: reports, bypassed: 15, repaired: 10, from: 'trips' });
});
