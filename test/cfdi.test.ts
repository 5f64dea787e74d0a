/**
 * The cfdi tests in one process, each file of test/cfdi/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import taxesCancellations from './cfdi/taxes-cancellations.ts';
import corpus from './cfdi/corpus.ts';
import archive from './cfdi/archive.ts';
import cancellationRule from './cfdi/cancellation-rule.ts';
import deliveryRule from './cfdi/delivery-rule.ts';
import cartaPorteCurrency from './cfdi/carta-porte-currency.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('cfdi-taxes-cancellations', taxesCancellations);
t.test('cfdi-corpus', corpus);
t.test('cfdi-archive', archive);
t.test('cancellation-rule', cancellationRule);
t.test('delivery-rule', deliveryRule);
t.test('carta-porte-currency', cartaPorteCurrency);
