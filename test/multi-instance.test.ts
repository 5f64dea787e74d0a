/**
 * The multi-instance tests in one process, each file of test/multi-instance/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import rateLimit from './multi-instance/rate-limit.ts';
import tokenRevocation from './multi-instance/token-revocation.ts';
import workers from './multi-instance/workers.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(360_000);
t.test('multi-instance-rate-limit', rateLimit);
t.test('multi-instance-token-revocation', tokenRevocation);
t.test('multi-instance-workers', workers);
