/**
 * The files of a list or report (docs/exports.md): CSV (RFC 4180, UTF-8, CRLF, a header row of
 * the column names; one table) and XLSX (one sheet per table, the same header row; exceljs's
 * streaming writer with inline strings, so no table is held in memory). Rows are pulled from the
 * tables' iterables one at a time and written as the sink accepts them.
 */
import type { Writable } from 'node:stream';
import { once } from 'node:events';
import { onFirstUse } from '../shared/on-first-use.ts';
import type { ExportCell, ExportTable } from './export-dataset.ts';

/** exceljs (~0.5 CPU-s to load): wanted by the first XLSX export, not by every service that starts. */
const excel = onFirstUse(async () => (await import('exceljs')).default);

// OWASP "CSV Injection" (owasp.org/www-community/attacks/CSV_Injection): a cell opening with = + - @ TAB CR or LF is prefixed with `'`.
const FORMULA_START = /^[=+\-@\t\r\n]/;

/**
 * One CSV field: a text opening as a formula would (FORMULA_START) prefixed with `'`, so a spreadsheet shows it as
 * text; then quoted when it holds a comma, a quote, CR or LF (quotes doubled); null empty; numbers (a negative one
 * too) and booleans in their JSON form.
 */
export function csvField(cell: ExportCell): string {
  if (cell === null) return '';
  const text = typeof cell === 'string' ? (FORMULA_START.test(cell) ? `'${cell}` : cell) : String(cell);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (cells: readonly ExportCell[]): string => `${cells.map(csvField).join(',')}\r\n`;

/** Waits while the sink holds more than its high-water mark (the writer above it is not stream-aware). */
async function drained(sink: Writable): Promise<void> {
  if (sink.writableNeedDrain) await once(sink, 'drain');
}

export interface SinkWatch {
  /** Throws the sink's error once it has failed: no more rows are read for a file that can no longer be stored. */
  check(): void;
  /** `work`, or the sink's error as soon as it fails (a failed sink never drains nor finishes). */
  until<T>(work: Promise<T>): Promise<T>;
}

/**
 * Watches a sink for its failure (the store of its chunks away): the writers stop at the failure and reject with it,
 * so the run is retried or failed (run-export.ts). Without this listener the stream's 'error' event, or a
 * `once(sink, 'finish')` rejected before it is awaited, is an uncaught error that ends the whole process.
 */
export function watchSink(sink: Writable): SinkWatch {
  let error: { err: unknown } | null = null;
  let fail: (err: unknown) => void = () => undefined;
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  failed.catch(() => undefined);
  sink.on('error', (err: unknown) => {
    error ??= { err };
    fail(err);
  });
  return {
    check() {
      if (error) throw error.err;
    },
    until: <T>(work: Promise<T>): Promise<T> => Promise.race([work, failed]),
  };
}

export type RowCounter = (table: string) => Promise<void>;

export async function writeCsv(table: ExportTable, sink: Writable, counted: RowCounter): Promise<void> {
  const watch = watchSink(sink);
  sink.write(csvLine(table.columns.map((c) => c.name)));
  for await (const row of table.rows) {
    watch.check();
    if (!sink.write(csvLine(row))) await watch.until(drained(sink));
    await counted(table.name);
  }
  watch.check();
  const finished = once(sink, 'finish');
  sink.end();
  await watch.until(finished);
}

/** A sheet's name as Excel takes it: at most 31 characters, none of `[]:*?/\`. */
export const sheetName = (name: string): string => name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'data';

/** Excel's most characters in a cell. */
export const XLSX_CELL_MAX = 32_767;
/** Excel's most rows in a sheet (the header row included). */
export const XLSX_SHEET_ROWS = 1_048_576;

/**
 * Characters an XLSX text cannot hold as they are: C0 controls but tab and line feed (invalid in XML
 * 1.0, or CR, which XML turns into LF), U+FFFE and U+FFFF, unpaired surrogates; and "_" opening a
 * literal `_xHHHH_`, which a reader would take for an escape.
 */
// eslint-disable-next-line no-control-regex -- the control characters are what it finds
const NOT_AS_IS = /_(?=x[0-9A-Fa-f]{4}_)|[\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A text as an XLSX cell holds it: those characters escaped as `_xHHHH_` (ECMA-376 Part 1, §22.9.2.19
 * ST_Xstring), so Excel reads back the exact text; over Excel's 32,767 characters, cut to the first
 * 32,766 and "…" (docs/exports.md).
 */
export function xlsxText(text: string): string {
  let fitted = text;
  if (text.length > XLSX_CELL_MAX) {
    const end = XLSX_CELL_MAX - 1;
    fitted = `${text.slice(0, /[\uD800-\uDBFF]/.test(text[end - 1]!) ? end - 1 : end)}…`;
  }
  return fitted.replace(NOT_AS_IS, (c) => `_x${(c === '_' ? 0x5f : c.charCodeAt(0)).toString(16).toUpperCase().padStart(4, '0')}_`);
}

const xlsxRow = (row: readonly ExportCell[]): ExportCell[] => row.map((cell) => (typeof cell === 'string' ? xlsxText(cell) : cell));

export async function writeXlsx(tables: readonly ExportTable[], sink: Writable, counted: RowCounter, sheetRows = XLSX_SHEET_ROWS): Promise<void> {
  const watch = watchSink(sink);
  const workbook = new (await excel()).stream.xlsx.WorkbookWriter({ stream: sink, useStyles: false, useSharedStrings: false });
  const finished = once(sink, 'finish');
  // Awaited at the end, through `watch`: its rejection meanwhile (the sink failed) is the watch's to report.
  finished.catch(() => undefined);
  let n = 0;
  for (const table of tables) {
    // A table longer than a sheet goes on in "<name> (2)", "<name> (3)" …, each with the header row.
    let part = 1;
    const header = table.columns.map((c) => xlsxText(c.name));
    const open = () => {
      const suffix = part === 1 ? '' : ` (${part})`;
      const added = workbook.addWorksheet(sheetName(table.name).slice(0, 31 - suffix.length) + suffix);
      added.addRow(header).commit();
      return added;
    };
    let sheet = open();
    let rows = 1;
    for await (const row of table.rows) {
      watch.check();
      if (rows === sheetRows) {
        sheet.commit();
        part += 1;
        sheet = open();
        rows = 1;
      }
      sheet.addRow(xlsxRow(row)).commit();
      rows += 1;
      await counted(table.name);
      // Let the zip stream inside the writer hand its bytes on before more rows pile up behind it.
      if (++n % 256 === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        await watch.until(drained(sink));
      }
    }
    sheet.commit();
  }
  watch.check();
  await watch.until(workbook.commit());
  await watch.until(finished);
}
