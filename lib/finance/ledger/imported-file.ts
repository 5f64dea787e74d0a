/**
 * The ledger's facts as lib/originals and the exports read them: which imported file a CFDI's issued-side facts
 * were read from (its SHA-256: what its original is served as), and which issued CFDIs a period holds (the
 * originals zip, lib/exports/originals-zip.ts).
 */
import type { Db } from 'mongodb';
import { factId, findFacts } from './facts-repo.ts';

export { issuedCfdisDated, issuedUndatedCfdisSince, type IssuedCfdiRef } from './facts-repo.ts';

export async function importedFileOf(db: Db, tenant: string, uuid: string): Promise<string | null> {
  const id = factId(tenant, 'invoice', uuid.toUpperCase());
  return (await findFacts(db, tenant, [id])).get(id)?.sha256 ?? null;
}
