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

/**
 * Rows per round trip of the audits' row queries (trip-audits-repo.ts,
 * receivables-repo.ts: the cursors' batchSize): the audits fold rows as they
 * arrive, so this bounds what one reply holds (~150 KB of BSON for the largest
 * rows, the shrinkage trips) instead of the period.
 */
export const AUDIT_BATCH_SIZE = 250;

/** Integer cents of a non-negative peso amount (missing → 0). */
export const centsExpr = (amount: unknown): Document => ({ $floor: { $add: [{ $multiply: [{ $ifNull: [amount, 0] }, 100] }, 0.5] } });

/**
 * Integer MXN cents of an amount in the document's currency: amount × its exchange rate
 * (`exchangeRate`, TipoCambio; absent on MXN documents: 1), rounded as centsExpr
 * (lib/money/currency.ts mxnCents is the same in JS).
 */
export const mxnCentsExpr = (amount: unknown, rate: unknown = '$exchangeRate'): Document =>
  centsExpr({ $multiply: [{ $ifNull: [amount, 0] }, { $ifNull: [rate, 1] }] });

/** Inclusive range predicate on an expression. */
export const between = (expr: unknown, from: number, to: number): Document => ({ $and: [{ $gte: [expr, from] }, { $lte: [expr, to] }] });

/** 'YYYY-MM' in Mexico City of an epoch-ms field. */
export const mxMonthExpr = (epochMs: unknown): Document => ({ $dateToString: { format: '%Y-%m', date: { $toDate: epochMs }, timezone: MX_TZ } });

/** The statuses under which a cancellation record is in effect (CANCELLED_STATUSES of lib/finance/cancellation.ts). */
const CANCELLED_STATUSES = ['accepted', 'expired'];

/**
 * True when the cancellation record `$$<v>` is in effect: status accepted or expired, or no
 * status at all (records written before statuses existed recorded cancellations in effect).
 */
export const cancellationInEffectExpr = (v = 'c'): Document => ({ $in: [{ $ifNull: [`$$${v}.status`, 'accepted'] }, CANCELLED_STATUSES] });

/**
 * True when the invoice itself is cancelled (a record of target 'invoice'
 * naming its current UUID, case-insensitive, whose status is in effect, as
 * lib/finance/cancellation.ts decides), optionally only by records dated up to
 * `asOf` (a record's date is when its status took effect). `root` addresses
 * the document: '$' at the top level, '$$d.' for a variable (e.g. a $lookup result).
 */
export function invoiceCancelledExpr(asOf?: number, root = '$'): Document {
  const conds: Document[] = [
    { $eq: ['$$c.target', 'invoice'] },
    { $eq: [{ $toLower: '$$c.uuid' }, { $toLower: `${root}invoice.uuid` }] },
    cancellationInEffectExpr('c'),
  ];
  if (asOf !== undefined) conds.push({ $lte: ['$$c.date', asOf] });
  const exact = { $gt: [{ $size: { $filter: { input: { $ifNull: [`${root}canceled`, []] }, as: 'c', cond: { $and: conds } } } }, 0] };
  // Most documents carry no invoice-level cancellation record at all: a cheap path test spares them the exact one.
  // (The embedded engine does not resolve an array path through a variable, `$$d.canceled.target`: map it there.)
  const targets = root === '$' ? { $ifNull: ['$canceled.target', []] } : { $map: { input: { $ifNull: [`${root}canceled`, []] }, as: 'c', in: '$$c.target' } };
  return { $cond: [{ $in: ['invoice', targets] }, exact, false] };
}

/** The lower-cased UUIDs of the payment cancellation records in effect dated by `asOf` (`$lte`) or after it (`$gt`). */
export function paymentCancellationUuidsExpr(when: '$lte' | '$gt', asOf: number): Document {
  return {
    $map: {
      input: {
        $filter: {
          input: { $ifNull: ['$canceled', []] },
          as: 'c',
          cond: { $and: [{ $eq: ['$$c.target', 'payment'] }, cancellationInEffectExpr('c'), { [when]: ['$$c.date', asOf] }] },
        },
      },
      as: 'c',
      in: { $toLower: '$$c.uuid' },
    },
  };
}

/**
 * True when the payment record `$$<v>` was cancelled at instant `asOf` by its flag: `canceled` says
 * it is cancelled now, and a cancellation record in effect naming it (case-insensitive) says since
 * when, so a payment whose record is dated after `asOf` still counted then. A flag that no record
 * in effect names holds from the start. (Records dated by `asOf` cancel it by themselves.)
 */
export function paymentFlagHeldAtExpr(asOf: number, v = 'p'): Document {
  const cancelledLater = paymentCancellationUuidsExpr('$gt', asOf);
  return { $and: [{ $eq: [`$$${v}.canceled`, true] }, { $not: [{ $in: [{ $toLower: `$$${v}.uuid` }, cancelledLater] }] }] };
}

/** Σ over an array of `in` (an expression on `$$this`), 0 for a missing array. */
export const sumOver = (input: unknown, inExpr: unknown): Document => ({
  $reduce: { input: { $ifNull: [input, []] }, initialValue: 0, in: { $add: ['$$value', inExpr] } },
});

/**
 * A value is a number: BSON orders null < numbers < strings, and `$ifNull` turns a
 * missing field into null (the embedded engine has no `$isNumber` or `$type`).
 */
const isNumberExpr = (x: string): Document => ({ $and: [{ $gt: [{ $ifNull: [x, null] }, null] }, { $lt: [x, ''] }] });

/**
 * The delivery instant of a leg (`leg` addresses it, e.g. '$$l'), or null while it
 * is in transit: lib/trips/delivery-state.ts `legDeliveredAt` as an expression
 * (an unload instant and every product's offloaded litres known).
 */
export const legDeliveredAtExpr = (leg: string): Document => ({
  $cond: [
    {
      $and: [
        isNumberExpr(`${leg}.unloadDate`),
        { $eq: [{ $size: { $filter: { input: { $ifNull: [`${leg}.products`, []] }, as: 'p', cond: { $not: [isNumberExpr('$$p.offloaded')] } } } }, 0] },
      ],
    },
    `${leg}.unloadDate`,
    null,
  ],
});

/**
 * Integer thousandths of a quantity (km, litres), rounded as centsExpr: sums of these are exact
 * whatever the order the documents arrive in (unit economics, docs/domain.md).
 */
export const milliExpr = (x: unknown): Document => ({ $floor: { $add: [{ $multiply: [{ $ifNull: [x, 0] }, 1000] }, 0.5] } });

/** Σ product litres of a leg (`$$<leg>`), loaded or offloaded, in integer thousandths. */
export const legLitresMilli = (leg: string, which: 'loaded' | 'offloaded'): Document => sumOver(`$$${leg}.products`, milliExpr(`$$this.${which}`));

/** Σ product litres of a leg (`$$<leg>`), loaded or offloaded. */
export const legLitres = (leg: string, which: 'loaded' | 'offloaded'): Document => sumOver(`$$${leg}.products`, { $ifNull: [`$$this.${which}`, 0] });

/**
 * "Some element of `array` has `field` in [from, to]" as a query filter. The
 * `$elemMatch` is the exact condition (and gives real MongoDB tight multikey
 * index bounds); the dotted range before it is a looser, necessary condition
 * that the embedded engine evaluates several times faster, so the exact one
 * only runs on the few documents that pass it.
 */
export const elementInRange = (array: string, field: string, from: number, to: number): Document => ({
  [`${array}.${field}`]: { $gte: from, $lte: to },
  [array]: { $elemMatch: { [field]: { $gte: from, $lte: to } } },
});
