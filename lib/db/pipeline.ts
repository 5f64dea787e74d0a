/**
 * Aggregation-expression builders shared by the tax and analytics
 * repositories. Every expression here runs on real MongoDB 6+ and on the
 * embedded engine (mongo-java-server), so it avoids what the engine lacks
 * ($round, $switch, $let, $set, $dateTrunc, dotted inclusion projections
 * inside arrays in `$project`, `$sum` of an array path inside `$map`):
 * arrays are reshaped with `$map`/`$filter`/`$reduce` instead.
 *
 * Money: `centsExpr` turns a peso amount into integer cents per document
 * (floor(x × 100 + 0.5): amounts carry two decimals, so x × 100 is within
 * 1e-9 of an integer and this is exact rounding), and groups `$sum` those
 * integers, which is exact. Callers convert with fromCents in JS.
 */
import type { Document } from 'mongodb';
import { MX_TZ } from '../time/mexico-city.ts';
import { FREIGHT_CODE_PREFIX } from '../tax/reconcile.ts';

/** Integer cents of a non-negative peso amount (missing → 0). */
export const centsExpr = (amount: unknown): Document => ({ $floor: { $add: [{ $multiply: [{ $ifNull: [amount, 0] }, 100] }, 0.5] } });

/** Inclusive range predicate for an expression (both ends optional). */
export const between = (expr: unknown, from: number, to: number): Document => ({ $and: [{ $gte: [expr, from] }, { $lte: [expr, to] }] });

/** 'YYYY-MM' in Mexico City of an epoch-ms field. */
export const mxMonthExpr = (epochMs: unknown): Document => ({ $dateToString: { format: '%Y-%m', date: { $toDate: epochMs }, timezone: MX_TZ } });

/**
 * True when the invoice itself is cancelled (a record of target 'invoice'
 * naming its current UUID, case-insensitive, as lib/finance/cancellation.ts
 * decides), optionally only by records dated up to `asOf`. `root` addresses
 * the document: '$' at the top level, '$$d.' for a variable (e.g. a $lookup result).
 */
export function invoiceCancelledExpr(asOf?: number, root = '$'): Document {
  const conds: Document[] = [
    { $eq: ['$$c.target', 'invoice'] },
    { $eq: [{ $toLower: '$$c.uuid' }, { $toLower: `${root}invoice.uuid` }] },
  ];
  if (asOf !== undefined) conds.push({ $lte: ['$$c.date', asOf] });
  return { $gt: [{ $size: { $filter: { input: { $ifNull: [`${root}canceled`, []] }, as: 'c', cond: { $and: conds } } } }, 0] };
}

/** A concept (`$$<name>`) is freight: kind 'freight', or kind 'other' under a 781018 key (isFreightConcept). */
export function isFreightExpr(name: string): Document {
  return {
    $or: [
      { $eq: [`$$${name}.kind`, 'freight'] },
      { $and: [{ $eq: [`$$${name}.kind`, 'other'] }, { $eq: [{ $substrBytes: [{ $ifNull: [`$$${name}.code`, ''] }, 0, FREIGHT_CODE_PREFIX.length] }, FREIGHT_CODE_PREFIX] }] },
    ],
  };
}

/** Σ over an array of `in` (an expression on `$$this`), 0 for a missing array. */
export const sumOver = (input: unknown, inExpr: unknown): Document => ({
  $reduce: { input: { $ifNull: [input, []] }, initialValue: 0, in: { $add: ['$$value', inExpr] } },
});

/** Σ product litres of a leg (`$$<leg>`), loaded or offloaded. */
export const legLitres = (leg: string, which: 'loaded' | 'offloaded'): Document => sumOver(`$$${leg}.products`, { $ifNull: [`$$this.${which}`, 0] });

/** Fields of `conceptSumsExpr`. */
export const CONCEPT_SUM_FIELDS = [
  'grossFreightC', 'freightDiscountC', 'demurrageC', 'demurrageLines', 'handlingC', 'handlingLines', 'shortageC', 'shortageLines', 'shortageLitres',
] as const;

/**
 * One pass over an invoice's concepts (a single `$reduce` with an object
 * accumulator: several separate `$reduce`s cost several passes), giving
 * integer-cent sums of gross freight, freight discounts, demurrage, handling
 * and shortage (with line counts and shortage litres = concept quantity).
 */
export function conceptSumsExpr(concepts: string): Document {
  const kindIs = (kind: string): Document => ({ $eq: ['$$this.kind', kind] });
  const add = (field: string, cond: Document, value: unknown): Document => ({ $add: [`$$value.${field}`, { $cond: [cond, value, 0] }] });
  const initialValue = Object.fromEntries(CONCEPT_SUM_FIELDS.map((f) => [f, 0]));
  return {
    $reduce: {
      input: { $ifNull: [concepts, []] },
      initialValue,
      in: {
        grossFreightC: add('grossFreightC', isFreightExpr('this'), centsExpr('$$this.amount')),
        freightDiscountC: add('freightDiscountC', isFreightExpr('this'), centsExpr('$$this.discount')),
        demurrageC: add('demurrageC', kindIs('demurrage'), centsExpr('$$this.amount')),
        demurrageLines: add('demurrageLines', kindIs('demurrage'), 1),
        handlingC: add('handlingC', kindIs('handling'), centsExpr('$$this.amount')),
        handlingLines: add('handlingLines', kindIs('handling'), 1),
        shortageC: add('shortageC', kindIs('shortage'), centsExpr('$$this.amount')),
        shortageLines: add('shortageLines', kindIs('shortage'), 1),
        shortageLitres: add('shortageLitres', kindIs('shortage'), { $ifNull: ['$$this.quantity', 0] }),
      },
    },
  };
}
