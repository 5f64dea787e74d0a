/** Every kind of totals kept on write (docs/rollups.md), in the order the worker settles them. */
import type { RollupKind } from './rollup-kind.ts';
import { taxSummaryRollups } from '../tax/tax-summary-rollup-kind.ts';
import { receivablesRollups } from '../analytics/receivables-rollup-kind.ts';
import { taxPositionRollups } from '../tax/tax-position-rollup-kind.ts';
import { fleetUtilizationRollups } from '../analytics/fleet-utilization-rollup-kind.ts';
import { dispatchToBillRollups } from '../analytics/dispatch-to-bill-rollup-kind.ts';
import { unitEconomicsRollups } from '../analytics/unit-economics-rollup-kind.ts';
import { discountsShrinkageRollups } from '../analytics/discounts-shrinkage-rollup-kind.ts';

export const ROLLUP_KINDS: readonly RollupKind[] = [
  taxSummaryRollups,
  taxPositionRollups,
  receivablesRollups,
  fleetUtilizationRollups,
  dispatchToBillRollups,
  unitEconomicsRollups,
  discountsShrinkageRollups,
];

/** The kinds a `--kind` option names (all when none). Throws on an unknown name. */
export function selectRollupKinds(names: readonly string[] = []): readonly RollupKind[] {
  if (!names.length) return ROLLUP_KINDS;
  return names.map((name) => {
    const kind = ROLLUP_KINDS.find((k) => k.name === name);
    if (!kind) throw new RangeError(`unknown rollup kind ${name} (known: ${ROLLUP_KINDS.map((k) => k.name).join(', ')})`);
    return kind;
  });
}
