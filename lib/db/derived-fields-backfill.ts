/**
 * Writes the derived fields (lib/finance/derived-fields.ts) on financial documents stored
 * without them: written before the field existed, or by another writer. Every writer of this
 * service sets them, so this repairs the rest once; it runs when the service opens the
 * database (prepare-database.ts), before it listens.
 *
 * Cheap when nothing is missing: one probe per tenant on `tenant_payment_status_date`, whose
 * order puts a tenant's documents without a state (null) first. Idempotent and safe beside
 * writers: each repair `$set`s only the field, and only while the document still lacks it and
 * has not been rewritten since it was read (`lastUpdate`), so a concurrent whole-document
 * write is never overwritten with a state computed from the older content.
 */
import type { AnyBulkWriteOperation, Db, Filter } from 'mongodb';
import { financialDocs } from './collections.ts';
import { documentPaymentStatus } from '../finance/derived-fields.ts';
import type { BalanceInput } from '../finance/balance.ts';
import type { StoredFinancialDocument } from '../model/financial-document.ts';

export interface BackfillTenantResult {
  tenant: string;
  /** Documents that got their derived fields. */
  repaired: number;
  /** Documents the rule cannot read (e.g. no `payments` array): left as they are. */
  unreadable: number;
}

export interface BackfillOptions {
  /** Documents per unordered bulk write. */
  batchSize?: number;
  /** Called once per tenant that had documents to repair. */
  onTenant?: (result: BackfillTenantResult) => void;
}

const DEFAULT_BATCH_SIZE = 500;

/** The index order of tenant_payment_status_date: tenants in order, documents without a state first in each. */
const INDEX_ORDER = { company: 1, derivedPaymentStatus: 1, date: -1, timestamp: -1, _id: -1 } as const;

type RepairRow = BalanceInput & Pick<StoredFinancialDocument, '_id' | 'lastUpdate'>;

/**
 * Documents without a stored state (`null` also matches a missing field). The model says every
 * stored document has one: this condition is for those that do not, hence the cast.
 */
const WITHOUT_STATE = { derivedPaymentStatus: null } as unknown as Filter<StoredFinancialDocument>;

/**
 * The first tenant after `after` (in RFC order) and whether it has documents without a state:
 * one index probe that both steps to the next tenant and reads the head of its range.
 */
async function nextTenant(db: Db, after: string): Promise<{ tenant: string; missing: boolean } | null> {
  const head = await financialDocs(db)
    .find({ company: { $gt: after } }, { projection: { _id: 0, company: 1, derivedPaymentStatus: 1 } })
    .sort(INDEX_ORDER)
    .limit(1)
    .next();
  if (!head) return null;
  return { tenant: head.company, missing: head.derivedPaymentStatus == null };
}

async function repairTenant(db: Db, tenant: string, batchSize: number): Promise<BackfillTenantResult> {
  const coll = financialDocs(db);
  const result: BackfillTenantResult = { tenant, repaired: 0, unreadable: 0 };
  let ops: AnyBulkWriteOperation<StoredFinancialDocument>[] = [];
  const flush = async (): Promise<void> => {
    if (!ops.length) return;
    const res = await coll.bulkWrite(ops, { ordered: false });
    result.repaired += res.modifiedCount;
    ops = [];
  };
  // On real MongoDB the null range of tenant_payment_status_date (the embedded engine reads the tenant).
  const missing = coll.find<RepairRow>(
    { company: tenant, ...WITHOUT_STATE },
    { projection: { _id: 1, lastUpdate: 1, iTot: 1, payments: 1, canceled: 1, 'invoice.uuid': 1 }, batchSize },
  );
  for await (const doc of missing) {
    let state: StoredFinancialDocument['derivedPaymentStatus'];
    try {
      state = documentPaymentStatus(doc);
    } catch {
      result.unreadable += 1;
      continue;
    }
    // A missing lastUpdate reads as undefined, which the driver sends as null: "still missing".
    ops.push({
      updateOne: {
        filter: { _id: doc._id, company: tenant, ...WITHOUT_STATE, lastUpdate: doc.lastUpdate },
        update: { $set: { derivedPaymentStatus: state } },
      },
    });
    if (ops.length >= batchSize) await flush();
  }
  await flush();
  return result;
}

/** Repairs every tenant's documents that lack the derived fields; returns the tenants that had some. */
export async function backfillDerivedFields(db: Db, opts: BackfillOptions = {}): Promise<BackfillTenantResult[]> {
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const repaired: BackfillTenantResult[] = [];
  for (let next = await nextTenant(db, ''); next; next = await nextTenant(db, next.tenant)) {
    if (!next.missing) continue;
    const result = await repairTenant(db, next.tenant, batchSize);
    repaired.push(result);
    opts.onTenant?.(result);
  }
  return repaired;
}
