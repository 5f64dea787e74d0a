/**
 * `npm run worker`: the alerts worker alone, no HTTP. Run as many as you like
 * beside API-only services (ALERT_WORKER=false); they share the work through
 * Agenda's locks on the same database (MONGODB_URI, or the embedded engine a
 * running `npm start` owns under DATA_DIR).
 *
 * The webhook delivery worker runs beside it (WEBHOOK_* settings), and the export worker
 * (EXPORT_* settings: the exports API-only services queue are built here).
 *
 * WORKER_METRICS_PORT serves Prometheus metrics at GET /metrics (lib/metrics/worker-metrics.ts):
 * the job queues, webhook and export outcomes, the database's health (docs/operations.md).
 *
 * SIGTERM/SIGINT drain running evaluations (ALERT_DRAIN_TIMEOUT_MS) before the
 * database is closed. Tunables: ALERT_PROCESS_EVERY_MS, ALERT_CONCURRENCY,
 * ALERT_LOCK_LIFETIME_MS, ALERT_RETRY_DELAY_MS, ALERT_MAX_RETRIES (lib/config-schema.ts).
 */
import pino from 'pino';
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { engineSupervisionSettings } from './embedded-mongo/settings.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { createAlertWorker } from '../lib/alerts/worker.ts';
import { createWebhookWorker } from '../lib/webhooks/worker.ts';
import { createExportWorker } from '../lib/exports/worker.ts';
import { startWorkerMetrics } from '../lib/metrics/worker-metrics.ts';
import { NO_METRICS } from '../lib/metrics/service-metrics.ts';
import { resolveWebhookEncryptionKey } from '../lib/webhooks/encryption-key.ts';
import { createRollupWorker } from '../lib/rollups/rollup-worker.ts';
import { createTracing } from '../lib/tracing/tracing.ts';
import { traceMongoCommands } from '../lib/tracing/mongodb-spans.ts';
import { refuseArguments } from './no-arguments.ts';

refuseArguments(
  'npm run worker',
  'usage: npm run worker   the background workers (alerts, webhooks, exports, kept totals) without HTTP, beside API-only services, on MONGODB_URI or a running npm start; every setting: docs/configuration.md',
);

const loaded = loadConfig();
const config = { ...loaded, webhooks: { ...loaded.webhooks, encryptionKey: await resolveWebhookEncryptionKey(loaded) } };
const engineSettings = engineSupervisionSettings();
const log = pino({ level: config.logLevel, base: { component: 'alert-worker' } });
// A worker that started its own embedded engine and cannot keep it up exits 1 for its supervisor (as the service does).
let onEngineLost: () => void = () => process.exit(1);
const database = await openDatabase(config, {
  enginePort: engineSettings.port,
  log: (m) => log.info(m),
  supervision: { log, maxRestarts: engineSettings.maxRestarts, windowMs: engineSettings.restartWindowMs, onGiveUp: () => onEngineLost() },
});
await ensureIndexes(database.db);

// Traces of the jobs and their database commands when OTEL_EXPORTER_OTLP_ENDPOINT is set (openDatabase then monitors commands).
const tracing = await createTracing({
  endpoint: config.tracing.endpoint,
  serviceName: config.tracing.serviceName,
  serviceVersion: process.env.npm_package_version ?? 'unknown',
});
const stopMongoSpans = tracing.enabled ? traceMongoCommands(database.client, tracing.tracer) : () => {};

// Before the workers start, so their first outcomes are counted; off unless WORKER_METRICS_PORT is set (several workers may share a host).
const metricsEndpoint =
  config.metrics.enabled && config.metrics.workerPort !== null
    ? await startWorkerMetrics({
        db: database.db,
        host: config.host,
        port: config.metrics.workerPort,
        token: config.metrics.token,
        maxTimeMS: config.readyTimeoutMs,
        cacheMs: config.metrics.databaseCacheMs,
        warn: (message, err) => log.warn({ err }, message),
      })
    : null;
const metrics = metricsEndpoint?.metrics ?? NO_METRICS;

const worker = createAlertWorker({ db: database.db, ...config.alerts.workerSettings, logger: log, tracer: tracing.tracer });
// Deliveries of the events the alert worker produces (and test events), beside it.
const webhookWorker = createWebhookWorker({
  db: database.db,
  settings: config.webhooks,
  logger: log.child({ component: 'webhook-worker' }),
  tracer: tracing.tracer,
  metrics,
});
const exportWorker = createExportWorker({
  ctx: { db: database.db, config, now: () => new Date(), exports: config.exports },
  logger: log.child({ component: 'export-worker' }),
  tracer: tracing.tracer,
  metrics,
});
// The totals kept on write: the marks API-only services leave are drained here too (docs/rollups.md).
const rollupWorker = createRollupWorker({ db: database.db, logger: log.child({ component: 'rollup-worker' }) });

let closing = false;
async function shutdown(signal: string, exitCode = 0): Promise<void> {
  if (closing) return;
  closing = true;
  log.info({ signal }, 'draining alert worker');
  const force = setTimeout(() => process.exit(1), worker.settings.drainTimeoutMs + 10_000);
  force.unref();
  try {
    await Promise.all([worker.stop(), webhookWorker.stop(), exportWorker.stop(), rollupWorker.stop()]);
  } finally {
    await metricsEndpoint?.close();
    stopMongoSpans();
    await tracing.shutdown().catch((err: unknown) => log.warn({ err }, 'traces not all sent'));
    await database.close();
  }
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
onEngineLost = () => void shutdown('embedded engine lost', 1);

await worker.start();
await webhookWorker.start();
await exportWorker.start();
await rollupWorker.start();
log.info(
  { worker: worker.name, ...worker.settings, metricsPort: metricsEndpoint?.port ?? null },
  `alert worker running${metricsEndpoint ? `; metrics at http://${config.host}:${metricsEndpoint.port}/metrics` : ''}; Ctrl-C to stop`,
);
