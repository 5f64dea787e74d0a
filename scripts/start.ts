/**
 * `npm start`: the service. Without MONGODB_URI it runs on the embedded engine
 * (on disk under DATA_DIR) and loads the demo dataset when the database is empty.
 */
import './v8-heap.ts'; // first: GC tuning from the first collection on
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from '../lib/db/open.ts';
import { prepareDatabase } from '../lib/db/prepare-database.ts';
import { buildApp } from '../lib/app.ts';
import { loadDemoData, DEMO_TENANTS } from '../lib/demo/load.ts';
import { financialDocs, apiKeys } from '../lib/db/collections.ts';
import { progressReporter } from './progress.ts';
import { alertsPlugin } from '../lib/alerts/plugin.ts';
import { webhooksPlugin } from '../lib/webhooks/plugin.ts';
import { resolveWebhookEncryptionKey } from '../lib/webhooks/encryption-key.ts';

const loaded = loadConfig();
// Signing secrets are encrypted at rest; on the embedded engine the key is generated into DATA_DIR once.
const config = { ...loaded, webhooks: { ...loaded.webhooks, encryptionKey: await resolveWebhookEncryptionKey(loaded) } };
const database = await openDatabase(config, { log: (m) => console.log(m) });
// Indexes, then the derived fields of documents stored without them: before listening, so
// the payment-state filters never answer without those documents (a one-time cost on an old store).
await prepareDatabase(database.db, { log: (m) => console.log(m) });

if (database.embedded) {
  const empty = (await financialDocs(database.db).estimatedDocumentCount()) === 0 && (await apiKeys(database.db).estimatedDocumentCount()) === 0;
  if (empty) {
    const invoices = Number(process.env.DEMO_INVOICES ?? 3000);
    const trips = Number(process.env.DEMO_TRIPS ?? 3000);
    console.log(`empty database: loading the demo dataset (${invoices} invoices and ${trips} trips per tenant)`);
    await loadDemoData(database.db, { invoices, trips, onProgress: progressReporter('demo data') });
  }
}

// The alert and webhook workers run in-process unless ALERT_WORKER=false (then run `npm run worker` separately).
const app = await buildApp({ config, db: database.db, plugins: [alertsPlugin({ worker: config.worker }), webhooksPlugin({ worker: config.worker })] });
if (!config.webhooks.encryptionKey) app.log.warn('WEBHOOK_ENCRYPTION_KEY is not set: webhook operations answer 503');
let closing = false;
async function shutdown(signal: string) {
  if (closing) return;
  closing = true;
  app.log.info({ signal }, 'shutting down');
  const force = setTimeout(() => process.exit(1), 30_000);
  force.unref();
  try {
    await app.close(); // stops accepting, finishes in-flight requests, runs onClose hooks (alert drain, MCP streams)
  } finally {
    await database.close();
  }
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));

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
