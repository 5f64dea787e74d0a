/**
 * The restarts tests in one process, each file of test/restarts/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import alertsRestart from './restarts/alerts-restart.ts';
import webhooksRestart from './restarts/webhooks-restart.ts';
import demoLoadCutShort from './restarts/demo-load-cut-short.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(240_000);
t.test('alerts-restart', alertsRestart);
t.test('webhooks-restart', webhooksRestart);
t.test('demo-load-cut-short', demoLoadCutShort);
