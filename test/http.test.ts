/**
 * The http tests in one process, each file of test/http/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import compressionCorsHead from './http/compression-cors-head.ts';
import edges from './http/edges.ts';
import errorReasons from './http/error-reasons.ts';
import apiVersionDeprecation from './http/api-version-deprecation.ts';
import authBudget from './http/auth-budget.ts';
import foundation from './http/foundation.ts';
import requestCaches from './http/request-caches.ts';
import metrics from './http/metrics.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('http-compression-cors-head', compressionCorsHead);
t.test('http-edges', edges);
t.test('error-reasons', errorReasons);
t.test('api-version-deprecation', apiVersionDeprecation);
t.test('auth-budget', authBudget);
t.test('foundation', foundation);
t.test('request-caches', requestCaches);
t.test('metrics', metrics);
