/**
 * What a kept month of unit economics holds for a report without filters (docs/rollups.md "Unit
 * economics"), pure: its combinations added per client, vehicle, driver and route, and the km of
 * each client, driver and route on each vehicle. At 1M/1M a month holds ~80,000 combinations (about
 * one per trip) but 20 clients, ~4,700 vehicles, ~5,500 drivers and ~200 routes: a year without
 * filters adds ~115,000 group rows instead of grouping ~900,000 combinations four ways, and reads
 * the km of the keys it lists only. A report with a filter reads the combinations, as before.
 *
 * Every sum is an integer (cents, thousandths) and every label the greatest, so adding the tables
 * of a period's months gives the same groups as adding their combinations. A table keeps its
 * groups, and a group its vehicles, in the order the combinations first show them: a period reads
 * its parts in the same order either way, so the answer lists ties, and spreads costs, alike.
 */
import {
  GROUPINGS,
  ROW_WIDTH,
  SUM_FIELDS,
  TupleIds,
  UNIT_FIELDS,
  type GroupTable,
  type KmTable,
  type PendingByGroup,
  type UnitFoldPart,
  type UnitMonthTables,
} from './unit-economics-day.ts';

const WIDTH = UNIT_FIELDS.length;
const SUMS = SUM_FIELDS.length;
const KM = SUM_FIELDS.indexOf('kmM');
const VEHICLE_AT = UNIT_FIELDS.indexOf('vehicle');

class TableBuilder {
  private readonly ids: TupleIds;
  private readonly key: Int32Array;
  private keys: number[] = [];
  private labels: number[] = [];
  private sums: number[] = [];
  constructor(
    private readonly strings: readonly string[],
    private readonly fields: { keys: readonly number[]; labels: readonly number[] },
    expected: number,
  ) {
    this.ids = new TupleIds(fields.keys.length, expected);
    this.key = new Int32Array(fields.keys.length);
  }
  /** The group of the combination at `base` of `units` (a new one when its key is new). */
  group(units: Int32Array, base: number): number {
    this.fields.keys.forEach((at, i) => (this.key[i] = units[base + at]!));
    const g = this.ids.id(this.key);
    if (g * this.fields.keys.length === this.keys.length) {
      this.keys.push(...this.key);
      for (let i = 0; i < this.fields.labels.length; i++) this.labels.push(-1);
      for (let j = 0; j < SUMS; j++) this.sums.push(0);
    }
    return g;
  }
  add(g: number, units: Int32Array, base: number, rows: Float64Array, r: number): void {
    for (let j = 0; j < SUMS; j++) this.sums[g * SUMS + j]! += rows[r + 1 + j]!;
    const n = this.fields.labels.length;
    for (let i = 0; i < n; i++) {
      const v = units[base + this.fields.labels[i]!]!;
      const cur = this.labels[g * n + i]!;
      if (v >= 0 && v !== cur && (cur < 0 || this.strings[v]! > this.strings[cur]!)) this.labels[g * n + i] = v;
    }
  }
  table(): GroupTable {
    return { keys: Int32Array.from(this.keys), labels: Int32Array.from(this.labels), sums: Float64Array.from(this.sums) };
  }
}

/** Km per (group, vehicle), each group's vehicles in first-seen order. */
class KmBuilder {
  private readonly pairs = new TupleIds(2);
  private readonly pair = new Int32Array(2);
  private group: number[] = [];
  private vehicle: number[] = [];
  private kmM: number[] = [];
  add(g: number, vehicle: number, kmM: number): void {
    this.pair[0] = g;
    this.pair[1] = vehicle;
    const e = this.pairs.id(this.pair);
    if (e === this.kmM.length) {
      this.group.push(g);
      this.vehicle.push(vehicle);
      this.kmM.push(0);
    }
    this.kmM[e]! += kmM;
  }
  table(groups: number): KmTable {
    const start = new Int32Array(groups + 1);
    for (const g of this.group) start[g + 1]!++;
    for (let g = 0; g < groups; g++) start[g + 1]! += start[g]!;
    const next = start.slice(0, groups);
    const vehicles = new Int32Array(this.vehicle.length);
    const kmM = new Float64Array(this.kmM.length);
    this.group.forEach((g, e) => {
      const at = next[g]!++;
      vehicles[at] = this.vehicle[e]!;
      kmM[at] = this.kmM[e]!;
    });
    return { start, vehicles, kmM };
  }
}

/**
 * The tables of a month kept in a day's form (its combinations, rows and the pairs pending past it:
 * lib/analytics/unit-economics-month.ts), its string ids as the month numbers them.
 */
export function monthTables(month: Pick<UnitFoldPart, 'strings' | 'units' | 'rows' | 'pairs'>): UnitMonthTables {
  const { strings, units, rows } = month;
  const expected = rows.length / ROW_WIDTH;
  const client = new TableBuilder(strings, GROUPINGS.client, 64);
  const vehicle = new TableBuilder(strings, GROUPINGS.vehicle, expected);
  const driver = new TableBuilder(strings, GROUPINGS.driver, expected);
  const route = new TableBuilder(strings, GROUPINGS.route, expected);
  const [kmClient, kmDriver, kmRoute] = [new KmBuilder(), new KmBuilder(), new KmBuilder()];
  for (let r = 0; r < rows.length; r += ROW_WIDTH) {
    const base = (rows[r]! | 0) * WIDTH;
    const km = rows[r + 1 + KM]!;
    const v = units[base + VEHICLE_AT]!;
    const c = client.group(units, base);
    client.add(c, units, base, rows, r);
    kmClient.add(c, v, km);
    vehicle.add(vehicle.group(units, base), units, base, rows, r);
    const d = driver.group(units, base);
    driver.add(d, units, base, rows, r);
    kmDriver.add(d, v, km);
    const o = route.group(units, base);
    route.add(o, units, base, rows, r);
    kmRoute.add(o, v, km);
  }
  // A pending pair's combination has its row in the month: its groups exist.
  const pending = month.pairs.map((p): PendingByGroup => {
    const base = p.u * WIDTH;
    return { g: [client.group(units, base), vehicle.group(units, base), driver.group(units, base), route.group(units, base)], next: p.next, trips: p.trips };
  });
  const tables = { client: client.table(), vehicle: vehicle.table(), driver: driver.table(), route: route.table() };
  const groups = (t: GroupTable) => t.sums.length / SUMS;
  return {
    rows: expected,
    ...tables,
    kmClient: kmClient.table(groups(tables.client)),
    kmDriver: kmDriver.table(groups(tables.driver)),
    kmRoute: kmRoute.table(groups(tables.route)),
    pending,
  };
}
