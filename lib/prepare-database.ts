/**
 * What a process that serves the data does once when it opens the database, before it
 * listens: create every area's indexes (lib/service-indexes.ts), then write the derived fields
 * on financial documents stored without them (lib/finance/derived-fields-backfill.ts, with the
 * finance rule that computes them) and the offload months on trips stored without them
 * (lib/trips/offload-months-backfill.ts). All are idempotent and cheap when there is nothing to do
 * (the financial backfill: one index probe per tenant; the trips': one recorded state), and
 * finish a received-CFDI category rules change a failure cut short (lib/received/apply-category-rules.ts).
 * Above lib/db and the areas, since it joins them.
 */
import type { Db } from 'mongodb';
import { ensureIndexes } from './service-indexes.ts';
import { backfillDerivedFields, type BackfillTenantResult } from './finance/derived-fields-backfill.ts';
import { derivedFieldsOf } from './finance/derived-fields.ts';
import { backfillOffloadMonths } from './trips/offload-months-backfill.ts';
import { markEmptyStoreBuilt } from './rollups/rebuild-rollups.ts';
import { finishPendingCategoryRules } from './received/apply-category-rules.ts';

/** Each query of finishing a rules change at start (no request waits on it). */
const CATEGORY_RULES_TIMEOUT_MS = 120_000;

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
  // Once per store written before trips kept their offload months (a 1M-trip tenant: minutes, with progress).
  const logged = new Map<string, number>();
  const trips = await backfillOffloadMonths(db, {
    onProgress: ({ tenant, read, repaired }) => {
      if (read - (logged.get(tenant) ?? 0) < 100_000) return;
      logged.set(tenant, read);
      opts.log?.(`trips of ${tenant}: offload months written on ${repaired} of ${read} trips read so far`);
    },
  });
  for (const r of trips) opts.log?.(`trips of ${r.tenant}: offload months written on ${r.repaired} trips stored without them`);
  // A category rules change a failure or a crash cut short: its documents follow the rules before anything reads them.
  for (const tenant of await finishPendingCategoryRules(db, CATEGORY_RULES_TIMEOUT_MS))
    opts.log?.(`receivedDocs of ${tenant}: the category rules change an earlier run left unfinished is applied`);
  // A new store keeps its totals from the first write on; an older one is rebuilt by the rollup worker (docs/rollups.md).
  await markEmptyStoreBuilt(db);
  return { backfilled };
}
