/** The indexes of received CFDIs, `receivedFacts`, `receivedDocs` and `receivedAssignments` (lib/received/received-repo.ts, received-assignments-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs, RetiredIndexes } from '../db/indexes.ts';

export const RECEIVED_INDEXES: IndexSpecs = {
  // The facts of each received invoice, its cancellations by UUID.
  [COLLECTIONS.receivedFacts]: [
    { key: { tenant: 1, invoices: 1 }, name: 'tenant_invoices' },
    // A period's received CFDIs (the originals zip, lib/exports/originals-zip.ts): the invoices and credit notes by
    // the Fecha their fact keeps (`fact.date`, with the cancellations' dates), oldest first; the payment complements,
    // whose facts keep no Fecha, imported since the period's start.
    { key: { tenant: 1, 'fact.date': 1, _id: 1 }, name: 'tenant_fact_date' },
    { key: { tenant: 1, kind: 1, importedAt: 1, _id: 1 }, name: 'tenant_kind_imported' },
  ],
  // The list's filters (supplier, category, payment state, cancellation), each then newest issue date first.
  [COLLECTIONS.receivedDocs]: [
    { key: { tenant: 1, date: -1, _id: -1 }, name: 'tenant_date' },
    { key: { tenant: 1, 'supplier.rfc': 1, date: -1, _id: -1 }, name: 'tenant_supplier_date' },
    { key: { tenant: 1, category: 1, date: -1, _id: -1 }, name: 'tenant_category_date' },
    { key: { tenant: 1, paymentState: 1, date: -1, _id: -1 }, name: 'tenant_payment_state_date' },
    // The tax position and the DIOT (lib/tax): the documents with a settlement (PUE, payment, credit note) dated in a month.
    { key: { tenant: 1, 'settlements.date': 1 }, name: 'tenant_settlement_date' },
    // Re-categorizing a tenant's documents when its rules change: by the code each follows, then the category it has,
    // so finding those whose category differs reads only them.
    { key: { tenant: 1, mainCode: 1, category: 1 }, name: 'tenant_main_code_category' },
  ],
  // The carrier's assignments are read by `_id` (the document's id, tenant-checked); a tenant's all at once when its data is dropped.
  [COLLECTIONS.receivedAssignments]: [{ key: { tenant: 1 }, name: 'tenant' }],
};

/** Replaced by tenant_main_code_category (the category added: a change of rules read every document of a code). */
export const RETIRED_RECEIVED_INDEXES: RetiredIndexes = {
  [COLLECTIONS.receivedDocs]: ['tenant_main_code'],
};
