/**
 * Dirty marks of the totals kept on write (docs/rollups.md). A writer marks the days a write
 * touches *before* it writes and again *after* (each mark bumps `seq`); whoever recomputes a day
 * reads the mark, recomputes from the documents, and deletes the mark only if `seq` is unchanged.
 * So a mark disappears only after a recompute that read every write it stands for: a crash
 * between mark and write, a failed write, or a write racing a recompute leaves the day marked,
 * and the next reader or the drain recomputes it. Area-free: a mark names a source collection
 * and a Mexico City day; the areas that keep totals over that source read the marks.
 */
import type { Collection, Db, Filter } from 'mongodb';
import type { IndexSpecs } from './indexes.ts';
import { groupBy } from '../shared/group-by.ts';

export const ROLLUP_MARKS = 'rollupMarks';

export interface RollupMark {
  /** `${tenant}|${source}|${day}`. */
  _id: string;
  tenant: string;
  source: string;
  /** 'YYYY-MM-DD', Mexico City. */
  day: string;
  seq: number;
  /** The last time it was marked. */
  at: Date;
  /** When it was first marked (since its last recompute); absent on marks written before it was kept. */
  first?: Date;
}

/**
 * Which marks a background drain takes: those not marked again since `quietBefore` (a bulk write
 * still marking the same days is recomputed once it is done, not after each of its batches), and
 * those first marked before `waitedBefore` (a day written without pause is not put off for ever).
 * Reports settle their own period on read, so a mark left for later never changes an answer.
 */
export interface DrainWindow {
  quietBefore: Date;
  waitedBefore: Date;
  /** Tenants whose recompute failed lately: their marks wait for a retry (lib/rollups/rollup-worker.ts). */
  skipTenants?: readonly string[];
}

export const ROLLUP_MARK_INDEXES: IndexSpecs = {
  [ROLLUP_MARKS]: [
    { key: { tenant: 1, source: 1, day: 1 }, name: 'tenant_source_day' },
    // The drain's probe: marks of a source, any tenant.
    { key: { source: 1, tenant: 1, day: 1 }, name: 'source_tenant_day' },
  ],
};

const marks = (db: Db): Collection<RollupMark> => db.collection<RollupMark>(ROLLUP_MARKS);
const markId = (tenant: string, source: string, day: string): string => `${tenant}|${source}|${day}`;

/** Marks these days of a tenant's source dirty (upsert, bumping seq): before a write and again after it. */
export function markDays(db: Db, tenant: string, source: string, days: Iterable<string>): Promise<void> {
  return markSourcesDays(db, tenant, [source], days);
}

/** markDays for several sources at once (one round trip): a write whose days several kinds of totals read. */
export async function markSourcesDays(db: Db, tenant: string, sources: readonly string[], days: Iterable<string>): Promise<void> {
  const unique = [...new Set(days)];
  if (!unique.length || !sources.length) return;
  const at = new Date();
  await marks(db).bulkWrite(
    sources.flatMap((source) =>
      unique.map((day) => ({
        updateOne: {
          filter: { _id: markId(tenant, source, day) },
          update: { $inc: { seq: 1 }, $set: { tenant, source, day, at }, $setOnInsert: { first: at } },
          upsert: true,
        },
      })),
    ),
    { ordered: false },
  );
}

/** The marked days of a tenant's source within [fromDay, toDay] (inclusive), at most `limit`, oldest day first. */
export async function markedDays(db: Db, tenant: string, source: string, fromDay: string, toDay: string, limit: number): Promise<RollupMark[]> {
  return marks(db)
    .find({ tenant, source, day: { $gte: fromDay, $lte: toDay } })
    .sort({ day: 1 })
    .limit(limit)
    .toArray();
}

/** The marks a drain takes now (DrainWindow). */
const ripe = (window: DrainWindow): Filter<RollupMark> => ({
  $or: [{ at: { $lt: window.quietBefore } }, { first: { $lt: window.waitedBefore } }],
  ...(window.skipTenants?.length ? { tenant: { $nin: [...window.skipTenants] } } : {}),
});

/**
 * Whether a drain would take any mark now, of any source and tenant. The worker's probe: one read
 * a pass, not one per kind and source, while the service is idle or an import is still marking.
 */
export async function anyRipeMarks(db: Db, window: DrainWindow): Promise<boolean> {
  return (await marks(db).findOne(ripe(window), { projection: { _id: 1 } })) !== null;
}

/** Marks of a source, any tenant (the drain's probe), at most `limit`; with a window, only those it lets through. */
export async function someMarks(db: Db, source: string, limit: number, window?: DrainWindow): Promise<RollupMark[]> {
  const filter = window ? { source, ...ripe(window) } : { source };
  return marks(db).find(filter).sort({ tenant: 1, day: 1 }).limit(limit).toArray();
}

/** Marks grouped by tenant, each tenant's in the order given: a drain settles them tenant by tenant. */
export const marksByTenant = (list: readonly RollupMark[]): Map<string, RollupMark[]> => groupBy(list, (m) => m.tenant);

/** Deletes the marks whose seq is still the one read: a write since then keeps its mark. */
export async function clearMarks(db: Db, read: readonly Pick<RollupMark, '_id' | 'seq'>[]): Promise<void> {
  if (!read.length) return;
  await marks(db).bulkWrite(
    read.map((m) => ({ deleteOne: { filter: { _id: m._id, seq: m.seq } } })),
    { ordered: false },
  );
}

/** How many marks are outstanding (progress of a rebuild, the drain's health). */
export function countMarks(db: Db, source: string): Promise<number> {
  return marks(db).countDocuments({ source });
}
