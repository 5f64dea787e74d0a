/**
 * A report's JSON answer as tables (docs/exports-report-tables.md). A table is named by the dot path
 * of an array (or object) of the answer, walked from the root: each segment takes that field of every
 * item reached so far, an array contributing each of its items (`months.clients`: every client of
 * every month, in order), an object itself (`totals`: one row). A column is named by the dot path of
 * its value in the row's item; a path whose first field the item does not have is read in the
 * enclosing items, innermost first (`month` in `months.clients`, `period.startDate` in `totals`), so a
 * row carries what a spreadsheet needs beside it. A value absent or null is an empty cell.
 */
import type { ExportCell, ExportColumn, ExportTable } from '../export-dataset.ts';

export interface ReportTableSpec {
  /** The dot path of the answer's array (or object) whose items are the rows; also the sheet's name. */
  readonly name: string;
  readonly columns: readonly ExportColumn[];
}

export const col = (name: string, description: string): ExportColumn => ({ name, description });

/** The same columns found under a field of the row's item (a month's `totals`). */
export const under = (prefix: string, columns: readonly ExportColumn[]): ExportColumn[] => columns.map((c) => col(`${prefix}.${c.name}`, c.description));

type Item = Readonly<Record<string, unknown>>;
/** A row's item and the items enclosing it, innermost first, the answer last. */
type Scopes = readonly Item[];

const isItem = (v: unknown): v is Item => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The items a table's name reaches, each with the items enclosing it. */
export function tableScopes(answer: object, table: string): Scopes[] {
  if (!isItem(answer)) throw new Error('a report answer is an object');
  let reached: Scopes[] = [[answer]];
  for (const field of table.split('.')) {
    const next: Scopes[] = [];
    for (const scopes of reached) {
      const value = scopes[0]![field];
      for (const item of Array.isArray(value) ? value : [value]) if (isItem(item)) next.push([item, ...scopes]);
    }
    reached = next;
  }
  return reached;
}

/** The cell of a column in a row: its path read in the innermost item that has the path's first field. */
export function cellOf(scopes: Scopes, path: string): ExportCell {
  const [first, ...rest] = path.split('.') as [string, ...string[]];
  let value: unknown = scopes.find((item) => Object.hasOwn(item, first))?.[first];
  for (const field of rest) value = isItem(value) ? value[field] : undefined;
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  throw new Error(`column ${path} names no single value`);
}

async function* rowsOf(scopes: readonly Scopes[], columns: readonly ExportColumn[]): AsyncIterable<readonly ExportCell[]> {
  for (const row of scopes) yield columns.map((c) => cellOf(row, c.name));
}

/** The tables of one answer, in the order of their specs. */
export function tabulate(answer: object, specs: readonly ReportTableSpec[]): ExportTable[] {
  return specs.map((spec) => ({ name: spec.name, columns: spec.columns, rows: rowsOf(tableScopes(answer, spec.name), spec.columns) }));
}
