/**
 * The deliveries tests in one process, each file of test/deliveries/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import deliveries from './deliveries/deliveries.ts';
import csv from './deliveries/csv.ts';
import demo from './deliveries/demo.ts';
import corpus from './deliveries/corpus.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(480_000);
t.test('deliveries', deliveries);
t.test('deliveries-csv', csv);
t.test('deliveries-demo', demo);
t.test('deliveries-corpus', corpus);
