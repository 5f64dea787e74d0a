/**
 * The list's spans of the open-items index (`openSpans`, lib/analytics/open-spans.ts): the
 * invoices open at an instant T, paged in the financial-docs list's order and counted by index.
 * Open at T is one of two disjoint cases, each an equality on `month` and ranges:
 * - open now (`month` = OPEN_MONTH): `from` ≤ T;
 * - closed since: the span's document of T's month with `from` ≤ T < `to`, counted as
 *   (`from` ≤ T) − (`to` ≤ T) among that month's (a span ending by T began before it).
 * The total is then two index counts: `from` ≤ T among both months' spans, less `to` ≤ T among T's month's.
 */
import { readAll } from '../db/read-all.ts';
import type { Collection, Db, Document, Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { afterKey, sortSpec, type KeysetSort, type PageQuery } from '../shared/keyset.ts';
import { mxMonthKey } from '../time/mexico-city.ts';
import { OPEN_MONTH, type OpenSpanDoc } from './open-spans.ts';

export const openSpans = (db: Db): Collection<OpenSpanDoc> => db.collection<OpenSpanDoc>(COLLECTIONS.openSpans);

/** The list's default order (FINANCIAL_DOC_SORTS.default of lib/finance) on the spans' copy of its fields. */
const SPAN_SORT: KeysetSort = [
  { field: 'date', dir: -1 },
  { field: 'timestamp', dir: -1 },
  { field: 'docId', dir: -1 },
];

type SpanKey = Pick<OpenSpanDoc, 'date' | 'timestamp' | 'docId'>;

/** BSON's order of the values a sort key holds: missing and null, then numbers, then strings (bytewise). */
function compareBson(a: unknown, b: unknown): number {
  const rank = (v: unknown): number => (v === undefined || v === null ? 0 : typeof v === 'number' ? 1 : typeof v === 'string' ? 2 : 3);
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 1) return (a as number) - (b as number);
  if (ra === 2) return Buffer.compare(Buffer.from(a as string), Buffer.from(b as string));
  return 0;
}

/** The list's order: newest first. */
const listOrder = (x: SpanKey, y: SpanKey): number => compareBson(y.date, x.date) || compareBson(y.timestamp, x.timestamp) || compareBson(y.docId, x.docId);

/**
 * One page of the documents open at T (their `_id`s, in the list's order) and, when asked, how
 * many there are. `page.sort` is the list's, whose key (date, timestamp, _id) the spans copy.
 */
export async function openAtPage(
  db: Db,
  tenant: string,
  q: { asOf: number; client?: string },
  page: PageQuery,
  maxTimeMS: number,
): Promise<{ total: number | null; ids: unknown[] }> {
  const t = q.asOf;
  const month = mxMonthKey(t);
  const scope: Filter<OpenSpanDoc> = q.client === undefined ? { tenant } : { tenant, client: q.client };
  const after: Document | null = page.after ? afterKey(SPAN_SORT, page.after) : null;
  const walk = (filter: Document) =>
    openSpans(db)
      .find<SpanKey>(after ? { $and: [filter, after] } : filter, { maxTimeMS, projection: { _id: 0, date: 1, timestamp: 1, docId: 1 } })
      .sort(sortSpec(SPAN_SORT))
      .limit(page.skip + page.limit)
      .toArray();
  const count = (filter: Filter<OpenSpanDoc>) => openSpans(db).countDocuments(filter, { maxTimeMS });
  const [openNow, closedSince, total] = await Promise.all([
    walk({ ...scope, month: OPEN_MONTH, date: { $lte: t }, from: { $lte: t } }),
    walk({ ...scope, month, date: { $lte: t }, from: { $lte: t }, to: { $gt: t } }),
    page.count
      ? Promise.all([
          // Open now or during T's month, opened by T: two ranges of one index, counted in one command.
          count({ ...scope, month: { $in: [OPEN_MONTH, month] }, from: { $lte: t } }),
          count({ ...scope, month, to: { $lte: t } }),
        ]).then(([began, ended]) => began - ended)
      : null,
  ]);
  const merged = [...openNow, ...closedSince].sort(listOrder).slice(page.skip, page.skip + page.limit);
  return { total, ids: merged.map((s) => s.docId) };
}

/** The spans of the invoices emitted on these days (verification). */
export function readOpenSpansOfDays(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<OpenSpanDoc[]> {
  return readAll(openSpans(db).find({ tenant, day: { $in: [...dayList] } }, { maxTimeMS }));
}
