/**
 * lib/rollups/marked-rollup-kind.ts, the background drain: a unit marked by several sources (an
 * import of issued and received CFDIs marks the tax position's month twice) is recomputed once,
 * and every mark it stands for is cleared; the derived months follow. The kind's own
 * computation is a recorder here: what is checked is which units the lifecycle hands it.
 */
import type { Test } from 'tap';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { markDays, ROLLUP_MARKS, type RollupMark } from '../../lib/db/rollup-marks.ts';
import { markedRollupKind } from '../../lib/rollups/marked-rollup-kind.ts';
import { TenantsFailedError } from '../../lib/db/settle-by-tenant.ts';
import { createRollupWorker } from '../../lib/rollups/rollup-worker.ts';

export default async function markedRollupDrainTests(t: Test): Promise<void> {
  t.setTimeout(120_000);
  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const { client, db } = await connectMongo(engine.uri, 'drain');
  t.teardown(() => client.close());
  const marks = db.collection<RollupMark>(ROLLUP_MARKS);

  const kindOf = (grain: 'day' | 'month', failing?: string, history: Record<string, string[]> = {}) => {
    const runs: string[][] = [];
    const months: string[][] = [];
    const kind = markedRollupKind({
      name: `drain-${grain}`,
      stateName: `drain-${grain}`,
      version: 1,
      sources: ['issued', 'received'],
      grain,
      marksPerPass: 100,
      tenants: async () => Object.keys(history),
      isEmpty: async () => true,
      documentDays: async (_db, tenant) => new Map([['issued', history[tenant] ?? []]]),
      keptUnits: async () => [],
      deleteOf: async () => {},
      recompute: async (_db, tenant, run) => {
        runs.push([tenant, ...run]);
        // A document this tenant's recompute cannot read.
        if (tenant === failing) throw new TypeError(`cannot read ${tenant}'s document`);
      },
      differing: async () => [],
      months: {
        source: `drain-${grain}-months`,
        recompute: async (_db, tenant, list) => void months.push([tenant, ...list]),
        differing: async () => [],
        keptMonths: async () => [],
      },
    });
    return { kind, runs, months };
  };

  t.test('a month two sources marked is recomputed once, its marks cleared', async (t) => {
    const { kind, runs, months } = kindOf('month');
    await markDays(db, 'AAA010101AAA', 'issued', ['2026-10-15', '2026-11-02']);
    await markDays(db, 'AAA010101AAA', 'received', ['2026-10-20']);
    await markDays(db, 'BBB010101BBB', 'received', ['2026-10-01']);
    // 4 source marks, then the 3 derived months their settle marked (no window here: taken at once).
    t.equal(await kind.drain(db, 1000, 60_000), 7);
    t.same(runs, [
      ['AAA010101AAA', '2026-10'],
      ['AAA010101AAA', '2026-11'],
      ['BBB010101BBB', '2026-10'],
    ]);
    t.same(months, [
      ['AAA010101AAA', '2026-10'],
      ['AAA010101AAA', '2026-11'],
      ['BBB010101BBB', '2026-10'],
    ]);
    t.equal(await marks.countDocuments({}), 0, 'every mark cleared');
  });

  t.test('days two sources marked: one run of the days, not one per source', async (t) => {
    const { kind, runs } = kindOf('day');
    await markDays(db, 'AAA010101AAA', 'issued', ['2026-10-15', '2026-10-16']);
    await markDays(db, 'AAA010101AAA', 'received', ['2026-10-16', '2026-10-17']);
    t.equal(await kind.drain(db, 1000, 60_000), 5, 'four marks, then their month');
    t.same(runs, [['AAA010101AAA', '2026-10-15', '2026-10-16', '2026-10-17']]);
    await marks.deleteMany({});
  });

  t.test('the limit counts marks of all sources together', async (t) => {
    const { kind, runs } = kindOf('day');
    await markDays(db, 'AAA010101AAA', 'issued', ['2026-10-15', '2026-10-16']);
    await markDays(db, 'AAA010101AAA', 'received', ['2026-10-17']);
    t.equal(await kind.drain(db, 2, 60_000), 2, 'a full page: the worker asks again');
    t.same(runs, [['AAA010101AAA', '2026-10-15', '2026-10-16']]);
    t.equal(await kind.drain(db, 2, 60_000), 2, 'the last day, then the month the days marked');
    t.same(runs[1], ['AAA010101AAA', '2026-10-17']);
    await marks.deleteMany({});
  });

  // The marks are taken in tenant order: a tenant whose recompute fails used to stop the drain
  // there, pass after pass, and every tenant after it was never drained in the background.
  t.test("a tenant whose recompute fails keeps its marks; the others' are settled, and the failure is raised after", async (t) => {
    const { kind, runs } = kindOf('day', 'AAA010101AAA');
    await markDays(db, 'AAA010101AAA', 'issued', ['2026-10-15']);
    await markDays(db, 'BBB010101BBB', 'issued', ['2026-10-15']);
    await markDays(db, 'CCC010101CCC', 'received', ['2026-10-16']);
    const err = await kind.drain(db, 1000, 60_000).then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, TenantsFailedError);
    t.same([...(err as TenantsFailedError).failures.keys()], ['AAA010101AAA']);
    t.same(
      runs.map((r) => r[0]),
      ['AAA010101AAA', 'BBB010101BBB', 'CCC010101CCC'],
    );
    t.same(
      (await marks.find({}, { sort: { _id: 1 } }).toArray()).map((m) => `${m.tenant} ${m.source} ${m.day}`),
      ['AAA010101AAA issued 2026-10-15'],
    );
    await marks.deleteMany({});
  });

  t.test('the worker holds a failing tenant for a while and drains the others meanwhile', async (t) => {
    const { kind, runs } = kindOf('day', 'AAA010101AAA');
    const errors: { tenant?: string; kind?: string }[] = [];
    const worker = createRollupWorker({
      db,
      kinds: [kind],
      everyMs: 10,
      quietMs: 0,
      // Longer than any run of this test, however loaded the machine.
      failedTenantRetryMs: 3_600_000,
      logger: { info: () => {}, error: (obj: { tenant?: string; kind?: string }) => void errors.push(obj) },
    });
    await markDays(db, 'AAA010101AAA', 'issued', ['2026-10-15']);
    await markDays(db, 'BBB010101BBB', 'issued', ['2026-10-15']);
    await worker.start();
    t.teardown(() => worker.stop());
    const settled = async (tenant: string) => (await marks.countDocuments({ tenant })) === 0;
    for (let i = 0; i < 600 && !(await settled('BBB010101BBB')); i++) await new Promise((r) => setTimeout(r, 50));
    t.ok(await settled('BBB010101BBB'), "the other tenant's marks are settled");
    // Written while the failing tenant is held: drained at once all the same.
    await markDays(db, 'CCC010101CCC', 'issued', ['2026-10-20']);
    for (let i = 0; i < 600 && !(await settled('CCC010101CCC')); i++) await new Promise((r) => setTimeout(r, 50));
    t.ok(await settled('CCC010101CCC'), 'a tenant marked later is drained while the failing one is held');
    await worker.stop();
    t.notOk(await settled('AAA010101AAA'), "the failing tenant's marks stay");
    t.equal(runs.filter((r) => r[0] === 'AAA010101AAA').length, 1, 'tried once, then held');
    t.match(errors, [{ tenant: 'AAA010101AAA', kind: 'drain-day' }]);
    await marks.deleteMany({});
  });

  // A rebuild used to stop at the failing tenant, the kind never recorded as built: the worker started
  // it again from the first tenant on every pass.
  t.test('a rebuild goes on past a tenant whose recompute fails, records the kind built, and raises the failure after', async (t) => {
    const { kind, runs } = kindOf('day', 'AAA010101AAA', { AAA010101AAA: ['2026-10-15'], BBB010101BBB: ['2026-10-16'] });
    const err = await kind.rebuild(db).then(
      () => null,
      (e: unknown) => e,
    );
    t.type(err, TenantsFailedError);
    t.same([...(err as TenantsFailedError).failures.keys()], ['AAA010101AAA']);
    t.same(runs, [
      ['AAA010101AAA', '2026-10-15'],
      ['BBB010101BBB', '2026-10-16'],
    ]);
    t.ok(await kind.ready(db), 'recorded as built: the marks left answer for the failing tenant');
    t.same(
      (await marks.find({}).toArray()).map((m) => `${m.tenant} ${m.source} ${m.day}`),
      ['AAA010101AAA issued 2026-10-15'],
    );
    await marks.deleteMany({});
  });
}
