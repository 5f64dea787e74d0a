/**
 * Unit economics' days kept on write and their months (docs/rollups.md): one document per tenant
 * and day (`day`), and per tenant and month (`month`, no `day`), in `unitEconomicsRollups`.
 */
import { Binary, type Collection, type Db } from 'mongodb';
import { deleteChunked, readChunked, writeChunked, type ChunkedCollection, type ChunkedPart } from '../db/chunked-document.ts';
import { COLLECTIONS } from '../db/collections.ts';
import { unitEconomicsDayId, type GroupTable, type KmTable, type UnitEconomicsDay, type UnitMonthTables } from './unit-economics-day.ts';
import { unitEconomicsMonthId, type UnitEconomicsMonth } from './unit-economics-month.ts';

/** What a day holds that is stored packed. */
type Packed = Pick<UnitEconomicsDay, 'units' | 'rows' | 'strings' | 'pairs' | 'costs' | 'vehiclePlates'>;
/**
 * A day as stored: its number arrays as little-endian binary, its strings, pairs and costs as
 * JSON text (one JSON.parse each costs a fraction of as many BSON elements decoded one by one).
 */
type Stored<T extends Packed> = Omit<T, keyof Packed> & { units: Binary; rows: Binary; strings: string; pairs: string; costs: string; vehiclePlates: string };
type StoredUnitEconomicsDay = Stored<UnitEconomicsDay>;
/** A month's head as stored: its parts are chunked documents (lib/db/chunked-document.ts). */
type MonthHead = Pick<UnitEconomicsMonth, '_id' | 'tenant' | 'month' | 'version'>;
/** A month as a report without filters reads it: its strings, costs and tables, not its combinations. */
export type UnitEconomicsMonthTables = Omit<UnitEconomicsMonth, 'units' | 'rows' | 'pairs'>;

const rollups = (db: Db): Collection<StoredUnitEconomicsDay> => db.collection<StoredUnitEconomicsDay>(COLLECTIONS.unitEconomicsRollups);
/**
 * Months are chunked (lib/db/chunked-document.ts): at 1M/1M a month is 12.5 MB, near MongoDB's
 * 16 MB document limit, and a larger carrier's would pass it. Its parts: `labels` (strings, costs
 * and vehicles' plates: every reader's), `combinations` (a report with filters) and `tables` (one without).
 */
const monthRollups = (db: Db): ChunkedCollection => db.collection(COLLECTIONS.unitEconomicsRollups);

/** Typed arrays use the platform's byte order; every platform Node runs the service on is little-endian, checked once. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** An array's numbers as little-endian bytes (a copy). */
function littleEndian(a: Int32Array | Float64Array, width: 4 | 8): Uint8Array {
  if (LITTLE_ENDIAN) return new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice();
  const bytes = new DataView(new ArrayBuffer(a.length * width));
  a.forEach((v, i) => (width === 4 ? bytes.setInt32(i * 4, v, true) : bytes.setFloat64(i * 8, v, true)));
  return new Uint8Array(bytes.buffer);
}

const packed = (a: Int32Array | Float64Array, width: 4 | 8): Binary => new Binary(littleEndian(a, width));

/** A copy of stored bytes in an aligned buffer of their own (a stored array is read once, then dropped). */
function bytesOf(b: Binary | Uint8Array, width: 4 | 8): ArrayBuffer {
  const bytes = b instanceof Uint8Array ? b : b.buffer.subarray(0, b.position);
  if (bytes.length % width) throw new Error(`unitEconomicsRollups: a packed array of ${bytes.length} bytes is not made of ${width}-byte numbers`);
  // new Uint8Array(x) copies (a Buffer's slice() would share the pool's memory).
  const copy = new Uint8Array(bytes);
  if (!LITTLE_ENDIAN) {
    const v = new DataView(copy.buffer);
    for (let i = 0; i < copy.length; i += width)
      if (width === 4) v.setInt32(i, v.getInt32(i, true));
      else v.setFloat64(i, v.getFloat64(i, true));
  }
  return copy.buffer;
}

const stored = <T extends Packed>(d: T): Stored<T> => ({
  ...d,
  units: packed(d.units, 4),
  rows: packed(d.rows, 8),
  strings: JSON.stringify(d.strings),
  pairs: JSON.stringify(d.pairs),
  costs: JSON.stringify(d.costs),
  vehiclePlates: JSON.stringify(d.vehiclePlates),
});
const unpacked = <T extends Packed>(d: Stored<T>): T =>
  ({
    ...d,
    units: new Int32Array(bytesOf(d.units, 4)),
    rows: new Float64Array(bytesOf(d.rows, 8)),
    strings: JSON.parse(d.strings) as UnitEconomicsDay['strings'],
    pairs: JSON.parse(d.pairs) as UnitEconomicsDay['pairs'],
    costs: JSON.parse(d.costs) as UnitEconomicsDay['costs'],
    vehiclePlates: JSON.parse(d.vehiclePlates) as UnitEconomicsDay['vehiclePlates'],
  }) as T;

const GROUP_GROUPINGS = ['client', 'vehicle', 'driver', 'route'] as const;
const KM_GROUPINGS = ['kmClient', 'kmDriver', 'kmRoute'] as const;
const GROUP_FIELDS = ['keys', 'labels', 'sums'] as const;
const KM_FIELDS = ['start', 'vehicles', 'kmM'] as const;
const MONTH_PARTS = { tables: ['labels', 'tables'], combinations: ['labels', 'combinations'], whole: ['labels', 'combinations', 'tables'] } as const;

/** A month's parts: every table's array under `grouping.field`, packed. */
function monthParts(m: UnitEconomicsMonth): Record<(typeof MONTH_PARTS.whole)[number], ChunkedPart> {
  const t = m.tables;
  const tables: ChunkedPart = { rows: String(t.rows), pending: JSON.stringify(t.pending) };
  for (const g of GROUP_GROUPINGS) for (const f of GROUP_FIELDS) tables[`${g}.${f}`] = littleEndian(t[g][f], f === 'sums' ? 8 : 4);
  for (const g of KM_GROUPINGS) for (const f of KM_FIELDS) tables[`${g}.${f}`] = littleEndian(t[g][f], f === 'kmM' ? 8 : 4);
  return {
    labels: { strings: JSON.stringify(m.strings), costs: JSON.stringify(m.costs), vehiclePlates: JSON.stringify(m.vehiclePlates) },
    combinations: { units: littleEndian(m.units, 4), rows: littleEndian(m.rows, 8), pairs: JSON.stringify(m.pairs) },
    tables,
  };
}

function field<K extends 'b' | 's'>(part: ChunkedPart | undefined, name: string, kind: K): K extends 'b' ? Uint8Array : string {
  const v = part?.[name];
  if (kind === 'b' ? !(v instanceof Uint8Array) : typeof v !== 'string') throw new Error(`unitEconomicsRollups: a month's ${name} is missing`);
  return v as K extends 'b' ? Uint8Array : string;
}

const labelsOf = (p: ChunkedPart | undefined): Pick<UnitEconomicsMonth, 'strings' | 'costs' | 'vehiclePlates'> => ({
  strings: JSON.parse(field(p, 'strings', 's')) as UnitEconomicsMonth['strings'],
  costs: JSON.parse(field(p, 'costs', 's')) as UnitEconomicsMonth['costs'],
  vehiclePlates: JSON.parse(field(p, 'vehiclePlates', 's')) as UnitEconomicsMonth['vehiclePlates'],
});

const combinationsOf = (p: ChunkedPart | undefined): Pick<UnitEconomicsMonth, 'units' | 'rows' | 'pairs'> => ({
  units: new Int32Array(bytesOf(field(p, 'units', 'b'), 4)),
  rows: new Float64Array(bytesOf(field(p, 'rows', 'b'), 8)),
  pairs: JSON.parse(field(p, 'pairs', 's')) as UnitEconomicsMonth['pairs'],
});

function tablesOf(p: ChunkedPart | undefined): UnitMonthTables {
  const ints = (name: string): Int32Array => new Int32Array(bytesOf(field(p, name, 'b'), 4));
  const doubles = (name: string): Float64Array => new Float64Array(bytesOf(field(p, name, 'b'), 8));
  const group = (g: string): GroupTable => ({ keys: ints(`${g}.keys`), labels: ints(`${g}.labels`), sums: doubles(`${g}.sums`) });
  const km = (g: string): KmTable => ({ start: ints(`${g}.start`), vehicles: ints(`${g}.vehicles`), kmM: doubles(`${g}.kmM`) });
  return {
    rows: Number(field(p, 'rows', 's')),
    ...(Object.fromEntries(GROUP_GROUPINGS.map((g) => [g, group(g)])) as Pick<UnitMonthTables, (typeof GROUP_GROUPINGS)[number]>),
    ...(Object.fromEntries(KM_GROUPINGS.map((g) => [g, km(g)])) as Pick<UnitMonthTables, (typeof KM_GROUPINGS)[number]>),
    pending: JSON.parse(field(p, 'pending', 's')) as UnitMonthTables['pending'],
  };
}

const headOf = (h: MonthHead): MonthHead => ({ _id: h._id, tenant: h.tenant, month: h.month, version: h.version });

/** The kept days of a tenant within [from, to], in order (a report's period: at most 366 documents). */
export async function readUnitEconomicsDays(db: Db, tenant: string, from: string, to: string, maxTimeMS: number): Promise<UnitEconomicsDay[]> {
  const days = await rollups(db)
    .find({ tenant, day: { $gte: from, $lte: to } }, { maxTimeMS })
    .sort({ day: 1 })
    .toArray();
  return days.map((d) => unpacked<UnitEconomicsDay>(d));
}

/** The days a tenant's kept form holds (their names only). */
export async function unitEconomicsDayNames(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  const days = await rollups(db)
    .find({ tenant }, { projection: { _id: 0, day: 1 }, maxTimeMS })
    .sort({ day: 1 })
    .toArray();
  // Months have no `day`.
  return days.map((d) => d.day).filter((d) => typeof d === 'string');
}

/** These kept months of a tenant ('YYYY-MM'; those not kept are absent), whole (what `verify` compares). */
export function readUnitEconomicsMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<UnitEconomicsMonth[]> {
  return readMonths(db, tenant, months, maxTimeMS, MONTH_PARTS.whole, (h, p) => ({
    ...headOf(h),
    ...labelsOf(p.labels),
    ...combinationsOf(p.combinations),
    tables: tablesOf(p.tables),
  }));
}

/** A kept month as a report with a filter reads it: its combinations, not its tables. */
export type UnitEconomicsMonthCombinations = Omit<UnitEconomicsMonth, 'tables'>;

/** The same months as a report with a filter reads them: without their tables (a fifth of a month's bytes at 1M/1M). */
export function readUnitEconomicsMonthCombinations(
  db: Db,
  tenant: string,
  months: readonly string[],
  maxTimeMS: number,
): Promise<UnitEconomicsMonthCombinations[]> {
  return readMonths(db, tenant, months, maxTimeMS, MONTH_PARTS.combinations, (h, p) => ({
    ...headOf(h),
    ...labelsOf(p.labels),
    ...combinationsOf(p.combinations),
  }));
}

/** The same months as a report without filters reads them: their tables, not their combinations (a quarter of the bytes at 1M/1M). */
export function readUnitEconomicsMonthTables(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<UnitEconomicsMonthTables[]> {
  return readMonths(db, tenant, months, maxTimeMS, MONTH_PARTS.tables, (h, p) => ({ ...headOf(h), ...labelsOf(p.labels), tables: tablesOf(p.tables) }));
}

async function readMonths<T extends { month: string }>(
  db: Db,
  tenant: string,
  months: readonly string[],
  maxTimeMS: number,
  parts: readonly string[],
  unpack: (head: MonthHead, parts: Record<string, ChunkedPart>) => T,
): Promise<T[]> {
  // One month at a time per reader, two readers: the database sends a month (~10 MB at 1M/1M) while the last one is decoded.
  const queue = [...months];
  const kept: T[] = [];
  const reader = async (): Promise<void> => {
    for (let month = queue.shift(); month !== undefined; month = queue.shift()) {
      const m = await readChunked<MonthHead>(monthRollups(db), tenant, unitEconomicsMonthId(tenant, month), parts, maxTimeMS);
      if (m) kept.push(unpack(m.head, m.parts));
    }
  };
  await Promise.all([reader(), reader()]);
  return kept.sort((a, z) => (a.month < z.month ? -1 : 1));
}

/** The months a tenant's kept form holds. */
export async function unitEconomicsMonthNames(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  // Heads have a month; days and chunks have none.
  const months = await db
    .collection<MonthHead>(COLLECTIONS.unitEconomicsRollups)
    .find({ tenant, month: { $exists: true } }, { projection: { _id: 0, month: 1 }, maxTimeMS })
    .toArray();
  return months.map((m) => m.month).sort();
}

/** Replaces a kept month (null: the month has no day kept, and is removed). */
export async function writeUnitEconomicsMonth(db: Db, tenant: string, month: string, kept: UnitEconomicsMonth | null): Promise<void> {
  const _id = unitEconomicsMonthId(tenant, month);
  if (kept) await writeChunked(monthRollups(db), headOf(kept), monthParts(kept));
  else await deleteChunked(monthRollups(db), tenant, _id);
}

/** Replaces the kept days (a day without delivered legs or cost documents is removed). */
export async function writeUnitEconomicsDays(db: Db, tenant: string, days: readonly string[], kept: readonly UnitEconomicsDay[]): Promise<void> {
  if (!days.length) return;
  const keptDays = new Set(kept.map((r) => r.day));
  const ops = [
    ...kept.map((r) => ({ replaceOne: { filter: { _id: r._id, tenant }, replacement: stored(r), upsert: true } })),
    ...days.filter((d) => !keptDays.has(d)).map((d) => ({ deleteOne: { filter: { _id: unitEconomicsDayId(tenant, d), tenant } } })),
  ];
  await rollups(db).bulkWrite(ops, { ordered: false, writeConcern: { j: true } });
}

/** Forgets a tenant's kept days and months (a rebuild marks every day first). */
export async function deleteUnitEconomicsDaysOf(db: Db, tenant: string): Promise<void> {
  await rollups(db).deleteMany({ tenant }, { writeConcern: { j: true } });
}
