/**
 * "Nothing half-written": the service (scripts/start.ts, its own process) is
 * SIGKILLed in the middle of a large POST /api/imports, restarted, and sent
 * the same zip again. The stored invoices, trips and import facts are then
 * exactly those of a clean import of that zip (idempotent by UUID), apart
 * from write times (lastUpdate, importedAt). The database (the embedded
 * engine of this test process) survives the service, as a real one does.
 */
import type { Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { startService, type RunningService } from '../helpers/service.ts';
import { corpusZip } from '../../scripts/cfdi-corpus.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';
import { importFacts, importLinks } from '../../lib/finance/ledger/facts-repo.ts';
import { IMPORT_BATCH_FILES } from '../../lib/imports/import-documents.ts';

export default async function crashTests(t: Test): Promise<void> {
  // Two service starts and three imports of 1,000 files on a shared 2-core machine.
  t.setTimeout(180_000);
  const h = await startHarness(t);
  const FILES = 1000;
  const zip = await corpusZip(FILES);
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const services: RunningService[] = [];
  t.teardown(async () => {
    for (const s of services) await s.stop(2000);
  });
  const start = async () => {
    const s = await startService({ mongodbUri: h.engine.uri, mongodbDb: h.db.databaseName, env: { ALERT_WORKER: 'false' } });
    services.push(s);
    return s;
  };
  const importZip = (base: string) =>
    fetch(`${base}/api/imports`, { method: 'POST', headers: { 'x-api-key': KEY_A, 'content-type': 'application/zip' }, body: zip });

  /** Everything the import stored, without write times. */
  async function snapshot() {
    const strip = (rows: object[], ...keys: string[]) =>
      rows.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([k]) => !keys.includes(k)))));
    return {
      docs: strip(await financialDocs(h.db).find({ company: TENANT_A }).sort({ _id: 1 }).toArray(), 'lastUpdate'),
      trips: strip(await trips(h.db).find({ company: TENANT_A }).sort({ _id: 1 }).toArray(), 'lastUpdate'),
      facts: strip(await importFacts(h.db).find({ tenant: TENANT_A }).sort({ _id: 1 }).toArray(), 'importedAt'),
    };
  }

  t.test('SIGKILL mid-import, restart, same zip again: identical to a clean import', async (t) => {
    const first = await start();
    const pending = importZip(first.base).catch((err: Error) => err);
    // Kill once the first batch is stored and before the last one is.
    const deadline = Date.now() + 60_000;
    let stored = 0;
    while (Date.now() < deadline) {
      stored = await importFacts(h.db).countDocuments({ tenant: TENANT_A });
      if (stored >= IMPORT_BATCH_FILES) break;
      await sleep(20);
    }
    first.child.kill('SIGKILL');
    t.equal(await first.exited, 'SIGKILL');
    t.ok((await pending) instanceof Error, 'the client saw the connection drop, no answer');
    const atKill = await importFacts(h.db).countDocuments({ tenant: TENANT_A });
    t.ok(atKill >= IMPORT_BATCH_FILES && atKill < FILES, `killed midway: ${atKill} of ${FILES} files stored`);

    const second = await start();
    const again = await importZip(second.base);
    t.equal(again.status, 200);
    const report = (await again.json()) as { summary: { files: number; created: number; updated: number; skipped: number; rejected: number } };
    t.equal(report.summary.files, FILES);
    t.equal(report.summary.rejected, 0);
    t.equal(report.summary.created + report.summary.skipped + report.summary.updated, FILES);
    t.ok(report.summary.skipped >= IMPORT_BATCH_FILES, `files stored before the kill are skipped (${report.summary.skipped})`);
    const afterCrash = await snapshot();

    await Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({}), importLinks(h.db).deleteMany({})]);
    const clean = await importZip(second.base);
    t.same(((await clean.json()) as { summary: unknown }).summary, {
      files: FILES,
      created: FILES,
      updated: 0,
      skipped: 0,
      rejected: 0,
      ignored: 0,
      rejectedLines: 0,
    });
    const reference = await snapshot();
    // 1000 files = 90 copies of the 11 fixtures (7 invoices, 1 trip, 10 facts + 1 cancellation each) + 10 files.
    t.equal(reference.docs.length, 90 * 7 + 6);
    t.equal(reference.trips.length, 90);
    t.same(afterCrash.docs, reference.docs, 'financial documents identical to a clean import');
    t.same(afterCrash.trips, reference.trips, 'trips identical');
    t.same(afterCrash.facts, reference.facts, 'import facts identical');
  });
}
