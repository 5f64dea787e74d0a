/**
 * What a process that serves the data does once when it opens the database, before it
 * listens: create every area's indexes (lib/service-indexes.ts), then write the derived fields
 * on financial documents stored without them (lib/finance/derived-fields-backfill.ts, with the
 * finance rule that computes them). Both are idempotent and cheap when there is nothing to do (the backfill: one
 * index probe per tenant). Above lib/db and lib/finance, since it joins the two.
 */
import type { Db } from 'mongodb';
import { ensureIndexes } from './service-indexes.ts';
import { backfillDerivedFields, type BackfillTenantResult } from './finance/derived-fields-backfill.ts';
import { derivedFieldsOf } from './finance/derived-fields.ts';
import { markEmptyStoreBuilt } from './rollups/rebuild-rollups.ts';

export interface PrepareDatabaseOptions {
  log?: (message: string) => void;
}

export async function prepareDatabase(db: Db, opts: PrepareDatabaseOptions = {}): Promise<{ backfilled: BackfillTenantResult[] }> {
  // The backfill reads through the derived fields' indexes: indexes first.
  await ensureIndexes(db);
  const backfilled = await backfillDerivedFields(db, derivedFieldsOf, {
    onTenant: (r) =>
      opts.log?.(
        `financialDocs of ${r.tenant}: derived payment and cancellation states written on ${r.repaired} documents stored without them` +
          (r.unreadable ? `; ${r.unreadable} documents could not be read (no payments/canceled arrays?) and stay without it` : ''),
      ),
  });
  // A new store keeps its totals from the first write on; an older one is rebuilt by the rollup worker (docs/rollups.md).
  await markEmptyStoreBuilt(db);
  return { backfilled };
}
