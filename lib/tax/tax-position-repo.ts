/** What the tax position and the DIOT read of received CFDIs: the documents settled in a period. */
import type { Db } from 'mongodb';
import { elementInRange } from '../db/pipeline.ts';
import { receivedDocs } from '../received/received-repo.ts';
import type { ReceivedDocRow } from '../received/received-rows.ts';

/**
 * The tenant's received documents with a settlement (their own PUE, a supplier's payment
 * complement, a credit note) dated in [start, end] (inclusive instants), streamed. Index
 * tenant_settlement_date; the settlements outside the period are left out in JS.
 */
export function streamSettledReceivedDocs(db: Db, tenant: string, start: number, end: number, maxTimeMS: number): AsyncIterable<ReceivedDocRow> {
  return receivedDocs(db).find({ tenant, ...elementInRange('settlements', 'date', start, end) }, { maxTimeMS, batchSize: 500 });
}
