/**
 * The notifications tests in one process, each file of test/notifications/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import webhooksApi from './notifications/webhooks-api.ts';
import webhooksDelivery from './notifications/webhooks-delivery.ts';
import alertsApi from './notifications/alerts-api.ts';
import alertsWorker from './notifications/alerts-worker.ts';
import workerMetrics from './notifications/worker-metrics.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('webhooks-api', webhooksApi);
t.test('webhooks-delivery', webhooksDelivery);
t.test('alerts-api', alertsApi);
t.test('alerts-worker', alertsWorker);
t.test('worker-metrics', workerMetrics);
