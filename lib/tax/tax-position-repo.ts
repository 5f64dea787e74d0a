/** What the tax position and the DIOT read of received CFDIs: the documents settled in a period. */
import type { Db } from 'mongodb';
import { elementInRange } from '../db/pipeline.ts';
import { receivedDocs } from '../received/received-repo.ts';
import type { SettledReceivedDoc } from './tax-position.ts';

/** What the lines read of a received CFDI (SettledReceivedDoc): not its concepts' other fields, XML reference or state. */
const SETTLED_PROJECTION = {
  _id: 1,
  uuid: 1,
  supplier: 1,
  category: 1,
  mainCode: 1,
  paymentMethod: 1,
  paymentForm: 1,
  exchangeRate: 1,
  use: 1,
  subTotal: 1,
  discount: 1,
  total: 1,
  taxes: 1,
  settlements: 1,
  cancellationStatus: 1,
  'concepts.code': 1,
} as const satisfies Record<Exclude<keyof SettledReceivedDoc, 'concepts'> | 'concepts.code', 1>;

/**
 * The tenant's received documents with a settlement (their own PUE, a supplier's payment
 * complement, a credit note) dated in [start, end] (inclusive instants), streamed. Index
 * tenant_settlement_date; the settlements outside the period are left out in JS.
 */
export function streamSettledReceivedDocs(db: Db, tenant: string, start: number, end: number, maxTimeMS: number): AsyncIterable<SettledReceivedDoc> {
  return receivedDocs(db).find<SettledReceivedDoc>(
    { tenant, ...elementInRange('settlements', 'date', start, end) },
    { projection: SETTLED_PROJECTION, maxTimeMS, batchSize: 500 },
  );
}
