/**
 * The reports tests in one process, each file of test/reports/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import currency from './reports/currency.ts';
import reportPeriods from './reports/report-periods.ts';
import taxSummary from './reports/tax-summary.ts';
import taxPosition from './reports/tax-position.ts';
import exportSlots from './reports/export-slots.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('reports-currency', currency);
t.test('report-periods', reportPeriods);
t.test('tax-summary', taxSummary);
t.test('tax-position', taxPosition);
t.test('export-slots', exportSlots);
