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

/** One CSV field: quoted when it holds a comma, a quote, CR or LF (quotes doubled); null empty; numbers in their JSON form. */
export function csvField(cell: ExportCell): string {
  if (cell === null) return '';
  const text = typeof cell === 'string' ? cell : String(cell);
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const csvLine = (cells: readonly ExportCell[]): string => `${cells.map(csvField).join(',')}\r\n`;

/** Waits while the sink holds more than its high-water mark (the writer above it is not stream-aware). */
async function drained(sink: Writable): Promise<void> {
  if (sink.writableNeedDrain) await once(sink, 'drain');
}

export type RowCounter = (table: string) => Promise<void>;

export async function writeCsv(table: ExportTable, sink: Writable, counted: RowCounter): Promise<void> {
  sink.write(csvLine(table.columns.map((c) => c.name)));
  for await (const row of table.rows) {
    if (!sink.write(csvLine(row))) await drained(sink);
    await counted(table.name);
  }
  sink.end();
  await once(sink, 'finish');
}

/** A sheet's name as Excel takes it: at most 31 characters, none of `[]:*?/\`. */
export const sheetName = (name: string): string => name.replace(/[[\]:*?/\\]/g, '_').slice(0, 31) || 'data';

export async function writeXlsx(tables: readonly ExportTable[], sink: Writable, counted: RowCounter): Promise<void> {
  const workbook = new (await excel()).stream.xlsx.WorkbookWriter({ stream: sink, useStyles: false, useSharedStrings: false });
  const finished = once(sink, 'finish');
  let n = 0;
  for (const table of tables) {
    const sheet = workbook.addWorksheet(sheetName(table.name));
    sheet.addRow(table.columns.map((c) => c.name)).commit();
    for await (const row of table.rows) {
      sheet.addRow([...row]).commit();
      await counted(table.name);
      // Let the zip stream inside the writer hand its bytes on before more rows pile up behind it.
      if (++n % 256 === 0) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        await drained(sink);
      }
    }
    sheet.commit();
  }
  await workbook.commit();
  await finished;
}
