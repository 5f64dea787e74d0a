/**
 * The import as an operation: incremental sync sees what it writes
 * (`lastUpdate` = write time, whatever dates the CFDI carry), its own deadline
 * (IMPORT_TIMEOUT_MS, not REQUEST_TIMEOUT_MS) over HTTP, and the CLI's exit codes.
 */
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm, symlink, writeFile, copyFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { fixture, fixtureNames, zipOf, FIXTURE_DIR } from '../helpers/cfdi-fixtures.ts';
import { ROOT, scriptArgs } from '../helpers/service.ts';
import { corpusZip } from '../../scripts/cfdi-corpus.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';
import { importFacts, importLinks } from '../../lib/finance/ledger/facts-repo.ts';
import { IMPORT_BATCH_FILES } from '../../lib/imports/import-documents.ts';

export default async function operationsTests(t: Test): Promise<void> {
  t.setTimeout(120_000);
  const h = await startHarness(t);
  const UUID = (n: number): string => `1A2B3C4D-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const docId = (n: number): string => `${TENANT_A}-CFDI-${UUID(n)}`;
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const wipe = () =>
    Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({}), importLinks(h.db).deleteMany({})]);
  const post = (payload: Buffer | string, contentType: string) =>
    h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': contentType }, payload });
  const get = async (url: string) => (await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } })).json();
  /** A moment strictly after every write so far (lastUpdate has millisecond resolution). */
  const mark = async () => {
    await sleep(5);
    const at = new Date().toISOString();
    await sleep(5);
    return at;
  };
  const idsSince = async (list: string, since: string) =>
    ((await get(`/api/${list}?limit=100&updatedSince=${since}`)).data as { id: string }[]).map((d) => d.id).sort();

  t.test('incremental sync: imported and re-imported changes are seen by updatedSince on both lists, unchanged ones are not', async (t) => {
    await wipe();
    const start = await mark();
    const withoutCancellation = fixtureNames().filter((n) => !n.startsWith('10') && !n.startsWith('11'));
    const r1 = await post(await zipOf(withoutCancellation.map((n) => ({ name: n, data: fixture(n) }))), 'application/zip');
    t.equal(r1.statusCode, 200);
    const carta = fixture('11-carta-porte-two-products.xml').toString('utf8');
    const inTransit = carta.replace(/<cfdi:Addenda>[\s\S]*<\/cfdi:Addenda>/, '');
    t.equal((await post(inTransit, 'application/xml')).json().files[0].status, 'created');
    // CFDI dated October 2026 (before "now"): visible to a sync from before the import all the same.
    t.same(await idsSince('financial-docs', start), [1, 2, 3, 4, 8, 9, 11].map(docId), 'the 7 imported invoices');
    t.same(await idsSince('shipments', start), [`${TENANT_A}-CP-${UUID(11)}`], 'the imported trip');
    const stored = await financialDocs(h.db).findOne({ _id: docId(4) });
    t.ok(stored!.lastUpdate >= start, 'lastUpdate is the write time, not the last CFDI date');

    const afterFirst = await mark();
    t.equal((await post(await zipOf(withoutCancellation.map((n) => ({ name: n, data: fixture(n) }))), 'application/zip')).json().summary.skipped, 9);
    t.same(await idsSince('financial-docs', afterFirst), [], 'a re-import that changes nothing is not a change');

    // The cancellation changes A-1008 only; the delivered Carta Porte changes the trip only.
    t.equal((await post(fixture('10-cancellation-acuse-motive-01.xml'), 'application/xml')).json().files[0].status, 'created');
    t.equal((await post(carta, 'application/xml')).json().files[0].status, 'updated');
    t.same(await idsSince('financial-docs', afterFirst), [docId(8)], 'the cancelled invoice');
    t.same(await idsSince('shipments', afterFirst), [`${TENANT_A}-CP-${UUID(11)}`], 'the delivered trip');
    const doc = (await get(`/api/financial-docs?limit=1&updatedSince=${afterFirst}`)).data[0];
    t.equal(doc.status.code, 9, 'A-1008 now cancelled');
  });

  t.test(
    'deadline: IMPORT_TIMEOUT_MS cuts a long import (503 deadline_exceeded, files so far whole); imports are not bound by REQUEST_TIMEOUT_MS',
    async (t) => {
      await wipe();
      const files = 1000;
      const zip = await corpusZip(files);
      // Over a real socket: the deadline is about a request fully received and still unanswered.
      const send = async () => {
        const base = await h.app.listen({ port: 0, host: '127.0.0.1' });
        const res = await fetch(`${base}/api/imports`, { method: 'POST', headers: { 'x-api-key': KEY_A, 'content-type': 'application/zip' }, body: zip });
        return { status: res.status, body: (await res.json()) as Record<string, any> };
      };
      await h.rebuild({ env: { IMPORT_TIMEOUT_MS: '100', REQUEST_TIMEOUT_MS: '600000' } });
      const cut = await send();
      t.equal(cut.status, 503);
      t.equal(cut.body.error.reason, 'deadline_exceeded');
      t.match(cut.body.error.details[0], /within 100 ms/);
      // The import stops at the next batch boundary: at most the batch being written finishes after the answer.
      await sleep(1000);
      const stopped = await importFacts(h.db).countDocuments({});
      await sleep(500);
      t.equal(await importFacts(h.db).countDocuments({}), stopped, 'nothing more is written after the cut');
      t.ok(stopped < files, `cut midway (${stopped} of ${files} files stored)`);
      t.equal(stopped % IMPORT_BATCH_FILES, 0, 'whole batches only');

      // A 1 s request deadline does not apply to imports (their own default is 15 min).
      await h.rebuild({ env: { REQUEST_TIMEOUT_MS: '1000' } });
      t.equal(h.config.imports.timeoutMs, 900_000);
      const started = Date.now();
      const full = await send();
      const took = Date.now() - started;
      t.equal(full.status, 200, `the whole import answers (${took} ms)`);
      t.same(full.body.summary, { files, created: files - stopped, updated: 0, skipped: stopped, rejected: 0, ignored: 0, rejectedLines: 0 });
      t.ok(took > 1000, `took longer than REQUEST_TIMEOUT_MS (${took} ms), so the test shows it does not apply`);
      // 1000 files = 90 copies of the 11 fixtures (7 invoices, 1 trip each) + files 01–10 of copy 91 (6 invoices).
      t.equal((await get('/api/financial-docs?limit=1&startDate=2026-10-01&endDate=2026-10-31')).meta.total, 90 * 7 + 6);
      t.equal((await get('/api/shipments?limit=1&startDate=2026-10-01&endDate=2026-10-31')).meta.total, 90);
      await h.rebuild({});
    },
  );

  function cli(args: string[]): Promise<{ code: number | null; out: string }> {
    const child = spawn(process.execPath, [...scriptArgs('scripts/import.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, TAP: '', NODE_OPTIONS: '', MONGODB_URI: h.engine.uri, MONGODB_DB: h.db.databaseName, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, out })));
  }

  t.test('CLI exit codes: 0 when every file is imported or skipped, 3 when any is rejected, 2 on a usage error', async (t) => {
    await wipe();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'import-cli-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    for (const n of fixtureNames()) await copyFile(path.join(FIXTURE_DIR, n), path.join(dir, n));
    await writeFile(path.join(dir, 'readme.pdf'), 'not looked at');

    const ok = await cli(['--tenant', TENANT_A, dir]);
    t.equal(ok.code, 0, ok.out);
    t.match(ok.out, `${TENANT_A}: 11 files`);
    t.equal((await get('/api/financial-docs?limit=1&startDate=2026-10-01&endDate=2026-10-31')).meta.total, 7, 'imported, read through HTTP');
    const again = await cli(['--tenant', TENANT_A, dir]);
    t.equal(again.code, 0, 'all skipped is success');
    t.match(again.out, '11 skipped');

    await writeFile(path.join(dir, 'broken.xml'), '<cfdi:Comprobante');
    const bad = await cli(['--tenant', TENANT_A, dir, path.join(dir, 'missing.xml')]);
    t.equal(bad.code, 3, bad.out);
    t.match(bad.out, /rejected .*broken\.xml/);
    t.match(bad.out, /rejected .*missing\.xml: no such file or folder/);
    t.match(bad.out, '2 rejected');

    const wrongTenant = await cli(['--tenant', 'FNO900202CD2', path.join(dir, '01-freight-invoice-retention.xml')]);
    t.equal(wrongTenant.code, 3, 'a file of another RFC is a rejection');

    for (const args of [[dir], ['--tenant', 'not-an-rfc', dir], ['--tenant', TENANT_A], ['--tenant', TENANT_A, '--bogus', dir]]) {
      const usage = await cli(args);
      t.equal(usage.code, 2, `usage error: ${args.join(' ')}`);
      t.match(usage.out, 'usage: npm run import');
    }
    const help = await cli(['--help']);
    t.equal(help.code, 0, 'help is not an error');
    t.match(help.out, 'usage: npm run import');
  });

  t.test('CLI: the tenant as the service stores it, and every path a folder can hold answered with its reason', async (t) => {
    await wipe();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'import-cli-paths-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'walked'));
    await copyFile(path.join(FIXTURE_DIR, '01-freight-invoice-retention.xml'), path.join(dir, 'invoice.xml'));
    await symlink(path.join(dir, 'invoice.xml'), path.join(dir, 'walked', 'linked.xml'));
    await symlink(dir, path.join(dir, 'walked', 'loop'));

    // Spaces around the RFC (a pasted value) name the same tenant, never one of their own.
    const spaced = await cli(['--tenant', ` ${TENANT_A.toLowerCase()} `, path.join(dir, 'walked')]);
    t.equal(spaced.code, 3, spaced.out);
    t.match(spaced.out, `${TENANT_A}: 2 files`);
    t.equal((await get('/api/financial-docs?limit=1&startDate=2026-10-01&endDate=2026-10-31')).meta.total, 1, "the linked file, read as the tenant's");
    t.match(spaced.out, /rejected .*loop: a symbolic link to a folder is not followed/);

    // A device (or a pipe) is not a file to import: rejected, the rest imported, no stack.
    const device = await cli(['--tenant', TENANT_A, '/dev/null', path.join(dir, 'invoice.xml')]);
    t.equal(device.code, 3, device.out);
    t.match(device.out, /rejected .*\/dev\/null: not a regular file or folder/);
    t.match(device.out, '1 skipped');
    t.notMatch(device.out, /\n\s+at /, 'no stack trace');
  });

  t.test('facts imported before importLinks existed are linked on the next import (backfill), so documents still see every fact', async (t) => {
    await wipe();
    const first = fixtureNames().filter((n) => !n.startsWith('07'));
    t.equal((await post(await zipOf(first.map((n) => ({ name: n, data: fixture(n) }))), 'application/zip')).json().summary.created, 10);
    await importLinks(h.db).deleteMany({});
    // The last payment of A-1004: its document must still count the first payment and the credit note.
    const last = (await post(fixture('07-payment-complement-2.xml'), 'application/xml')).json();
    t.same(last.files[0].financialDocIds, [docId(4)]);
    const ppd = (await get('/api/financial-docs?limit=20&startDate=2026-10-01&endDate=2026-10-31')).data.find((d: { id: string }) => d.id === docId(4));
    t.equal(ppd.status.code, 6, 'A-1004 paid: 20,000.00 + credit note 5,600.00 + 30,400.00 = 56,000.00');
    t.ok((await importLinks(h.db).countDocuments({ tenant: TENANT_A })) >= 7, 'links rebuilt for the tenant');
  });
}
