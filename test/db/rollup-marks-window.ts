/**
 * lib/db/rollup-marks.ts: a mark remembers when it was first made, and the background drain's
 * window takes the marks nobody marked again lately or that waited too long (the rollup worker
 * lets an import finish before it recomputes the days it marks). Dates are written by hand, so
 * nothing here depends on the clock.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { anyRipeMarks, markDays, ROLLUP_MARKS, someMarks, type RollupMark } from '../../lib/db/rollup-marks.ts';

export default async function rollupMarksWindowTests(t: Test): Promise<void> {
  t.setTimeout(120_000);

  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'marks');
  t.teardown(() => client.close());
  const marks = db.collection<RollupMark>(ROLLUP_MARKS);

  t.test('marking again keeps the first time and moves the last', async (t) => {
    await markDays(db, 'TGO850101AB1', 'docs', ['2026-03-01']);
    const made = await marks.findOne({ _id: 'TGO850101AB1|docs|2026-03-01' });
    t.ok(made?.first instanceof Date, 'first is kept on the new mark');
    t.equal(made?.first?.getTime(), made?.at.getTime(), 'a new mark was first made when it was made');
    const long = new Date('2020-01-01T00:00:00Z');
    await marks.updateOne({ _id: made!._id }, { $set: { first: long, at: long } });
    await markDays(db, 'TGO850101AB1', 'docs', ['2026-03-01']);
    const again = await marks.findOne({ _id: made!._id });
    t.equal(again?.first?.getTime(), long.getTime(), 'first unchanged');
    t.ok(again!.at.getTime() > long.getTime(), 'at moved');
    t.equal(again?.seq, 2, 'seq bumped twice');
    await marks.deleteMany({});
  });

  t.test('the window takes the quiet marks and those that waited too long', async (t) => {
    const T = Date.parse('2026-11-29T12:00:00Z');
    const at = (ms: number) => new Date(T - ms);
    const mark = (day: string, last: number, first: number | null): RollupMark => ({
      _id: `TGO850101AB1|src|${day}`,
      tenant: 'TGO850101AB1',
      source: 'src',
      day,
      seq: 1,
      at: at(last),
      ...(first === null ? {} : { first: at(first) }),
    });
    await marks.insertMany([
      mark('2026-01-01', 10_000, 10_000), // quiet for 10 s: taken
      mark('2026-01-02', 500, 1_000), // marked half a second ago, first a second ago: left
      mark('2026-01-03', 500, 60_000), // still being marked, but first a minute ago: taken
      mark('2026-01-04', 10_000, null), // written before `first` was kept, quiet: taken
      mark('2026-01-05', 1_999, 29_999), // just inside both limits: left
      { ...mark('2026-01-06', 10_000, 10_000), source: 'other', _id: 'TGO850101AB1|other|2026-01-06' }, // another source
    ]);
    const window = { quietBefore: at(2_000), waitedBefore: at(30_000) };
    const days = (list: RollupMark[]) => list.map((m) => m.day);
    t.same(days(await someMarks(db, 'src', 100, window)), ['2026-01-01', '2026-01-03', '2026-01-04']);
    t.same(days(await someMarks(db, 'src', 2, window)), ['2026-01-01', '2026-01-03'], 'at most the limit, by day');
    t.same(
      days(await someMarks(db, 'src', 100)),
      ['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04', '2026-01-05'],
      'no window: every mark of the source',
    );
    await marks.deleteMany({});
  });

  t.test("the worker's probe: a mark the window would take, of any source", async (t) => {
    const T = Date.parse('2026-11-29T12:00:00Z');
    const window = { quietBefore: new Date(T - 2_000), waitedBefore: new Date(T - 30_000) };
    const mark = (source: string, last: number, first: number): RollupMark => ({
      _id: `TGO850101AB1|${source}|2026-02-01`,
      tenant: 'TGO850101AB1',
      source,
      day: '2026-02-01',
      seq: 1,
      at: new Date(T - last),
      first: new Date(T - first),
    });
    t.equal(await anyRipeMarks(db, window), false, 'no mark');
    // An import still marking its days: marked half a second ago, first ten seconds ago.
    await marks.insertMany([mark('a', 500, 10_000), mark('b', 1_000, 29_000)]);
    t.equal(await anyRipeMarks(db, window), false, 'marks still being made: none to take');
    await marks.insertOne(mark('c', 500, 31_000));
    t.equal(await anyRipeMarks(db, window), true, 'one first made 31 s ago');
    await marks.deleteOne({ source: 'c' });
    await marks.insertOne(mark('d', 3_000, 3_000));
    t.equal(await anyRipeMarks(db, window), true, 'one quiet for 3 s');
    await marks.deleteMany({});
  });
}
