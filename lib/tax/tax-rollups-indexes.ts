/** The indexes of the tax summary's totals kept on write (lib/tax/tax-rollups-repo.ts). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const TAX_ROLLUP_INDEXES: IndexSpecs = {
  [COLLECTIONS.taxRollups]: [{ key: { tenant: 1, basis: 1, day: 1 }, name: 'tenant_basis_day' }],
  // The summary lists findings by kind, then invoice date, document and concept (findings-list.ts), with or without a client:
  // on the invoice basis those emitted in the period, on the payment basis those of the month kept.
  [COLLECTIONS.taxFindings]: [
    { key: { tenant: 1, basis: 1, kind: 1, dateMs: 1, docId: 1, conceptIndex: 1, code: 1 }, name: 'tenant_basis_kind_date' },
    { key: { tenant: 1, basis: 1, client: 1, kind: 1, dateMs: 1, docId: 1, conceptIndex: 1, code: 1 }, name: 'tenant_basis_client_kind_date' },
    { key: { tenant: 1, basis: 1, day: 1, kind: 1, dateMs: 1, docId: 1, conceptIndex: 1, code: 1 }, name: 'tenant_basis_day_kind_date' },
    { key: { tenant: 1, basis: 1, day: 1, client: 1, kind: 1, dateMs: 1, docId: 1, conceptIndex: 1, code: 1 }, name: 'tenant_basis_day_client_kind_date' },
    // A payment-basis month's findings by the day whose share holds them (a recompute of that day).
    { key: { tenant: 1, basis: 1, bucket: 1 }, name: 'tenant_basis_bucket' },
  ],
};
