/**
 * The finance tests in one process, each file of test/finance/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import financialDocs from './finance/financial-docs.ts';
import financialDocsOpenAsOf from './finance/financial-docs-open-as-of.ts';
import financialDocsPaymentState from './finance/financial-docs-payment-state.ts';
import getById from './finance/get-by-id.ts';
import receivablesAging from './finance/receivables-aging.ts';
import received from './finance/received.ts';
import shipments from './finance/shipments.ts';
import cacheControl from './finance/cache-control.ts';
import creditNoteCurrency from './finance/credit-note-currency.ts';
import categoryRulesConsistency from './finance/category-rules-consistency.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('financial-docs', financialDocs);
t.test('financial-docs-open-as-of', financialDocsOpenAsOf);
t.test('financial-docs-payment-state', financialDocsPaymentState);
t.test('get-by-id', getById);
t.test('receivables-aging', receivablesAging);
t.test('received', received);
t.test('shipments', shipments);
t.test('cache-control', cacheControl);
t.test('credit-note-currency', creditNoteCurrency);
t.test('category-rules-consistency', categoryRulesConsistency);
