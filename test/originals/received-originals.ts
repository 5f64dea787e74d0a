/**
 * A received CFDI's original and printed form (issue 38: "every imported CFDI (issued and
 * received ...)"): a file of the public corpus (../shared/cfdi-corpus) imported through HTTP by its
 * receiver carries `xml` and `pdf` links in the received documents' list and get, as an issued
 * document's `invoice.xml` / `invoice.pdf`. The XML downloads byte for byte (the SHA-256 of the file
 * on disk), the PDF holds the UUID the file states (read with poppler's `pdftotext`, not the
 * service); another tenant gets 404; a generated demo document (no original) has both links null.
 */
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startHarness, assertConforms, KEY_B } from '../helpers/harness.ts';
import { corpusDir } from '../helpers/cfdi-corpus.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';

export default async function receivedOriginalsTests(t: Test): Promise<void> {
  const run = promisify(execFile);
  const ROOT = path.resolve(import.meta.dirname, '../..');
  await run(process.execPath, [path.join(ROOT, 'scripts', 'setup-poppler.mjs'), '--check']).catch((err: { stderr?: string }) => {
    throw new Error(`poppler-utils (pdftotext) is required: run \`npm run setup:poppler\`.\n${err.stderr ?? ''}`);
  });

  const h = await startHarness(t);
  const sha256 = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
  const attr = (xml: string, element: string, name: string): string => {
    const m = new RegExp(`<(?:\\w+:)?${element}\\b[^>]*?\\s${name}="([^"]*)"`).exec(xml);
    if (!m) throw new Error(`no ${element}@${name}`);
    return m[1]!.replaceAll('&amp;', '&');
  };
  /** A link's path (its origin is DOCUMENT_BASE_URL). */
  const pathOf = (url: string): string => {
    const u = new URL(url);
    if (u.origin !== h.config.documentBaseUrl) throw new Error(`${url} does not start at DOCUMENT_BASE_URL`);
    return u.pathname;
  };
  async function pdfText(pdf: Buffer): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), 'received-pdf-'));
    try {
      await writeFile(path.join(dir, 'doc.pdf'), pdf);
      return (await run('pdftotext', ['-layout', '-enc', 'UTF-8', path.join(dir, 'doc.pdf'), '-'], { maxBuffer: 16 * 1024 * 1024 })).stdout;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  type Links = { id: string; uuid: string; xml: string | null; pdf: string | null };

  t.test('a received CFDI from the corpus: its xml and pdf links in the list and the get resolve for the tenant', async (t) => {
    const bytes = readFileSync(path.join(corpusDir(), 'files/cfdiutils-cfdi40-real.xml'));
    const xml = bytes.toString('utf8');
    const tenant = attr(xml, 'Receptor', 'Rfc');
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const key = (await createApiKey(h.db, tenant, 'received originals')).key;
    const get = (url: string, k: string = key) => h.app.inject({ method: 'GET', url, headers: { 'x-api-key': k } });

    const imported = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': key, 'content-type': 'application/xml' },
      payload: bytes,
    });
    t.equal(imported.statusCode, 200, imported.body.slice(0, 300));
    const id = imported.json<{ files: { status: string; receivedDocIds?: string[] }[] }>().files[0]!.receivedDocIds![0]!;

    const one = await get(`/api/received-docs/${encodeURIComponent(id)}`);
    assertConforms(t, one, 'GET', '/api/received-docs/:id');
    const doc = one.json<Links>();
    const list = await get('/api/received-docs?limit=100');
    assertConforms(t, list, 'GET', '/api/received-docs');
    const listed = list.json<{ data: Links[] }>().data.find((d) => d.id === id);
    t.same({ xml: listed?.xml, pdf: listed?.pdf }, { xml: doc.xml, pdf: doc.pdf }, 'the list carries the same links');

    t.equal(pathOf(doc.xml!), `/api/cfdi-originals/${uuid}`);
    t.equal(pathOf(doc.pdf!), `/api/cfdi-originals/${uuid}/pdf`);
    const original = await get(pathOf(doc.xml!));
    t.equal(original.statusCode, 200);
    t.equal(sha256(original.rawPayload), sha256(bytes), 'the XML byte for byte');
    const printed = await get(pathOf(doc.pdf!));
    t.equal(printed.statusCode, 200);
    t.match(printed.headers['content-type'], /^application\/pdf/);
    t.equal(printed.rawPayload.subarray(0, 5).toString('latin1'), '%PDF-');
    t.match(await pdfText(printed.rawPayload), uuid, 'the PDF states the UUID');

    t.equal((await get(pathOf(doc.xml!), KEY_B)).statusCode, 404, 'another tenant: the XML is not found');
    t.equal((await get(pathOf(doc.pdf!), KEY_B)).statusCode, 404, 'nor the PDF');
  });

  t.test('a generated received document keeps no original: both links are null', async (t) => {
    await loadDemoData(h.db, { invoices: 40, trips: 5 });
    const demo = DEMO_TENANTS[0]!;
    const res = await h.app.inject({ method: 'GET', url: '/api/received-docs?limit=5', headers: { 'x-api-key': demo.apiKey } });
    assertConforms(t, res, 'GET', '/api/received-docs');
    const data = res.json<{ data: Links[] }>().data;
    t.ok(data.length > 0, 'the demo tenant has received documents');
    for (const d of data) t.same({ xml: d.xml, pdf: d.pdf }, { xml: null, pdf: null }, d.id);
  });
}
