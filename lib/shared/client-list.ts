/**
 * A report's per-client lists: ordered so that the first ones matter most, and capped by the
 * report's `limit` in an answer (every answer is bounded whatever the number of clients), whole
 * in an export's file.
 */

/** How a report is computed: for an answer (lists capped by `limit`), or for an export, whose file holds every client. */
export interface ReportOptions {
  /** Read every document even when the kept totals are there (the reference the differential tests compare with). */
  fromDocuments?: boolean;
  /** List every client (an export's file), not the first `limit`. */
  everyClient?: boolean;
}

/** The first `limit` items of an ordered list, with how many there are (spec: `total`, `listed`, `limit`, `data`). */
export interface ClientList<T> {
  total: number;
  listed: number;
  limit: number;
  data: T[];
}

/** A per-client list (already ordered) as an answer shows it: its first `limit` items, or all of them for an export. */
export function clientList<T>(items: readonly T[], limit: number, opts: ReportOptions): ClientList<T> {
  const data = opts.everyClient ? [...items] : items.slice(0, limit);
  return { total: items.length, listed: data.length, limit: opts.everyClient ? items.length : limit, data };
}

/** Largest first by each key in turn, then by client RFC: a total order for a per-client list. */
export const largestFirst =
  <T extends { client: string }>(...keys: ((x: T) => number)[]) =>
  (a: T, b: T): number => {
    for (const key of keys) {
      const d = key(b) - key(a);
      if (d !== 0) return d;
    }
    return a.client < b.client ? -1 : a.client > b.client ? 1 : 0;
  };
