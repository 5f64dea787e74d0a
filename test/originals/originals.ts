/**
 * The original XML (issue 38; docs/domain.md, "The original XML"): files of the public CFDI corpus
 * (../shared/cfdi-corpus, MANIFEST.tsv) imported through HTTP come back byte for byte — the SHA-256
 * this test computes from the file on disk — through the `invoice.xml` link of the financial
 * document (a CFDI 3.3 and a 4.0), of a trip, the `xml` link of a received CFDI, and an ISO-8859-1
 * file (the corpus has none: the test re-encodes SW's 4.0 global invoice, whose `Año` is not
 * ASCII, to ISO-8859-1 and changes its declaration, nothing else). A signed link works without a
 * key until it expires (the service's clock is the test's), then 404s; a changed token 404s;
 * another tenant gets 404; generated demo data has null links. MCP: the `originals` toolset's tool
 * returns a resource link, not the bytes.
 */
import type { Test } from 'tap';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, assertConforms, KEY_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { corpusDir } from '../helpers/cfdi-corpus.ts';
import { zipOf } from '../helpers/cfdi-fixtures.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { COLLECTIONS } from '../../lib/db/collections.ts';
import { loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';

export default async function originalsTests(t: Test): Promise<void> {
  let clock = Date.parse('2026-11-20T12:00:00Z');
  const h = await startHarness(t, { build: { now: () => new Date(clock) } });
  const CORPUS = corpusDir();
  const corpusFile = (name: string): Buffer => readFileSync(path.join(CORPUS, name));
  const sha256 = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
  /** The UUID and RFCs as the file states them (read here, not by the service). */
  const attr = (xml: string, element: string, name: string): string => {
    const m = new RegExp(`<(?:\\w+:)?${element}\\b[^>]*?\\s${name}="([^"]*)"`).exec(xml);
    if (!m) throw new Error(`no ${element}@${name}`);
    return m[1]!.replaceAll('&amp;', '&');
  };

  const keys = new Map<string, string>();
  async function keyOf(tenant: string): Promise<string> {
    let key = keys.get(tenant);
    if (!key) {
      key = (await createApiKey(h.db, tenant, `originals ${tenant}`)).key;
      keys.set(tenant, key);
    }
    return key;
  }

  type FileResult = { status: string; uuid?: string; financialDocIds?: string[]; receivedDocIds?: string[]; tripId?: string; reason?: string };
  async function importBytes(key: string, bytes: Buffer): Promise<FileResult> {
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: bytes });
    if (res.statusCode !== 200) throw new Error(`POST /api/imports ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.json<{ files: FileResult[] }>().files[0]!;
  }
  /** The path of a link the service gave (its origin is DOCUMENT_BASE_URL, the test's `https://files.example.test`). */
  const pathOf = (url: string): string => {
    const u = new URL(url);
    if (u.origin !== h.config.documentBaseUrl) throw new Error(`${url} does not start at DOCUMENT_BASE_URL ${h.config.documentBaseUrl}`);
    return u.pathname + u.search;
  };
  async function download(url: string, key?: string) {
    return h.app.inject({ method: 'GET', url, headers: key ? { 'x-api-key': key } : {} });
  }

  const ISSUED = [
    { label: 'CFDI 3.3', file: 'files/cfdiutils-cfdi33-real.xml' },
    { label: 'CFDI 4.0', file: 'files/cfdiutils-cfdi40-valid.xml' },
  ];

  for (const { label, file } of ISSUED) {
    t.test(`${label}: the invoice.xml link of its financial document downloads the file byte for byte`, async (t) => {
      const bytes = corpusFile(file);
      const xml = bytes.toString('utf8');
      const tenant = attr(xml, 'Emisor', 'Rfc');
      const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
      const key = await keyOf(tenant);
      const r = await importBytes(key, bytes);
      t.equal(r.status, 'created', r.reason ?? 'imported');
      const docRes = await h.app.inject({
        method: 'GET',
        url: `/api/financial-docs/${encodeURIComponent(r.financialDocIds![0]!)}`,
        headers: { 'x-api-key': key },
      });
      assertConforms(t, docRes, 'GET', '/api/financial-docs/:id');
      const invoice = docRes.json<{ invoice: { uuid: string; xml: string | null; pdf: string | null } }>().invoice;
      t.equal(pathOf(invoice.pdf!), `/api/cfdi-originals/${uuid}/pdf`, 'the printed form (test/originals/printed-originals.ts reads it)');
      t.equal(pathOf(invoice.xml!), `/api/cfdi-originals/${uuid}`);
      const res = await download(pathOf(invoice.xml!), key);
      t.equal(res.statusCode, 200);
      t.equal(res.headers['content-type'], 'application/xml');
      t.equal(res.headers['content-disposition'], `attachment; filename="${uuid}.xml"`);
      t.equal(sha256(res.rawPayload), sha256(bytes), 'the same SHA-256 as the file on disk');
      // Lower case works too; another tenant's key gets 404 in the error shape.
      t.equal(sha256((await download(`/api/cfdi-originals/${uuid.toLowerCase()}`, key)).rawPayload), sha256(bytes));
      const foreign = await download(`/api/cfdi-originals/${uuid}`, KEY_B);
      assertConforms(t, foreign, 'GET', '/api/cfdi-originals/:uuid');
      t.equal(foreign.statusCode, 404);
      t.equal(foreign.json<{ error: { reason: string } }>().error.reason, 'not_found');
    });
  }

  t.test('an ISO-8859-1 file stays ISO-8859-1', async (t) => {
    const utf8 = corpusFile('files/swjava-ingreso-timbrado.xml').toString('utf8');
    t.match(utf8, /^<\?xml version="1.0" encoding="utf-8"\?>/, 'the corpus file declares UTF-8');
    t.match(utf8, /Año/, 'and holds a character outside ASCII');
    const latin1 = Buffer.from(utf8.replace('encoding="utf-8"', 'encoding="ISO-8859-1"'), 'latin1');
    t.equal(latin1.toString('latin1'), utf8.replace('encoding="utf-8"', 'encoding="ISO-8859-1"'), 'every character has an ISO-8859-1 byte');
    t.ok(latin1.includes(Buffer.from([0x41, 0xf1, 0x6f])), '"Año" is the byte 0xF1 now');
    const key = await keyOf(attr(utf8, 'Emisor', 'Rfc'));
    const uuid = attr(utf8, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    t.equal((await importBytes(key, latin1)).status, 'created');
    const res = await download(`/api/cfdi-originals/${uuid}`, key);
    t.equal(res.statusCode, 200);
    t.equal(sha256(res.rawPayload), sha256(latin1), 'the ISO-8859-1 bytes, not a UTF-8 re-serialisation');
  });

  t.test('importing the same file again keeps one original', async (t) => {
    const bytes = corpusFile(ISSUED[0]!.file);
    const key = await keyOf(attr(bytes.toString('utf8'), 'Emisor', 'Rfc'));
    t.equal((await importBytes(key, bytes)).status, 'skipped');
    t.equal(await h.db.collection(COLLECTIONS.cfdiOriginals).countDocuments({ sha256: sha256(bytes) }), 1);
  });

  t.test("a cancellation acknowledgement is kept (not served as the CFDI); a supplier's refused one is not", async (t) => {
    const bytes = corpusFile('files/satcfdi-sw-acuse-2022.xml');
    const xml = bytes.toString('utf8');
    const issuer = attr(xml, 'Acuse', 'RfcEmisor');
    const uuid = /<UUID>([0-9A-Fa-f-]{36})<\/UUID>/.exec(xml)![1]!.toUpperCase();
    const r = await importBytes(await keyOf(issuer), bytes);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    const kept = await h.db.collection(COLLECTIONS.cfdiOriginals).findOne({ tenant: issuer, sha256: sha256(bytes) });
    t.ok(kept, 'kept for its issuer');
    t.same(kept?.uuids, [uuid], 'about the UUID it cancels');
    t.equal(sha256(Buffer.from((kept?.bytes as { buffer: Uint8Array }).buffer)), sha256(bytes), 'byte for byte');
    t.equal((await download(`/api/cfdi-originals/${uuid}`, await keyOf(issuer))).statusCode, 404, 'not served as the CFDI it cancels');
    // Another tenant imports it: the supplier's cancellation of a CFDI it never received is refused, and nothing of it kept.
    const other = 'DIM8701081LA';
    const refused = await importBytes(await keyOf(other), bytes);
    t.equal(refused.status, 'rejected');
    t.equal(await h.db.collection(COLLECTIONS.cfdiOriginals).countDocuments({ tenant: other }), 0);
  });

  t.test('a received CFDI: its xml link downloads the file', async (t) => {
    const bytes = corpusFile('files/cfdiutils-cfdi40-real.xml');
    const xml = bytes.toString('utf8');
    const tenant = attr(xml, 'Receptor', 'Rfc');
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const key = await keyOf(tenant);
    const r = await importBytes(key, bytes);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    const docRes = await h.app.inject({ method: 'GET', url: `/api/received-docs/${encodeURIComponent(r.receivedDocIds![0]!)}`, headers: { 'x-api-key': key } });
    assertConforms(t, docRes, 'GET', '/api/received-docs/:id');
    const link = docRes.json<{ xml: string | null }>().xml;
    t.equal(pathOf(link!), `/api/cfdi-originals/${uuid}`);
    const res = await download(pathOf(link!), key);
    t.equal(res.statusCode, 200);
    t.equal(sha256(res.rawPayload), sha256(bytes));
  });

  t.test("a trip's invoice link downloads its Carta Porte invoice", async (t) => {
    const bytes = readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'cfdi', '11-carta-porte-two-products.xml'));
    const key = await keyOf(attr(bytes.toString('utf8'), 'Emisor', 'Rfc'));
    const r = await importBytes(key, bytes);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    const trip = await h.app.inject({ method: 'GET', url: `/api/shipments/${encodeURIComponent(r.tripId!)}`, headers: { 'x-api-key': key } });
    assertConforms(t, trip, 'GET', '/api/shipments/:id');
    const linked = trip.json<{ financialLinked: { xml: string | null; pdf: string | null } }>().financialLinked;
    t.equal(pathOf(linked.pdf!), `${pathOf(linked.xml!)}/pdf`, 'its printed form');
    t.equal(sha256((await download(pathOf(linked.xml!), key)).rawPayload), sha256(bytes));
  });

  t.test('a signed link works without a key until it expires; changed, it is 404', async (t) => {
    const bytes = corpusFile(ISSUED[1]!.file);
    const xml = bytes.toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const minted = await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links?expiresIn=3600`, headers: { 'x-api-key': key } });
    assertConforms(t, minted, 'POST', '/api/cfdi-originals/:uuid/links');
    t.equal(minted.statusCode, 201);
    const link = minted.json<{ uuid: string; url: string; expiresAt: string }>();
    t.equal(link.uuid, uuid);
    t.equal(link.expiresAt, new Date(clock + 3600_000).toISOString(), 'an hour from the service clock');

    const shared = await download(pathOf(link.url));
    t.equal(shared.statusCode, 200, 'no key needed');
    t.equal(shared.headers['cache-control'], 'no-store', "a tenant's file: never stored by caches");
    t.equal(shared.headers['content-disposition'], `attachment; filename="${uuid}.xml"`);
    t.equal(sha256(shared.rawPayload), sha256(bytes));

    // One character of the signature or of the payload changed: 404.
    const token = pathOf(link.url).split('/').pop()!;
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'A' ? 'B' : 'A') + s.slice(i + 1);
    for (const changed of [flip(token, token.length - 2), flip(token, 3)]) {
      const res = await download(`/api/shared-originals/${changed}`);
      assertConforms(t, res, 'GET', '/api/shared-originals/:token');
      t.equal(res.statusCode, 404);
      t.equal(res.json<{ error: { reason: string } }>().error.reason, 'not_found');
    }
    // One second before the expiry it works; at it, 404.
    clock += 3599_000;
    t.equal((await download(pathOf(link.url))).statusCode, 200, 'still valid a second before');
    clock += 1000;
    const expired = await download(pathOf(link.url));
    assertConforms(t, expired, 'GET', '/api/shared-originals/:token');
    t.equal(expired.statusCode, 404, 'expired');

    // Out of bounds is a 400 (the spec's bounds); another tenant cannot mint one: 404.
    t.equal((await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links?expiresIn=604801`, headers: { 'x-api-key': key } })).statusCode, 400);
    // The expiry in a JSON body (this operation takes none) is refused, not ignored for the default day; `{}` says nothing.
    const inBody = await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links`, headers: { 'x-api-key': key }, payload: { expiresIn: 60 } });
    assertConforms(t, inBody, 'POST', '/api/cfdi-originals/:uuid/links');
    t.equal(inBody.statusCode, 400, 'a body the operation does not take');
    t.match(inBody.json(), { error: { reason: 'invalid_body', details: [/takes no request body/] } });
    const empty = await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links`, headers: { 'x-api-key': key }, payload: {} });
    t.equal(empty.statusCode, 201, '{} is no parameter');
    const foreign = await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links`, headers: { 'x-api-key': KEY_B } });
    assertConforms(t, foreign, 'POST', '/api/cfdi-originals/:uuid/links');
    t.equal(foreign.statusCode, 404);
  });

  // The signature is 32 bytes in 43 base64url characters: the last character carries 2 bits no byte holds. Decoded
  // and compared as bytes, the three other spellings of that character opened the file too ("changed in any way: 404").
  t.test("a signed link's last character changed is 404: every spelling but the one issued", async (t) => {
    const bytes = corpusFile(ISSUED[1]!.file);
    const xml = bytes.toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const minted = await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links?expiresIn=600`, headers: { 'x-api-key': key } });
    t.equal(minted.statusCode, 201);
    const url = pathOf(minted.json<{ url: string }>().url);
    t.equal((await download(url)).statusCode, 200, 'the link as issued');
    const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const opened: string[] = [];
    for (const c of BASE64URL) {
      if (c === url.at(-1)) continue;
      for (const suffix of ['', '/pdf']) {
        const res = await download(`${url.slice(0, -1)}${c}${suffix}`);
        if (res.statusCode !== 404) opened.push(`${c}${suffix} → ${res.statusCode}`);
      }
    }
    t.same(opened, [], 'no other last character opens the XML or the PDF');
  });

  t.test('the same UUID with other bytes: the latest import is served, as its document follows it', async (t) => {
    const bytes = corpusFile(ISSUED[1]!.file);
    const xml = bytes.toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const copy = Buffer.concat([bytes, Buffer.from('\n\n')]); // trailing white space: another file, the same CFDI
    clock += 1000;
    t.equal((await importBytes(key, copy)).status, 'updated');
    t.equal(sha256((await download(`/api/cfdi-originals/${uuid}`, key)).rawPayload), sha256(copy), 'the copy, imported last');
    clock += 1000;
    t.equal((await importBytes(key, bytes)).status, 'updated');
    t.equal(sha256((await download(`/api/cfdi-originals/${uuid}`, key)).rawPayload), sha256(bytes), 'the first file again, imported last');
    t.equal(await h.db.collection(COLLECTIONS.cfdiOriginals).countDocuments({ uuids: uuid }), 2, 'both kept, once each');
  });

  t.test('two files about one UUID in one import (one instant): the later file in the import is served, issued and received', async (t) => {
    const cases = [
      { side: 'issued', bytes: corpusFile(ISSUED[1]!.file), owner: 'Emisor' },
      { side: 'received', bytes: corpusFile('files/cfdiutils-cfdi40-real.xml'), owner: 'Receptor' },
    ];
    for (const { side, bytes, owner } of cases) {
      const xml = bytes.toString('utf8');
      const key = await keyOf(attr(xml, owner, 'Rfc'));
      const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
      const copy = Buffer.concat([bytes, Buffer.from('\n\n\n')]); // another file, the same CFDI
      const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key }, '?toolsets=originals');
      for (const [first, last, label] of [
        [bytes, copy, 'the copy, last in the archive'],
        [copy, bytes, 'the file, last in the archive'],
      ] as const) {
        clock += 1000;
        const zip = await zipOf([
          { name: 'a/first.xml', data: first },
          { name: 'b/last.xml', data: last },
        ]);
        const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/zip' }, payload: zip });
        t.equal(res.statusCode, 200);
        t.equal(sha256((await download(`/api/cfdi-originals/${uuid}`, key)).rawPayload), sha256(last), `${side}: ${label}`);
        const link = (await client.callTool({ name: 'createCfdiOriginalLink', arguments: { uuid, expiresIn: 600 } })) as unknown as {
          structuredContent: { url: string };
        };
        t.equal(sha256((await download(pathOf(link.structuredContent.url))).rawPayload), sha256(last), `${side}, MCP link: ${label}`);
      }
    }
  });

  t.test('MCP: the originals toolset mints a link returned as a resource link', async (t) => {
    const bytes = corpusFile(ISSUED[0]!.file);
    const xml = bytes.toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const base = await listen(await h.rebuild({ now: () => new Date(clock) }));
    const byDefault = await connect(t, base, 'streamable', { 'x-api-key': key });
    t.notOk(
      (await byDefault.listTools()).tools.some((tool) => tool.name === 'createCfdiOriginalLink'),
      'not in the default catalogue',
    );
    const client = await connect(t, base, 'streamable', { 'x-api-key': key }, '?toolsets=originals');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    t.same(names.sort(), ['createCfdiOriginalLink', 'createCfdiPrintedFormLink'], 'the file downloads themselves are no tools');
    const res = (await client.callTool({ name: 'createCfdiOriginalLink', arguments: { uuid, expiresIn: 600 } })) as unknown as {
      content: { type: string; uri?: string; name?: string; mimeType?: string }[];
      structuredContent: { url: string };
      isError?: boolean;
    };
    t.notOk(res.isError);
    const resourceLink = res.content.find((c) => c.type === 'resource_link');
    t.match(resourceLink, { uri: res.structuredContent.url, name: res.structuredContent.url.split('/').pop(), mimeType: 'application/xml' });
    t.notOk(
      res.content.some((c) => c.type === 'text' && (c as { text?: string }).text?.includes('<cfdi:')),
      'the bytes are not inlined',
    );
    const fetched = await fetch(new URL(pathOf(res.structuredContent.url), base));
    t.equal(fetched.status, 200);
    t.equal(sha256(Buffer.from(await fetched.arrayBuffer())), sha256(bytes));
  });

  t.test('generated demo documents have null links, not dead ones', async (t) => {
    await loadDemoData(h.db, { invoices: 5, trips: 5 });
    const demo = DEMO_TENANTS[0]!;
    // The demo tenant TGO is also the issuer of the imported Carta Porte fixture: its documents are left out.
    const imported = (id: string) => id.includes('-CFDI-');
    const list = await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=10', headers: { 'x-api-key': demo.apiKey } });
    assertConforms(t, list, 'GET', '/api/financial-docs');
    const docs = list.json<{ data: { id: string; invoice: { xml: string | null; pdf: string | null } }[] }>().data.filter((d) => !imported(d.id));
    t.ok(docs.length >= 5, 'the generated documents');
    t.ok(
      docs.every((d) => d.invoice.xml === null && d.invoice.pdf === null),
      'every link null',
    );
    const trips = await h.app.inject({ method: 'GET', url: '/api/shipments?limit=10', headers: { 'x-api-key': demo.apiKey } });
    const linked = trips
      .json<{ data: { financialLinked: { id: string; xml: string | null; pdf: string | null } | null }[] }>()
      .data.filter((x) => x.financialLinked && !imported(x.financialLinked.id));
    t.ok(linked.length > 0, 'generated trips linked to generated documents');
    t.ok(
      linked.every((x) => x.financialLinked!.xml === null && x.financialLinked!.pdf === null),
      'their links null',
    );
  });
}
