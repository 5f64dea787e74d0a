/**
 * The list's spans of the open-items index (`openSpans`, lib/analytics/open-spans.ts): the
 * invoices open at an instant T, paged in the financial-docs list's order and counted by index.
 * A stretch is stored once, in the bucket of its end (`to`'s month, or OPEN_MONTH while open now);
 * one open at T ends after T, so it lies in T's month's bucket or a later one:
 * - a page merges the walks of those buckets (each an equality on `bucket`, in the list's order,
 *   with `from` ≤ T < `to`; T's month's by its ends after T when they are few of it), read lazily:
 *   at most skip + limit spans and one batch per bucket;
 * - the total is two counts over every stretch, by index alone: `from` ≤ T, less `to` ≤ T.
 */
import { readAll } from '../db/read-all.ts';
import type { Collection, Db, Document, Filter, FindCursor } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { afterKey, sortSpec, type KeysetSort, type PageQuery } from '../shared/keyset.ts';
import { MS_PER_DAY, mxMonthKey, mxMonthRange } from '../time/mexico-city.ts';
import { monthsOf, OPEN_MONTH, type OpenSpanDoc } from './open-spans.ts';
import { OPEN_END } from './open-items.ts';

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
 * Months after T's walked whatever lies in them: a decade. Later buckets (a record dated decades on) are found one by
 * one by their ends, so a far date costs a look-up per month that holds one, not a walk per month up to it.
 */
const ENUMERATED_SPAN_MS = 3653 * MS_PER_DAY;

/** Spans read per batch of a bucket's walk: a page of the default size from one bucket in one batch. */
const WALK_BATCH = 64;

/**
 * The first `n` keys of these walks (each in the list's order) in the list's order, each walk read
 * batch by batch as the merge reaches it; the cursors are closed.
 */
async function mergeWalks(walks: FindCursor<SpanKey>[], n: number): Promise<SpanKey[]> {
  try {
    const heads = await Promise.all(walks.map((w) => w.tryNext()));
    const out: SpanKey[] = [];
    while (out.length < n) {
      let best = -1;
      for (let i = 0; i < heads.length; i++) {
        const h = heads[i];
        if (h && (best < 0 || listOrder(h, heads[best] as SpanKey) < 0)) best = i;
      }
      if (best < 0) break;
      out.push(heads[best] as SpanKey);
      heads[best] = await (walks[best] as FindCursor<SpanKey>).tryNext();
    }
    return out;
  } finally {
    await Promise.all(walks.map((w) => w.close()));
  }
}

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
  const monthEnd = mxMonthRange(month).endExclusive;
  const scope: Filter<OpenSpanDoc> = q.client === undefined ? { tenant } : { tenant, client: q.client };
  const after: Document | null = page.after ? afterKey(SPAN_SORT, page.after) : null;
  const count = (filter: Filter<OpenSpanDoc>) => openSpans(db).countDocuments(filter, { maxTimeMS });
  const [began, ended, closingLater, inBucket, last] = await Promise.all([
    count({ ...scope, from: { $lte: t } }),
    count({ ...scope, to: { $lte: t } }),
    // T's month's bucket: its stretches that end after T, and all of them.
    count({ ...scope, to: { $gt: t, $lt: monthEnd } }),
    count({ ...scope, bucket: month }),
    // The last end of a closed stretch of this scope (a record may be dated after today): the last bucket walked.
    openSpans(db)
      .find<{ to: number }>({ ...scope, to: { $lt: OPEN_END } }, { maxTimeMS, projection: { _id: 0, to: 1 } })
      .sort({ to: -1 })
      .limit(1)
      .next(),
  ]);
  const open = began - ended;
  const total = page.count ? open : null;
  // Nothing open then, or a page past the last: nothing is walked (T years before the data would walk every month since).
  if (open <= page.skip) return { total, ids: [] };
  const wanted = page.skip + page.limit;
  const walk = (filter: Filter<OpenSpanDoc>): FindCursor<SpanKey> => {
    const openThen = { ...filter, date: { $lte: t }, from: { $lte: t } };
    return openSpans(db)
      .find<SpanKey>(after ? { $and: [openThen, after] } : openThen, { maxTimeMS, projection: { _id: 0, date: 1, timestamp: 1, docId: 1 } })
      .sort(sortSpec(SPAN_SORT))
      .limit(wanted)
      .batchSize(Math.min(wanted, WALK_BATCH));
  };
  const walks: FindCursor<SpanKey>[] = [];
  // In T's month's bucket only the stretches ending after T match: walked in order when they are many of it (a page
  // reads about wanted × inBucket / closingLater), else read by their end (closingLater of them, sorted by the database). T late in its
  // month leaves few: the walk in order read the whole bucket to find them.
  if (closingLater > 0)
    walks.push(
      closingLater * closingLater < wanted * inBucket ? walk({ ...scope, to: { $gt: t, $lt: monthEnd } }) : walk({ ...scope, bucket: month, to: { $gt: t } }),
    );
  // The later months' stretches all end after T.
  if (last && last.to >= monthEnd) {
    const months = monthsOf(monthEnd, Math.min(last.to + 1, monthEnd + ENUMERATED_SPAN_MS));
    for (let next = mxMonthRange(months[months.length - 1] as string).endExclusive; next <= last.to;) {
      const found = await openSpans(db)
        .find<{ to: number }>({ ...scope, to: { $gte: next, $lt: OPEN_END } }, { maxTimeMS, projection: { _id: 0, to: 1 } })
        .sort({ to: 1 })
        .limit(1)
        .next();
      if (!found) break;
      const month = mxMonthKey(found.to);
      months.push(month);
      next = mxMonthRange(month).endExclusive;
    }
    for (const m of months) walks.push(walk({ ...scope, bucket: m }));
  }
  walks.push(walk({ ...scope, bucket: OPEN_MONTH }));
  const keys = await mergeWalks(walks, wanted);
  return { total, ids: keys.slice(page.skip).map((s) => s.docId) };
}

/** The spans of the invoices emitted on these days (verification). */
export function readOpenSpansOfDays(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<OpenSpanDoc[]> {
  return readAll(openSpans(db).find({ tenant, day: { $in: [...dayList] } }, { maxTimeMS }));
}
