/**
 * Dispatch-to-bill's kept days and unbilled index (docs/rollups.md "Dispatch-to-bill"):
 * `dispatchToBillDays` (tenant × day × part) and `dispatchToBillUnbilled` (one entry per delivered
 * trip without a valid invoice), and the two reads that turn an invoice write into the days of
 * the trips it is linked to.
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import { readAll } from '../db/read-all.ts';
import { replaceScoped } from '../db/replace-scoped.ts';
import type { AnyBulkWriteOperation, Binary, Collection, Db, Document, Filter } from 'mongodb';
import { packDoubles, unpackDoubles } from '../db/packed-numbers.ts';
import { COLLECTIONS, financialDocs, trips } from '../db/collections.ts';
import { mxAddDays, mxDateString, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import type { DispatchToBillDayPart, DispatchToBillGroup, UnbilledEntry } from './dispatch-to-bill-day.ts';

/**
 * A group as stored: its lags, and the pre-billed trips' lags, as packed doubles (the trip ids as
 * one JSON string). A year of a large tenant holds a lag per billed trip: one buffer per group for
 * the engine and the driver to decode, not an array element per trip.
 */
type StoredGroup = Omit<DispatchToBillGroup, 'lags' | 'pre'> & { lags: Binary; preT: string; preL: Binary };
type StoredDayPart = Omit<DispatchToBillDayPart, 'groups'> & { groups: StoredGroup[] };

const stored = (p: DispatchToBillDayPart): StoredDayPart => ({
  ...p,
  groups: p.groups.map(({ lags, pre, ...g }) => ({
    ...g,
    lags: packDoubles(lags),
    preT: JSON.stringify(pre.map((x) => x.t)),
    preL: packDoubles(pre.map((x) => x.l)),
  })),
});

const unstored = (p: StoredDayPart): DispatchToBillDayPart => ({
  ...p,
  groups: p.groups.map(({ lags, preT, preL, ...g }) => {
    const l = unpackDoubles(preL);
    return { ...g, lags: Array.from(unpackDoubles(lags)), pre: (JSON.parse(preT) as string[]).map((t, i) => ({ t, l: l[i] as number })) };
  }),
});

const days = (db: Db): Collection<StoredDayPart> => db.collection<StoredDayPart>(COLLECTIONS.dispatchToBillDays);
const unbilled = (db: Db): Collection<UnbilledEntry> => db.collection<UnbilledEntry>(COLLECTIONS.dispatchToBillUnbilled);

/** The kept parts of a tenant's days within [from, to], in order (a period: at most 366 days). */
export async function readDispatchToBillDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<DispatchToBillDayPart[]> {
  const parts = await days(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1, part: 1 })
    .toArray();
  return parts.map(unstored);
}

/**
 * Replaces the kept parts of these days (a day nothing counts on keeps none): the parts upserted,
 * then the days' other parts removed in one statement (the days need not be consecutive).
 */
export async function writeDispatchToBillDays(db: Db, tenant: string, dayList: readonly string[], parts: readonly DispatchToBillDayPart[]): Promise<void> {
  if (!dayList.length) return;
  const wanted = new Set(dayList);
  const own = parts.filter((p) => wanted.has(p.day));
  const ops: AnyBulkWriteOperation<StoredDayPart>[] = own.map((p) => ({ replaceOne: { filter: { _id: p._id }, replacement: stored(p), upsert: true } }));
  ops.push({ deleteMany: { filter: { tenant, day: { $in: [...wanted] }, _id: { $nin: own.map((p) => p._id) } } } });
  await days(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

/**
 * The entries delivered on these days, by their `offload` (an entry's day is its offload's Mexico
 * City day): one range per stretch of consecutive days, each with the tenant, so each is a range of
 * the tenant_offload_trip index.
 */
function deliveredOn(tenant: string, dayList: readonly string[]): Filter<UnbilledEntry> {
  const stretches: [string, string][] = [];
  for (const day of [...new Set(dayList)].sort()) {
    const last = stretches[stretches.length - 1];
    if (last && mxAddDays(last[1], 1) === day) last[1] = day;
    else stretches.push([day, day]);
  }
  const ranges = stretches.map(([first, last]) => ({ $gte: mxDayStart(first), $lte: mxDayEnd(last) }));
  return ranges.length === 1 ? { tenant, offload: ranges[0] } : { tenant, $or: ranges.map((offload) => ({ tenant, offload })) };
}

/**
 * Replaces the unbilled entries delivered on these days (a run of recomputed days; not necessarily
 * consecutive) by these: only those that changed are written, those of the days no longer
 * unbilled removed by id (entries of other days between them are left alone). Not an upsert of
 * every entry and a delete of the rest by `$nin` of the kept ids: a day of 20,000 deliveries cost
 * the engine 5.6 CPU-s that way (docs/benchmarks.md, deliveries).
 */
export async function writeUnbilledEntries(
  db: Db,
  tenant: string,
  dayList: readonly string[],
  entries: readonly UnbilledEntry[],
  maxTimeMS: number,
): Promise<void> {
  if (!dayList.length) return;
  const wanted = new Set(dayList);
  await replaceScoped(
    unbilled(db),
    tenant,
    deliveredOn(tenant, dayList),
    entries.filter((e) => wanted.has(e.day)),
    maxTimeMS,
  );
}

/**
 * The first `limit` unbilled trips delivered in [start, end] (for one client or all), oldest
 * delivery first then trip id as the report orders them (in JS: no string collation of the
 * database has to agree): an indexed range, plus every entry tied at the last instant read.
 */
export async function readUnbilledPage(
  db: Db,
  tenant: string,
  q: { start: number; end: number; client?: string },
  limit: number,
  maxTimeMS: number,
): Promise<UnbilledEntry[]> {
  if (limit <= 0 || q.end < q.start) return [];
  const scope = { tenant, ...(q.client !== undefined ? { client: q.client } : {}) };
  const first = await unbilled(db)
    .find({ ...scope, offload: { $gte: q.start, $lte: q.end } }, { maxTimeMS })
    .sort({ offload: 1, tripId: 1 })
    .limit(limit)
    .toArray();
  const last = first[first.length - 1];
  if (!last || first.length < limit) return sortUnbilled(first);
  const tied = await unbilled(db)
    .find({ ...scope, offload: last.offload }, { maxTimeMS })
    .toArray();
  return sortUnbilled([...first.filter((e) => e.offload < last.offload), ...tied]).slice(0, limit);
}

const sortUnbilled = (xs: UnbilledEntry[]): UnbilledEntry[] =>
  xs.sort((a, b) => a.offload - b.offload || (a.tripId < b.tripId ? -1 : a.tripId > b.tripId ? 1 : 0));

/** The unbilled entries delivered in [start, end] (verification of a run of days). */
export function readUnbilledIn(db: Db, tenant: string, range: { start: number; end: number }, maxTimeMS: number): Promise<UnbilledEntry[]> {
  return readAll(
    unbilled(db)
      .find({ tenant, offload: { $gte: range.start, $lte: range.end } }, { maxTimeMS })
      .sort({ offload: 1, tripId: 1 }),
  );
}

/** The days a tenant's kept parts and unbilled entries hold (verification). */
export async function keptDispatchToBillDays(db: Db, tenant: string, maxTimeMS: number): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const p of days(db)
    .find({ tenant }, { projection: { _id: 0, day: 1 }, maxTimeMS })
    .sort({ day: 1, part: 1 }))
    out.add(p.day);
  for await (const e of unbilled(db)
    .find({ tenant }, { projection: { _id: 0, day: 1 }, maxTimeMS })
    .sort({ offload: 1, tripId: 1 }))
    out.add(e.day);
  return out;
}

/** Forgets a tenant's kept days and entries (a rebuild marks every day first). */
export async function deleteDispatchToBillOf(db: Db, tenant: string): Promise<void> {
  await days(db).deleteMany({ tenant }, { writeConcern: { j: true } });
  await deleteInBatches(unbilled(db), { tenant });
}

/** The ids of a tenant's financial documents dated within [fromDay, toDay] (index tenant_date). */
export async function documentIdsDated(db: Db, tenant: string, fromDay: string, toDay: string, maxTimeMS: number): Promise<string[]> {
  const rows = await readAll(
    financialDocs(db).find({ company: tenant, date: { $gte: mxDayStart(fromDay), $lte: mxDayEnd(toDay) } }, { projection: { _id: 1 }, maxTimeMS }),
  );
  return rows.map((r) => String(r._id));
}

const unloadsProjection: Document = { $project: { _id: 0, u: { $map: { input: { $ifNull: ['$shipments', []] }, as: 'l', in: '$$l.unloadDate' } } } };

function addUnloadDays(into: Set<string>, u: unknown): void {
  if (!Array.isArray(u)) return;
  for (const x of u) if (typeof x === 'number' && Number.isFinite(x)) into.add(mxDateString(x));
}

/** The days the legs of the tenant's trips linked to these documents were unloaded on (index tenant_idfinan). */
export async function unloadDaysOfTripsLinkedTo(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<Set<string>> {
  const out = new Set<string>();
  for (let i = 0; i < ids.length; i += 500) {
    const cursor = trips(db).aggregate<{ u: unknown }>([{ $match: { company: tenant, idFinan: { $in: ids.slice(i, i + 500) } } }, unloadsProjection], {
      maxTimeMS,
    });
    for await (const r of cursor) addUnloadDays(out, r.u);
  }
  return out;
}
