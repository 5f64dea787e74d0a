/**
 * A carrier's archive as PACs and the SAT hand it over (issue 35): zips and folders with a PDF
 * beside each XML (ignored, listed, not rejected), the SAT bulk download's metadata file
 * (test/fixtures/sat/metadata-2026-10.txt: its lines move the cancellation status of the
 * invoices they name).
 * Through HTTP (POST /api/imports), the command (npm run import) and MCP (importDocuments).
 * Expected values come from the fixtures' text (test/fixtures/sat/README.md lists each line).
 */
import type { Test } from 'tap';
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { fixture, fixtureNames, zipOf, FIXTURE_DIR } from '../helpers/cfdi-fixtures.ts';
import { ROOT, scriptArgs } from '../helpers/service.ts';
import { financialDocs, trips } from '../../lib/db/collections.ts';
import { importFacts, importLinks } from '../../lib/finance/ledger/facts-repo.ts';

export default async function archiveTests(t: Test): Promise<void> {
  t.setTimeout(120_000);
  const h = await startHarness(t);
  const SAT_DIR = path.join(import.meta.dirname, '..', 'fixtures', 'sat');
  const sat = (name: string): Promise<Buffer> => readFile(path.join(SAT_DIR, name));
  const UUID = (n: number): string => `1A2B3C4D-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
  const docId = (n: number): string => `${TENANT_A}-CFDI-${UUID(n)}`;
  const pdf = (n: string) => Buffer.from(`%PDF-1.4\n% representación impresa de ${n}\n%%EOF\n`);
  const wipe = () =>
    Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({}), importLinks(h.db).deleteMany({})]);

  type MetadataResult = {
    lines: number;
    cancelled: number;
    alreadyCancelled: number;
    vigente: number;
    notImported: number;
    otherTaxpayers: number;
    rejectedLines: { line: number; reason: string }[];
    moreRejectedLines: number;
  };
  type Report = {
    summary: Record<string, number>;
    files: { name: string; status: string; kind?: string; uuid?: string; reason?: string; metadata?: MetadataResult }[];
    ignored: { names: string[]; more: number };
  };
  const post = async (payload: Buffer | string | object, contentType: string) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': contentType },
      payload: payload as never,
    });
    t.equal(res.statusCode, 200, res.body.slice(0, 300));
    return res.json<Report>();
  };
  const get = async (url: string) => (await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } })).json();
  const summaryOf = async (n: number) => get(`/api/financial-docs/${docId(n)}`);
  const storedOf = async (n: number) => get(`/api/financial-docs/${docId(n)}?detail=full`);
  /** Mexico City wall time (UTC−6 all year since October 2022) as the instant. */
  const mx = (wall: string): number => Date.parse(`${wall.replace(' ', 'T')}-06:00`);
  const fixtureZipEntries = () => fixtureNames().map((n) => ({ name: `2026-10/${n}`, data: fixture(n) }));

  t.test('a PAC zip with a PDF beside each XML: every CFDI imported, 0 rejected, the PDFs listed as ignored', async (t) => {
    await wipe();
    const names = fixtureNames();
    const entries = [...fixtureZipEntries(), ...names.map((n) => ({ name: `2026-10/${n.replace(/\.xml$/, '.pdf')}`, data: pdf(n) }))];
    const r = await post(await zipOf(entries), 'application/zip');
    t.same(r.summary, { files: names.length, created: names.length, updated: 0, skipped: 0, rejected: 0, ignored: names.length, rejectedLines: 0 });
    t.same(r.ignored, { names: names.map((n) => `upload.zip/2026-10/${n.replace(/\.xml$/, '.pdf')}`), more: 0 });
    t.notOk(
      r.files.some((f) => f.name.endsWith('.pdf')),
      'no PDF among the files read',
    );

    // Bounded whatever the archive holds: 100 names, the rest counted.
    const many = Array.from({ length: 250 }, (_, i) => ({
      name: `img/foto-${String(i).padStart(3, '0')}.jpg`,
      data: Buffer.from([0xff, 0xd8, 0xff, i % 256]),
    }));
    const big = await post(await zipOf([...fixtureZipEntries(), ...many]), 'application/zip');
    t.equal(big.summary.rejected, 0);
    t.equal(big.summary.ignored, 250);
    t.equal(big.ignored.names.length, 100);
    t.equal(big.ignored.more, 150);
    t.equal(big.ignored.names[0], 'upload.zip/img/foto-000.jpg');

    // A PDF sent on its own as a JSON file is ignored too; an XML named otherwise is still read.
    const json = await post(
      {
        files: [
          { name: 'A-1001.pdf', encoding: 'base64', content: pdf('A-1001').toString('base64') },
          { name: 'A-1001 (copia)', content: fixture('01-freight-invoice-retention.xml').toString('utf8') },
        ],
      },
      'application/json',
    );
    t.same(json.summary, { files: 1, created: 0, updated: 0, skipped: 1, rejected: 0, ignored: 1, rejectedLines: 0 });
    t.same(json.ignored, { names: ['A-1001.pdf'], more: 0 });
  });

  t.test('the SAT metadata file cancels the imported invoices it lists as cancelled, counts the others, rejects a bad line by number', async (t) => {
    await wipe();
    await post(await zipOf(fixtureZipEntries()), 'application/zip');
    t.match(await summaryOf(1), { cancellations: { status: 'none', invoiceCancelled: false }, status: { code: 6 } }, 'A-1001 (PUE) paid, not cancelled');

    const text = await sat('metadata-2026-10.txt');
    const r = await post(await zipOf([{ name: 'metadata/7F3C2A10_01.txt', data: text }]), 'application/zip');
    t.equal(r.files.length, 1);
    t.match(r.files[0], { name: 'upload.zip/metadata/7F3C2A10_01.txt', status: 'updated', kind: 'satMetadata' });
    // README's table: 7 lines; 0001 and 0003 cancelled; 0004 and 0009 vigente; …0099 and the received one not imported; line 7 Estatus 2.
    t.same(r.files[0]!.metadata, {
      lines: 7,
      cancelled: 2,
      alreadyCancelled: 0,
      vigente: 2,
      notImported: 2,
      otherTaxpayers: 0,
      rejectedLines: [{ line: 7, reason: 'Estatus "2" is not 0 (cancelado) or 1 (vigente)' }],
      moreRejectedLines: 0,
    });
    t.equal(r.summary.rejectedLines, 1);
    t.equal(r.summary.rejected, 0);

    // Line 2: A-1001 Estatus 0, FechaCancelacion 2026-10-20 11:30:00.
    t.match(await summaryOf(1), { cancellations: { status: 'accepted', invoiceCancelled: true }, status: { code: 9 } });
    const stored = await storedOf(1);
    t.match(stored.canceled, [
      { uuid: UUID(1), target: 'invoice', status: 'accepted', statusSource: 'bulk-metadata', date: mx('2026-10-20 11:30:00'), motive: null },
    ]);
    t.same(
      stored.payments.filter((p: { uuid: string }) => p.uuid === UUID(1)),
      [],
      'a cancelled PUE invoice has no receipt',
    );
    // Line 4 (a "~" inside the receiver's name): A-1003 cancelled at 2026-10-21 08:00:00.
    t.match((await storedOf(3)).canceled, [{ uuid: UUID(3), status: 'accepted', date: mx('2026-10-21 08:00:00') }]);
    // Lines 3 and 5: vigente, nothing recorded; line 7 rejected: A-1002 untouched.
    for (const n of [4, 9, 2]) t.match(await summaryOf(n), { cancellations: { status: 'none', invoiceCancelled: false } }, `A-100${n} unchanged`);

    // The same file again: nothing new.
    const again = await post(await zipOf([{ name: 'metadata/7F3C2A10_01.txt', data: text }]), 'application/zip');
    t.match(again.files[0], { status: 'skipped', metadata: { cancelled: 0, alreadyCancelled: 2, vigente: 2, notImported: 2 } });

    // On its own, as a JSON file: read as metadata by its first line.
    const json = await post({ files: [{ name: 'metadata', content: text.toString('utf8') }] }, 'application/json');
    t.match(json.files[0], { kind: 'satMetadata', status: 'skipped', metadata: { lines: 7, alreadyCancelled: 2 } });

    // A cancellation in effect is final: the status service's "still valid" answer is refused.
    const put = await h.app.inject({
      method: 'PUT',
      url: `/api/financial-docs/${docId(1)}/cancellation`,
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada', consultedAt: '2026-10-25T12:00:00Z' },
    });
    t.equal(put.statusCode, 409, put.body);
  });

  t.test('metadata before its invoices: lines counted as not imported; importing the metadata again after them applies it', async (t) => {
    await wipe();
    const text = await sat('metadata-2026-10.txt');
    const first = await post(await zipOf([{ name: 'm.txt', data: text }]), 'application/zip');
    t.match(first.files[0], { status: 'skipped', metadata: { lines: 7, cancelled: 0, vigente: 0, notImported: 6 } });
    // One zip, invoices first: the metadata applies to them.
    const both = await post(await zipOf([...fixtureZipEntries(), { name: 'm.txt', data: text }]), 'application/zip');
    t.match(both.files.at(-1), { kind: 'satMetadata', status: 'updated', metadata: { cancelled: 2, vigente: 2, notImported: 2 } });
    t.match(await summaryOf(1), { cancellations: { status: 'accepted', invoiceCancelled: true } });
  });

  t.test('malformed metadata: a bad header is a file rejection; bad lines each rejected with their number, the others read', async (t) => {
    await wipe();
    await post(await zipOf(fixtureZipEntries()), 'application/zip');
    const header = 'Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante';
    const noStatus = await post(
      { files: [{ name: 'm.txt', content: `${header}\n${UUID(1)}~${TENANT_A}~X~GDI920315QR4~Y~SAT970701NN3~a~b~1~I\n` }] },
      'application/json',
    );
    t.match(noStatus.files[0], { status: 'rejected', kind: 'satMetadata', reason: 'SAT metadata header: the header has no Estatus column' });
    const full = `${header}~Estatus~FechaCancelacion`;
    const lines = [
      full,
      `not-a-uuid~${TENANT_A}~X~GDI920315QR4~Y~SAT970701NN3~a~b~1~I~1~`,
      `${UUID(1)}~${TENANT_A}~X`,
      `${UUID(1)}~${TENANT_A}~X~GDI920315QR4~Y~SAT970701NN3~a~b~1~I~0~ayer`,
      ...Array.from({ length: 120 }, () => `${UUID(1)}~${TENANT_A}~X~GDI920315QR4~Y~SAT970701NN3~a~b~1~I~9~`),
      `${UUID(4)}~${TENANT_A}~X~CIN010203KL5~Y~SAT970701NN3~a~b~1~I~0~2026-10-30 10:00:00`,
    ];
    const r = await post({ files: [{ name: 'm.txt', content: lines.join('\n') }] }, 'application/json');
    const m = r.files[0]!.metadata!;
    t.equal(m.lines, 124);
    t.equal(m.cancelled, 1, 'the good line is read');
    t.same(m.rejectedLines.slice(0, 3), [
      { line: 2, reason: 'Uuid is not a UUID: "not-a-uuid"' },
      { line: 3, reason: '3 fields where the header has 12' },
      { line: 4, reason: 'Estatus 0 needs FechaCancelacion as a date-time (YYYY-MM-DD HH:MM:SS): "ayer"' },
    ]);
    t.equal(m.rejectedLines.length, 100, 'at most 100 listed');
    t.equal(m.moreRejectedLines, 23);
    t.equal(r.summary.rejectedLines, 123);
    t.match((await storedOf(4)).canceled, [{ uuid: UUID(4), status: 'accepted', date: mx('2026-10-30 10:00:00') }]);
    // A text file that is not the metadata is ignored.
    const other = await post({ files: [{ name: 'notas.txt', content: 'facturas de octubre\n' }] }, 'application/json');
    t.same(other.summary, { files: 0, created: 0, updated: 0, skipped: 0, rejected: 0, ignored: 1, rejectedLines: 0 });
  });

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

  t.test('npm run import: a folder as the PAC hands it over (XML + PDF + metadata) exits 0; a rejected metadata line exits 3', async (t) => {
    await wipe();
    const dir = await mkdtemp(path.join(os.tmpdir(), 'import-archive-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await mkdir(path.join(dir, 'pdf'));
    for (const n of fixtureNames()) {
      await copyFile(path.join(FIXTURE_DIR, n), path.join(dir, n));
      await writeFile(path.join(dir, 'pdf', n.replace(/\.xml$/, '.pdf')), pdf(n));
    }
    const text = (await sat('metadata-2026-10.txt')).toString('latin1');
    // Without line 7 (Estatus 2): every line can be read.
    const clean = text
      .split('\r\n')
      .filter((_, i) => i !== 6)
      .join('\r\n');
    await writeFile(path.join(dir, 'zz-metadata.txt'), clean, 'latin1');
    const ok = await cli(['--tenant', TENANT_A, dir]);
    t.equal(ok.code, 0, ok.out);
    t.match(ok.out, `${TENANT_A}: 12 files`);
    t.match(ok.out, '0 rejected');
    t.match(ok.out, '11 files ignored (not CFDI)');
    t.match(ok.out, /zz-metadata\.txt: SAT metadata, 6 lines: 2 cancellations recorded/);
    t.match(await summaryOf(1), { cancellations: { status: 'accepted', invoiceCancelled: true } });

    const json = await cli(['--tenant', TENANT_A, '--json', dir]);
    t.equal(json.code, 0, json.out);
    const report = JSON.parse(json.out.slice(json.out.indexOf('{'))) as Report;
    t.equal(report.ignored.names.length, 11);
    t.ok(
      report.ignored.names.every((n) => n.startsWith(path.join(dir, 'pdf'))),
      'the PDFs',
    );

    await writeFile(path.join(dir, 'zz-metadata.txt'), text, 'latin1');
    const bad = await cli(['--tenant', TENANT_A, dir]);
    t.equal(bad.code, 3, bad.out);
    t.match(bad.out, /rejected .*zz-metadata\.txt line 7: Estatus "2" is not 0/);
  });

  t.test("an archive entry that cannot be opened or read is that file's rejection; the archive's other files are imported", async (t) => {
    /** Offsets of the local headers and central-directory entries of a zip yazl wrote (no comments, no zip64): APPNOTE 4.3.7, 4.3.12. */
    const headers = (zip: Buffer) => {
      const local: number[] = [];
      const central: number[] = [];
      for (let i = 0; i + 4 <= zip.length; i++) {
        const sig = zip.readUInt32LE(i);
        if (sig === 0x04034b50) local.push(i);
        else if (sig === 0x02014b50) central.push(i);
      }
      return { local, central };
    };
    const damagedZip = async () => {
      const zip = await zipOf([
        { name: 'ok/01.xml', data: fixture('01-freight-invoice-retention.xml') },
        { name: 'ok/02.xml', data: fixture('02-invoice-shortage-line.xml') },
        { name: 'bzip2.xml', data: fixture('03-invoice-persona-fisica.xml') },
        { name: 'torn.xml', data: fixture('04-ppd-invoice.xml') },
        { name: 'metadata.txt', data: await sat('metadata-2026-10.txt') },
      ]);
      const { local, central } = headers(zip);
      t.equal(local.length, 5);
      // Compression method 12 (bzip2; 7-Zip writes it, and Deflate64 or LZMA) in both headers: APPNOTE 4.4.5.
      zip.writeUInt16LE(12, local[2]! + 8);
      zip.writeUInt16LE(12, central[2]! + 10);
      // A local header's signature damaged, the central directory intact.
      zip.writeUInt32LE(0xdeadbeef, local[3]);
      // The metadata declares one byte fewer than it holds: its stream fails midway.
      zip.writeUInt32LE(zip.readUInt32LE(central[4]! + 24) - 1, central[4]! + 24);
      return zip;
    };
    const check = (r: Report) => {
      t.same(r.summary, { files: 5, created: 2, updated: 0, skipped: 0, rejected: 3, ignored: 0, rejectedLines: 0 });
      const byName = new Map(r.files.map((f) => [f.name.replace(/^[^/]+\//, ''), f]));
      t.match(byName.get('ok/01.xml'), { status: 'created' });
      t.match(byName.get('ok/02.xml'), { status: 'created' });
      t.match(byName.get('bzip2.xml'), { status: 'rejected', reason: /^cannot open the zip entry: .*compression method/ });
      t.match(byName.get('torn.xml'), { status: 'rejected', reason: /^cannot open the zip entry: .*signature/ });
      t.match(byName.get('metadata.txt'), { status: 'rejected', kind: 'satMetadata', reason: /^cannot read the zip entry: / });
    };
    await wipe();
    check(await post(await damagedZip(), 'application/zip'));
    t.match(await summaryOf(1), { id: docId(1) });

    await wipe();
    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const res = (await client.callTool({
      name: 'importDocuments',
      arguments: { body: { files: [{ name: 'pac.zip', encoding: 'base64', content: (await damagedZip()).toString('base64') }] } },
    })) as unknown as { structuredContent: Report; isError?: boolean };
    t.notOk(res.isError);
    check(res.structuredContent);
  });

  /** A zip whose entries' names are then written over, byte for byte, in its local headers and central directory: yazl refuses unsafe names. */
  const zipRenamed = async (entries: { name: string; data: Buffer; store?: boolean }[], renames: Map<string, Buffer>) => {
    const zip = await zipOf(entries);
    for (const [written, name] of renames) {
      const from = Buffer.from(written);
      if (from.length !== name.length) throw new Error(`${written}: not the length of the name it stands for`);
      let found = 0;
      for (let i = zip.indexOf(from); i >= 0; i = zip.indexOf(from, i + 1), found++) name.copy(zip, i);
      if (found !== 2) throw new Error(`${written} found ${found} times, not in one local header and one central-directory entry`);
    }
    return zip;
  };
  /** A stand-in name of the same UTF-8 length as `name`, found nowhere else in the zip. */
  const standIn = (name: string) => `${'q'.repeat(Buffer.byteLength(name) - 4)}.xml`;
  const statusOf = async (n: number) =>
    (await h.app.inject({ method: 'GET', url: `/api/financial-docs/${docId(n)}`, headers: { 'x-api-key': KEY_A } })).statusCode;

  t.test("an entry with an unsafe name (.., absolute, drive letter, NUL) is that entry's rejection; the archive's other files are imported", async (t) => {
    const withBadName = (bad: string) =>
      zipRenamed(
        [
          { name: 'good1.xml', data: fixture('01-freight-invoice-retention.xml') },
          { name: standIn(bad), data: fixture('03-invoice-persona-fisica.xml') },
          { name: 'facturas/año/good2.xml', data: fixture('02-invoice-shortage-line.xml') },
        ],
        new Map([[standIn(bad), Buffer.from(bad)]]),
      );
    const check = async (r: Report, archive: string, shown: string) => {
      // The name as JSON in the message: a NUL in the test's output made CI's log binary to grep.
      t.same(r.summary, { files: 3, created: 2, updated: 0, skipped: 0, rejected: 1, ignored: 0, rejectedLines: 0 }, JSON.stringify(shown.slice(0, 40)));
      t.match(
        r.files.filter((f) => f.status !== 'rejected'),
        [
          { name: `${archive}/good1.xml`, status: 'created' },
          { name: `${archive}/facturas/año/good2.xml`, status: 'created' },
        ],
        'the valid names as before (UTF-8)',
      );
      const rejected = r.files.filter((f) => f.status === 'rejected');
      t.equal(rejected.length, 1);
      t.equal(rejected[0]?.name, `${archive}/${shown}`);
      t.match(rejected[0]?.reason, /^unsafe entry name: /);
      t.same([await statusOf(1), await statusOf(2), await statusOf(3)], [200, 200, 404], 'the good files imported, the bad one not');
    };
    for (const bad of ['../evil.xml', '/abs/x.xml', 'C:\\win\\x.xml', 'dir/../../x.xml', 'nul\u0000.xml']) {
      await wipe();
      await check(await post(await withBadName(bad), 'application/zip'), 'upload.zip', bad);
    }
    // A 5,000-character name: the report shows its first 299 characters and "…".
    const long = `../${'x'.repeat(4989)}.xml`;
    await wipe();
    const r = await post(await withBadName(long), 'application/zip');
    await check(r, 'upload.zip', `${long.slice(0, 299)}…`);
    t.ok(JSON.stringify(r).length < 2000, 'the report stays small');

    // Through MCP: the same zip as a JSON file.
    await wipe();
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const res = (await client.callTool({
      name: 'importDocuments',
      arguments: { body: { files: [{ name: 'pac.zip', encoding: 'base64', content: (await withBadName('../evil.xml')).toString('base64') }] } },
    })) as unknown as { structuredContent: Report; isError?: boolean };
    t.notOk(res.isError);
    await check(res.structuredContent, 'pac.zip', '../evil.xml');
  });

  t.test('entry names without the UTF-8 flag are read as CP437, as before', async (t) => {
    await wipe();
    const zip = await zipRenamed(
      [{ name: 'aXo.xml', data: fixture('01-freight-invoice-retention.xml') }],
      new Map([['aXo.xml', Buffer.from([0x61, 0xa4, 0x6f, 0x2e, 0x78, 0x6d, 0x6c])]]),
    );
    // General-purpose bit 11 (UTF-8 names) cleared in the local header and the central directory (APPNOTE 4.4.4).
    const local = zip.indexOf(Buffer.from([0x50, 0x4b, 0x03, 0x04]));
    const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
    zip.writeUInt16LE(zip.readUInt16LE(local + 6) & ~0x800, local + 6);
    zip.writeUInt16LE(zip.readUInt16LE(central + 8) & ~0x800, central + 8);
    const r = await post(zip, 'application/zip');
    t.match(r.files, [{ name: 'upload.zip/año.xml', status: 'created' }]);
  });

  t.test("an entry whose bytes do not match its CRC-32 is that file's rejection; the archive's other files are imported", async (t) => {
    const entries = [
      { name: 'a.xml', data: fixture('01-freight-invoice-retention.xml'), store: true },
      { name: 'b.xml', data: fixture('02-invoice-shortage-line.xml'), store: true },
    ];
    const intact = await zipOf(entries);
    // Stored, so a.xml's bytes are the zip's: SubTotal 20000.00 becomes 90000.00, the CRC left as it was.
    const altered = Buffer.from(intact);
    const at = altered.indexOf('SubTotal="20000.00"');
    t.ok(at > 0 && at < altered.indexOf('b.xml'), "in a.xml's data");
    altered.write('9', at + 'SubTotal="'.length);

    await wipe();
    const r = await post(altered, 'application/zip');
    t.same(r.summary, { files: 2, created: 1, updated: 0, skipped: 0, rejected: 1, ignored: 0, rejectedLines: 0 });
    t.match(r.files, [
      { name: 'upload.zip/a.xml', status: 'rejected', reason: /^cannot read the zip entry: CRC-32 mismatch .*damaged or was altered/ },
      { name: 'upload.zip/b.xml', status: 'created' },
    ]);
    t.same([await statusOf(1), await statusOf(2)], [404, 200], 'nothing written for the altered entry');

    // Every entry intact: imported as is.
    const ok = await post(intact, 'application/zip');
    t.same(ok.summary, { files: 2, created: 1, updated: 0, skipped: 1, rejected: 0, ignored: 0, rejectedLines: 0 });
    t.match(await summaryOf(1), { id: docId(1), amounts: { subtotal: 20000 } });

    // The SAT metadata is applied in batches of lines as it streams: a damaged one is found before any line is applied.
    await wipe();
    await post(await zipOf(fixtureZipEntries()), 'application/zip');
    const header =
      'Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion';
    const filler = Array.from(
      { length: 1500 },
      (_, i) => `0F0F0F0F-0000-4000-8000-${String(i).padStart(12, '0')}~${TENANT_A}~X~GDI920315QR4~Y~SAT970701NN3~a~b~1~I~1~`,
    );
    const text = [header, `${UUID(1)}~${TENANT_A}~X~GDI920315QR4~Y~SAT970701NN3~a~b~1~I~0~2026-10-20 11:30:00`, ...filler].join('\n');
    const metadataZip = await zipOf([{ name: 'metadata.txt', data: Buffer.from(text), store: true }]);
    const damaged = Buffer.from(metadataZip);
    damaged.write('7', damaged.indexOf('000000001499~'));
    const m = await post(damaged, 'application/zip');
    t.match(m.files, [{ name: 'upload.zip/metadata.txt', status: 'rejected', kind: 'satMetadata', reason: /CRC-32 mismatch/ }]);
    t.match(await summaryOf(1), { cancellations: { status: 'none', invoiceCancelled: false } }, 'no line applied');
    const intactMetadata = await post(metadataZip, 'application/zip');
    t.match(intactMetadata.files, [{ status: 'updated', kind: 'satMetadata', metadata: { lines: 1501, cancelled: 1 } }]);
    t.match(await summaryOf(1), { cancellations: { status: 'accepted', invoiceCancelled: true } });
  });

  t.test("a zip made by macOS's Archive Utility: the resource forks (__MACOSX/, ._ names) are ignored, not rejected", async (t) => {
    await wipe();
    // Each XML has its AppleDouble twin (a binary header, 0x00051607), as the Finder writes them.
    const fork = Buffer.concat([Buffer.from([0x00, 0x05, 0x16, 0x07, 0x00, 0x02, 0x00, 0x00]), Buffer.alloc(74)]);
    const names = ['01-freight-invoice-retention.xml', '02-invoice-shortage-line.xml'];
    const entries = names.flatMap((n) => [
      { name: `facturas/${n}`, data: fixture(n) },
      { name: `__MACOSX/facturas/._${n}`, data: fork },
    ]);
    const body = (await zipOf([...entries, { name: 'facturas/._sola.xml', data: fork }])).toString('base64');
    const check = (r: Report) => {
      t.same(r.summary, { files: 2, created: 2, updated: 0, skipped: 0, rejected: 0, ignored: 3, rejectedLines: 0 });
      t.same(r.ignored.names.sort(), [...names.map((n) => `pac.zip/__MACOSX/facturas/._${n}`), 'pac.zip/facturas/._sola.xml'].sort());
    };
    check(await post({ files: [{ name: 'pac.zip', encoding: 'base64', content: body }] }, 'application/json'));
    await wipe();
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const res = (await client.callTool({
      name: 'importDocuments',
      arguments: { body: { files: [{ name: 'pac.zip', encoding: 'base64', content: body }] } },
    })) as unknown as {
      structuredContent: Report;
    };
    check(res.structuredContent);
  });

  t.test('MCP: importDocuments takes the metadata and reports what its lines did', async (t) => {
    await wipe();
    await post(await zipOf(fixtureZipEntries()), 'application/zip');
    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const text = (await sat('metadata-2026-10.txt')).toString('utf8');
    const res = (await client.callTool({
      name: 'importDocuments',
      arguments: {
        body: {
          files: [
            { name: 'metadata.txt', content: text },
            { name: 'A-1001.pdf', encoding: 'base64', content: pdf('x').toString('base64') },
          ],
        },
      },
    })) as unknown as { structuredContent: Report; isError?: boolean };
    t.notOk(res.isError);
    t.match(res.structuredContent.files[0], { kind: 'satMetadata', status: 'updated', metadata: { cancelled: 2, vigente: 2, notImported: 2 } });
    t.same(res.structuredContent.ignored, { names: ['A-1001.pdf'], more: 0 });
    t.match(await summaryOf(3), { cancellations: { status: 'accepted', invoiceCancelled: true } });
  });
}
