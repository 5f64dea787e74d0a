/**
 * Concept-level sums of invoices for the discounts, demurrage and shrinkage
 * recovery audit: per client and Mexico City month, computed in the database
 * in integer MXN cents (each concept amount converted and rounded to cents, then summed).
 */
import type { Db, Document } from 'mongodb';
import { financialDocs } from '../db/collections.ts';
import type { ConceptKind } from '../model/financial-document.ts';
import { FREIGHT_CODE_PREFIX, isFreightConcept } from '../model/freight-concept.ts';
import { centsExpr, invoiceCancelledExpr, mxMonthExpr } from '../db/pipeline.ts';
import { centsToMxnCents } from '../money/currency.ts';
import type { ConceptTotals } from './discounts.ts';

/** The sums the discounts and shrinkage recovery audit reads (lib/analytics/discounts.ts), per client and month. */
export interface ClientMonthConceptRow extends ConceptTotals {
  client: string;
  month: string;
}

/**
 * Non-cancelled invoices emitted in [start, end], grouped by client and month,
 * in one scan: a `$facet` counts documents (and discounts) per client-month,
 * and sums the unwound concept lines per client-month, kind and SAT-key
 * family (cheaper than walking each concept array with expressions); the few
 * resulting groups are folded into the row sums here (isFreightConcept rule).
 *
 * Sums are in MXN: the groups are also keyed by the document's exchange rate (1 for MXN
 * documents, nearly all of them), summed in cents of the document's currency, and each group's
 * sum converted here (round(cents × rate)). Converting per concept inside the pipeline cost the
 * engine an expression per line for a rate that is almost always 1.
 */
export async function conceptSumsByClientMonth(
  db: Db,
  tenant: string,
  q: { start: number; end: number; client?: string },
  maxTimeMS: number,
): Promise<ClientMonthConceptRow[]> {
  const key = { client: '$client', month: '$month', rate: '$rate' };
  const pipeline: Document[] = [
    { $match: { company: tenant, date: { $gte: q.start, $lte: q.end }, ...(q.client ? { client: q.client } : {}) } },
    {
      $project: {
        client: 1,
        month: mxMonthExpr('$date'),
        cancelled: invoiceCancelledExpr(),
        rate: { $ifNull: ['$exchangeRate', 1] },
        discountC: centsExpr('$iDesc'),
        hasDemurrage: { $in: ['demurrage', { $ifNull: ['$invoice.concepts.kind', []] }] },
        // Only what the line sums read: $unwind copies the whole row once per line.
        concepts: {
          $map: {
            input: { $ifNull: ['$invoice.concepts', []] },
            as: 'c',
            in: {
              kind: '$$c.kind',
              family: { $substrBytes: [{ $ifNull: ['$$c.code', ''] }, 0, FREIGHT_CODE_PREFIX.length] },
              amountC: centsExpr('$$c.amount'),
              discountC: centsExpr('$$c.discount'),
              quantity: { $ifNull: ['$$c.quantity', 0] },
            },
          },
        },
      },
    },
    { $match: { cancelled: false } },
    {
      $facet: {
        docs: [
          {
            $group: {
              _id: key,
              documents: { $sum: 1 },
              discountC: { $sum: '$discountC' },
              documentsWithDiscount: { $sum: { $cond: [{ $gt: ['$discountC', 0] }, 1, 0] } },
              documentsWithDemurrage: { $sum: { $cond: ['$hasDemurrage', 1, 0] } },
            },
          },
        ],
        lines: [
          { $project: { _id: 0, client: 1, month: 1, rate: 1, concepts: 1 } },
          { $unwind: '$concepts' },
          {
            $group: {
              _id: { client: '$client', month: '$month', rate: '$rate', kind: '$concepts.kind', family: '$concepts.family' },
              amountC: { $sum: '$concepts.amountC' },
              discountC: { $sum: '$concepts.discountC' },
              quantity: { $sum: '$concepts.quantity' },
              lines: { $sum: 1 },
            },
          },
        ],
      },
    },
  ];
  type DocGroup = {
    _id: { client: string; month: string; rate: number };
    documents: number;
    discountC: number;
    documentsWithDiscount: number;
    documentsWithDemurrage: number;
  };
  type LineGroup = {
    _id: { client: string; month: string; rate: number; kind: ConceptKind; family: string };
    amountC: number;
    discountC: number;
    quantity: number;
    lines: number;
  };
  const [facet] = await financialDocs(db).aggregate<{ docs: DocGroup[]; lines: LineGroup[] }>(pipeline, { maxTimeMS }).toArray();
  const rows = new Map<string, ClientMonthConceptRow>();
  for (const d of facet?.docs ?? []) {
    const k = `${d._id.client}|${d._id.month}`;
    const row = rows.get(k) ?? {
      client: d._id.client,
      month: d._id.month,
      documents: 0,
      discountC: 0,
      documentsWithDiscount: 0,
      documentsWithDemurrage: 0,
      grossFreightC: 0,
      freightDiscountC: 0,
      demurrageC: 0,
      demurrageLines: 0,
      handlingC: 0,
      handlingLines: 0,
      shortageC: 0,
      shortageLines: 0,
      shortageLitres: 0,
    };
    row.documents += d.documents;
    row.discountC += centsToMxnCents(d.discountC, d._id.rate);
    row.documentsWithDiscount += d.documentsWithDiscount;
    row.documentsWithDemurrage += d.documentsWithDemurrage;
    rows.set(k, row);
  }
  for (const raw of facet?.lines ?? []) {
    const row = rows.get(`${raw._id.client}|${raw._id.month}`);
    if (!row) continue;
    const g = { ...raw, amountC: centsToMxnCents(raw.amountC, raw._id.rate), discountC: centsToMxnCents(raw.discountC, raw._id.rate) };
    if (isFreightConcept({ kind: g._id.kind, code: g._id.family })) {
      row.grossFreightC += g.amountC;
      row.freightDiscountC += g.discountC;
    } else if (g._id.kind === 'demurrage') {
      row.demurrageC += g.amountC;
      row.demurrageLines += g.lines;
    } else if (g._id.kind === 'handling') {
      row.handlingC += g.amountC;
      row.handlingLines += g.lines;
    } else if (g._id.kind === 'shortage') {
      row.shortageC += g.amountC;
      row.shortageLines += g.lines;
      row.shortageLitres += g.quantity;
    }
  }
  return [...rows.values()];
}
