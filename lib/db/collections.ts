import type { Db, Collection } from 'mongodb';
import type { StoredFinancialDocument } from '../model/financial-document.ts';
import type { StoredTripDocument } from '../model/trip-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';

/** Collection names in one place so repositories, seeds and tests agree. */
export const COLLECTIONS = {
  financialDocs: 'financialDocs',
  trips: 'trips',
  tenantSettings: 'tenantSettings',
  apiKeys: 'apiKeys',
  alerts: 'alerts',
  alertJobs: 'alertJobs',
  idempotency: 'idempotencyKeys',
  importFacts: 'importFacts',
  importLinks: 'importLinks',
  /** Received CFDIs (lib/received): the facts each file states, and the documents rebuilt from them. */
  receivedFacts: 'receivedFacts',
  receivedDocs: 'receivedDocs',
  /** The carrier's assignment of a received CFDI to a vehicle or trip (kept apart: a rebuilt document keeps it). */
  receivedAssignments: 'receivedAssignments',
  /** The original XML of every imported CFDI, byte for byte (lib/originals). */
  cfdiOriginals: 'cfdiOriginals',
  serviceSecrets: 'serviceSecrets',
  /** The OAuth authorization server's records (lib/auth/oauth-records-repo.ts): clients, grants, codes and tokens, each under a hash of its id. */
  oauthRecords: 'oauthRecords',
  webhooks: 'webhooks',
  webhookDeliveries: 'webhookDeliveries',
  webhookJobs: 'webhookJobs',
  leases: 'leases',
  /** Totals kept on write (docs/rollups.md): the tax summary's days and its findings index, and which rollups a store holds. */
  taxRollups: 'taxRollups',
  taxFindings: 'taxFindings',
  /** The tax position's days and months and the lines of their figures and DIOT rows (lib/tax/tax-position-rollups-repo.ts). */
  taxPositionDays: 'taxPositionDays',
  taxPositionMonths: 'taxPositionMonths',
  taxPositionLines: 'taxPositionLines',
  rollupState: 'rollupState',
  /** The as-of reports' kept forms (lib/analytics): one entry per invoice ever open, and the forecast's days. */
  openItems: 'openItems',
  receivablesDays: 'receivablesDays',
  /** The sums of the invoices open now, per invoice day and client (lib/analytics/open-now.ts). */
  openNowDays: 'openNowDays',
  /** The same entries' spans per invoice day and month, packed (lib/analytics/open-item-months.ts). */
  openItemMonths: 'openItemMonths',
  /** The financial-docs list's `openAsOf` spans of the same index (lib/analytics/open-spans.ts). */
  openSpans: 'openSpans',
  /** Fleet utilization's days kept on write (lib/analytics/fleet-day-rollup.ts). */
  fleetRollups: 'fleetRollups',
  /** Dispatch-to-bill's days kept on write and its index of unbilled deliveries (lib/analytics/dispatch-to-bill-day.ts). */
  dispatchToBillDays: 'dispatchToBillDays',
  dispatchToBillUnbilled: 'dispatchToBillUnbilled',
  /** Unit economics' days kept on write (lib/analytics/unit-economics-day.ts). */
  unitEconomicsRollups: 'unitEconomicsRollups',
  /** The discounts and shrinkage audit's days kept on write and its legs beyond tolerance (lib/analytics/discount-days.ts, shrinkage-days.ts). */
  discountDays: 'discountDays',
  shrinkageDays: 'shrinkageDays',
  shrinkageFindings: 'shrinkageFindings',
  /** Exports of lists and reports (lib/exports): the requests, their files' chunks, the export worker's Agenda jobs. */
  exports: 'exports',
  exportChunks: 'exportChunks',
  exportJobs: 'exportJobs',
  /** A tenant's exports queued or running, one document per slot of EXPORT_MAX_ACTIVE (lib/exports/export-slot.ts). */
  exportSlots: 'exportSlots',
} as const;

/** Typed as stored: a write must carry the derived fields (lib/finance/derived-fields.ts). */
export const financialDocs = (db: Db): Collection<StoredFinancialDocument> => db.collection<StoredFinancialDocument>(COLLECTIONS.financialDocs);
export const trips = (db: Db): Collection<StoredTripDocument> => db.collection<StoredTripDocument>(COLLECTIONS.trips);
export const tenantSettings = (db: Db): Collection<TenantSettings> => db.collection<TenantSettings>(COLLECTIONS.tenantSettings);
