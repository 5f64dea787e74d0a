/**
 * One reading shared by every gauge of a scrape, and by the scrapes of the next `reuseMs` (several
 * Prometheus servers scraping one instance cost the database one reading per period). A reading
 * in progress is shared too. `read` must not reject: it reports a failure in its value.
 */
export function reuseReading<T>(read: () => Promise<T>, reuseMs: number, now: () => number = Date.now): () => Promise<T> {
  let last: { value: Promise<T>; settledAt: number | null } | null = null;
  return () => {
    if (last && (last.settledAt === null || now() - last.settledAt < reuseMs)) return last.value;
    const entry: { value: Promise<T>; settledAt: number | null } = { value: read(), settledAt: null };
    const settled = () => {
      entry.settledAt = now();
    };
    entry.value.then(settled, settled);
    last = entry;
    return entry.value;
  };
}
