/**
 * The as-of reports' kept forms (docs/rollups.md "Receivables"): the open-items index
 * (`openItems`, one entry per invoice ever open), the sums of those open now (`openNowDays`) and the
 * forecast's days (`receivablesDays`).
 */
import { deleteInBatches } from '../db/delete-in-batches.ts';
import type { Binary, Collection, Db, Filter } from 'mongodb';
import { readAll } from '../db/read-all.ts';
import { replaceScoped } from '../db/replace-scoped.ts';
import { COLLECTIONS } from '../db/collections.ts';
import { mxDateString, mxMonthKey } from '../time/mexico-city.ts';
import { packDoubles, unpackDoubles } from '../db/packed-numbers.ts';
import { OPEN_MONTH } from './open-spans.ts';
import type { OpenItemMonth } from './open-item-months.ts';
import { OPEN_END, type OpenItem } from './open-items.ts';
import { receivablesDayId, type ReceivablesDay } from './receivables-day.ts';
import type { OpenSpanDoc } from './open-spans.ts';
import { openSpans } from './open-spans-repo.ts';
import { openNowDayId, type OpenNowDay } from './open-now.ts';

const items = (db: Db): Collection<OpenItem> => db.collection<OpenItem>(COLLECTIONS.openItems);
const days = (db: Db): Collection<ReceivablesDay> => db.collection<ReceivablesDay>(COLLECTIONS.receivablesDays);
const nowDays = (db: Db): Collection<OpenNowDay> => db.collection<OpenNowDay>(COLLECTIONS.openNowDays);

/**
 * A month of open items as stored: the entries' references as JSON text (their `_id`s without
 * the tenant, and the id where it differs), their clients and names once each, the numbers packed
 * (a million invoices' months are then a few MB of buffers to read, not millions of BSON fields).
 */
interface StoredOpenItemMonth {
  _id: string;
  tenant: string;
  day: string;
  month: string;
  /** JSON: per entry its document id, or [document id, id] when they differ. */
  refs: string;
  /** JSON: the distinct [client, client name] pairs. */
  parties: string;
  /** Per entry [invoice instant, party index]. */
  entries: Binary;
  /** Per span [entry index, from, to, outstanding]. */
  spans: Binary;
}
const months = (db: Db): Collection<StoredOpenItemMonth> => db.collection<StoredOpenItemMonth>(COLLECTIONS.openItemMonths);

function packMonth(m: OpenItemMonth): StoredOpenItemMonth {
  const prefix = `${m.tenant}|`;
  const parties: [string, string][] = [];
  const partyOf = new Map<string, number>();
  const nums: number[] = [];
  const refs = m.entries.map((e) => {
    const k = `${e.client}\u0000${e.clientName}`;
    let p = partyOf.get(k);
    if (p === undefined) partyOf.set(k, (p = parties.push([e.client, e.clientName]) - 1));
    nums.push(e.date, p);
    const docId = e.key.startsWith(prefix) ? e.key.slice(prefix.length) : e.key;
    return docId === e.id ? docId : [docId, e.id];
  });
  const spans: number[] = [];
  for (const s of m.spans) spans.push(s.entry, s.from, s.to, s.outstanding);
  return {
    _id: m._id,
    tenant: m.tenant,
    day: m.day,
    month: m.month,
    refs: JSON.stringify(refs),
    parties: JSON.stringify(parties),
    entries: packDoubles(nums),
    spans: packDoubles(spans),
  };
}

function unpackMonth(s: StoredOpenItemMonth): OpenItemMonth {
  const refs = JSON.parse(s.refs) as (string | [string, string])[];
  const parties = JSON.parse(s.parties) as [string, string][];
  const nums = unpackDoubles(s.entries);
  const entries = refs.map((r, i) => {
    const [docId, id] = typeof r === 'string' ? [r, r] : r;
    const [client, clientName] = parties[nums[2 * i + 1] as number] as [string, string];
    return { key: `${s.tenant}|${docId}`, id, client, clientName, date: nums[2 * i] as number };
  });
  const packed = unpackDoubles(s.spans);
  const spans: OpenItemMonth['spans'] = [];
  for (let i = 0; i + 4 <= packed.length; i += 4)
    spans.push({ entry: packed[i] as number, from: packed[i + 1] as number, to: packed[i + 2] as number, outstanding: packed[i + 3] as number });
  return { _id: s._id, tenant: s.tenant, day: s.day, month: s.month, entries, spans };
}

// Journaled: a rebuild writes a year at a time; waiting for each run's commit keeps the engine's pending pages bounded.
const durable = { ordered: false, writeConcern: { j: true } } as const;

/** An entry as a report's listed item shows it (its balance at the instant comes from the spans read). */
export type OpenItemDetail = Pick<OpenItem, '_id' | 'id' | 'uuid' | 'client' | 'clientName' | 'date' | 'currency' | 'exchangeRate'>;

/** These entries of a tenant (a report's listed items: at most its limit), by `_id`; those gone since are absent. */
export function readOpenItemsByKey(db: Db, tenant: string, keys: readonly string[], maxTimeMS: number): Promise<OpenItemDetail[]> {
  if (!keys.length) return Promise.resolve([]);
  const projection = { _id: 1, id: 1, uuid: 1, client: 1, clientName: 1, date: 1, currency: 1, exchangeRate: 1 } as const;
  return items(db)
    .find<OpenItemDetail>({ _id: { $in: [...keys] }, tenant }, { projection, maxTimeMS })
    .toArray();
}

/**
 * The open items by month a report as of instant T reads (open-item-months.ts): T's month and the
 * spans open now, of the invoice days up to T's (index tenant_month_day).
 */
export async function readOpenItemMonthsAt(db: Db, tenant: string, t: number, maxTimeMS: number): Promise<OpenItemMonth[]> {
  const found = await months(db)
    .find({ tenant, month: { $in: [mxMonthKey(t), OPEN_MONTH] }, day: { $lte: mxDateString(t) } }, { maxTimeMS, batchSize: 5000 })
    .toArray();
  return found.map(unpackMonth);
}

/** The open items by month of these invoice days (verification). */
export async function readOpenItemMonthsOfDays(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<OpenItemMonth[]> {
  return (await readAll(months(db).find({ tenant, day: { $in: [...dayList] } }, { maxTimeMS }))).map(unpackMonth);
}

/** Every day's sums of the invoices open now of a tenant (a day per invoice day with one open: at most a few thousand small documents). */
export function readOpenNowDays(db: Db, tenant: string, maxTimeMS: number): Promise<OpenNowDay[]> {
  return nowDays(db).find({ tenant }, { maxTimeMS, batchSize: 5000 }).toArray();
}

/** The days whose kept sums changed after instant T (`horizon` > T), at most `max` + 1 of them (index tenant_horizon). */
export async function openNowDaysChangedAfter(db: Db, tenant: string, t: number, max: number, maxTimeMS: number): Promise<string[]> {
  const found = await nowDays(db)
    .find<{ day: string }>({ tenant, horizon: { $gt: t } }, { projection: { _id: 0, day: 1 }, maxTimeMS })
    .limit(max + 1)
    .toArray();
  return found.map((d) => d.day);
}

/** The sums of these days (verification). */
export function readOpenNowDaysOf(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<OpenNowDay[]> {
  return nowDays(db)
    .find({ tenant, day: { $in: [...dayList] } }, { maxTimeMS })
    .toArray();
}

/**
 * The invoice days of the entries that closed after instant T (open at T, so the sums of now do
 * not hold for their days), or null when there are more than `max` of them (index
 * tenant_[client_]to_day).
 */
export async function daysClosingAfter(
  db: Db,
  tenant: string,
  t: number,
  client: string | undefined,
  max: number,
  maxTimeMS: number,
): Promise<Set<string> | null> {
  const scope: Filter<OpenItem> = client ? { tenant, client } : { tenant };
  const found = await items(db)
    .find<{ day: string }>({ ...scope, to: { $gt: t, $lt: OPEN_END } }, { projection: { _id: 0, day: 1 }, maxTimeMS })
    .limit(max + 1)
    .toArray();
  return found.length > max ? null : new Set(found.map((e) => e.day));
}

/** What an item of a report of now shows of an entry. */
export type OpenNowRead = Pick<OpenItem, 'id' | 'uuid' | 'client' | 'clientName' | 'date' | 'day' | 'currency' | 'exchangeRate' | 'spans'>;

/**
 * The first `size` entries open now emitted after `afterDay`, by invoice day (index
 * tenant_[client_]to_day: a walk of the index that stops after the page). Within a day in no
 * particular order: the caller keeps only whole days.
 */
export function readOpenNowPage(db: Db, tenant: string, client: string | undefined, afterDay: string, size: number, maxTimeMS: number): Promise<OpenNowRead[]> {
  const scope: Filter<OpenItem> = client ? { tenant, client } : { tenant };
  const projection = { _id: 0, id: 1, uuid: 1, client: 1, clientName: 1, date: 1, day: 1, currency: 1, exchangeRate: 1, spans: 1 } as const;
  return items(db)
    .find<OpenNowRead>({ ...scope, to: OPEN_END, day: { $gt: afterDay } }, { projection, maxTimeMS })
    .sort({ day: 1 })
    .limit(size)
    .toArray();
}

/** The kept days of a tenant within [from, to], in order (at most 367 documents: a period is at most 366 days). */
export function readReceivablesDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<ReceivablesDay[]> {
  if (to < from) return Promise.resolve([]);
  return days(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
}

/** The entries of the invoices emitted on these days (verification). */
export function readOpenItemsOfDays(db: Db, tenant: string, dayList: readonly string[], maxTimeMS: number): Promise<OpenItem[]> {
  return readAll(items(db).find({ tenant, day: { $in: [...dayList] } }, { maxTimeMS }));
}

/** Every day on which a tenant's kept entries say an invoice was emitted (verification: entries of days without documents). */
export async function openItemDays(db: Db, tenant: string): Promise<Set<string>> {
  const out = new Set<string>();
  for await (const e of items(db).find({ tenant }, { projection: { _id: 0, day: 1 }, batchSize: 5000 })) out.add(e.day);
  for await (const e of openSpans(db).find({ tenant }, { projection: { _id: 0, day: 1 }, batchSize: 5000 })) out.add(e.day);
  for await (const e of nowDays(db).find({ tenant }, { projection: { _id: 0, day: 1 }, batchSize: 5000 })) out.add(e.day);
  for await (const e of months(db).find({ tenant }, { projection: { _id: 0, day: 1 }, batchSize: 5000 })) out.add(e.day);
  return out;
}

/**
 * Replaces the kept days and the entries and list spans of the invoices emitted on them. Entries
 * and spans are upserted before the stale ones are removed, so a reader racing this sees an
 * entry's old or new version (of a day still marked), never none of an invoice that stays open.
 */
export async function writeReceivablesDays(
  db: Db,
  tenant: string,
  dayList: readonly string[],
  kept: readonly ReceivablesDay[],
  entries: readonly OpenItem[],
  spans: readonly OpenSpanDoc[],
  monthList: readonly OpenItemMonth[],
  open: readonly OpenNowDay[],
  maxTimeMS: number,
): Promise<void> {
  if (!dayList.length) return;
  await replaceDays(days(db), tenant, dayList, kept, receivablesDayId);
  const ofDays = { tenant, day: { $in: [...dayList] } };
  await replaceScoped(items(db), tenant, ofDays, entries, maxTimeMS);
  await replaceScoped(openSpans(db), tenant, ofDays, spans, maxTimeMS);
  await replaceScoped(months(db), tenant, ofDays, monthList.map(packMonth), maxTimeMS);
  // After the entries: a report reads the sums and then the entries of the same days.
  await replaceDays(nowDays(db), tenant, dayList, open, openNowDayId);
}

/** Replaces the documents of these days (one per day, by `_id`) and deletes those of the days without one. */
async function replaceDays<T extends { _id: string; tenant: string; day: string }>(
  coll: Collection<T>,
  tenant: string,
  dayList: readonly string[],
  docs: readonly T[],
  idOf: (tenant: string, day: string) => string,
): Promise<void> {
  const present = new Set(docs.map((k) => k.day));
  const ops = [
    ...docs.map((k) => ({ replaceOne: { filter: { _id: k._id } as Filter<T>, replacement: k, upsert: true } })),
    ...dayList.filter((d) => !present.has(d)).map((d) => ({ deleteOne: { filter: { _id: idOf(tenant, d), tenant } as Filter<T> } })),
  ];
  if (ops.length) await coll.bulkWrite(ops, durable);
}

/** Forgets a tenant's kept days, entries and list spans (a rebuild starts from nothing). */
export async function deleteReceivablesRollupsOf(db: Db, tenant: string): Promise<void> {
  await days(db).deleteMany({ tenant }, { writeConcern: { j: true } });
  await deleteInBatches(items(db), { tenant });
  await deleteInBatches(openSpans(db), { tenant });
  await deleteInBatches(months(db), { tenant });
  await nowDays(db).deleteMany({ tenant }, { writeConcern: { j: true } });
}
