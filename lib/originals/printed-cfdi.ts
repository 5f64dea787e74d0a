/**
 * The printed form of a CFDI (representación impresa, Anexo 20; docs/domain.md, "The printed
 * form"), drawn with pdfkit from what lib/originals/printed-cfdi-model.ts read from the kept XML:
 * issuer and receiver, the CFDI's data, related CFDIs, the concepts with their taxes, the totals,
 * the payments of a payment complement, the Carta Porte, then the stamp (UUID, certificate
 * numbers, both seals, the TFD's original string) beside the QR code of the SAT's verification
 * URL (drawn as vector squares: it stays sharp at any zoom). Letter size, DejaVu Sans Condensed
 * (regular and bold, from the dejavu-fonts-ttf package, embedded as subsets of the glyphs used):
 * a Unicode font, so that Latin Extended, Greek, Cyrillic and common symbols print as the XML
 * writes them (pdfkit's built-in Helvetica encodes only WinAnsi and garbled the rest of a text after
 * any other character). Bounded: more than MAX_PAGES pages throws PrintTooLong. Pure once loaded
 * (the font files are read on first use; bytes in memory).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type QRCode from 'qrcode';
import { onFirstUse } from '../shared/on-first-use.ts';
import type { PrintedCfdi, PrintedTax } from './printed-cfdi-model.ts';
import { labelled, taxName } from './sat-catalog-labels.ts';
import { verificationUrl } from './verification-url.ts';

/** The font files: DejaVu Sans Condensed, as wide as Helvetica was (the layout's widths stay), with Latin Extended, Greek, Cyrillic, arrows, math signs and U+FFFD. */
const FONT_FILES = { regular: 'dejavu-fonts-ttf/ttf/DejaVuSansCondensed.ttf', bold: 'dejavu-fonts-ttf/ttf/DejaVuSansCondensed-Bold.ttf' } as const;
const REGULAR = 'Body';
const BOLD = 'Body-Bold';

/** What the glyph check needs of a font as fontkit parsed it (pdfkit's font object for a TrueType file). */
interface ParsedFont {
  hasGlyphForCodePoint(codePoint: number): boolean;
  layout(text: string): unknown;
}

/**
 * pdfkit (with fontkit and its tables), qrcode and the two fonts (~1.4 MB of files): ~0.3 CPU-s to load, wanted only by a print request, not by
 * every process that builds the app. Each font is parsed once (by pdfkit's fontkit, through a document that is never
 * written) and that parsed font is given to every document (pdfkit takes a fontkit font as a font source; ~20 ms a
 * document less than parsing the file again); each document still embeds its own subset.
 */
const libraries = onFirstUse(async () => {
  const require = createRequire(import.meta.url);
  const [pdfkit, qrcode, regularFile, boldFile] = await Promise.all([
    import('pdfkit'),
    import('qrcode'),
    readFile(require.resolve(FONT_FILES.regular)),
    readFile(require.resolve(FONT_FILES.bold)),
  ]);
  const PDFDocument = pdfkit.default;
  const probe = new PDFDocument({ autoFirstPage: false });
  const parsed = (file: Buffer): ParsedFont => (probe.font(file) as unknown as { _font: { font: ParsedFont } })._font.font;
  const fonts = { regular: parsed(regularFile), bold: parsed(boldFile) };
  // pdfkit's own line breaker (its dependency, resolved from pdfkit): the units it finds are the ones pdfkit wraps.
  const LineBreaker = createRequire(require.resolve('pdfkit'))('linebreak') as LineBreakerClass;
  return { PDFDocument, QRCode: qrcode.default, fonts, printable: printableText(fonts), LineBreaker };
});

/** The `linebreak` package (UAX #14): the break opportunities of a text, in order. */
type LineBreakerClass = new (text: string) => { nextBreak(): { position: number; required: boolean } | null };
type Libraries = Awaited<ReturnType<typeof libraries>>;

/**
 * The text as it can be printed with the fonts: NFC first (a decomposed "e\u0301" is the "é" the font has); tab, CR, LF
 * and every other control character (C0, DEL, C1) and the line and paragraph separators become a space; a character
 * that the regular or the bold font has no glyph for becomes U+FFFD (visible, and the neighbours stay as written), or a
 * space when it is a space (U+3000); an invisible format character the font lacks (a zero-width joiner, a variation
 * selector) is left out, as nothing of it would show. The check follows the embedded fonts' own cmap tables. Linear:
 * printable ASCII (which the fonts hold) is kept as is, and each other character costs one lookup in each font.
 */
function printableText(fonts: { regular: ParsedFont; bold: ParsedFont }): (text: string) => string {
  const has = (cp: number) => fonts.regular.hasGlyphForCodePoint(cp) && fonts.bold.hasGlyphForCodePoint(cp);
  for (let cp = 0x20; cp < 0x7f; cp++) if (!has(cp)) throw new Error(`the printed form's font has no glyph for U+${cp.toString(16).padStart(4, '0')}`);
  const replacement = has(0xfffd) ? '\uFFFD' : '?';
  return (text) =>
    text.normalize('NFC').replace(NOT_PRINTABLE_ASCII, (ch) => {
      if (BREAK.test(ch)) return ' ';
      if (has(ch.codePointAt(0)!)) return ch;
      if (SPACE.test(ch)) return ' ';
      return IGNORABLE.test(ch) ? '' : replacement;
    });
}
/** Each character (a code point) outside printable ASCII. */
const NOT_PRINTABLE_ASCII = /[^\x20-\x7e]/gu;
/** Control characters (tab, CR, LF, C0, DEL, C1) and the line and paragraph separators: printed as a space. */
const BREAK = /^[\p{Cc}\u2028\u2029]$/u;
const SPACE = /^\p{Zs}$/u;
const IGNORABLE = /^\p{Default_Ignorable_Code_Point}$/u;

/** Pages a printed form may take (about 750 concepts with their taxes, a few seconds of rendering at most); beyond, the XML is the document to read. */
export const MAX_PAGES = 50;

export class PrintTooLong extends Error {}

const MARGIN = 36;
const PAGE = { width: 612, height: 792 };
const WIDTH = PAGE.width - 2 * MARGIN;
const BOTTOM = PAGE.height - MARGIN;
/** The height of text a page holds. */
const PAGE_ROOM = BOTTOM - 12 - MARGIN;
/** The title bands' grey. Text on a band is placed ~0.21 of its size higher than it was with Helvetica: DejaVu's ascender is that much taller, and so the glyphs stay centred in the band. */
const GREY = '#e8e8e8';
const RULE = '#999999';

/** `||Version|UUID|FechaTimbrado|RfcProvCertif[|Leyenda]|SelloCFD|NoCertificadoSAT||`: the TFD 1.1 original string (its XSLT: optional fields only when present, white space collapsed). */
export function stampOriginalString(stamp: PrintedCfdi['stamp']): string {
  const fields = [stamp.version, stamp.uuid, stamp.fechaTimbrado, stamp.rfcProvCertif, stamp.leyenda, stamp.selloCfd, stamp.noCertificadoSat];
  return `||${fields
    .filter((f, i) => i !== 4 || f !== '')
    .map((f) => f.replace(/\s+/g, ' ').trim())
    .join('|')}||`;
}

const taxLine = (t: PrintedTax): string =>
  [`${t.kind} ${taxName(t.impuesto)}`, [t.tipoFactor, t.tasaOCuota].filter(Boolean).join(' '), t.base && `base ${t.base}`, t.importe && `importe ${t.importe}`]
    .filter(Boolean)
    .join('  ');

/** A drawing cursor over pdfkit: rows that move to a new page when they do not fit. */
class Sheet {
  // Pages are buffered so that the footer can say "n of m" at the end; the bottom margin leaves the footer's line free.
  readonly doc: PDFKit.PDFDocument;
  readonly qrCode: typeof QRCode;
  y = MARGIN;
  private pages = 1;

  constructor(
    { PDFDocument, QRCode, fonts }: Libraries,
    private readonly footer: string,
  ) {
    this.doc = new PDFDocument({
      size: 'LETTER',
      margins: { top: MARGIN, left: MARGIN, right: MARGIN, bottom: 20 },
      bufferPages: true,
      info: { Producer: 'freight-backoffice', Creator: 'freight-backoffice' },
    });
    this.qrCode = QRCode;
    // pdfkit takes a parsed fontkit font where its types say a file: the fonts parsed once at load (see `libraries`).
    this.doc.registerFont(REGULAR, fonts.regular as unknown as Buffer);
    this.doc.registerFont(BOLD, fonts.bold as unknown as Buffer);
    this.doc.font(REGULAR);
  }

  /** Room for `height` points, or a new page (counted against MAX_PAGES). */
  ensure(height: number): void {
    if (this.y + height <= BOTTOM - 12) return;
    // Taller than a page: pdfkit breaks the text over as many pages as it takes, all counted.
    if (++this.pages + Math.ceil(height / PAGE_ROOM) - 1 > MAX_PAGES) throw new PrintTooLong(`the printed form would take more than ${MAX_PAGES} pages`);
    this.doc.addPage();
    this.y = MARGIN;
  }

  /** After drawing: the pages pdfkit added for text taller than a page are counted, and what follows goes below it. */
  private sync(): void {
    const count = this.doc.bufferedPageRange().count;
    if (count > MAX_PAGES) throw new PrintTooLong(`the printed form would take more than ${MAX_PAGES} pages`);
    if (count > this.pages) {
      this.pages = count;
      this.y = Math.max(MARGIN, this.doc.y);
    }
  }

  heightOf(text: string, width: number, size: number, bold = false): number {
    const doc = this.doc.font(bold ? BOLD : REGULAR).fontSize(size);
    // Most cells fit on one line: measuring their width is far cheaper than wrapping them.
    if (!text.includes('\n') && doc.widthOfString(text) <= width) return doc.currentLineHeight(true);
    return doc.heightOfString(text || ' ', { width });
  }

  put(text: string, x: number, y: number, width: number, size: number, opts: { bold?: boolean; align?: 'left' | 'right' | 'center' } = {}): void {
    this.doc
      .font(opts.bold ? BOLD : REGULAR)
      .fontSize(size)
      .fillColor('black')
      .text(text, x, y, { width, align: opts.align ?? 'left', lineBreak: true });
  }

  /** A section title on a grey band. */
  title(text: string): void {
    this.ensure(28);
    this.y += 6;
    this.doc.rect(MARGIN, this.y, WIDTH, 12).fill(GREY);
    this.put(text, MARGIN + 3, this.y + 0.8, WIDTH - 6, 8, { bold: true });
    this.y += 14;
  }

  /** A bold label and its value on the lines that follow it: measured as one text in the regular font, in a width narrower by what the label takes more in bold (the bold face is ~12% wider). */
  private pairHeight(label: string, value: string, width: number): number {
    const k = `${label}: `;
    const boldExtra = this.doc.font(BOLD).fontSize(7.5).widthOfString(k) - this.doc.font(REGULAR).fontSize(7.5).widthOfString(k);
    return this.heightOf(`${k}${value}`, width - Math.max(0, boldExtra), 7.5);
  }

  /** Label/value pairs in `columns` columns. */
  pairs(items: readonly (readonly [string, string])[], columns = 2): void {
    const shown = items.filter(([, v]) => v !== '');
    const colWidth = WIDTH / columns;
    for (let i = 0; i < shown.length; i += columns) {
      const row = shown.slice(i, i + columns);
      const h = Math.max(...row.map(([k, v]) => this.pairHeight(k, v, colWidth - 6)));
      this.ensure(h + 2);
      row.forEach(([k, v], j) => {
        const x = MARGIN + j * colWidth;
        this.doc
          .font(BOLD)
          .fontSize(7.5)
          .fillColor('black')
          .text(`${k}: `, x, this.y, { width: colWidth - 6, continued: true });
        this.doc.font(REGULAR).text(v);
      });
      this.y += h + 2;
      this.sync();
    }
  }

  /** A table: header on a grey band (repeated on each new page), rows wrapped within their column. */
  table(
    columns: readonly { head: string; width: number; align?: 'left' | 'right' }[],
    rows: readonly (readonly string[])[],
    below?: (row: number) => string,
  ): void {
    const total = columns.reduce((s, c) => s + c.width, 0);
    const widths = columns.map((c) => (c.width / total) * WIDTH);
    const header = () => {
      this.ensure(24);
      this.doc.rect(MARGIN, this.y, WIDTH, 11).fill(GREY);
      let x = MARGIN;
      columns.forEach((c, i) => {
        this.put(c.head, x + 2, this.y + 0.7, widths[i]! - 4, 6.5, { bold: true, align: c.align });
        x += widths[i]!;
      });
      this.y += 12;
    };
    header();
    rows.forEach((row, r) => {
      const h = Math.max(...row.map((cell, i) => this.heightOf(cell, widths[i]! - 4, 7)));
      const extra = below?.(r) ?? '';
      const hExtra = extra ? this.heightOf(extra, WIDTH - 24, 6.5) : 0;
      const before = this.y;
      this.ensure(h + hExtra + 3);
      if (this.y < before) header();
      let x = MARGIN;
      row.forEach((cell, i) => {
        this.put(cell, x + 2, this.y, widths[i]! - 4, 7, { align: columns[i]!.align });
        x += widths[i]!;
      });
      this.y += h;
      if (extra) {
        this.doc
          .font(REGULAR)
          .fontSize(6.5)
          .fillColor('#333333')
          .text(extra, MARGIN + 20, this.y, { width: WIDTH - 24 });
        this.y += hExtra;
      }
      this.doc
        .moveTo(MARGIN, this.y + 1)
        .lineTo(MARGIN + WIDTH, this.y + 1)
        .lineWidth(0.3)
        .strokeColor(RULE)
        .stroke();
      this.y += 3;
      this.sync();
    });
  }

  /** A labelled block of long unbroken text (seals, the original string): small type, broken anywhere. */
  block(label: string, text: string, x: number, width: number): void {
    const h = this.heightOf(text, width, 6);
    this.ensure(h + 10);
    this.put(label, x, this.y, width, 7, { bold: true });
    this.y += 9;
    this.put(text, x, this.y, width, 6);
    this.y += h + 3;
    this.sync();
  }

  /** The footer on every page: the legend and "page n of m". */
  finish(): Promise<Buffer> {
    const range = this.doc.bufferedPageRange();
    for (let i = range.start; i < range.start + range.count; i++) {
      this.doc.switchToPage(i);
      this.doc
        .font(REGULAR)
        .fontSize(6.5)
        .fillColor('#555555')
        .text(`${this.footer}    Página ${i + 1} de ${range.count}`, MARGIN, BOTTOM + 4, { width: WIDTH, align: 'center', lineBreak: false });
    }
    const chunks: Buffer[] = [];
    return new Promise((resolve, reject) => {
      this.doc.on('data', (c: Buffer) => chunks.push(c));
      this.doc.on('end', () => resolve(Buffer.concat(chunks)));
      this.doc.on('error', reject);
      this.doc.end();
    });
  }
}

/** The QR code as squares of `module` points, its quiet zone included, top-left at (x, y). */
function drawQr(sheet: Sheet, text: string, x: number, y: number, size: number): void {
  const qr = sheet.qrCode.create(text, { errorCorrectionLevel: 'M' });
  const n = qr.modules.size;
  const quiet = 4;
  const module = size / (n + 2 * quiet);
  sheet.doc.rect(x, y, size, size).fill('white');
  for (let r = 0; r < n; r++) {
    for (let c = 0; c < n; c++) {
      if (qr.modules.get(r, c)) sheet.doc.rect(x + (c + quiet) * module, y + (r + quiet) * module, module, module);
    }
  }
  sheet.doc.fill('black');
}

const TITLES: Readonly<Record<string, string>> = { I: 'Factura', E: 'Nota de crédito', P: 'Recibo electrónico de pago', T: 'Traslado', N: 'Nómina' };

/**
 * The longest run of characters without a break opportunity a text is printed with; longer runs get a line break every
 * as many characters. pdfkit fits a word wider than its cell character by character, measuring what is left of it after
 * each line, in time that grows with the square of its length: a 20,000-character run cost 1.5 s a measure, 22–77 s a
 * printed form. A run is what pdfkit's line breaker (UAX #14) keeps together, not only characters other than spaces:
 * words joined by no-break spaces, a run of em or thin spaces, spaces before closing brackets. No text of a CFDI has
 * such runs (Descripcion holds at most 1,000 characters, a seal 344), but the import keeps what the file says.
 */
const LONGEST_RUN = 1000;
/** Up to LONGEST_RUN code points (a surrogate pair is never split). */
const CHUNK = new RegExp(`[^]{1,${LONGEST_RUN}}`, 'gu');

/** The text with a line break every LONGEST_RUN characters of each run longer than that. Linear: one pass of the breaker. */
function breakLongRuns(text: string, LineBreaker: LineBreakerClass): string {
  if (text.length <= LONGEST_RUN) return text;
  const breaker = new LineBreaker(text);
  const parts: string[] = [];
  let last = 0;
  for (let bk = breaker.nextBreak(); bk; bk = breaker.nextBreak()) {
    const unit = text.slice(last, bk.position);
    parts.push(unit.length > LONGEST_RUN ? unit.match(CHUNK)!.join('\n') : unit);
    last = bk.position;
  }
  parts.push(text.slice(last));
  return parts.join('');
}

/** Every text of the model (and the keys it prints: the attributes of Pagos' Totales) made printable, then its runs longer than LONGEST_RUN broken into lines of at most that. */
function forPrinting<T>(value: T, libs: Pick<Libraries, 'printable' | 'LineBreaker'>): T {
  if (typeof value === 'string') return breakLongRuns(libs.printable(value), libs.LineBreaker) as T;
  if (Array.isArray(value)) return value.map((v: unknown) => forPrinting(v, libs)) as T;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [libs.printable(k), forPrinting(v, libs)])) as T;
  return value;
}

/** Renders the printed form; PrintTooLong past MAX_PAGES. */
export async function renderPrintedCfdi(model: PrintedCfdi): Promise<Buffer> {
  const libs = await libraries();
  const cfdi = forPrinting(model, libs);
  // Every page names the CFDI it belongs to: a loose page still says which document it is.
  const sheet = new Sheet(libs, `Este documento es una representación impresa de un CFDI ${cfdi.version}    Folio fiscal ${cfdi.stamp.uuid}`);
  header(sheet, cfdi);
  parties(sheet, cfdi);
  if (cfdi.relations.length) {
    sheet.title('CFDI relacionados');
    sheet.pairs(
      cfdi.relations.map((r) => [labelled('tipoRelacion', r.tipoRelacion), r.uuids.join(', ')] as const),
      1,
    );
  }
  concepts(sheet, cfdi);
  totals(sheet, cfdi);
  if (cfdi.payments) payments(sheet, cfdi.payments);
  if (cfdi.cartaPorte) cartaPorte(sheet, cfdi.cartaPorte);
  // The QR code holds the XML's own values (the text printed beside it is what the fonts can show).
  stamp(
    sheet,
    cfdi,
    verificationUrl({ uuid: model.stamp.uuid, rfcEmisor: model.emisor.rfc, rfcReceptor: model.receptor.rfc, total: model.total, sello: model.sello }),
  );
  return sheet.finish();
}

function header(sheet: Sheet, cfdi: PrintedCfdi): void {
  const right = WIDTH * 0.5;
  const leftWidth = WIDTH - right - 10;
  const top = sheet.y;
  sheet.put(cfdi.emisor.nombre || cfdi.emisor.rfc, MARGIN, top, leftWidth, 12, { bold: true });
  let y = top + sheet.heightOf(cfdi.emisor.nombre || cfdi.emisor.rfc, leftWidth, 12, true) + 3;
  for (const line of [
    `RFC: ${cfdi.emisor.rfc}`,
    `Régimen fiscal: ${labelled('regimenFiscal', cfdi.emisor.regimenFiscal)}`,
    `Lugar de expedición: ${cfdi.lugarExpedicion}`,
  ]) {
    sheet.put(line, MARGIN, y, leftWidth, 8);
    y += sheet.heightOf(line, leftWidth, 8) + 1;
  }
  const x = MARGIN + WIDTH - right;
  const title = `${TITLES[cfdi.tipoDeComprobante] ?? 'CFDI'} (CFDI ${cfdi.version})`;
  sheet.doc.rect(x, top, right, 14).fill(GREY);
  sheet.put(title, x + 4, top + 1.1, right - 8, 9, { bold: true, align: 'center' });
  let ry = top + 17;
  const rows: [string, string][] = [
    ['Serie y folio', [cfdi.serie, cfdi.folio].filter(Boolean).join('-') || '—'],
    ['Fecha', cfdi.fecha],
    ['Folio fiscal (UUID)', cfdi.stamp.uuid],
    ['No. certificado del emisor', cfdi.noCertificado],
    ['No. certificado del SAT', cfdi.stamp.noCertificadoSat],
    ['Fecha de certificación', cfdi.stamp.fechaTimbrado],
  ];
  // The labels' column holds the longest label, "No. certificado del emisor:", on one line.
  const labels = right * 0.38;
  for (const [k, v] of rows) {
    sheet.put(`${k}:`, x + 4, ry, labels, 7.5, { bold: true });
    sheet.put(v, x + 4 + labels, ry, right - labels - 8, 7.5);
    ry += sheet.heightOf(v, right - labels - 8, 7.5) + 1.5;
  }
  sheet.y = Math.max(y, ry) + 4;
}

function parties(sheet: Sheet, cfdi: PrintedCfdi): void {
  const r = cfdi.receptor;
  sheet.title('Receptor');
  sheet.pairs([
    ['RFC', r.rfc],
    ['Nombre', r.nombre],
    ['Uso del CFDI', labelled('usoCfdi', r.usoCfdi)],
    ['Régimen fiscal', labelled('regimenFiscal', r.regimenFiscal)],
    ['Domicilio fiscal (C.P.)', r.domicilioFiscal],
    ['Residencia fiscal', r.residenciaFiscal],
    ['Núm. registro id. tributario', r.numRegIdTrib],
  ]);
  sheet.title('Comprobante');
  sheet.pairs(
    [
      ['Tipo de comprobante', labelled('tipoDeComprobante', cfdi.tipoDeComprobante)],
      ['Exportación', labelled('exportacion', cfdi.exportacion)],
      ['Moneda', cfdi.moneda],
      ['Tipo de cambio', cfdi.tipoCambio],
      ['Forma de pago', labelled('formaPago', cfdi.formaPago)],
      ['Método de pago', labelled('metodoPago', cfdi.metodoPago)],
      ['Condiciones de pago', cfdi.condicionesDePago],
      ...(cfdi.informacionGlobal
        ? ([
            ['Información global: periodicidad', cfdi.informacionGlobal.periodicidad],
            ['Meses / año', `${cfdi.informacionGlobal.meses} / ${cfdi.informacionGlobal.anio}`],
          ] as const)
        : []),
    ],
    3,
  );
}

function concepts(sheet: Sheet, cfdi: PrintedCfdi): void {
  sheet.title('Conceptos');
  sheet.table(
    [
      { head: 'Clave prod./serv.', width: 11 },
      { head: 'No. ident.', width: 9 },
      { head: 'Cantidad', width: 8, align: 'right' },
      { head: 'Unidad', width: 9 },
      { head: 'Descripción', width: 30 },
      { head: 'Valor unitario', width: 11, align: 'right' },
      { head: 'Descuento', width: 9, align: 'right' },
      { head: 'Importe', width: 11, align: 'right' },
    ],
    cfdi.concepts.map((c) => [
      c.claveProdServ,
      c.noIdentificacion,
      c.cantidad,
      [c.claveUnidad, c.unidad].filter(Boolean).join(' '),
      c.descripcion,
      c.valorUnitario,
      c.descuento,
      c.importe,
    ]),
    (i) => {
      const c = cfdi.concepts[i]!;
      return [c.objetoImp && `Objeto de impuesto: ${labelled('objetoImp', c.objetoImp)}`, ...c.taxes.map(taxLine)].filter(Boolean).join('\n');
    },
  );
}

function totals(sheet: Sheet, cfdi: PrintedCfdi): void {
  const lines: [string, string][] = [
    ['Subtotal', cfdi.subTotal],
    ['Descuento', cfdi.descuento],
    ...cfdi.taxes.map((t): [string, string] => [
      `${t.kind === 'Traslado' ? 'Impuesto trasladado' : 'Impuesto retenido'} ${taxName(t.impuesto)}${t.tasaOCuota ? ` ${t.tipoFactor} ${t.tasaOCuota}` : ''}`,
      t.importe,
    ]),
    ['Total impuestos trasladados', cfdi.totalTraslados],
    ['Total impuestos retenidos', cfdi.totalRetenciones],
    // State taxes sit outside Impuestos, and the Total holds them too.
    ...cfdi.localTaxes.map((t): [string, string] => [
      `Impuesto local ${t.kind === 'Traslado' ? 'trasladado' : 'retenido'} ${t.name}${t.rate ? ` ${t.rate} %` : ''}`,
      t.importe,
    ]),
  ];
  const shown = lines.filter(([, v]) => v !== '');
  const width = WIDTH * 0.45;
  const x = MARGIN + WIDTH - width;
  sheet.ensure(shown.length * 10 + 20);
  sheet.y += 4;
  for (const [k, v] of shown) {
    sheet.put(k, x, sheet.y, width * 0.65, 7.5);
    sheet.put(v, x + width * 0.65, sheet.y, width * 0.35, 7.5, { align: 'right' });
    sheet.y += 10;
  }
  sheet.doc.rect(x, sheet.y, width, 13).fill(GREY);
  sheet.put(`Total (${cfdi.moneda})`, x + 3, sheet.y + 1.2, width * 0.6, 8.5, { bold: true });
  sheet.put(cfdi.total, x + width * 0.6, sheet.y + 1.2, width * 0.4 - 3, 8.5, { bold: true, align: 'right' });
  sheet.y += 16;
}

function payments(sheet: Sheet, p: NonNullable<PrintedCfdi['payments']>): void {
  sheet.title(`Complemento de pagos ${p.version}`);
  const totales = Object.entries(p.totales);
  if (totales.length) sheet.pairs(totales, 3);
  p.payments.forEach((pay, i) => {
    sheet.pairs(
      [
        [`Pago ${i + 1}: fecha`, pay.fecha],
        ['Forma de pago', labelled('formaPago', pay.formaDePago)],
        ['Monto', pay.monto],
        ['Moneda', pay.moneda],
        ['Tipo de cambio', pay.tipoCambio],
        ['Núm. operación', pay.numOperacion],
      ],
      3,
    );
    sheet.table(
      [
        { head: 'Documento relacionado (UUID)', width: 30 },
        { head: 'Serie-folio', width: 10 },
        { head: 'Moneda', width: 7 },
        { head: 'Equiv./T.C.', width: 8, align: 'right' },
        { head: 'Parc.', width: 5, align: 'right' },
        { head: 'Saldo anterior', width: 12, align: 'right' },
        { head: 'Pagado', width: 12, align: 'right' },
        { head: 'Saldo insoluto', width: 12, align: 'right' },
      ],
      pay.docs.map((d) => [d.idDocumento, d.serieFolio, d.moneda, d.equivalencia, d.parcialidad, d.saldoAnterior, d.pagado, d.saldoInsoluto]),
    );
  });
}

function cartaPorte(sheet: Sheet, cp: NonNullable<PrintedCfdi['cartaPorte']>): void {
  sheet.title(`Complemento Carta Porte ${cp.version}`);
  sheet.pairs(
    [
      ['IdCCP', cp.idCcp],
      ['Transporte internacional', cp.transpInternac],
    ],
    2,
  );
  sheet.pairs(
    [
      ['Distancia total (km)', cp.totalDistRec],
      ['Peso bruto total', [cp.pesoBrutoTotal, cp.unidadPeso].filter(Boolean).join(' ')],
      ['Mercancías', cp.numTotalMercancias],
    ],
    3,
  );
  sheet.table(
    [
      { head: 'Ubicación', width: 8 },
      { head: 'ID', width: 9 },
      { head: 'RFC y nombre', width: 23 },
      { head: 'Fecha y hora', width: 15 },
      { head: 'Distancia', width: 7, align: 'right' },
      { head: 'Domicilio', width: 38 },
    ],
    cp.locations.map((l) => [l.tipo, l.id, [l.rfc, l.nombre].filter(Boolean).join(' '), l.fechaHora, l.distancia, l.domicilio]),
  );
  sheet.table(
    [
      { head: 'Bienes transp.', width: 11 },
      { head: 'Descripción', width: 45 },
      { head: 'Cantidad', width: 10, align: 'right' },
      { head: 'Unidad', width: 8 },
      { head: 'Peso (kg)', width: 12, align: 'right' },
      { head: 'Mat. peligroso', width: 10 },
    ],
    cp.goods.map((g) => [g.bienesTransp, g.descripcion, g.cantidad, g.claveUnidad, g.pesoEnKg, g.materialPeligroso]),
  );
  if (cp.vehicle) {
    sheet.pairs(
      [
        ['Permiso SCT', cp.vehicle.permiso],
        ['Vehículo', cp.vehicle.vehiculo],
        ['Seguro', cp.vehicle.seguro],
        ['Remolques', cp.vehicle.remolques],
      ],
      2,
    );
  }
  if (cp.figures.length) {
    sheet.table(
      [
        { head: 'Figura de transporte', width: 14 },
        { head: 'RFC', width: 16 },
        { head: 'Nombre', width: 50 },
        { head: 'Licencia', width: 20 },
      ],
      cp.figures.map((f) => [f.tipo === '01' ? '01 Operador' : f.tipo, f.rfc, f.nombre, f.licencia]),
    );
  }
}

function stamp(sheet: Sheet, cfdi: PrintedCfdi, qrText: string): void {
  sheet.title('Timbre fiscal digital');
  const qrSize = 110;
  const textX = MARGIN + qrSize + 10;
  const textWidth = WIDTH - qrSize - 10;
  const blocks: [string, string][] = [
    ['Sello digital del CFDI', cfdi.stamp.selloCfd || cfdi.sello],
    ['Sello digital del SAT', cfdi.stamp.selloSat],
    ['Cadena original del complemento de certificación digital del SAT', stampOriginalString(cfdi.stamp)],
  ];
  const needed =
    Math.max(
      qrSize,
      blocks.reduce((s, [, v]) => s + sheet.heightOf(v, textWidth, 6) + 12, 0),
    ) + 24;
  // The QR and the seals stay together on one page when they fit on one.
  if (needed < BOTTOM - MARGIN) sheet.ensure(needed);
  const top = sheet.y;
  drawQr(sheet, qrText, MARGIN, top, qrSize);
  for (const [label, text] of blocks) sheet.block(label, text, textX, textWidth);
  sheet.y = Math.max(sheet.y, top + qrSize) + 4;
  sheet.pairs(
    [
      ['RFC del proveedor de certificación', cfdi.stamp.rfcProvCertif],
      ['Fecha y hora de certificación', cfdi.stamp.fechaTimbrado],
    ],
    2,
  );
}
