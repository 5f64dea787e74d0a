/** The indexes of the facts' store, `importFacts` and `importLinks` (lib/finance/ledger/facts-repo.ts). */
import { COLLECTIONS } from '../../db/collections.ts';
import type { IndexSpecs } from '../../db/indexes.ts';

export const FACT_INDEXES: IndexSpecs = {
  // The facts behind each imported financial document.
  [COLLECTIONS.importFacts]: [{ key: { tenant: 1, invoices: 1 }, name: 'tenant_invoices' }],
  // "Has this tenant any link yet?" (the one-off backfill check of facts-repo.ts).
  [COLLECTIONS.importLinks]: [{ key: { tenant: 1 }, name: 'tenant' }],
};
