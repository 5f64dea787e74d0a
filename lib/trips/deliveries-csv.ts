/**
 * The deliveries CSV an operations clerk sends for a month of reception
 * tickets (POST /api/deliveries, text/csv): one row per leg and product.
 *
 * - UTF-8 (a byte-order mark is skipped), comma-separated, fields quoted as in
 *   RFC 4180 ("…", a quote inside doubled), lines ended by LF or CRLF; blank
 *   lines are skipped.
 * - The first line is exactly the template's header,
 *   `tripId,shipmentId,productCode,offloaded,offloadDate` optionally followed by
 *   `,ticket` (CSV_HEADER_RE, which the spec states as the body's pattern, so a
 *   file is refused as a whole exactly when the spec says so).
 * - Values are trimmed. `offloaded` is litres with a decimal point and no
 *   thousands separator. `offloadDate` is `YYYY-MM-DD HH:mm[:ss]` (or with
 *   `T`), Mexico City wall time, or with `Z`/`±hh:mm` an instant.
 *
 * Pure: text in, rows out. Past the header every problem is a row's (a value
 * that cannot be read, a quote never closed), reported with the row; a header
 * that is not the template's, or more rows than one request may hold, refuses
 * the file (CsvError).
 */
import { parseMxDateTime } from '../time/mexico-city.ts';

export const CSV_COLUMNS = ['tripId', 'shipmentId', 'productCode', 'offloaded', 'offloadDate', 'ticket'] as const;
/** The header line after any byte order mark (spec: the text/csv body's `pattern`; test/unit/deliveries-csv.test.ts checks they are the same). */
export const CSV_HEADER_RE = /^tripId,shipmentId,productCode,offloaded,offloadDate(,ticket)?(\r?\n|$)/;
type Column = (typeof CSV_COLUMNS)[number];
const REQUIRED: readonly Column[] = ['tripId', 'shipmentId', 'productCode', 'offloaded', 'offloadDate'];

/** A row as read: its values, or why it cannot be used. */
export interface DeliveryRowInput {
  /** Line of the file where the row starts (the header is line 1); for JSON rows, the position from 1. */
  line: number;
  tripId: string;
  shipmentId: string;
  productCode: string;
  offloaded: number;
  /** Epoch ms. */
  offloadDate: number;
  ticket: string | null;
  /** Why the row cannot be used, when it cannot. */
  problems: string[];
}

/** Why a CSV with more lines than one request may hold is refused: `line` is the first past them. */
export const tooManyLines = (maxRows: number, line: number): string =>
  `more than ${maxRows} lines after the header (line ${line} is past them): one request holds at most ${maxRows}; send the rest in another file`;

/** The file itself cannot be read: one detail per problem. */
export class CsvError extends Error {
  constructor(readonly details: string[]) {
    super(details.join('; '));
  }
}

const DECIMAL_RE = /^\d+(\.\d+)?$/;
const DATE_TIME_RE = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2})?$/i;
const CODE_RE = /^[0-9]{8}$/;
const TICKET_RE = /^[A-Za-z0-9][A-Za-z0-9 ._/#:-]*$/;
const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;
/** A trip id: imported trips' start with the tenant's RFC, which may hold '&' or 'Ñ' (spec: DeliveryRow.tripId, as GET /api/shipments/{id}). */
const TRIP_ID_RE = /^[A-Za-z0-9&Ñ][A-Za-z0-9&Ñ._-]*$/;

/** Records of a CSV text with the line each starts on (RFC 4180 quoting; a quote never closed runs to the end: `unclosed`). */
export function* csvRecords(text: string): Generator<{ line: number; fields: string[]; unclosed?: true }, undefined> {
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let line = 1;
  while (i < text.length) {
    const start = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    for (;;) {
      if (i >= text.length) {
        fields.push(field);
        if (quoted) {
          yield { line: start, fields, unclosed: true };
          return;
        }
        break;
      }
      const c = text[i]!;
      if (quoted) {
        if (c === '"') {
          if (text[i + 1] === '"') {
            field += '"';
            i += 2;
          } else {
            quoted = false;
            i += 1;
          }
        } else {
          if (c === '\n') line += 1;
          field += c;
          i += 1;
        }
        continue;
      }
      if (c === '"' && field.trim() === '') {
        quoted = true;
        field = '';
        i += 1;
      } else if (c === ',') {
        fields.push(field);
        field = '';
        i += 1;
      } else if (c === '\n' || c === '\r') {
        fields.push(field);
        i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
        line += 1;
        break;
      } else {
        field += c;
        i += 1;
      }
    }
    if (fields.length === 1 && fields[0]!.trim() === '') continue; // a blank line
    yield { line: start, fields };
  }
}

/** Checks one row's values (shared by the CSV and the JSON rows, whose `offloaded` is a number already). */
export function deliveryRow(line: number, values: Partial<Record<Column, string>>, offloadedNumber?: number): DeliveryRowInput {
  const problems: string[] = [];
  const text = (c: Column): string => (values[c] ?? '').trim();
  for (const c of REQUIRED) if (text(c) === '') problems.push(`${c} is empty`);
  const tripId = text('tripId');
  const shipmentId = text('shipmentId');
  const productCode = text('productCode');
  for (const [name, value, re, chars] of [
    ['tripId', tripId, TRIP_ID_RE, "letters, digits, '&', 'Ñ', '.', '_', '-'"],
    ['shipmentId', shipmentId, ID_RE, "letters, digits, '.', '_', '-'"],
  ] as const) {
    if (value !== '' && (value.length > 64 || !re.test(value))) problems.push(`${name} "${value}" is not an id of this service (${chars}; at most 64)`);
  }
  if (productCode !== '' && !CODE_RE.test(productCode)) problems.push(`productCode "${productCode}" is not a SAT product key (8 digits)`);
  let offloaded = offloadedNumber ?? Number.NaN;
  if (offloadedNumber === undefined && text('offloaded') !== '') {
    if (!DECIMAL_RE.test(text('offloaded')))
      problems.push(`offloaded "${text('offloaded')}" is not a number of litres (digits and a decimal point, e.g. 30952.5)`);
    else offloaded = Number(text('offloaded'));
    if (offloaded > 1_000_000) problems.push(`offloaded ${offloaded} is more than 1,000,000 litres`);
  }
  let offloadDate = Number.NaN;
  if (text('offloadDate') !== '') {
    try {
      if (!DATE_TIME_RE.test(text('offloadDate'))) throw new RangeError('shape');
      offloadDate = parseMxDateTime(text('offloadDate').toUpperCase());
    } catch {
      problems.push(`offloadDate "${text('offloadDate')}" is not a date and time (YYYY-MM-DD HH:mm, Mexico City, or with Z/±hh:mm)`);
    }
  }
  const ticket = text('ticket') === '' ? null : text('ticket');
  if (ticket !== null && (ticket.length > 64 || !TICKET_RE.test(ticket)))
    problems.push(`ticket "${ticket}" is not a ticket reference (letters, digits, space and . _ / # : -; at most 64)`);
  return { line, tripId, shipmentId, productCode, offloaded, offloadDate, ticket, problems };
}

/** The longest first line whose columns are named one by one (the template's header is 62 characters). */
const HEADER_NAMED_MAX = 200;
/** Unknown columns named one by one; the rest are counted. */
const UNKNOWN_NAMED_MAX = 5;

/**
 * Why a first line is not the template's header, in words (the test itself is CSV_HEADER_RE). A few
 * lines whatever the file: one without line feeds is a single line (4 MiB of commas named column by
 * column was a 500).
 */
function headerProblems(first: string): string[] {
  const exactly = `the first line must be exactly ${REQUIRED.join(',')} or ${[...REQUIRED, 'ticket'].join(',')}`;
  const line = first.replace(/^\uFEFF/, '').split(/\r?\n/, 1)[0]!;
  if (line.includes('\r')) return ['lines end in a lone carriage return (CR, as "CSV (Macintosh)" saves them): save it with CRLF or LF line ends', exactly];
  if (line.length > HEADER_NAMED_MAX) return [`the first line holds ${line.length.toLocaleString('en-US')} characters, more than any header`, exactly];
  const names = line.split(',');
  const unknown = names.filter((n) => !(CSV_COLUMNS as readonly string[]).includes(n));
  const problems = unknown
    .slice(0, UNKNOWN_NAMED_MAX)
    .map((n) => `column "${n}" is not one of ${CSV_COLUMNS.join(', ')} (names are case-sensitive, without spaces)`);
  if (unknown.length > UNKNOWN_NAMED_MAX) problems.push(`and ${unknown.length - UNKNOWN_NAMED_MAX} more columns that are not`);
  for (const c of REQUIRED) if (!names.includes(c)) problems.push(`column ${c} is missing`);
  problems.push(exactly);
  return problems;
}

/** The rows of a deliveries CSV (see the module comment); rows past `maxRows` are rejected, not read. */
export function parseDeliveriesCsv(withBom: string, maxRows: number): DeliveryRowInput[] {
  const text = withBom.replace(/^\uFEFF/, '');
  if (!CSV_HEADER_RE.test(text))
    throw new CsvError(
      text.length === 0
        ? ['the file is empty: the first line is the header tripId,shipmentId,productCode,offloaded,offloadDate[,ticket]']
        : headerProblems(text).map((p) => `header (line 1): ${p}`),
    );
  const records = csvRecords(text);
  const columns = [...REQUIRED, ...(records.next().value!.fields.length > REQUIRED.length ? (['ticket'] as const) : [])];
  const rows: DeliveryRowInput[] = [];
  for (const { line, fields, unclosed } of records) {
    // Refused whole, as JSON past its maxItems is: a row each beyond would make the answer grow with the body.
    if (rows.length >= maxRows) throw new CsvError([tooManyLines(maxRows, line)]);
    const values: Partial<Record<Column, string>> = {};
    columns.forEach((c, i) => {
      values[c] = fields[i];
    });
    const row = deliveryRow(line, values);
    if (fields.length !== columns.length) row.problems.unshift(`${fields.length} fields where the header names ${columns.length}`);
    if (unclosed) row.problems.unshift(`a quoted field opened on line ${line} is never closed (the rest of the file is part of it)`);
    rows.push(row);
  }
  return rows;
}
