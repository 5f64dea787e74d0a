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
import { MX_TZ } from '../time/mexico-city.ts';
import { centsToMxnCents } from '../money/currency.ts';
import { EMPTY_CONCEPT_TOTALS, type ConceptTotals } from './discounts.ts';

/** The sums the discounts and shrinkage recovery audit reads (lib/analytics/discounts.ts), per client and month. */
export interface ClientMonthConceptRow extends ConceptTotals {
  client: string;
  month: string;
}

/** 'YYYY-MM-DD' in Mexico City of an epoch-ms field. */
const mxDayExpr = (epochMs: unknown): Document => ({ $dateToString: { format: '%Y-%m-%d', date: { $toDate: epochMs }, timezone: MX_TZ } });

/** Documents of one client, period key and exchange rate (`key`: a month, or a day in the kept days). */
export interface ConceptDocGroup {
  client: string;
  key: string;
  rate: number;
  documents: number;
  /** Cents of the document's currency. */
  discountC: number;
  documentsWithDiscount: number;
  documentsWithDemurrage: number;
}

/** Concept lines of one client, period key, exchange rate, kind and SAT-key family. */
export interface ConceptLineGroup {
  client: string;
  key: string;
  rate: number;
  kind: ConceptKind;
  family: string;
  amountC: number;
  discountC: number;
  quantity: number;
  lines: number;
}

/**
 * The non-cancelled invoices emitted in [start, end] grouped by client, `keyExpr` (the Mexico City
 * month or day of the date) and exchange rate, in one scan: a `$facet` counts documents (and
 * discounts) per group, and sums the unwound concept lines per group, kind and SAT-key family
 * (cheaper than walking each concept array with expressions).
 */
async function conceptGroups(
  db: Db,
  tenant: string,
  q: { start: number; end: number; client?: string },
  keyExpr: Document,
  maxTimeMS: number,
): Promise<{ docs: ConceptDocGroup[]; lines: ConceptLineGroup[] }> {
  const key = { client: '$client', key: '$key', rate: '$rate' };
  const pipeline: Document[] = [
    { $match: { company: tenant, date: { $gte: q.start, $lte: q.end }, ...(q.client ? { client: q.client } : {}) } },
    {
      $project: {
        client: 1,
        key: keyExpr,
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
          { $project: { _id: 0, client: 1, key: 1, rate: 1, concepts: 1 } },
          { $unwind: '$concepts' },
          {
            $group: {
              _id: { client: '$client', key: '$key', rate: '$rate', kind: '$concepts.kind', family: '$concepts.family' },
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
  type DocGroup = Omit<ConceptDocGroup, 'client' | 'key' | 'rate'> & { _id: { client: string; key: string; rate: number } };
  type LineGroup = Omit<ConceptLineGroup, 'client' | 'key' | 'rate' | 'kind' | 'family'> & {
    _id: { client: string; key: string; rate: number; kind: ConceptKind; family: string };
  };
  const [facet] = await financialDocs(db).aggregate<{ docs: DocGroup[]; lines: LineGroup[] }>(pipeline, { maxTimeMS }).toArray();
  return {
    docs: (facet?.docs ?? []).map(({ _id, ...g }) => ({ ..._id, ...g })),
    lines: (facet?.lines ?? []).map(({ _id, ...g }) => ({ ..._id, ...g })),
  };
}

/**
 * The groups folded into rows per client and key (the isFreightConcept rule). Sums are in MXN:
 * each group's sum in cents of the document's currency is converted here (round(cents × rate));
 * converting per concept inside the pipeline cost the engine an expression per line for a rate
 * that is almost always 1. So groups of the same client, key, rate (and kind, family) must be
 * added BEFORE this fold (the kept days do so for a month).
 */
export function foldConceptGroups(docs: readonly ConceptDocGroup[], lines: readonly ConceptLineGroup[]): ClientMonthConceptRow[] {
  const rows = new Map<string, ClientMonthConceptRow>();
  for (const d of docs) {
    const k = `${d.client}|${d.key}`;
    const row = rows.get(k) ?? { client: d.client, month: d.key, ...EMPTY_CONCEPT_TOTALS };
    row.documents += d.documents;
    row.discountC += centsToMxnCents(d.discountC, d.rate);
    row.documentsWithDiscount += d.documentsWithDiscount;
    row.documentsWithDemurrage += d.documentsWithDemurrage;
    rows.set(k, row);
  }
  for (const raw of lines) {
    const row = rows.get(`${raw.client}|${raw.key}`);
    if (!row) continue;
    const g = { ...raw, amountC: centsToMxnCents(raw.amountC, raw.rate), discountC: centsToMxnCents(raw.discountC, raw.rate) };
    if (isFreightConcept({ kind: g.kind, code: g.family })) {
      row.grossFreightC += g.amountC;
      row.freightDiscountC += g.discountC;
    } else if (g.kind === 'demurrage') {
      row.demurrageC += g.amountC;
      row.demurrageLines += g.lines;
    } else if (g.kind === 'handling') {
      row.handlingC += g.amountC;
      row.handlingLines += g.lines;
    } else if (g.kind === 'shortage') {
      row.shortageC += g.amountC;
      row.shortageLines += g.lines;
      row.shortageLitres += g.quantity;
    }
  }
  return [...rows.values()];
}

/** Non-cancelled invoices emitted in [start, end], summed per client and Mexico City month. */
export async function conceptSumsByClientMonth(
  db: Db,
  tenant: string,
  q: { start: number; end: number; client?: string },
  maxTimeMS: number,
): Promise<ClientMonthConceptRow[]> {
  const { docs, lines } = await conceptGroups(db, tenant, q, mxMonthExpr('$date'), maxTimeMS);
  return foldConceptGroups(docs, lines);
}

/** The same groups per Mexico City day (the days kept on write, lib/analytics/discount-days.ts). */
export function conceptGroupsByDay(
  db: Db,
  tenant: string,
  q: { start: number; end: number },
  maxTimeMS: number,
): Promise<{ docs: ConceptDocGroup[]; lines: ConceptLineGroup[] }> {
  return conceptGroups(db, tenant, q, mxDayExpr('$date'), maxTimeMS);
}

/** The ids of a tenant's documents dated in [start, end], streamed (a marked day's documents: the trips linked to them are re-marked). */
export async function* documentIdsDated(db: Db, tenant: string, start: number, end: number, maxTimeMS: number): AsyncIterable<string> {
  const cursor = financialDocs(db).find({ company: tenant, date: { $gte: start, $lte: end } }, { projection: { _id: 1 }, maxTimeMS, batchSize: 5000 });
  for await (const d of cursor) yield String(d._id);
}
