/**
 * The SAT bulk download's metadata file (Descarga Masiva, "Metadata" packages): text, one line
 * per CFDI, fields separated by `~`, a header line naming them:
 *
 *   Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion
 *
 * `Estatus` 1 = vigente, 0 = cancelado with its `FechaCancelacion` (docs/domain.md; the layout
 * as public readers of it take it, docs/importing.md). Read as a stream, line by line, so a
 * file's size bounds no memory here: each line is bounded (MAX_LINE_CHARS).
 *
 * Columns are found by their header name, not by position. The SAT writes CRLF between lines
 * and may leave a bare LF inside a name: when the header ends in CRLF, a bare LF is dropped.
 * A name that holds a `~` gives a line more fields than the header: the columns before the
 * names are then read from the start of the line and those after them from its end. A line
 * that cannot be read is rejected with its number; the others are read.
 */
import { parseMxDateTime } from '../time/mexico-city.ts';
import { isValidRfc } from '../tax/rfc.ts';
import { ImportRejection } from './rejection.ts';

/** Columns this reader needs (the others are not read). */
const NEEDED = ['Uuid', 'RfcEmisor', 'RfcReceptor', 'Estatus', 'FechaCancelacion'] as const;
type Needed = (typeof NEEDED)[number];
/** Free-text columns, where a `~` may hide. */
const NAME_COLUMNS = ['NombreEmisor', 'NombreReceptor'];

const MAX_LINE_CHARS = 8192;
const UUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const DATE_RE = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.\d+)?$/;

/** One CFDI as the metadata lists it. */
export interface MetadataLine {
  /** Line number in the file (the header is line 1). */
  line: number;
  uuid: string;
  issuerRfc: string;
  receiverRfc: string;
  /** Estatus 0: cancelled since `cancelledAt` (epoch ms); Estatus 1: vigente. */
  cancelled: boolean;
  cancelledAt: number | null;
}

export type MetadataRow = MetadataLine | { line: number; rejection: string };

/** Whether text that starts so is a metadata file (its header's first columns). */
export const isMetadataHeader = (firstLine: string): boolean => /^\uFEFF?Uuid~RfcEmisor~/.test(firstLine);

/** The text is not the SAT metadata (its first line is not the header): the caller lists it as ignored. */
export class NotMetadata extends Error {
  override name = 'NotMetadata';
}

/**
 * Where each needed column is: by its index when the line has the header's width; otherwise
 * counted from the start (before the names), from the end (after them), or, between the two
 * names (RfcReceptor), whichever of the two places holds an RFC.
 */
type Place = 'start' | 'end' | 'between';
type Locator = Record<Needed, { index: number; place: Place }>;

function locate(header: string[]): Locator | string {
  const names = NAME_COLUMNS.map((n) => header.indexOf(n)).filter((i) => i >= 0);
  const firstName = names.length ? Math.min(...names) : Infinity;
  const lastName = names.length ? Math.max(...names) : -1;
  const locator: Partial<Locator> = {};
  for (const col of NEEDED) {
    const index = header.indexOf(col);
    if (index < 0) return `the header has no ${col} column`;
    locator[col] = { index, place: index < firstName ? 'start' : index > lastName ? 'end' : 'between' };
  }
  return locator as Locator;
}

/**
 * Reads the metadata from text chunks. `write` returns the rows completed so far; `end` the
 * last. Throws NotMetadata when the first line is not a metadata header (the caller decides
 * what such a file is), and ImportRejection when the header lacks a needed column.
 */
export class SatMetadataReader {
  private buffer = '';
  private lineNo = 0;
  private header: string[] | null = null;
  private locator: Locator | null = null;
  private crlf = false;
  private readonly decoder = new TextDecoder('utf-8');

  write(chunk: Buffer): MetadataRow[] {
    return this.take(this.decoder.decode(chunk, { stream: true }), false);
  }

  end(): MetadataRow[] {
    const rows = this.take(this.decoder.decode(), true);
    if (this.header === null) throw new NotMetadata('empty file');
    return rows;
  }

  /** Inside a line too long to read: dropped up to its end. */
  private skipping = false;

  private take(text: string, final: boolean): MetadataRow[] {
    this.buffer += text;
    const rows: MetadataRow[] = [];
    for (;;) {
      const sep = this.header !== null && this.crlf ? '\r\n' : '\n';
      const at = this.buffer.indexOf(sep);
      if (at < 0) {
        if (this.skipping)
          this.buffer = this.buffer.slice(-1); // a CRLF may be cut between chunks
        else if (final && this.buffer.length) this.line(this.buffer, rows);
        else if (this.buffer.length > MAX_LINE_CHARS) {
          if (this.header === null) throw new NotMetadata('no header line');
          this.lineNo += 1;
          rows.push({ line: this.lineNo, rejection: `line longer than ${MAX_LINE_CHARS} characters` });
          this.buffer = this.buffer.slice(-1);
          this.skipping = true;
        }
        if (final) this.buffer = '';
        return rows;
      }
      const raw = this.buffer.slice(0, at);
      this.buffer = this.buffer.slice(at + sep.length);
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      if (this.header === null && raw.endsWith('\r')) this.crlf = true;
      this.line(raw, rows);
    }
  }

  private line(raw: string, rows: MetadataRow[]): void {
    this.lineNo += 1;
    const text = this.header === null ? raw.replace(/\r$/, '') : this.crlf ? raw.replace(/\n/g, '') : raw.replace(/\r$/, '');
    if (this.header === null) {
      if (!isMetadataHeader(text)) throw new NotMetadata('not a metadata header');
      this.header = text.replace(/^\uFEFF/, '').split('~');
      const located = locate(this.header);
      if (typeof located === 'string') throw new ImportRejection(`SAT metadata header: ${located}`);
      this.locator = located;
      return;
    }
    if (text.trim() === '') return; // the blank line at the end
    rows.push(this.row(text));
  }

  private row(text: string): MetadataRow {
    const line = this.lineNo;
    const fields = text.split('~');
    const width = this.header!.length;
    if (fields.length < width) return { line, rejection: `${fields.length} fields where the header has ${width}` };
    const extra = fields.length - width;
    const get = (col: Needed): string | null => {
      const { index, place } = this.locator![col];
      if (extra === 0 || place === 'start') return fields[index]!.trim();
      if (place === 'end') return fields[index + extra]!.trim();
      // Between the names: the `~` is in one of them; the RFC is where an RFC is.
      const candidates = [fields[index]!.trim(), fields[index + extra]!.trim()].filter((v) => isValidRfc(v));
      return candidates.length === 1 ? candidates[0]! : null;
    };
    const receiverRfc = get('RfcReceptor');
    if (receiverRfc === null)
      return { line, rejection: `${fields.length} fields where the header has ${width}: a name holds "~" and RfcReceptor cannot be told apart` };
    const uuid = get('Uuid')!;
    if (!UUID_RE.test(uuid)) return { line, rejection: `Uuid is not a UUID: "${uuid.slice(0, 40)}"` };
    const status = get('Estatus')!;
    if (status !== '0' && status !== '1') return { line, rejection: `Estatus "${status.slice(0, 10)}" is not 0 (cancelado) or 1 (vigente)` };
    const base = { line, uuid: uuid.toUpperCase(), issuerRfc: get('RfcEmisor')!.toUpperCase(), receiverRfc: receiverRfc.toUpperCase() };
    if (status === '1') return { ...base, cancelled: false, cancelledAt: null };
    const when = get('FechaCancelacion')!;
    const m = DATE_RE.exec(when);
    if (!m) return { line, rejection: `Estatus 0 needs FechaCancelacion as a date-time (YYYY-MM-DD HH:MM:SS): "${when.slice(0, 40)}"` };
    try {
      return { ...base, cancelled: true, cancelledAt: parseMxDateTime(`${m[1]}T${m[2]}`) };
    } catch {
      return { line, rejection: `FechaCancelacion is not a valid date-time: "${when.slice(0, 40)}"` };
    }
  }
}
