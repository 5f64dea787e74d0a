/**
 * Concept-level sums of invoices for the discounts, demurrage and shrinkage
 * recovery audit: per client and Mexico City month, computed in the database
 * in integer cents (each concept amount rounded to cents, then summed).
 */
import type { Db, Document } from 'mongodb';
import { financialDocs } from './collections.ts';
import { CONCEPT_SUM_FIELDS, centsExpr, conceptSumsExpr, invoiceCancelledExpr, mxMonthExpr } from './pipeline.ts';

export interface ConceptSums {
  grossFreightC: number;
  freightDiscountC: number;
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
  /** Σ Descuento (document level) in cents. */
  discountC: number;
  documentsWithDiscount: number;
  documentsWithDemurrage: number;
}

/** Non-cancelled invoices emitted in [start, end], grouped by client and month. */
export async function conceptSumsByClientMonth(db: Db, tenant: string, q: { start: number; end: number; client?: string }, maxTimeMS: number): Promise<ClientMonthConceptRow[]> {
  const sumFields = Object.fromEntries(CONCEPT_SUM_FIELDS.map((k) => [k, { $sum: `$s.${k}` }]));
  const pipeline: Document[] = [
    { $match: { company: tenant, date: { $gte: q.start, $lte: q.end }, ...(q.client ? { client: q.client } : {}) } },
    { $project: { client: 1, month: mxMonthExpr('$date'), cancelled: invoiceCancelledExpr(), discountC: centsExpr('$iDesc'), s: conceptSumsExpr('$invoice.concepts') } },
    { $match: { cancelled: false } },
    {
      $group: {
        _id: { client: '$client', month: '$month' },
        documents: { $sum: 1 },
        discountC: { $sum: '$discountC' },
        documentsWithDiscount: { $sum: { $cond: [{ $gt: ['$discountC', 0] }, 1, 0] } },
        documentsWithDemurrage: { $sum: { $cond: [{ $gt: ['$s.demurrageLines', 0] }, 1, 0] } },
        ...sumFields,
      },
    },
  ];
  type Row = ConceptSums & { _id: { client: string; month: string }; documents: number; discountC: number; documentsWithDiscount: number; documentsWithDemurrage: number };
  const rows = await financialDocs(db).aggregate<Row>(pipeline, { maxTimeMS }).toArray();
  return rows.map(({ _id, ...rest }) => ({ client: _id.client, month: _id.month, ...rest }));
}
