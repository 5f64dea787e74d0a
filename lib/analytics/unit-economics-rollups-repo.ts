/**
 * Unit economics' days kept on write and their months (docs/rollups.md): one document per tenant
 * and day (`day`), and per tenant and month (`month`, no `day`), in `unitEconomicsRollups`.
 */
import { Binary, type Collection, type Db } from 'mongodb';
import { COLLECTIONS } from '../db/collections.ts';
import { unitEconomicsDayId, type GroupTable, type KmTable, type UnitEconomicsDay, type UnitMonthTables } from './unit-economics-day.ts';
import { unitEconomicsMonthId, type UnitEconomicsMonth } from './unit-economics-month.ts';

/** What a day and a month hold that is stored packed. */
type Packed = Pick<UnitEconomicsDay, 'units' | 'rows' | 'strings' | 'pairs' | 'costs'>;
/**
 * A day or month as stored: its number arrays as little-endian binary, its strings, pairs and
 * costs as JSON text. A month at 1M/1M holds 20,000 strings and 6,000 cost rows: one string
 * each for JSON.parse costs a fraction of as many BSON elements decoded one by one (a year's
 * report reads 11 months and 31 days).
 */
type Stored<T extends Packed> = Omit<T, keyof Packed> & { units: Binary; rows: Binary; strings: string; pairs: string; costs: string };
type StoredUnitEconomicsDay = Stored<UnitEconomicsDay>;
/** A month's tables as stored: each array packed, the pending pairs as JSON text. */
type StoredGroupTable = Record<keyof GroupTable, Binary>;
type StoredKmTable = Record<keyof KmTable, Binary>;
interface StoredTables {
  rows: number;
  client: StoredGroupTable;
  vehicle: StoredGroupTable;
  driver: StoredGroupTable;
  route: StoredGroupTable;
  kmClient: StoredKmTable;
  kmDriver: StoredKmTable;
  kmRoute: StoredKmTable;
  pending: string;
}
type StoredUnitEconomicsMonth = Omit<Stored<UnitEconomicsMonth>, 'tables'> & { tables: StoredTables };
/** A month as a report without filters reads it: its strings, costs and tables, not its combinations. */
export type UnitEconomicsMonthTables = Omit<UnitEconomicsMonth, 'units' | 'rows' | 'pairs'>;

const rollups = (db: Db): Collection<StoredUnitEconomicsDay> => db.collection<StoredUnitEconomicsDay>(COLLECTIONS.unitEconomicsRollups);
const monthRollups = (db: Db): Collection<StoredUnitEconomicsMonth> => db.collection<StoredUnitEconomicsMonth>(COLLECTIONS.unitEconomicsRollups);

/** Typed arrays use the platform's byte order; every platform Node runs the service on is little-endian, checked once. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function packed(a: Int32Array | Float64Array, width: 4 | 8): Binary {
  if (LITTLE_ENDIAN) return new Binary(new Uint8Array(a.buffer, a.byteOffset, a.byteLength).slice());
  const bytes = new DataView(new ArrayBuffer(a.length * width));
  a.forEach((v, i) => (width === 4 ? bytes.setInt32(i * 4, v, true) : bytes.setFloat64(i * 8, v, true)));
  return new Binary(new Uint8Array(bytes.buffer));
}

/** A copy of the stored bytes in an aligned buffer of their own (a stored array is read once, then dropped). */
function bytesOf(b: Binary, width: 4 | 8): ArrayBuffer {
  const bytes = b.buffer.subarray(0, b.position);
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
});
const unpacked = <T extends Packed>(d: Stored<T>): T =>
  ({
    ...d,
    units: new Int32Array(bytesOf(d.units, 4)),
    rows: new Float64Array(bytesOf(d.rows, 8)),
    strings: JSON.parse(d.strings) as UnitEconomicsDay['strings'],
    pairs: JSON.parse(d.pairs) as UnitEconomicsDay['pairs'],
    costs: JSON.parse(d.costs) as UnitEconomicsDay['costs'],
  }) as T;

const GROUP_GROUPINGS = ['client', 'vehicle', 'driver', 'route'] as const;
const KM_GROUPINGS = ['kmClient', 'kmDriver', 'kmRoute'] as const;

function storedTables(t: UnitMonthTables): StoredTables {
  const group = (g: GroupTable): StoredGroupTable => ({ keys: packed(g.keys, 4), labels: packed(g.labels, 4), sums: packed(g.sums, 8) });
  const km = (k: KmTable): StoredKmTable => ({ start: packed(k.start, 4), vehicles: packed(k.vehicles, 4), kmM: packed(k.kmM, 8) });
  return {
    rows: t.rows,
    ...(Object.fromEntries(GROUP_GROUPINGS.map((g) => [g, group(t[g])])) as Pick<StoredTables, (typeof GROUP_GROUPINGS)[number]>),
    ...(Object.fromEntries(KM_GROUPINGS.map((g) => [g, km(t[g])])) as Pick<StoredTables, (typeof KM_GROUPINGS)[number]>),
    pending: JSON.stringify(t.pending),
  };
}

function unpackedTables(t: StoredTables): UnitMonthTables {
  const group = (g: StoredGroupTable): GroupTable => ({
    keys: new Int32Array(bytesOf(g.keys, 4)),
    labels: new Int32Array(bytesOf(g.labels, 4)),
    sums: new Float64Array(bytesOf(g.sums, 8)),
  });
  const km = (k: StoredKmTable): KmTable => ({
    start: new Int32Array(bytesOf(k.start, 4)),
    vehicles: new Int32Array(bytesOf(k.vehicles, 4)),
    kmM: new Float64Array(bytesOf(k.kmM, 8)),
  });
  return {
    rows: t.rows,
    ...(Object.fromEntries(GROUP_GROUPINGS.map((g) => [g, group(t[g])])) as Pick<UnitMonthTables, (typeof GROUP_GROUPINGS)[number]>),
    ...(Object.fromEntries(KM_GROUPINGS.map((g) => [g, km(t[g])])) as Pick<UnitMonthTables, (typeof KM_GROUPINGS)[number]>),
    pending: JSON.parse(t.pending) as UnitMonthTables['pending'],
  };
}

const storedMonth = ({ tables, ...rest }: UnitEconomicsMonth): StoredUnitEconomicsMonth => ({ ...stored(rest), tables: storedTables(tables) });
const unpackedMonth = ({ tables, ...rest }: StoredUnitEconomicsMonth): UnitEconomicsMonth => ({
  ...unpacked<Omit<UnitEconomicsMonth, 'tables'>>(rest),
  tables: unpackedTables(tables),
});

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

/** These kept months of a tenant ('YYYY-MM'; those not kept are absent), by id, whole (what `verify` compares). */
export function readUnitEconomicsMonths(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<UnitEconomicsMonth[]> {
  return readMonths(db, tenant, months, maxTimeMS, {}, unpackedMonth);
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
  return readMonths(db, tenant, months, maxTimeMS, { tables: 0 }, ({ tables: _none, ...m }) => unpacked<UnitEconomicsMonthCombinations>(m));
}

async function readMonths<T extends { month: string }>(
  db: Db,
  tenant: string,
  months: readonly string[],
  maxTimeMS: number,
  projection: Record<string, 0>,
  unpack: (m: StoredUnitEconomicsMonth) => T,
): Promise<T[]> {
  // One read per month, two at a time: the database sends a month (~10 MB at 1M/1M) while the last one is decoded.
  const queue = [...months];
  const kept: T[] = [];
  const reader = async (): Promise<void> => {
    for (let month = queue.shift(); month !== undefined; month = queue.shift()) {
      const m = await monthRollups(db).findOne({ _id: unitEconomicsMonthId(tenant, month), tenant }, { maxTimeMS, projection });
      if (m) kept.push(unpack(m));
    }
  };
  await Promise.all([reader(), reader()]);
  return kept.sort((a, z) => (a.month < z.month ? -1 : 1));
}

/** The same months as a report without filters reads them: their tables, not their combinations (a quarter of the bytes at 1M/1M). */
export function readUnitEconomicsMonthTables(db: Db, tenant: string, months: readonly string[], maxTimeMS: number): Promise<UnitEconomicsMonthTables[]> {
  return readMonths(db, tenant, months, maxTimeMS, { units: 0, rows: 0, pairs: 0 }, ({ units: _u, rows: _r, pairs: _p, ...m }) => ({
    ...m,
    strings: JSON.parse(m.strings) as string[],
    costs: JSON.parse(m.costs) as UnitEconomicsMonth['costs'],
    tables: unpackedTables(m.tables),
  }));
}

/** The months a tenant's kept form holds. */
export async function unitEconomicsMonthNames(db: Db, tenant: string, maxTimeMS: number): Promise<string[]> {
  const months = await monthRollups(db)
    .find({ tenant, month: { $exists: true } }, { projection: { _id: 0, month: 1 }, maxTimeMS })
    .toArray();
  return months.map((m) => m.month).sort();
}

/** Replaces a kept month (null: the month has no day kept, and is removed). */
export async function writeUnitEconomicsMonth(db: Db, tenant: string, month: string, kept: UnitEconomicsMonth | null): Promise<void> {
  const _id = unitEconomicsMonthId(tenant, month);
  if (kept) await monthRollups(db).replaceOne({ _id, tenant }, storedMonth(kept), { upsert: true, writeConcern: { j: true } });
  else await monthRollups(db).deleteOne({ _id, tenant }, { writeConcern: { j: true } });
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
