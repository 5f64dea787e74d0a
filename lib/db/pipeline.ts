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
 * decides), optionally only by records dated up to `asOf`.
 */
export function invoiceCancelledExpr(asOf?: number): Document {
  const conds: Document[] = [
    { $eq: ['$$c.target', 'invoice'] },
    { $eq: [{ $toLower: '$$c.uuid' }, { $toLower: '$invoice.uuid' }] },
  ];
  if (asOf !== undefined) conds.push({ $lte: ['$$c.date', asOf] });
  return { $gt: [{ $size: { $filter: { input: { $ifNull: ['$canceled', []] }, as: 'c', cond: { $and: conds } } } }, 0] };
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

/** Σ integer cents of `field` over the concepts matching `cond` (expression on `$$this`). */
export const conceptCentsWhere = (field: string, cond: unknown): Document =>
  sumOver('$invoice.concepts', { $cond: [cond, centsExpr(`$$this.${field}`), 0] });

/** Count of concepts matching `cond` (expression on `$$this`). */
export const conceptCountWhere = (cond: unknown): Document => sumOver('$invoice.concepts', { $cond: [cond, 1, 0] });

/** Σ product litres of a leg (`$$<leg>`), loaded or offloaded. */
export const legLitres = (leg: string, which: 'loaded' | 'offloaded'): Document => sumOver(`$$${leg}.products`, { $ifNull: [`$$this.${which}`, 0] });
