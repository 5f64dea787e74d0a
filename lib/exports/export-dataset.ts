/**
 * One list or report that can be exported as CSV or XLSX (docs/exports.md): its query is the JSON
 * operation's own query parameters (all its filters), validated as that operation validates them.
 */
import type { Db } from 'mongodb';
import type { ServiceContext } from '../context.ts';

/** A cell as written: strings as text, numbers as numbers (amounts in their JSON decimal form), null empty. */
export type ExportCell = string | number | boolean | null;

export interface ExportColumn {
  /** The JSON path of the value in the operation's answer item, dot-separated (e.g. `totals.vatPayable`). */
  readonly name: string;
  readonly description: string;
}

export interface ExportTable {
  /** The sheet's name (XLSX) and the CSV's `table` choice. */
  readonly name: string;
  readonly columns: readonly ExportColumn[];
  /** Streamed: a list's rows come from a cursor, never all in memory. */
  readonly rows: AsyncIterable<readonly ExportCell[]>;
}

/** What a dataset needs to run (the exports helper may add fields; never the request). */
export interface ExportContext {
  readonly db: Db;
  readonly tenant: string;
  readonly now: Date;
  /** The settings the domain functions take (document links, query time limits): a dataset's ServiceContext is `{ db, config, now: () => now }`. */
  readonly config: ServiceContext['config'];
  /** Told a table's row count when the dataset knows it before its rows (a list's first page): the export's progress. */
  readonly onTotal?: (table: string, total: number) => void;
  /**
   * Told where an incremental sync resumes after this file: a list read with `updatedSince` gives its first page's
   * `meta.syncFrom` (lib/db/writes-in-flight.ts), kept with the export.
   */
  readonly onSyncFrom?: (syncFrom: string) => void;
}

export interface ExportDataset {
  /** The `dataset` of an export request, e.g. `financial-docs`, `tax-summary`. */
  readonly name: string;
  /** The JSON GET operation whose query parameters this dataset takes (and whose answer its columns follow). */
  readonly operationId: string;
  readonly kind: 'list' | 'report';
  /** The tables in sheet order; a CSV holds one (the first unless the request names another). */
  tables(ctx: ExportContext, query: Readonly<Record<string, unknown>>): Promise<readonly ExportTable[]>;
}
