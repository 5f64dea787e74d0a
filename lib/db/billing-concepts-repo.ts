/**
 * Concept-level sums of invoices for the discounts, demurrage and shrinkage
 * recovery audit: per client and Mexico City month, computed in the database
 * in integer cents (each concept amount rounded to cents, then summed).
 */
import type { Db, Document } from 'mongodb';
import { financialDocs } from './collections.ts';
import { centsExpr, conceptCentsWhere, conceptCountWhere, invoiceCancelledExpr, isFreightExpr, mxMonthExpr, sumOver } from './pipeline.ts';

const kindIs = (kind: string): Document => ({ $eq: ['$$this.kind', kind] });

/** Per-document concept sums; shared by the period grouping and the linked-invoice lookup. */
const CONCEPT_SUMS: Document = {
  grossFreightC: conceptCentsWhere('amount', isFreightExpr('this')),
  freightDiscountC: conceptCentsWhere('discount', isFreightExpr('this')),
  discountC: centsExpr('$iDesc'),
  demurrageC: conceptCentsWhere('amount', kindIs('demurrage')),
  demurrageLines: conceptCountWhere(kindIs('demurrage')),
  handlingC: conceptCentsWhere('amount', kindIs('handling')),
  handlingLines: conceptCountWhere(kindIs('handling')),
  shortageC: conceptCentsWhere('amount', kindIs('shortage')),
  shortageLines: conceptCountWhere(kindIs('shortage')),
  shortageLitres: sumOver('$invoice.concepts', { $cond: [kindIs('shortage'), { $ifNull: ['$$this.quantity', 0] }, 0] }),
};

export interface ConceptSums {
  grossFreightC: number;
  freightDiscountC: number;
  discountC: number;
  demurrageC: number;
  demurrageLines: number;
  handlingC: number;
  handlingLines: number;
  shortageC: number;
  shortageLines: number;
  shortageLitres: number;
}

export interface ClientMonthConceptRow extends ConceptSums {
  client: string;
  month: string;
  documents: number;
  documentsWithDiscount: number;
  documentsWithDemurrage: number;
}

/** Non-cancelled invoices emitted in [start, end], grouped by client and month. */
export async function conceptSumsByClientMonth(db: Db, tenant: string, q: { start: number; end: number; client?: string }, maxTimeMS: number): Promise<ClientMonthConceptRow[]> {
  const sumFields = Object.fromEntries(Object.keys(CONCEPT_SUMS).map((k) => [k, { $sum: `$${k}` }]));
  const pipeline: Document[] = [
    { $match: { company: tenant, date: { $gte: q.start, $lte: q.end }, ...(q.client ? { client: q.client } : {}) } },
    { $project: { client: 1, month: mxMonthExpr('$date'), cancelled: invoiceCancelledExpr(), ...CONCEPT_SUMS } },
    { $match: { cancelled: false } },
    {
      $group: {
        _id: { client: '$client', month: '$month' },
        documents: { $sum: 1 },
        documentsWithDiscount: { $sum: { $cond: [{ $gt: ['$discountC', 0] }, 1, 0] } },
        documentsWithDemurrage: { $sum: { $cond: [{ $gt: ['$demurrageLines', 0] }, 1, 0] } },
        ...sumFields,
      },
    },
  ];
  const rows = await financialDocs(db).aggregate<ConceptSums & { _id: { client: string; month: string }; documents: number; documentsWithDiscount: number; documentsWithDemurrage: number }>(pipeline, { maxTimeMS }).toArray();
  return rows.map(({ _id, ...rest }) => ({ client: _id.client, month: _id.month, ...rest }));
}

export interface LinkedInvoiceRow extends ConceptSums {
  _id: string;
  date: number;
  cancelled: boolean;
}

const ID_BATCH = 5000;

/** The tenant's documents with these ids: invoice date, cancellation and concept sums (batched `$in`). */
export async function linkedInvoices(db: Db, tenant: string, ids: readonly string[], maxTimeMS: number): Promise<Map<string, LinkedInvoiceRow>> {
  const out = new Map<string, LinkedInvoiceRow>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += ID_BATCH) {
    const batch = unique.slice(i, i + ID_BATCH);
    const rows = await financialDocs(db)
      .aggregate<LinkedInvoiceRow>([{ $match: { company: tenant, _id: { $in: batch } } }, { $project: { date: 1, cancelled: invoiceCancelledExpr(), ...CONCEPT_SUMS } }], { maxTimeMS })
      .toArray();
    for (const r of rows) out.set(String(r._id), r);
  }
  return out;
}
