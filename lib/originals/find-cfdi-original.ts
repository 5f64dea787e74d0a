/**
 * Which kept XML of a CFDI is served: the file its stored documents were built from. The CFDI's
 * import fact (issued or received side) names the sha256 of the file an import took last, in file
 * order, so of two files about one UUID in one import (kept at the same instant) the later one is
 * served, as the documents show it. Without such a fact, or before its file was kept, the latest
 * kept file.
 */
import type { Db } from 'mongodb';
import { importedFileOf } from '../finance/ledger/imported-file.ts';
import { findReceivedFacts, receivedFactId } from '../received/received-repo.ts';
import { originalId, type OriginalRecord } from './original-record.ts';
import { cfdiOriginals, findOriginal } from './originals-repo.ts';

export async function findCfdiOriginal(db: Db, tenant: string, uuid: string, maxTimeMS: number): Promise<OriginalRecord | null> {
  const upper = uuid.toUpperCase();
  const [issued, received] = await Promise.all([importedFileOf(db, tenant, upper), findReceivedFacts(db, tenant, [receivedFactId(tenant, 'invoice', upper)])]);
  const sha256 = issued ?? [...received.values()][0]?.sha256;
  if (sha256 !== undefined) {
    const record = await cfdiOriginals(db).findOne({ _id: originalId(tenant, sha256), tenant, kind: 'cfdi', uuids: upper }, { maxTimeMS });
    if (record) return record;
  }
  return findOriginal(db, tenant, upper, 'cfdi', maxTimeMS);
}
