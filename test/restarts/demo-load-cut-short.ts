/**
 * A demo load cut short (the process killed midway, as `npm start`'s first run or `npm run seed` can
 * be): its documents are written in bulk, past the marks that keep totals on write, so no kind may
 * read as built afterwards (docs/rollups.md: a store not built is rebuilt by the worker, and its
 * reports read the documents meanwhile); `npm start`'s load is recorded as under way, so the next
 * start loads it again. Here the load stops by an error thrown from its progress callback halfway:
 * what it wrote stays, as a kill leaves it. Before: every kind was recorded built by the start-up
 * (an empty store) and stayed so, with totals of nothing.
 */
import type { Test } from 'tap';
import { startHarness } from '../helpers/harness.ts';
import { prepareDatabase } from '../../lib/prepare-database.ts';
import { ROLLUP_KINDS } from '../../lib/rollups/kinds.ts';
import { rebuildRollups } from '../../lib/rollups/rebuild-rollups.ts';
import { demoLoadCutShort, loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';
import { financialDocs } from '../../lib/db/collections.ts';

export default async function demoLoadCutShortTests(t: Test): Promise<void> {
  const h = await startHarness(t);

  t.test('no kind reads as built after a load cut short; the next start loads it again', async (t) => {
    await prepareDatabase(h.db); // an empty store: every kind recorded built, as at a first start
    for (const kind of ROLLUP_KINDS) t.ok(await kind.ready(h.db), `${kind.name}: built, the store being empty`);
    const cut = new Error('killed');
    await t.rejects(
      loadDemoData(h.db, {
        invoices: 200,
        trips: 200,
        rollups: 'worker',
        resumable: true,
        onProgress: (done, total) => {
          if (done >= total / 2) throw cut;
        },
      }),
      cut,
    );
    t.ok((await financialDocs(h.db).estimatedDocumentCount()) > 0, 'documents were written before the cut');
    for (const kind of ROLLUP_KINDS) t.notOk(await kind.ready(h.db), `${kind.name}: not built (the worker rebuilds it)`);
    t.ok(await demoLoadCutShort(h.db), 'recorded as cut short: npm start loads it again');

    await loadDemoData(h.db, { invoices: 200, trips: 200, rollups: 'worker', resumable: true, drop: true });
    t.notOk(await demoLoadCutShort(h.db), 'a whole load clears it');
    await rebuildRollups(h.db, { tenants: DEMO_TENANTS.map((x) => x.rfc) });
    for (const kind of ROLLUP_KINDS) {
      t.ok(await kind.ready(h.db), `${kind.name}: rebuilt`);
      for (const tenant of DEMO_TENANTS) t.same((await kind.verify(h.db, tenant.rfc)).mismatched, [], `${kind.name} of ${tenant.rfc}: equal to the documents`);
    }
  });
}
