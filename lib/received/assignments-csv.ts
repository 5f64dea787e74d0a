/**
 * The assignments CSV (POST /api/received-assignments, text/csv): the header line
 * `uuid,vehicle,tripId`, then one line per received CFDI. Read as the deliveries CSV is
 * (lib/trips/deliveries-csv.ts: RFC 4180 quoting, LF or CRLF, blank lines skipped); only a header
 * that is not the template's refuses the file, every other problem is its line's. Pure.
 */
import { CsvError, csvRecords, tooManyLines } from '../trips/deliveries-csv.ts';

/** The header line after any byte order mark (spec: the text/csv body's `pattern`). */
export const ASSIGNMENTS_HEADER_RE = /^uuid,vehicle,tripId(\r?\n|$)/;

export interface AssignmentLine {
  /** Line of the file (the header is line 1); for JSON rows, the position from 1. */
  line: number;
  uuid: string;
  vehicle: string | null;
  tripId: string | null;
  problems: string[];
}

const UUID_RE = /^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$/;
const VEHICLE_RE = /^[A-Za-z0-9][A-Za-z0-9 ._/-]*$/;
/** Imported trips' ids start with the tenant's RFC, which may hold '&' or 'Ñ' (as GET /api/shipments/{id} takes them). */
const TRIP_RE = /^[A-Za-z0-9&Ñ][A-Za-z0-9&Ñ._-]*$/;

/** Checks one line's values (shared by the CSV and the JSON rows). */
export function assignmentLine(line: number, uuid: string, vehicle: string, tripId: string): AssignmentLine {
  const u = uuid.trim().toUpperCase();
  const v = vehicle.trim();
  const t = tripId.trim();
  const problems: string[] = [];
  if (!UUID_RE.test(u)) problems.push(`uuid "${u.slice(0, 64)}" is not a CFDI UUID (8-4-4-4-12 hexadecimal digits)`);
  if (v && (v.length > 40 || !VEHICLE_RE.test(v)))
    problems.push(`vehicle "${v.slice(0, 40)}" is not a vehicle id (letters, digits, ' ', '.', '_', '/', '-'; at most 40)`);
  if (t && (t.length > 64 || !TRIP_RE.test(t)))
    problems.push(`tripId "${t.slice(0, 64)}" is not a trip id (letters, digits, '&', 'Ñ', '.', '_', '-'; at most 64)`);
  if (v && t) problems.push('give a vehicle or a trip, not both');
  return { line, uuid: u, vehicle: v || null, tripId: t || null, problems };
}

/** The lines of an assignments CSV; CsvError when the header is not the template's or it holds more than `maxRows` lines. */
export function parseAssignmentsCsv(withBom: string, maxRows: number): AssignmentLine[] {
  const text = withBom.replace(/^\uFEFF/, '');
  if (!ASSIGNMENTS_HEADER_RE.test(text)) throw new CsvError(['the first line must be exactly "uuid,vehicle,tripId"']);
  const out: AssignmentLine[] = [];
  let first = true;
  for (const r of csvRecords(text)) {
    if (first) {
      first = false;
      continue;
    }
    // Refused whole, as JSON past its maxItems is: a line each beyond would make the answer grow with the body.
    if (out.length >= maxRows) throw new CsvError([tooManyLines(maxRows, r.line)]);
    const row = assignmentLine(r.line, r.fields[0] ?? '', r.fields[1] ?? '', r.fields[2] ?? '');
    if (r.unclosed) row.problems.push('a quote is never closed');
    // Fewer values too: a cut line (`<uuid>` alone) would read as "both empty", which removes the assignment.
    if (r.fields.length !== 3) row.problems.push(`${r.fields.length} ${r.fields.length === 1 ? 'value' : 'values'}; the line has 3 (uuid,vehicle,tripId)`);
    out.push(row);
  }
  return out;
}
