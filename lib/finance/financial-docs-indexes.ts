/** The indexes of `financialDocs` (lib/finance/financial-docs-repo.ts and the queries of finance, analytics and tax). */
import { COLLECTIONS } from '../db/collections.ts';
import type { IndexSpecs } from '../db/indexes.ts';

export const FINANCIAL_DOC_INDEXES: IndexSpecs = {
  [COLLECTIONS.financialDocs]: [
    { key: { company: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_date' },
    // Incremental sync (updatedSince + cursor): lastUpdate then id, keyset on both.
    { key: { company: 1, lastUpdate: 1, _id: 1 }, name: 'tenant_updated' },
    { key: { company: 1, client: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_client_date' },
    { key: { company: 1, status: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_status_date' },
    // ?paymentStatus= / ?cancelled= on the stored payment state, newest first. Missing states sort
    // first (null), so the start-up backfill finds a tenant's unrepaired documents at its head.
    { key: { company: 1, derivedPaymentStatus: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_payment_status_date' },
    // ?client= with ?paymentStatus= (or ?cancelled=true), the list and its export. An index of its own: a key added between
    // the equality and the sort of tenant_client_date or tenant_payment_status_date would break the sort of their own filter alone.
    { key: { company: 1, client: 1, derivedPaymentStatus: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_client_payment_status_date' },
    // ?cancellationStatus= on the stored cancellation status of the invoice, newest first (missing first: the backfill's probe).
    { key: { company: 1, derivedCancellationStatus: 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_cancellation_status_date' },
    // Look-ups by UUID or folio, sorted like every list (the sort keys make it an index walk, not a sort).
    { key: { company: 1, 'invoice.uuid': 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_uuid_date' },
    { key: { company: 1, 'invoice.num': 1, date: -1, timestamp: -1, _id: -1 }, name: 'tenant_folio_date' },
    { key: { company: 1, 'payments.date': 1 }, name: 'tenant_payment_date' },
  ],
};
