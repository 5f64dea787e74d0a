/**
 * Generated clients as a consumer makes them: openapi-generator (the CLI jar
 * from Maven Central, fetched once into .cache/ by scripts/setup-openapi-generator.mjs)
 * reads the document the running service serves at /docs/json and generates
 *
 * - `typescript-fetch`: compiled with `tsc --strict` together with a small
 *   program that uses it as a consumer would (so the calls are type-checked
 *   too), then run against the service;
 * - `python`: installed into the project's venv (.venv, scripts/setup-venv.mjs)
 *   with pip and run against the service.
 *
 * Each client calls both lists, one document and one trip by id (a trip with a
 * leg on the road: null volumes), the tax summary and one audit, and records
 * that leg's delivery (the python client then corrects it), with the date parameters as plain YYYY-MM-DD strings
 * (spec: CalendarDate), and must get data back without a (de)serialisation
 * error. The service runs as `npm start` runs it (scripts/start.ts) on the
 * in-memory engine with the demo tenants. About 40 s (two JVM starts, one tsc).
 */
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startEmbeddedMongo } from '../lib/db/embedded.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/db/indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { startService, ROOT } from './helpers/service.ts';

t.setTimeout(300_000);
const exec = promisify(execFile);

/** Runs a command; a failure reports its output. */
async function run(cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; timeout?: number } = {}): Promise<string> {
  try {
    const { stdout, stderr } = await exec(cmd, args, { cwd: opts.cwd ?? ROOT, env: opts.env ?? process.env, timeout: opts.timeout ?? 180_000, maxBuffer: 64 * 1024 * 1024 });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as Error & { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.slice(0, 8000));
  }
}

// 1. The tools: Java, the generator jar, the venv (each fetched or installed once, then cached).
await run('java', ['-version']).catch((err: Error) => {
  throw new Error(`openapi-generator needs Java 11+ (Debian: apt-get install default-jre-headless): ${err.message}`);
});
const jar = (await run(process.execPath, ['scripts/setup-openapi-generator.mjs', '--print-jar'])).trim().split('\n').pop()!;
const pythonBin = path.join((await run(process.execPath, ['scripts/setup-venv.mjs', '--print-bin'], { timeout: 300_000 })).trim().split('\n').pop()!, '..', 'python');

// 2. The service on the demo data.
const engine = await startEmbeddedMongo({});
t.teardown(() => engine.stop());
const dbName = 'generators';
let docId: string;
let tripId: string;
let delivery: { shipmentId: string; offloadDate: string; products: { code: string; offloaded: number }[] };
{
  const { client, db } = await connectMongo(engine.uri, dbName);
  await ensureIndexes(db);
  // One dense month: some legs are still on the road (offloaded volumes null) when the data ends.
  await loadDemoData(db, { invoices: 300, trips: 300, months: 1 });
  const tenant = DEMO_TENANTS[0]!.rfc;
  docId = String((await financialDocs(db).findOne({ company: tenant }, { projection: { _id: 1 } }))?._id);
  // A trip with a leg on the road: the clients read its nulls, then record its delivery.
  const onTheRoad = (await trips(db).findOne({ company: tenant, shipments: { $elemMatch: { unloadDate: null } } }))!;
  tripId = onTheRoad._id;
  const leg = onTheRoad.shipments.find((l) => l.unloadDate === null)!;
  delivery = { shipmentId: leg.shipment, offloadDate: new Date(leg.loadDate! + 3_600_000).toISOString(), products: leg.products.map((p) => ({ code: p.code, offloaded: p.loaded - 5 })) };
  await client.close();
}
const service = await startService({ mongodbUri: engine.uri, mongodbDb: dbName, env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', REPORT_RATE_LIMIT_MAX: '100000' } });
t.teardown(() => service.stop());
const KEY = DEMO_TENANTS[0]!.apiKey;

const work = await mkdtemp(path.join(os.tmpdir(), 'openapi-generator-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
const specFile = path.join(work, 'openapi.json');
await writeFile(specFile, await (await fetch(`${service.base}/docs/json`)).text());

/** The period every call asks for: the months the demo data covers most densely. */
const PERIOD = { startDate: '2026-01-01', endDate: '2026-12-31' };

interface Calls {
  docs: { detail: string; total: number; first: string; count: number };
  trips: { detail: string; total: number; count: number };
  doc: string;
  trip: string;
  tax: { invoices: number; months: number };
  audit: { documents: number };
  delivered: { before: boolean; after: boolean; shrinkage: number | null };
}

/** `deliveredBefore`: the leg as the client first reads it; `shrinkage`: after its own delivery. */
function checkCalls(t: Test, calls: Calls, expected: { deliveredBefore: boolean; shrinkage: number }): void {
  t.equal(calls.docs.detail, 'summary', 'the list page is told apart by its detail');
  t.ok(calls.docs.total > 0 && calls.docs.count > 0, `financial documents listed (${calls.docs.count} of ${calls.docs.total})`);
  t.ok(calls.trips.total > 0 && calls.trips.count > 0, `trips listed (${calls.trips.count} of ${calls.trips.total})`);
  t.equal(calls.doc, docId, 'one document by id');
  t.equal(calls.trip, tripId, 'one trip by id');
  t.ok(calls.tax.invoices > 0 && calls.tax.months > 0, `tax summary over the period (${calls.tax.invoices} invoices, ${calls.tax.months} months)`);
  t.ok(calls.audit.documents > 0, `discounts-and-shrinkage audit (${calls.audit.documents} documents)`);
  t.same(calls.delivered, { before: expected.deliveredBefore, after: true, shrinkage: expected.shrinkage }, expected.deliveredBefore ? 'a delivered leg read, its delivery corrected' : 'a leg on the road (null volumes read), then its delivery recorded');
}

t.test('typescript-fetch: generated, compiled with tsc --strict, calls the service', async (t) => {
  const out = path.join(work, 'ts');
  const log = await run('java', ['-jar', jar, 'generate', '-i', specFile, '-g', 'typescript-fetch', '-o', out, '--additional-properties=supportsES6=true']);
  t.notMatch(log, /\bERROR\b/, 'the generator reports no error');
  await writeFile(
    path.join(out, 'tsconfig.json'),
    JSON.stringify({ compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', lib: ['ES2022', 'DOM'], outDir: 'dist', skipLibCheck: false, noEmitOnError: true, typeRoots: [path.join(ROOT, 'node_modules', '@types')], types: ['node'] }, include: ['*.ts', 'apis/*.ts', 'models/*.ts'] }),
  );
  // A consumer's program: typed calls, the union page narrowed on its discriminator.
  await writeFile(
    path.join(out, 'consumer.ts'),
    `import { Configuration, FinancialApi, ShipmentsApi, TaxApi, AnalyticsApi } from './index';
const [base, key, docId, tripId, deliveryJson] = process.argv.slice(2) as [string, string, string, string, string];
const delivery = JSON.parse(deliveryJson) as { shipmentId: string; offloadDate: string; products: { code: string; offloaded: number }[] };
const config = new Configuration({ basePath: base, apiKey: key });
const period = ${JSON.stringify(PERIOD)};
async function main(): Promise<void> {
  const docs = await new FinancialApi(config).listFinancialDocs({ limit: 5, ...period });
  if (docs.detail !== 'summary') throw new Error('expected the summary page');
  const trips = await new ShipmentsApi(config).listShipments({ limit: 5, ...period });
  const doc = await new FinancialApi(config).getFinancialDoc({ id: docId });
  const trip = await new ShipmentsApi(config).getShipment({ id: tripId });
  const tax = await new TaxApi(config).getTaxSummary(period);
  const audit = await new AnalyticsApi(config).auditDiscountsAndShrinkage(period);
  const first = docs.data[0];
  const legBefore = 'shipments' in trip && trip.shipments.find((l) => 'shipmentId' in l && l.shipmentId === delivery.shipmentId);
  const recorded = await new ShipmentsApi(config).recordLegDelivery({
    id: tripId,
    shipmentId: delivery.shipmentId,
    legDeliveryRequest: { offloadDate: new Date(delivery.offloadDate), products: delivery.products },
  });
  const legAfter = recorded.shipments.find((l) => l.shipmentId === delivery.shipmentId);
  console.log(JSON.stringify({
    docs: { detail: docs.detail, total: docs.meta.total, first: first ? first.id : '', count: docs.data.length },
    trips: { detail: trips.detail, total: trips.meta.total, count: trips.data.length },
    doc: doc.id,
    trip: trip.id,
    tax: { invoices: tax.totals.documents, months: tax.months.length },
    audit: { documents: audit.discounts.totals.documents },
    delivered: { before: legBefore && 'delivered' in legBefore ? legBefore.delivered : null, after: legAfter ? legAfter.delivered : null, shrinkage: legAfter ? legAfter.volumes.shrinkageVolume ?? null : null },
  }));
}
main().catch((err: unknown) => { console.error(err); process.exit(1); });
`,
  );
  const tsc = path.join(ROOT, 'node_modules', '.bin', 'tsc');
  await run(tsc, ['-p', path.join(out, 'tsconfig.json')]);
  t.pass('the generated client and its consumer compile with tsc --strict');
  const output = await run(process.execPath, [path.join(out, 'dist', 'consumer.js'), service.base, KEY, docId, tripId, JSON.stringify(delivery)]);
  checkCalls(t, JSON.parse(output.trim().split('\n').pop()!) as Calls, { deliveredBefore: false, shrinkage: 5 * delivery.products.length });
});

t.test('python: generated, installed into the venv, calls the service', async (t) => {
  const out = path.join(work, 'py');
  const log = await run('java', ['-jar', jar, 'generate', '-i', specFile, '-g', 'python', '-o', out, '--additional-properties=packageName=freight_client,projectName=freight-client']);
  t.notMatch(log, /\bERROR\b/, 'the generator reports no error');
  await run(pythonBin, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', out], { timeout: 240_000 });
  const program = `
import json, sys
from datetime import datetime
import freight_client as fc
base, key, doc_id, trip_id, delivery_json = sys.argv[1:6]
delivery = json.loads(delivery_json)
cfg = fc.Configuration(host=base, api_key={"apiKey": key})
period = dict(start_date="${PERIOD.startDate}", end_date="${PERIOD.endDate}")
with fc.ApiClient(cfg) as api:
    docs = fc.FinancialApi(api).list_financial_docs(limit=5, **period).actual_instance
    trips = fc.ShipmentsApi(api).list_shipments(limit=5, **period).actual_instance
    doc = fc.FinancialApi(api).get_financial_doc(doc_id).actual_instance
    trip = fc.ShipmentsApi(api).get_shipment(trip_id).actual_instance
    tax = fc.TaxApi(api).get_tax_summary(**period)
    audit = fc.AnalyticsApi(api).audit_discounts_and_shrinkage(**period)
    before = next(l for l in trip.shipments if l.shipment_id == delivery["shipmentId"])
    recorded = fc.ShipmentsApi(api).record_leg_delivery(trip_id, delivery["shipmentId"], fc.LegDeliveryRequest(
        offload_date=datetime.fromisoformat(delivery["offloadDate"].replace("Z", "+00:00")),
        products=[fc.DeliveredProduct(code=p["code"], offloaded=p["offloaded"]) for p in delivery["products"]]))
    after = next(l for l in recorded.shipments if l.shipment_id == delivery["shipmentId"])
    print(json.dumps({
        "docs": {"detail": docs.detail, "total": docs.meta.total, "first": docs.data[0].id if docs.data else "", "count": len(docs.data)},
        "trips": {"detail": trips.detail, "total": trips.meta.total, "count": len(trips.data)},
        "doc": doc.id, "trip": trip.id,
        "tax": {"invoices": tax.totals.documents, "months": len(tax.months)},
        "audit": {"documents": audit.discounts.totals.documents},
        "delivered": {"before": before.delivered, "after": after.delivered, "shrinkage": after.volumes.shrinkage_volume},
    }))
`;
  await writeFile(path.join(work, 'consumer.py'), program);
  // Runs after the typescript client recorded the delivery: it reads it, then corrects it (2 L less each).
  const correction = { ...delivery, products: delivery.products.map((p) => ({ ...p, offloaded: p.offloaded - 2 })) };
  const output = await run(pythonBin, [path.join(work, 'consumer.py'), service.base, KEY, docId, tripId, JSON.stringify(correction)]);
  checkCalls(t, JSON.parse(output.trim().split('\n').pop()!) as Calls, { deliveredBefore: true, shrinkage: 7 * delivery.products.length });
});
