/** The indexes of the facts' store, `importFacts` and `importLinks` (lib/finance/ledger/facts-repo.ts). */
import { COLLECTIONS } from '../../db/collections.ts';
import type { IndexSpecs } from '../../db/indexes.ts';

export const FACT_INDEXES: IndexSpecs = {
  // The facts behind each imported financial document.
  [COLLECTIONS.importFacts]: [
    { key: { tenant: 1, invoices: 1 }, name: 'tenant_invoices' },
    // A period's issued CFDIs by the Fecha their fact keeps (the originals zip, lib/exports/originals-zip.ts):
    // the invoices' (`fact.base.date`), the credit notes' (`fact.date`, with the cancellations' dates), oldest first.
    { key: { tenant: 1, 'fact.base.date': 1, _id: 1 }, name: 'tenant_invoice_date' },
    { key: { tenant: 1, 'fact.date': 1, _id: 1 }, name: 'tenant_fact_date' },
    // The payment complements and transfers, whose facts keep no Fecha, imported since the period's start (the same zip).
    { key: { tenant: 1, kind: 1, importedAt: 1, _id: 1 }, name: 'tenant_kind_imported' },
  ],
  // "Has this tenant any link yet?" (the one-off backfill check of facts-repo.ts).
  [COLLECTIONS.importLinks]: [{ key: { tenant: 1 }, name: 'tenant' }],
};
