/**
 * The printed form (issue 38; docs/domain.md, "The printed form"): CFDIs of the public corpus
 * (../shared/cfdi-corpus) and of the test builder imported through HTTP, their `invoice.pdf` /
 * `financialLinked.pdf` link downloaded. Each PDF is read with tools that owe nothing to the
 * service: poppler's `pdftotext` (its text holds the UUID and the totals as the XML writes them)
 * and `pdftoppm` + jsQR (its QR code decodes to the SAT verification URL this test builds from the
 * XML's own attributes, by the rule of Anexo 20 as docs/domain.md cites it). Cases: a CFDI 3.3
 * invoice, a 4.0 invoice whose RFC holds `&`, a Pagos 2.0 complement, a Carta Porte 3.1 invoice
 * (through a trip's link), an ISO-8859-1 file, names and a description outside WinAnsi (Latin
 * Extended, Greek, Cyrillic, symbols, a tab, a CR, a decomposed accent, a CJK character the font
 * has no glyph for); the signed link; 404 without an original; 413 over
 * the size bound; MCP returns a resource link. poppler-utils is installed by npm test's set-up
 * (scripts/setup-poppler.mjs): this test only checks it is there.
 */
import type { Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';
import { startHarness, assertConforms, KEY_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { corpusDir } from '../helpers/cfdi-corpus.ts';
import { invoiceXml, type LineSpec } from '../helpers/cfdi-builder.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';

export default async function printedOriginalsTests(t: Test): Promise<void> {
  const run = promisify(execFile);
  // jsqr is CommonJS whose types declare an ES default export: at run time the module is the function (and its `default` too).
  const jsQR = jsQRModule.default;
  const ROOT = path.resolve(import.meta.dirname, '../..');
  try {
    await run(process.execPath, [path.join(ROOT, 'scripts', 'setup-poppler.mjs'), '--check']);
  } catch (err) {
    throw new Error(
      `poppler-utils (pdftotext, pdftoppm) is required: run \`node scripts/setup-poppler.mjs\` (npm run setup:poppler).\n${(err as { stderr?: string }).stderr ?? ''}`,
    );
  }

  let clock = Date.parse('2026-11-20T12:00:00Z');
  const h = await startHarness(t, { build: { now: () => new Date(clock) } });
  const CORPUS = corpusDir();
  const corpusFile = (name: string): Buffer => readFileSync(path.join(CORPUS, name));

  /** An attribute as the file writes it (XML escapes undone), read here, not by the service. */
  const attr = (xml: string, element: string, name: string): string => {
    const m = new RegExp(`<(?:\\w+:)?${element}\\b[^>]*?\\s${name}="([^"]*)"`).exec(xml);
    if (!m) throw new Error(`no ${element}@${name}`);
    return m[1]!.replaceAll('&amp;', '&').replaceAll('&quot;', '"');
  };
  const attrOr = (xml: string, element: string, name: string): string => {
    try {
      return attr(xml, element, name);
    } catch {
      return '';
    }
  };

  /**
   * The verification URL by hand (Anexo 20, CFDI 3.3 and 4.0): tt is the Total without
   * non-significant zeros and with at least one decimal; an RFC's & as the XML writes it (&amp;);
   * fe the last 8 characters of Comprobante@Sello.
   */
  function expectedUrl(xml: string): string {
    const [int, dec = ''] = attr(xml, 'Comprobante', 'Total').split('.');
    const tt = `${int!.replace(/^0+(?=\d)/, '')}.${dec.replace(/0+$/, '') || '0'}`;
    const rfc = (el: string) => attr(xml, el, 'Rfc').replaceAll('&', '&amp;');
    return (
      `https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id=${attr(xml, 'TimbreFiscalDigital', 'UUID')}` +
      `&re=${rfc('Emisor')}&rr=${rfc('Receptor')}&tt=${tt}&fe=${attrOr(xml, 'Comprobante', 'Sello').slice(-8)}`
    );
  }

  const keys = new Map<string, string>();
  async function keyOf(tenant: string): Promise<string> {
    let key = keys.get(tenant);
    if (!key) {
      key = (await createApiKey(h.db, tenant, `printed ${tenant}`)).key;
      keys.set(tenant, key);
    }
    return key;
  }

  type FileResult = { status: string; uuid?: string; financialDocIds?: string[]; tripId?: string; reason?: string };
  async function importBytes(key: string, bytes: Buffer): Promise<FileResult> {
    const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: bytes });
    if (res.statusCode !== 200) throw new Error(`POST /api/imports ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.json<{ files: FileResult[] }>().files[0]!;
  }
  const pathOf = (url: string): string => {
    const u = new URL(url);
    if (u.origin !== h.config.documentBaseUrl) throw new Error(`${url} does not start at DOCUMENT_BASE_URL ${h.config.documentBaseUrl}`);
    return u.pathname + u.search;
  };
  const download = (url: string, key?: string) => h.app.inject({ method: 'GET', url, headers: key ? { 'x-api-key': key } : {} });

  /** The PDF's text (pdftotext, layout kept) and the texts of the QR codes on its pages (pdftoppm at 150 dpi, jsQR). */
  async function readPdf(pdf: Buffer): Promise<{ text: string; qr: string[]; pages: number }> {
    const dir = await mkdtemp(path.join(tmpdir(), 'printed-'));
    try {
      const file = path.join(dir, 'doc.pdf');
      await writeFile(file, pdf);
      const { stdout: text } = await run('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { maxBuffer: 16 * 1024 * 1024 });
      await run('pdftoppm', ['-png', '-r', '150', file, path.join(dir, 'page')]);
      const pngs = (await readdir(dir)).filter((f) => f.endsWith('.png')).sort();
      const qr: string[] = [];
      for (const name of pngs) {
        const png = PNG.sync.read(await readFile(path.join(dir, name)));
        // Dark modules on a light page, as the SAT's QR is printed: the default would scan every page a second time,
        // inverted (half of jsQR's time on a page without a code); a code readable only inverted now fails the test.
        const code = jsQR(new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length), png.width, png.height, {
          inversionAttempts: 'dontInvert',
        });
        if (code) qr.push(code.data);
      }
      return { text, qr, pages: pngs.length };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  /** Imports the file as its issuer and answers the `invoice.pdf` link of its financial document. */
  async function importedInvoice(t: Test, bytes: Buffer, xml: string): Promise<{ key: string; uuid: string; pdfLink: string }> {
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const r = await importBytes(key, bytes);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    const doc = await h.app.inject({ method: 'GET', url: `/api/financial-docs/${encodeURIComponent(r.financialDocIds![0]!)}`, headers: { 'x-api-key': key } });
    assertConforms(t, doc, 'GET', '/api/financial-docs/:id');
    const invoice = doc.json<{ invoice: { uuid: string; pdf: string | null; xml: string | null } }>().invoice;
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    t.equal(pathOf(invoice.pdf!), `/api/cfdi-originals/${uuid}/pdf`, 'invoice.pdf is the printed form');
    return { key, uuid, pdfLink: pathOf(invoice.pdf!) };
  }

  /** Downloads a printed form and checks what every one shows: a PDF, its UUID, its totals as written, the QR's URL. */
  async function checkPrinted(t: Test, link: string, key: string | undefined, xml: string, also: string[] = []): Promise<string> {
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const res = await download(link, key);
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'served' : res.body.slice(0, 300));
    t.equal(res.headers['content-type'], 'application/pdf');
    t.equal(res.headers['content-disposition'], `attachment; filename="${uuid}.pdf"`);
    t.equal(res.rawPayload.subarray(0, 5).toString('latin1'), '%PDF-', 'a PDF');
    const { text, qr } = await readPdf(res.rawPayload);
    t.ok(text.toUpperCase().includes(uuid), 'the text holds the UUID');
    for (const [el, name] of [
      ['Comprobante', 'Total'],
      ['Comprobante', 'SubTotal'],
      ['Emisor', 'Rfc'],
      ['Receptor', 'Rfc'],
    ] as const) {
      const value = attr(xml, el, name);
      t.ok(text.includes(value), `the text holds ${el}@${name} as written: ${value}`);
    }
    for (const value of also) t.ok(text.includes(value), `the text holds ${value}`);
    t.same(qr, [expectedUrl(xml)], 'one QR code, the SAT verification URL built from the XML');
    return text;
  }

  t.test('CFDI 3.3 invoice: invoice.pdf renders its printed form', async (t) => {
    const bytes = corpusFile('files/cfdiutils-cfdi33-real.xml');
    const xml = bytes.toString('utf8');
    const { key, pdfLink } = await importedInvoice(t, bytes, xml);
    const text = await checkPrinted(t, pdfLink, key, xml, [
      attr(xml, 'Comprobante', 'NoCertificado'),
      attr(xml, 'TimbreFiscalDigital', 'NoCertificadoSAT'),
      'CFDI 3.3',
    ]);
    // Its local taxes complement: a lodging tax (IH) of 27.43 at 2.50, which its Total holds (1,709.12 + 273.46 + 27.43 = 2,010.01).
    t.equal(attr(xml, 'TrasladosLocales', 'Importe'), '27.43', 'the file carries a local tax');
    t.match(text, /Impuesto local trasladado IH 2\.50 %\s+27\.43/, 'the local tax is printed with the totals');
  });

  t.test('CFDI 4.0 invoice whose RFCs hold &: the QR writes them as &amp;', async (t) => {
    const bytes = corpusFile('files/satcfdi-he-pue-iva16.xml');
    const xml = bytes.toString('utf8');
    t.match(attr(xml, 'Emisor', 'Rfc'), /&/, 'the issuer RFC holds &');
    const { key, uuid, pdfLink } = await importedInvoice(t, bytes, xml);
    await checkPrinted(t, pdfLink, key, xml, [attr(xml, 'Concepto', 'Importe'), attr(xml, 'Comprobante', 'NoCertificado'), 'CFDI 4.0']);
    // Another tenant's key: 404 in the error shape; an unknown UUID too.
    const foreign = await download(`/api/cfdi-originals/${uuid}/pdf`, KEY_B);
    assertConforms(t, foreign, 'GET', '/api/cfdi-originals/:uuid/pdf');
    t.equal(foreign.statusCode, 404);
    t.equal(foreign.json<{ error: { reason: string } }>().error.reason, 'not_found');
  });

  t.test('payment complement (Pagos 2.0): its payments are printed', async (t) => {
    // The invoice it pays first, so that the payment applies (both issued by the same tenant).
    await importedInvoice(t, corpusFile('files/satcfdi-he-iva16.xml'), corpusFile('files/satcfdi-he-iva16.xml').toString('utf8'));
    const bytes = corpusFile('files/satcfdi-he-pago.xml');
    const xml = bytes.toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const r = await importBytes(key, bytes);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const text = await checkPrinted(t, `/api/cfdi-originals/${uuid}/pdf`, key, xml, [
      attr(xml, 'Pago', 'Monto'),
      attr(xml, 'DoctoRelacionado', 'IdDocumento'),
      attr(xml, 'DoctoRelacionado', 'ImpSaldoAnt'),
      attr(xml, 'DoctoRelacionado', 'ImpSaldoInsoluto'),
    ]);
    t.match(text, /Complemento de pagos 2\.0/);
  });

  t.test("Carta Porte 3.1 invoice: the trip's financialLinked.pdf prints locations, goods, vehicle and figures", async (t) => {
    const bytes = corpusFile('derived/sw-cp31-ingreso-auto.stamped.xml');
    const xml = bytes.toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const r = await importBytes(key, bytes);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    t.ok(r.tripId, 'a trip');
    const trip = await h.app.inject({ method: 'GET', url: `/api/shipments/${encodeURIComponent(r.tripId!)}`, headers: { 'x-api-key': key } });
    assertConforms(t, trip, 'GET', '/api/shipments/:id');
    const linked = trip.json<{ financialLinked: { pdf: string | null } }>().financialLinked;
    await checkPrinted(t, pathOf(linked.pdf!), key, xml, [
      attr(xml, 'CartaPorte', 'IdCCP'),
      attr(xml, 'Mercancia', 'BienesTransp'),
      attr(xml, 'Mercancia', 'Descripcion'),
      attr(xml, 'IdentificacionVehicular', 'PlacaVM'),
      attr(xml, 'TiposFigura', 'RFCFigura'),
      attr(xml, 'Ubicacion', 'IDUbicacion'),
    ]);
  });

  t.test('an ISO-8859-1 file is printed with its characters', async (t) => {
    const desc = 'Flete Querétaro–León'.replace('–', ' a ') + ', señal Año 2026';
    const built = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      receiverName: 'MUÑOZ Y CÍA',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000038',
      fecha: '2026-11-02T10:00:00',
      encoding: 'ISO-8859-1',
      lines: [{ desc, amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    const bytes = Buffer.from(built.xml, 'latin1');
    t.ok(bytes.includes(Buffer.from([0xf1])), '"ñ" is the single byte 0xF1');
    const { key, pdfLink } = await importedInvoice(t, bytes, built.xml);
    await checkPrinted(t, pdfLink, key, built.xml, [desc, 'MUÑOZ Y CÍA', '1160.00']);
  });

  // Helvetica (WinAnsi only) wrote a character outside WinAnsi with the wrong number of hex digits: it and the rest of
  // its text came out garbled ("Œuvre Łódź Ğ" as "Œuvre 6Az à"), a tab too, and a CR lost the rest of the line.
  t.test('names and descriptions outside WinAnsi print as the XML writes them; a tab or CR as a space; no glyph: U+FFFD', async (t) => {
    const built = invoiceXml({
      issuer: 'EKU9003173C9',
      issuerName: 'Œuvre Łódź Ğ',
      receiver: 'XEXX010101000',
      receiverName: 'Şahin Őrs{TAB}Logística 中 Ωμέγα Жук',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000039',
      fecha: '2026-11-02T11:00:00',
      lines: [
        // "Quere\u0301taro": e + COMBINING ACUTE ACCENT (NFD), as a file may write it.
        { desc: 'Flete{TAB}Quere\u0301taro a Monterrey → ≥ 2 t', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] },
        { desc: 'Maniobra{CR}de carga en Łódź, fin', amount: 500, transfers: [{ tax: '002', rate: 0.16 }] },
      ],
    });
    // Character references: a literal tab or CR in an attribute is read as a space by any XML reader, these are not.
    const xml = built.xml.replaceAll('{TAB}', '&#9;').replaceAll('{CR}', '&#13;');
    t.ok(xml.includes('Quere\u0301taro'), 'the XML writes the accent decomposed');
    const { key, pdfLink } = await importedInvoice(t, Buffer.from(xml, 'utf8'), xml);
    const text = await checkPrinted(t, pdfLink, key, xml, [
      'Œuvre Łódź Ğ',
      // The tab a space, the CJK character (no glyph in the font) U+FFFD, Greek and Cyrillic as written.
      'Şahin Őrs Logística \uFFFD Ωμέγα Жук',
      // The tab a space, the accent composed (NFC), the symbols as written.
      'Flete Querétaro a Monterrey → ≥ 2 t',
      // The CR a space, the rest of the line kept.
      'Maniobra de carga en Łódź, fin',
    ]);
    t.equal(text.split('\uFFFD').length - 1, 1, 'one replacement mark: the CJK character only');
    t.notOk(text.includes('中'), 'the CJK character is not printed');
  });

  t.test('a signed link serves the printed form without a key; the XML link carries the same token', async (t) => {
    const xml = corpusFile('files/cfdiutils-cfdi33-real.xml').toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const minted = await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/pdf/links?expiresIn=600`, headers: { 'x-api-key': key } });
    assertConforms(t, minted, 'POST', '/api/cfdi-originals/:uuid/pdf/links');
    t.equal(minted.statusCode, 201);
    const link = minted.json<{ uuid: string; url: string; expiresAt: string }>();
    t.match(pathOf(link.url), /^\/api\/shared-originals\/[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\/pdf$/);
    const shared = await download(pathOf(link.url));
    t.equal(shared.headers['cache-control'], 'no-store', "a tenant's file: never stored by caches");
    await checkPrinted(t, pathOf(link.url), undefined, xml);
    // The XML's signed link with /pdf added is the same printed form.
    const xmlLink = (await h.app.inject({ method: 'POST', url: `/api/cfdi-originals/${uuid}/links?expiresIn=600`, headers: { 'x-api-key': key } })).json<{
      url: string;
    }>().url;
    t.equal((await download(`${pathOf(xmlLink)}/pdf`)).statusCode, 200);
    // Expired: 404 in the error shape.
    clock += 600_000;
    const expired = await download(pathOf(link.url));
    assertConforms(t, expired, 'GET', '/api/shared-originals/:token/pdf');
    t.equal(expired.statusCode, 404);
    // No original kept: 404 for the link too.
    const none = await h.app.inject({
      method: 'POST',
      url: `/api/cfdi-originals/00000000-0000-4000-8000-000000000000/pdf/links`,
      headers: { 'x-api-key': key },
    });
    t.equal(none.statusCode, 404);
  });

  t.test('an original over the printed form bound is refused with 413; its XML is still served', async (t) => {
    const xml = corpusFile('files/satcfdi-finkok-stamped.xml').toString('utf8');
    // The same CFDI with 1.2 MB of comment before its end: kept whole by the import, too big to print (1 MiB, docs/domain.md).
    const big = Buffer.from(xml.replace(/<\/cfdi:Comprobante>\s*$/, `<!--${' '.repeat(1_200_000)}--></cfdi:Comprobante>\n`), 'utf8');
    t.ok(big.length > 1024 * 1024);
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const r = await importBytes(key, big);
    t.equal(r.status, 'created', r.reason ?? 'imported');
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const res = await download(`/api/cfdi-originals/${uuid}/pdf`, key);
    assertConforms(t, res, 'GET', '/api/cfdi-originals/:uuid/pdf');
    t.equal(res.statusCode, 413);
    const body = res.json<{ error: { reason: string; details: string[] } }>().error;
    t.equal(body.reason, 'payload_too_large');
    t.match(body.details[0], /download the original XML/);
    t.equal((await download(`/api/cfdi-originals/${uuid}`, key)).statusCode, 200, 'the XML is served');
  });

  t.test('many concepts: pages numbered, the QR on the last; past 50 pages, 413', async (t) => {
    const lines = (n: number): LineSpec[] =>
      Array.from({ length: n }, (_, i) => ({
        desc: `Flete ${i + 1} Tula a Pachuca, remisión ${5000 + i}`,
        amount: 1000 + i,
        transfers: [{ tax: '002', rate: 0.16 }],
      }));
    const built = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000060',
      fecha: '2026-11-03T10:00:00',
      lines: lines(60),
    });
    const { key, pdfLink } = await importedInvoice(t, Buffer.from(built.xml), built.xml);
    const text = await checkPrinted(t, pdfLink, key, built.xml, ['Flete 1 Tula', 'Flete 60 Tula', 'remisión 5059']);
    const pages = Number(/Página 1 de (\d+)/.exec(text)?.[1]);
    t.ok(pages > 1, `more than one page (${pages})`);
    t.match(text, new RegExp(`Página ${pages} de ${pages}`), 'every page numbered');

    // About 30 concepts with their taxes fit on a page: 2,000 take more than 50 pages (and less than 1 MiB of XML).
    const many = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      uuid: 'A1B2C3D4-0038-4000-8000-000000002000',
      fecha: '2026-11-03T11:00:00',
      lines: lines(2000),
    });
    t.ok(Buffer.byteLength(many.xml) < 1024 * 1024, 'under the size bound');
    const { pdfLink: manyLink } = await importedInvoice(t, Buffer.from(many.xml), many.xml);
    const res = await download(manyLink, key);
    assertConforms(t, res, 'GET', '/api/cfdi-originals/:uuid/pdf');
    t.equal(res.statusCode, 413);
    t.match(res.json<{ error: { reason: string; details: string[] } }>().error, { reason: 'payload_too_large', details: [/more than 50 pages/] });
  });

  // pdfkit fits a word wider than its cell character by character, in time that grows with the
  // square of its length: a run of 20,000 characters is printed in lines of at most 1,000 (its
  // time is in docs/benchmarks.md), every character still on the form.
  t.test('a 20,000-character description without a space is printed whole', async (t) => {
    const run = '~'.repeat(20_000);
    const built = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000061',
      fecha: '2026-11-03T12:00:00',
      lines: [{ desc: `Flete ${run} fin`, amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    const { key, pdfLink } = await importedInvoice(t, Buffer.from(built.xml), built.xml);
    const text = await checkPrinted(t, pdfLink, key, built.xml, ['Flete', 'fin']);
    t.equal(text.split('~').length - 1, 20_000, "every '~' of the run is on the form");
  });

  t.test('a run that no-break or em spaces hold together is printed whole, not in time growing with its square', async (t) => {
    // pdfkit's line breaker (UAX #14) keeps words joined by no-break spaces (U+00A0) as one, and a run of em spaces
    // (U+2003): neither is a run of characters other than spaces, so both were fitted character by character. 8,000
    // characters so joined cost 2 s, growing with the square of the length: this 96,000-character run held the service
    // for minutes (this test's 120 s are ~100 times what it takes now). Every one of its 24,000 "Жук" is on the form.
    t.setTimeout(120_000);
    const built = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000064',
      fecha: '2026-11-03T12:30:00',
      lines: [{ desc: `inicio ${'Жук\u00a0'.repeat(24_000)}medio${'\u2003'.repeat(2_000)}final`, amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    const { key, pdfLink } = await importedInvoice(t, Buffer.from(built.xml), built.xml);
    const res = await download(pdfLink, key);
    t.equal(res.statusCode, 200, res.statusCode === 200 ? 'served' : res.body.slice(0, 300));
    t.equal(res.headers['content-type'], 'application/pdf');
    // Its text only (the QR is checked on the other forms: reading 27 pages' images is most of this test's time).
    const dir = await mkdtemp(path.join(tmpdir(), 'printed-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    await writeFile(path.join(dir, 'doc.pdf'), res.rawPayload);
    const { stdout: text } = await run('pdftotext', ['-enc', 'UTF-8', path.join(dir, 'doc.pdf'), '-'], { maxBuffer: 16 * 1024 * 1024 });
    for (const word of ['inicio', 'medio', 'final', attr(built.xml, 'TimbreFiscalDigital', 'UUID')]) t.ok(text.includes(word), `the text holds ${word}`);
    t.equal(text.split('Ж').length - 1, 24_000, 'every word of the run is on the form');
  });

  t.test('one concept taller than a page: the pages it takes count (a page holds ~80 lines of a description)', async (t) => {
    // 60,000 words of 8 characters in a 7-point column: over 100 pages of one cell (under the 1 MiB bound).
    const huge = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000062',
      fecha: '2026-11-03T13:00:00',
      lines: [{ desc: 'palabra '.repeat(60_000), amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    const { key, pdfLink } = await importedInvoice(t, Buffer.from(huge.xml), huge.xml);
    const res = await download(pdfLink, key);
    t.equal(res.statusCode, 413, 'over 50 pages: refused');
    t.match(res.json<{ error: { reason: string; details: string[] } }>().error, { reason: 'payload_too_large', details: [/more than 50 pages/] });
    // 1,500 words: a few pages of one cell, printed whole and numbered (the page count as pdfkit made them).
    const long = invoiceXml({
      issuer: 'EKU9003173C9',
      receiver: 'XEXX010101000',
      uuid: 'A1B2C3D4-0038-4000-8000-000000000063',
      fecha: '2026-11-03T14:00:00',
      lines: [{ desc: `inicio ${'palabra '.repeat(1_500)}final`, amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    const printed = await importedInvoice(t, Buffer.from(long.xml), long.xml);
    const text = await checkPrinted(t, printed.pdfLink, printed.key, long.xml, ['inicio', 'final']);
    const pages = Number(/Página 1 de (\d+)/.exec(text)?.[1]);
    t.ok(pages > 1 && pages <= 50, `${pages} pages`);
    t.match(text, new RegExp(`Página ${pages} de ${pages}`), 'every page numbered');
  });

  t.test('MCP: the originals toolset mints a link to the PDF, returned as a resource link', async (t) => {
    const xml = corpusFile('files/cfdiutils-cfdi33-real.xml').toString('utf8');
    const key = await keyOf(attr(xml, 'Emisor', 'Rfc'));
    const uuid = attr(xml, 'TimbreFiscalDigital', 'UUID').toUpperCase();
    const base = await listen(await h.rebuild({ now: () => new Date(clock) }));
    const client = await connect(t, base, 'streamable', { 'x-api-key': key }, '?toolsets=originals');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    t.ok(names.includes('createCfdiPrintedFormLink'), 'the PDF link is a tool');
    t.notOk(names.includes('getCfdiPrintedForm'), 'the PDF itself is no tool');
    const res = (await client.callTool({ name: 'createCfdiPrintedFormLink', arguments: { uuid, expiresIn: 600 } })) as unknown as {
      content: { type: string; uri?: string; name?: string; mimeType?: string; text?: string }[];
      structuredContent: { url: string };
      isError?: boolean;
    };
    t.notOk(res.isError);
    const resourceLink = res.content.find((c) => c.type === 'resource_link');
    t.match(resourceLink, { uri: res.structuredContent.url, name: `${uuid}.pdf`, mimeType: 'application/pdf' });
    t.notOk(
      res.content.some((c) => c.type === 'text' && c.text?.includes('%PDF')),
      'the bytes are not inlined',
    );
    const fetched = await fetch(new URL(pathOf(res.structuredContent.url), base));
    t.equal(fetched.status, 200);
    t.equal(fetched.headers.get('content-type'), 'application/pdf');
    const { qr } = await readPdf(Buffer.from(await fetched.arrayBuffer()));
    t.same(qr, [expectedUrl(xml)]);
  });
}
