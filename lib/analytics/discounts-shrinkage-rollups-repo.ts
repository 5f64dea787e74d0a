/**
 * The discounts and shrinkage audit's kept forms (docs/rollups.md "Discounts and shrinkage"):
 * `discountDays` and `shrinkageDays` (one document per tenant and day) and `shrinkageFindings`
 * (one per leg beyond its tolerance).
 */
import { readAll } from '../db/read-all.ts';
import { deleteInBatches } from '../db/delete-in-batches.ts';
import { putChanged } from '../db/replace-scoped.ts';
import type { Collection, Db, Filter } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { discountDayId, type KeptDiscountDay } from './discount-days.ts';
import { shrinkageDayId, type KeptShrinkageDay, type ShrinkageFinding } from './shrinkage-days.ts';

const discountDays = (db: Db): Collection<KeptDiscountDay> => db.collection<KeptDiscountDay>(COLLECTIONS.discountDays);
const shrinkageDays = (db: Db): Collection<KeptShrinkageDay> => db.collection<KeptShrinkageDay>(COLLECTIONS.shrinkageDays);
const findings = (db: Db): Collection<ShrinkageFinding> => db.collection<ShrinkageFinding>(COLLECTIONS.shrinkageFindings);

/** The kept days of a tenant within [from, to], in order (a period: at most 366). */
export function readDiscountDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<KeptDiscountDay[]> {
  return discountDays(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** Replaces these kept days, those only (a day without a non-cancelled invoice is removed). */
export async function writeDiscountDays(db: Db, tenant: string, days: readonly string[], computed: readonly KeptDiscountDay[]): Promise<void> {
  if (!days.length) return;
  // The documents of a run's span may date days outside the run (a rebuild's run skips days): those are not written.
  const wanted = new Set(days);
  const kept = computed.filter((k) => wanted.has(k.day));
  const keptDays = new Set(kept.map((k) => k.day));
  const ops = [
    ...kept.map((k) => ({ replaceOne: { filter: { _id: k._id }, replacement: k, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: discountDayId(tenant, d), tenant } } })),
  ];
  await discountDays(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

export function readShrinkageDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<KeptShrinkageDay[]> {
  return shrinkageDays(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** Findings written (or ids deleted) per command: a run's findings go in batches, never in one message. */
export const FINDINGS_PER_WRITE = 1000;

/**
 * Stores a tenant's findings as computed (those of days being recomputed; the days are written after them:
 * writeShrinkageDays): only those not stored with the same content are written, a new one inserted. Not journaled:
 * the days' journaled write after them makes them durable too.
 */
export async function putFindings(db: Db, tenant: string, found: readonly ShrinkageFinding[], maxTimeMS: number): Promise<void> {
  await putChanged(findings(db), tenant, found, maxTimeMS, { journaled: false });
}

/**
 * Replaces the kept days of a run of consecutive days, once their findings are put (putFindings):
 * the findings of those days not among `foundIds` are removed (their ids read by the index on
 * tenant and day, compared here: a `$nin` of the run's ids cost the engine a list scan per
 * finding), then the days are written last, journaled, so a day kept under the current
 * fingerprint always has its findings written (the journal and the engine's store commit writes
 * in order: the findings' writes before it are durable with it).
 */
export async function writeShrinkageDays(
  db: Db,
  tenant: string,
  days: readonly string[],
  kept: readonly KeptShrinkageDay[],
  foundIds: ReadonlySet<string>,
): Promise<void> {
  if (!days.length) return;
  const gone: string[] = [];
  const cursor = findings(db).find(
    { tenant, day: { $gte: days[0] as string, $lte: days[days.length - 1] as string } },
    { projection: { _id: 1, day: 1 }, batchSize: 5000 },
  );
  const inRun = new Set(days);
  for await (const f of cursor) if (inRun.has(f.day) && !foundIds.has(f._id)) gone.push(f._id);
  for (let i = 0; i < gone.length; i += FINDINGS_PER_WRITE) await findings(db).deleteMany({ _id: { $in: gone.slice(i, i + FINDINGS_PER_WRITE) }, tenant });
  const keptDays = new Set(kept.map((k) => k.day));
  const ops = [
    ...kept.map((k) => ({ replaceOne: { filter: { _id: k._id }, replacement: k, upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: shrinkageDayId(tenant, d), tenant } } })),
  ];
  await shrinkageDays(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

/** The days a tenant keeps of either part, with the delivery days' fingerprints (verify: every kept day is compared). */
export async function keptDayNames(
  db: Db,
  tenant: string,
  maxTimeMS: number,
): Promise<{ discount: string[]; shrinkage: { day: string; fingerprint: string }[]; findings: string[] }> {
  const discount: string[] = [];
  for await (const d of discountDays(db).find({ tenant }, { projection: { _id: 0, day: 1 }, maxTimeMS, batchSize: 5000 })) discount.push(d.day);
  const shrinkage: { day: string; fingerprint: string }[] = [];
  for await (const d of shrinkageDays(db).find({ tenant }, { projection: { _id: 0, day: 1, fingerprint: 1 }, maxTimeMS, batchSize: 5000 }))
    shrinkage.push({ day: d.day, fingerprint: d.fingerprint });
  const found = new Set<string>();
  for await (const f of findings(db).find({ tenant }, { projection: { _id: 0, day: 1 }, maxTimeMS, batchSize: 5000 })) found.add(f.day);
  return { discount, shrinkage, findings: [...found] };
}

const periodFilter = (tenant: string, from: string, to: string, client: string | undefined): Filter<ShrinkageFinding> => ({
  tenant,
  ...(client !== undefined ? { client } : {}),
  day: { $gte: from, $lte: to },
});

/** Every finding of a tenant's days within [from, to] (one client when given): a period with few of them. */
export function readFindings(db: Db, tenant: string, from: string, to: string, client: string | undefined, maxTimeMS: number): Promise<ShrinkageFinding[]> {
  return readAll(
    findings(db)
      .find(periodFilter(tenant, from, to, client), { maxTimeMS })
      .sort({ day: 1 }),
  );
}

/** The first `limit` findings of the period in the report's order (largest recoverable value first: worstFirst). */
export function readWorstFindings(
  db: Db,
  tenant: string,
  from: string,
  to: string,
  client: string | undefined,
  limit: number,
  maxTimeMS: number,
): Promise<ShrinkageFinding[]> {
  return findings(db)
    .find(periodFilter(tenant, from, to, client), { maxTimeMS })
    .sort({ valueC: -1, pct: -1, legId: 1, tripId: 1 })
    .limit(limit)
    .toArray();
}

/**
 * Forgets a tenant's kept days and findings (a rebuild marks every day first): those of each
 * range of `spans` ([from, to] days) in turn, then whatever is left, so no delete has the engine
 * gather a whole history's findings at once.
 */
export async function deleteDiscountsShrinkageOf(db: Db, tenant: string, spans: readonly (readonly [string, string])[] = []): Promise<void> {
  const durable = { writeConcern: { j: true } } as const;
  for (const [from, to] of spans) {
    const day = { $gte: from, $lte: to };
    await Promise.all([
      discountDays(db).deleteMany({ tenant, day }, durable),
      shrinkageDays(db).deleteMany({ tenant, day }, durable),
      findings(db).deleteMany({ tenant, day }, durable),
    ]);
  }
  await Promise.all([
    discountDays(db).deleteMany({ tenant }, durable),
    shrinkageDays(db).deleteMany({ tenant }, durable),
    deleteInBatches(findings(db), { tenant }),
  ]);
}
