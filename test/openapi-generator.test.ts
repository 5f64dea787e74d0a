/**
 * Generated clients as a consumer makes them: openapi-generator (the CLI jar
 * from Maven Central, fetched into .cache/ by scripts/setup-openapi-generator.mjs in `npm test`'s set-up)
 * reads the document the running service serves at /docs/json and generates
 *
 * - `typescript-fetch`: compiled with `tsc --strict` together with a small
 *   program that uses it as a consumer would (so the calls are type-checked
 *   too), then run against the service;
 * - `python`: installed into the project's venv (.venv, scripts/setup-venv.mjs)
 *   with pip, offline (its build backend and dependencies are in the venv), and run against the service.
 *
 * Each client calls both lists, one document and one trip by id (a trip with a
 * leg on the road: null volumes), the tax summary and one audit, and records
 * that leg's delivery (the python client then corrects it), with the date parameters as plain YYYY-MM-DD strings
 * (spec: CalendarDate), and must get data back without a (de)serialisation
 * error. The service runs as `npm start` runs it (scripts/start.ts) on the
 * in-memory engine with the demo tenants. Both clients come from one `batch` run of the
 * generator (one JVM, C1 only: SHORT_JVM). About 50 s on a quiet 2-core machine; 4:09 wall and
 * 75 s CPU under a load average of 10–17 on the shared one.
 */
import t, { type Test } from 'tap';
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { trips } from '../lib/db/collections.ts';
import { ROOT } from './helpers/service.ts';
import { PERIOD, run, SHORT_JVM, startDemoService, toolPath } from './helpers/generator-service.ts';

t.setTimeout(300_000);

// 1. The tools: Java, the generator jar, the venv (set up by `npm test`'s pretest, scripts/setup-test.mjs; checked here, never fetched).
await run('java', ['-version']).catch((err: Error) => {
  throw new Error(`openapi-generator needs Java 11+ (Debian: apt-get install default-jre-headless): ${err.message}`);
});
const jar = await toolPath('setup-openapi-generator.mjs', '--print-jar');
const pythonBin = path.join(await toolPath('setup-venv.mjs', '--print-bin'), '..', 'python');

// 2. The service on the demo data, with a trip that has a leg on the road: the clients read its nulls, then record its delivery.
const {
  base,
  key: KEY,
  docId,
  work,
  specFile,
  prepared,
} = await startDemoService(t, 'generators', async (db, tenant) => {
  const onTheRoad = (await trips(db).findOne({ company: tenant, shipments: { $elemMatch: { unloadDate: null } } }))!;
  const leg = onTheRoad.shipments.find((l) => l.unloadDate === null)!;
  return {
    tripId: onTheRoad._id,
    delivery: {
      shipmentId: leg.shipment,
      offloadDate: new Date(leg.loadDate! + 3_600_000).toISOString(),
      products: leg.products.map((p) => ({ code: p.code, offloaded: p.loaded - 5 })),
    },
  };
});
const { tripId, delivery } = prepared;

// 3. Both clients from one run of the generator (its `batch` command: one JVM, a thread per client).
const configs = [
  { generatorName: 'typescript-fetch', outputDir: path.join(work, 'ts'), additionalProperties: { supportsES6: true } },
  { generatorName: 'python', outputDir: path.join(work, 'py'), additionalProperties: { packageName: 'freight_client', projectName: 'freight-client' } },
];
const configFiles = await Promise.all(
  configs.map(async (c) => {
    const file = path.join(work, `${c.generatorName}.json`);
    await writeFile(file, JSON.stringify({ inputSpec: specFile, ...c }));
    return file;
  }),
);
const generatorLog = await run('java', [...SHORT_JVM, '-jar', jar, 'batch', '--fail-fast', '--threads', '2', ...configFiles]);
t.notMatch(generatorLog, /\bERROR\b/, 'the generator reports no error for either client');

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
  t.same(
    calls.delivered,
    { before: expected.deliveredBefore, after: true, shrinkage: expected.shrinkage },
    expected.deliveredBefore ? 'a delivered leg read, its delivery corrected' : 'a leg on the road (null volumes read), then its delivery recorded',
  );
}

t.test('typescript-fetch: generated, compiled with tsc --strict, calls the service', async (t) => {
  const out = path.join(work, 'ts');
  t.ok(existsSync(path.join(out, 'index.ts')), 'generated');
  await writeFile(
    path.join(out, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM'],
        outDir: 'dist',
        skipLibCheck: true,
        noEmitOnError: true,
        typeRoots: [path.join(ROOT, 'node_modules', '@types')],
        types: ['node'],
      },
      include: ['*.ts', 'apis/*.ts', 'models/*.ts'],
    }),
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
  const output = await run(process.execPath, [path.join(out, 'dist', 'consumer.js'), base, KEY, docId, tripId, JSON.stringify(delivery)]);
  checkCalls(t, JSON.parse(output.trim().split('\n').pop()!) as Calls, { deliveredBefore: false, shrinkage: 5 * delivery.products.length });
});

t.test('python: generated, installed into the venv, calls the service', async (t) => {
  const out = path.join(work, 'py');
  t.ok(existsSync(path.join(out, 'pyproject.toml')), 'generated');
  // Offline: its build backend (setuptools) and dependencies are in the venv already (scripts/setup-venv.mjs); nothing is downloaded here.
  await run(pythonBin, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--no-index', '--no-build-isolation', out], { timeout: 240_000 });
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
  const output = await run(pythonBin, [path.join(work, 'consumer.py'), base, KEY, docId, tripId, JSON.stringify(correction)]);
  checkCalls(t, JSON.parse(output.trim().split('\n').pop()!) as Calls, { deliveredBefore: true, shrinkage: 7 * delivery.products.length });
});
