/**
 * Every index of the service: each area's own specs (declared beside its repository), joined in
 * the order they are created at start-up. Above lib/db, which holds only the mechanism
 * (lib/db/indexes.ts) and knows no area. Every query of the service is served by one of these
 * on real MongoDB (test/index-coverage.test.ts).
 */
import type { Db } from 'mongodb';
import { dropRetiredIndexes, ensureIndexSpecs, joinIndexSpecs, type IndexSpecs } from './db/indexes.ts';
import { FINANCIAL_DOC_INDEXES } from './finance/financial-docs-indexes.ts';
import { RETIRED_TRIP_INDEXES, TRIP_INDEXES } from './trips/trips-indexes.ts';
import { API_KEY_INDEXES } from './auth/api-keys-indexes.ts';
import { OAUTH_RECORD_INDEXES } from './auth/oauth-records-indexes.ts';
import { ALERT_INDEXES } from './alerts/alert-indexes.ts';
import { FACT_INDEXES } from './finance/ledger/facts-indexes.ts';
import { RECEIVED_INDEXES, RETIRED_RECEIVED_INDEXES } from './received/received-indexes.ts';
import { RETIRED_WEBHOOK_INDEXES, WEBHOOK_INDEXES } from './webhooks/webhooks-indexes.ts';
import { IDEMPOTENCY_INDEXES } from './alerts/idempotency-indexes.ts';
import { ROLLUP_MARK_INDEXES } from './db/rollup-marks.ts';
import { WRITES_IN_FLIGHT_INDEXES } from './db/writes-in-flight.ts';
import { TAX_ROLLUP_INDEXES } from './tax/tax-rollups-indexes.ts';
import { RETIRED_TAX_POSITION_INDEXES, TAX_POSITION_ROLLUP_INDEXES } from './tax/tax-position-rollups-indexes.ts';
import { FLEET_ROLLUP_INDEXES } from './analytics/fleet-rollups-indexes.ts';
import { ORIGINAL_INDEXES } from './originals/originals-indexes.ts';
import { RECEIVABLES_ROLLUP_INDEXES, RETIRED_RECEIVABLES_INDEXES } from './analytics/receivables-rollups-indexes.ts';
import { DISPATCH_TO_BILL_ROLLUP_INDEXES } from './analytics/dispatch-to-bill-rollups-indexes.ts';
import { UNIT_ECONOMICS_ROLLUP_INDEXES } from './analytics/unit-economics-rollups-indexes.ts';
import { DISCOUNTS_SHRINKAGE_ROLLUP_INDEXES } from './analytics/discounts-shrinkage-rollups-indexes.ts';
import { EXPORT_INDEXES } from './exports/exports-indexes.ts';
import { SETTINGS_INDEXES } from './settings/settings-indexes.ts';

export const INDEXES: IndexSpecs = joinIndexSpecs(
  FINANCIAL_DOC_INDEXES,
  TRIP_INDEXES,
  API_KEY_INDEXES,
  OAUTH_RECORD_INDEXES,
  ALERT_INDEXES,
  FACT_INDEXES,
  RECEIVED_INDEXES,
  WEBHOOK_INDEXES,
  IDEMPOTENCY_INDEXES,
  ROLLUP_MARK_INDEXES,
  WRITES_IN_FLIGHT_INDEXES,
  TAX_ROLLUP_INDEXES,
  TAX_POSITION_ROLLUP_INDEXES,
  FLEET_ROLLUP_INDEXES,
  ORIGINAL_INDEXES,
  RECEIVABLES_ROLLUP_INDEXES,
  DISPATCH_TO_BILL_ROLLUP_INDEXES,
  UNIT_ECONOMICS_ROLLUP_INDEXES,
  DISCOUNTS_SHRINKAGE_ROLLUP_INDEXES,
  EXPORT_INDEXES,
  SETTINGS_INDEXES,
);

/**
 * Creates every index of the service, then drops those it declared before and no longer does
 * (both idempotent on the server): what a process does before it serves the data. New ones
 * first, so a query never lacks an index meanwhile.
 */
export async function ensureIndexes(db: Db): Promise<void> {
  await ensureIndexSpecs(db, INDEXES);
  await dropRetiredIndexes(db, RETIRED_TRIP_INDEXES);
  await dropRetiredIndexes(db, RETIRED_RECEIVABLES_INDEXES);
  await dropRetiredIndexes(db, RETIRED_TAX_POSITION_INDEXES);
  await dropRetiredIndexes(db, RETIRED_RECEIVED_INDEXES);
  await dropRetiredIndexes(db, RETIRED_WEBHOOK_INDEXES);
}
