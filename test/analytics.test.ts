/**
 * The analytics tests in one process, each file of test/analytics/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import batches from './analytics/batches.ts';
import cashInflow from './analytics/cash-inflow.ts';
import clientLists from './analytics/client-lists.ts';
import discountsShrinkage from './analytics/discounts-shrinkage.ts';
import dispatchToBill from './analytics/dispatch-to-bill.ts';
import expressionLikeText from './analytics/expression-like-text.ts';
import fleetUtilization from './analytics/fleet-utilization.ts';
import rollupRunsAcrossGaps from './analytics/rollup-runs-across-gaps.ts';
import shrinkageAtAllowance from './analytics/shrinkage-at-allowance.ts';
import shrinkageWeightedPrice from './analytics/shrinkage-weighted-price.ts';
import tripsTouchingDays from './analytics/trips-touching-days.ts';
import unitCosts from './analytics/unit-costs.ts';
import unitEconomics from './analytics/unit-economics.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('analytics-batches', batches);
t.test('analytics-cash-inflow', cashInflow);
t.test('analytics-client-lists', clientLists);
t.test('analytics-discounts-shrinkage', discountsShrinkage);
t.test('analytics-dispatch-to-bill', dispatchToBill);
t.test('analytics-expression-like-text', expressionLikeText);
t.test('analytics-fleet-utilization', fleetUtilization);
t.test('analytics-rollup-runs-across-gaps', rollupRunsAcrossGaps);
t.test('analytics-shrinkage-at-allowance', shrinkageAtAllowance);
t.test('analytics-shrinkage-weighted-price', shrinkageWeightedPrice);
t.test('analytics-trips-touching-days', tripsTouchingDays);
t.test('analytics-unit-costs', unitCosts);
t.test('analytics-unit-economics', unitEconomics);
