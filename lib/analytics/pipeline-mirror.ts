/**
 * The aggregation expressions of lib/db/pipeline.ts that the open-items index (open-items.ts) and the
 * list's spans (open-spans.ts) evaluate in JS on the same stored fields, with the pipeline's own
 * comparison rules, so an index computed here matches what the document queries answer. Pure.
 */

/** `$lte: [x, t]` of an aggregation for a number t: missing and null sort below numbers, strings and the rest above. */
export const lteBson = (x: unknown, t: number): boolean => x === undefined || x === null || (typeof x === 'number' && x <= t);

/** `$toLower` of a UUID: null or missing → '' (a number is its digits; nothing else is stored there). */
export const lowerBson = (x: unknown): string => (typeof x === 'string' ? x.toLowerCase() : typeof x === 'number' ? String(x) : '');

/** centsExpr: floor(x × 100 + 0.5), missing → 0. */
export const centsOf = (x: unknown): number => Math.floor((typeof x === 'number' ? x : 0) * 100 + 0.5);

/** cancellationInEffectExpr: status accepted or expired, or none. */
export const inEffectStatus = (status: unknown): boolean => {
  const s = status === undefined || status === null ? 'accepted' : status;
  return s === 'accepted' || s === 'expired';
};

/** paymentCancellationUuidsExpr('$gt', t): the payments whose cancellation in effect is dated after t (they still counted at t). */
export function paymentsCancelledAfter(records: readonly { date?: unknown; uuid?: unknown; target?: unknown; status?: unknown }[], t: number): Set<string> {
  return new Set(records.filter((c) => c.target === 'payment' && inEffectStatus(c.status) && !lteBson(c.date, t)).map((c) => lowerBson(c.uuid)));
}
