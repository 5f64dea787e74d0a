/**
 * Writes the derived fields (lib/finance/derived-fields.ts) on financial documents stored
 * without them: written before the field existed, or by another writer. Every writer of this
 * service sets them, so this repairs the rest once; it runs when the service opens the
 * database (lib/prepare-database.ts), before it listens.
 *
 * Cheap when nothing is missing: per tenant one probe on each derived field's index
 * (`tenant_payment_status_date`, `tenant_cancellation_status_date`), whose order puts a
 * tenant's documents without the field (null) first. Idempotent and safe beside writers: each
 * repair `$set`s only the derived fields, and only while the document still lacks one and has
 * not been rewritten since it was read (`lastUpdate`), so a concurrent whole-document write is
 * never overwritten with fields computed from the older content.
 */
import type { AnyBulkWriteOperation, Db, Filter } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import type { BalanceInput } from './balance.ts';
import type { StoredFinancialDocument } from '../model/financial-document.ts';

/** The rule that computes the derived fields (lib/finance/derived-fields.ts `derivedFieldsOf`), passed in: repositories decide no domain rule. */
export type DeriveFields = (doc: BalanceInput) => Pick<StoredFinancialDocument, 'derivedPaymentStatus' | 'derivedCancellationStatus'>;

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

/** The derived fields, each with the index whose order puts a tenant's documents without it first. */
const DERIVED_FIELDS = ['derivedPaymentStatus', 'derivedCancellationStatus'] as const;
const indexOrder = (field: (typeof DERIVED_FIELDS)[number]) => ({ company: 1, [field]: 1, date: -1, timestamp: -1, _id: -1 }) as const;

type RepairRow = BalanceInput & Pick<StoredFinancialDocument, '_id' | 'lastUpdate'>;

/**
 * Documents without one of the derived fields (`null` also matches a missing field). The model
 * says every stored document has them: this condition is for those that do not, hence the cast.
 */
const WITHOUT_DERIVED = { $or: DERIVED_FIELDS.map((f) => ({ [f]: null })) } as unknown as Filter<StoredFinancialDocument>;

/**
 * The first tenant after `after` (in RFC order) and whether it has documents without a derived
 * field: one probe per field's index, the first of which also steps to the next tenant.
 */
async function nextTenant(db: Db, after: string): Promise<{ tenant: string; missing: boolean } | null> {
  const [first, ...rest] = DERIVED_FIELDS;
  const head = await financialDocs(db)
    .find({ company: { $gt: after } }, { projection: { _id: 0, company: 1, [first]: 1 } })
    .sort(indexOrder(first))
    .limit(1)
    .next();
  if (!head) return null;
  if (head[first] == null) return { tenant: head.company, missing: true };
  for (const field of rest) {
    const { company: _tenantFirst, ...order } = indexOrder(field);
    const h = await financialDocs(db)
      .find({ company: head.company }, { projection: { _id: 0, [field]: 1 } })
      .sort(order)
      .limit(1)
      .next();
    if (h && h[field] == null) return { tenant: head.company, missing: true };
  }
  return { tenant: head.company, missing: false };
}

async function repairTenant(db: Db, tenant: string, derive: DeriveFields, batchSize: number): Promise<BackfillTenantResult> {
  const coll = financialDocs(db);
  const result: BackfillTenantResult = { tenant, repaired: 0, unreadable: 0 };
  let ops: AnyBulkWriteOperation<StoredFinancialDocument>[] = [];
  const flush = async (): Promise<void> => {
    if (!ops.length) return;
    const res = await coll.bulkWrite(ops, { ordered: false });
    result.repaired += res.modifiedCount;
    ops = [];
  };
  // On real MongoDB the null ranges of the derived fields' indexes (the embedded engine reads the tenant).
  const missing = coll.find<RepairRow>(
    { company: tenant, ...WITHOUT_DERIVED },
    { projection: { _id: 1, lastUpdate: 1, iTot: 1, payments: 1, canceled: 1, 'invoice.uuid': 1 }, batchSize },
  );
  for await (const doc of missing) {
    let fields: ReturnType<DeriveFields>;
    try {
      fields = derive(doc);
    } catch {
      result.unreadable += 1;
      continue;
    }
    // A missing lastUpdate reads as undefined, which the driver sends as null: "still missing".
    ops.push({
      updateOne: {
        filter: { _id: doc._id, company: tenant, ...WITHOUT_DERIVED, lastUpdate: doc.lastUpdate },
        update: { $set: fields },
      },
    });
    if (ops.length >= batchSize) await flush();
  }
  await flush();
  return result;
}

/** Repairs every tenant's documents that lack the derived fields; returns the tenants that had some. */
export async function backfillDerivedFields(db: Db, derive: DeriveFields, opts: BackfillOptions = {}): Promise<BackfillTenantResult[]> {
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const repaired: BackfillTenantResult[] = [];
  for (let next = await nextTenant(db, ''); next; next = await nextTenant(db, next.tenant)) {
    if (!next.missing) continue;
    const result = await repairTenant(db, next.tenant, derive, batchSize);
    repaired.push(result);
    opts.onTenant?.(result);
  }
  return repaired;
}
