/**
 * `npm start`: the service. Without MONGODB_URI this script launches the embedded engine
 * (on disk under DATA_DIR; scripts/embedded-mongo/: launcher, supervisor, DATA_DIR checks, settings
 * EMBEDDED_MONGO_*) and loads the demo dataset when the database is empty. The service
 * (buildApp, lib/) is handed the connected database and the engine's health as callbacks
 * (`databaseProblem` for /ready, `livenessProblem` for /health); it knows only MongoDB.
 *
 * Stopping (SIGINT, SIGTERM: to this process alone, or to its whole process group as a
 * terminal's Ctrl-C and npm relaying it send them; repeated signals change nothing):
 * the service stops accepting connections and drains its requests (imports stop at their next
 * batch with 503 `shutting_down`) and its job workers, closes its database client, and only
 * then stops the embedded engine (which runs in a process group of its own, out of reach of
 * the group's signal), and exits 0. If the embedded engine dies and cannot be restarted
 * (scripts/embedded-mongo/supervisor.ts), /health answers 503 and the process exits 1.
 *
 * Starting: on the embedded engine, DATA_DIR must be creatable, writable and have some free space
 * (scripts/embedded-mongo/data-dir.ts), and no other service may be running on it (DATA_DIR/service.lock holds
 * its PID; a lock left by a killed service is taken over). Any of these, a bad configuration or
 * an engine that cannot open its store: one line on stderr naming the path and the cause, exit 1.
 * CLI tools (npm run apikey, import, seed, worker) still attach to this service's engine.
 */
import './v8-heap.ts'; // first: GC tuning from the first collection on
import path from 'node:path';
import { ConfigError, loadConfig, type AppConfig } from '../lib/config.ts';
import { EmbeddedEngineInUseError, openDatabase } from './embedded-mongo/open-database.ts';
import { engineSupervisionSettings, type EngineSupervisionSettings } from './embedded-mongo/settings.ts';
import { acquireServiceLock, checkDataDir, DataDirError, fsCause } from './embedded-mongo/data-dir.ts';
import { EmbeddedMongoStartError, startFailureSummary } from './embedded-mongo/launcher.ts';
import { progressReporter } from './progress.ts';
import { resolveWebhookEncryptionKey } from '../lib/webhooks/encryption-key.ts';
import { refuseArguments } from './no-arguments.ts';

/**
 * A start-up failure a person can act on (configuration, DATA_DIR, the engine's store): one line
 * naming the path and the cause on stderr, exit 1, no stack trace. Anything else is a bug: thrown.
 */
function failStart(err: unknown): never {
  const e = err as NodeJS.ErrnoException;
  const line =
    err instanceof ConfigError || err instanceof DataDirError || err instanceof EmbeddedEngineInUseError
      ? err.message
      : err instanceof EmbeddedMongoStartError
        ? `cannot start the embedded database on DATA_DIR ${path.resolve(loaded.dataDir)}: ${startFailureSummary(err)}`
        : e && typeof e === 'object' && typeof e.code === 'string' && typeof e.path === 'string'
          ? `cannot use ${e.path}: ${fsCause(e)}`
          : null;
  if (line === null) throw err;
  console.error(line);
  process.exit(1);
}

refuseArguments(
  'npm start',
  'usage: npm start   the service on PORT (3000) with demo data on the embedded engine in DATA_DIR (./data), or on MONGODB_URI; every setting: docs/configuration.md',
);

let loaded: AppConfig;
// The embedded engine's own settings (EMBEDDED_MONGO_*): the launcher's, not the service's (lib/config.ts).
let engineSettings: EngineSupervisionSettings;
try {
  loaded = loadConfig();
  engineSettings = engineSupervisionSettings();
  if (!loaded.mongodbUri) {
    // Before anything writes there (the webhook key, the engine's store): writable, some free space,
    // and no other service on it (DATA_DIR/service.lock, removed at exit, taken over after a kill -9).
    checkDataDir(loaded.dataDir);
    acquireServiceLock(loaded.dataDir);
  }
} catch (err) {
  failStart(err);
}
// The data's and the service's modules (the service's take about 10 s of Node's time on a loaded
// machine) load while the embedded engine starts, a JVM working on the other core. Each is awaited
// where it is first needed, which throws its failure; until then a rejection is not unhandled.
const dataModules = Promise.all([
  import('../lib/prepare-database.ts'),
  import('./demo/load.ts'),
  import('../lib/db/collections.ts'),
  import('../lib/auth/api-keys.ts'),
]);
const serviceModules = Promise.all([
  import('../handlers/app.ts'),
  import('../lib/alerts/plugin.ts'),
  import('../lib/webhooks/plugin.ts'),
  import('../lib/exports/plugin.ts'),
  import('../lib/rollups/rollup-plugin.ts'),
]);
dataModules.catch(() => undefined);
serviceModules.catch(() => undefined);
// Signing secrets are encrypted at rest; on the embedded engine the key is generated into DATA_DIR once.
const config = { ...loaded, webhooks: { ...loaded.webhooks, encryptionKey: await resolveWebhookEncryptionKey(loaded).catch(failStart) } };
// Set once the service exists: the engine supervisor's give-up stops it with exit code 1.
let onEngineLost: (reason: string) => void = (reason) => {
  console.error(`embedded database engine lost before the service started: ${reason}`);
  process.exit(1);
};
// `service`: its own supervised engine, never one another process started (scripts/embedded-mongo/open-database.ts).
const database = await openDatabase(config, {
  mode: 'service',
  enginePort: engineSettings.port,
  log: (m) => console.log(m),
  supervision: { maxRestarts: engineSettings.maxRestarts, windowMs: engineSettings.restartWindowMs, onGiveUp: (reason) => onEngineLost(reason) },
}).catch(failStart);
const [{ prepareDatabase }, { loadDemoData, demoLoadCutShort, DEMO_TENANTS }, { financialDocs }, { apiKeys }] = await dataModules;
// Indexes, then the derived fields of documents stored without them: before listening, so
// the payment-state filters never answer without those documents (a one-time cost on an old store).
await prepareDatabase(database.db, { log: (m) => console.log(m) });

// The demo dataset loads while the service is built (Node builds the routes while the engine
// writes); the service listens, and its workers (the rollup worker among them) start, only once
// it is loaded, so the first answer serves all of it.
let demoLoaded: Promise<unknown> = Promise.resolve();
if (database.embedded) {
  const empty = (await financialDocs(database.db).estimatedDocumentCount()) === 0 && (await apiKeys(database.db).estimatedDocumentCount()) === 0;
  const cutShort = !empty && (await demoLoadCutShort(database.db));
  if (empty || cutShort) {
    const { invoices, trips } = config.demo;
    console.log(
      `${empty ? 'empty database' : 'the demo load of an earlier start was cut short'}: loading the demo dataset (${invoices} invoices and ${trips} trips per tenant)`,
    );
    demoLoaded = loadDemoData(database.db, { invoices, trips, onProgress: progressReporter('demo data'), rollups: 'worker', drop: cutShort, resumable: true });
    demoLoaded.catch(() => undefined); // thrown where awaited, before listening
  }
}

const [{ buildApp }, { alertsPlugin }, { webhooksPlugin }, { exportsPlugin }, { rollupPlugin }] = await serviceModules;
// The alert, webhook and export workers run in-process unless ALERT_WORKER=false (then run `npm run worker` separately).
// The service sees the database and the engine's health (the supervisor's state: /ready, /health), nothing of the engine.
const app = await buildApp({
  config,
  db: database.db,
  plugins: [alertsPlugin({ worker: config.worker }), webhooksPlugin({ worker: config.worker }), exportsPlugin({ worker: config.worker }), rollupPlugin()],
  databaseProblem: database.health.databaseProblem,
  livenessProblem: database.health.livenessProblem,
});
database.supervisor?.useLogger(app.log);
if (!config.webhooks.encryptionKey) app.log.warn('WEBHOOK_ENCRYPTION_KEY is not set: webhook operations answer 503');
let closing = false;
async function shutdown(why: string, exitCode: number) {
  if (closing) {
    app.log.info({ signal: why }, 'already shutting down');
    return;
  }
  closing = true;
  app.log.info({ signal: why }, 'shutting down: draining requests and workers, then stopping the database');
  const force = setTimeout(() => {
    app.log.error('shutdown did not complete within 30 s; exiting');
    process.exit(1);
  }, 30_000);
  force.unref();
  try {
    await app.close(); // stops accepting, finishes in-flight requests, runs onClose hooks (worker drains, MCP streams)
    app.log.info('requests and workers drained');
  } finally {
    await database.close(); // the client, then the embedded engine last
    if (database.supervisor) app.log.info('embedded database engine stopped');
  }
  // Under `npm start` the code is npm's to hide (it re-raises the signal it was sent): the log keeps it.
  app.log.info({ exitCode }, 'exiting');
  process.exit(exitCode);
}
process.on('SIGTERM', () => void shutdown('SIGTERM', 0));
process.on('SIGINT', () => void shutdown('SIGINT', 0));
// A supervisor (systemd, Kubernetes, pm2) restarts a process that exits non-zero; /health says 503 meanwhile.
// The engine is gone for good: close the client first, so what still waits for a server (requests,
// the workers' lock hand-back) fails at once instead of after the server selection timeout.
onEngineLost = (reason) => void database.client.close(true).finally(() => shutdown(`embedded engine lost: ${reason}`, 1));

// A stop signal during the load (handled from here on) closes the database under it; shutdown() exits.
await demoLoaded.catch((err: unknown) => {
  if (!closing) throw err;
});
if (closing) await new Promise<never>(() => undefined);
await app.listen({ port: config.port, host: config.host });
const base = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${(app.server.address() as { port: number }).port}`;
console.log(`\nFreight back-office API listening on ${base}`);
console.log(`  Swagger UI:    ${base}/docs`);
console.log(`  OpenAPI:       ${base}/docs/json`);
console.log(`  MCP:           ${base}/mcp (streamable HTTP), ${base}/sse (legacy SSE)`);
if (database.embedded) {
  console.log('  Demo API keys:');
  for (const t of DEMO_TENANTS) console.log(`    ${t.rfc}  ${t.name.padEnd(32)} x-api-key: ${t.apiKey}`);
  console.log(`  Try: curl -H 'x-api-key: ${DEMO_TENANTS[0]?.apiKey}' '${base}/api/financial-docs?limit=2'`);
}
