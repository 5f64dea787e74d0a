/** The configuration: one schema (lib/config-schema.ts), validated strictly, the one reader of the environment in lib/ and handlers/. */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadConfig } from '../../lib/config.ts';
import { CONFIG_SCHEMA } from '../../lib/config-schema.ts';
import { MCP_DEFAULTS } from '../../lib/mcp/options.ts';
import { mongoClientOptions } from '../../lib/db/client.ts';
import { TABLE_END, TABLE_START } from '../../scripts/configuration-table.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

t.test('integers are decimal digits: no coercion of other number forms', async (t) => {
  for (const raw of ['12abc', '1e3', '0x10', '1.5', '0b1', 'Infinity', '']) {
    if (raw === '') t.equal(loadConfig({ PORT: raw }).port, 3000, 'empty: unset, the default');
    else t.throws(() => loadConfig({ PORT: raw }), { constructor: ConfigError, message: `PORT must be an integer between 0 and 65535 (got "${raw}")` }, raw);
  }
  t.equal(loadConfig({ PORT: ' 8080 ' }).port, 8080, 'surrounding blanks are not part of the number');
  t.throws(() => loadConfig({ PORT: '65536' }), /PORT must be an integer between 0 and 65535/);
  t.equal(loadConfig({ IMPORT_MAX_TOTAL_BYTES: '17179869184' }).imports.maxTotalBytes, 16 * 1024 ** 3, '16 GiB: beyond 32 bits');
});

t.test("the worker's metrics port: unset is no endpoint, 0 a free port, a port number validated like PORT", async (t) => {
  t.equal(loadConfig({}).metrics.workerPort, null);
  t.equal(loadConfig({ WORKER_METRICS_PORT: '' }).metrics.workerPort, null, 'empty: unset');
  t.equal(loadConfig({ WORKER_METRICS_PORT: '0' }).metrics.workerPort, 0);
  t.equal(loadConfig({ WORKER_METRICS_PORT: '9464' }).metrics.workerPort, 9464);
  for (const raw of ['65536', '-1', 'abc', '94.64'])
    t.throws(
      () => loadConfig({ WORKER_METRICS_PORT: raw }),
      { constructor: ConfigError, message: /WORKER_METRICS_PORT must be an integer between 0 and 65535/ },
      raw,
    );
});

t.test('booleans are spelled out, and nothing else', async (t) => {
  for (const raw of ['1', 'true', 'YES', 'on']) t.equal(loadConfig({ TRUST_PROXY: raw }).trustProxy, true, raw);
  for (const raw of ['0', 'false', 'No', 'off']) t.equal(loadConfig({ ALERT_WORKER: raw }).worker, false, raw);
  t.throws(() => loadConfig({ TRUST_PROXY: 'maybe' }), { constructor: ConfigError, message: 'TRUST_PROXY must be true or false (got "maybe")' });
  t.throws(() => loadConfig({ WEBHOOK_ALLOW_PRIVATE: '2' }), /WEBHOOK_ALLOW_PRIVATE must be true or false/);
});

t.test('every invalid variable is named in the one message', async (t) => {
  const err = t.throws(() => loadConfig({ MCP_MAX_SESSIONS_PER_KEY: '0', ALERT_CONCURRENCY: 'lots', LOG_LEVEL: 'loud', MONGODB_MAX_POOL_SIZE: '-1' })) as Error;
  t.match(err.message, /MCP_MAX_SESSIONS_PER_KEY must be an integer between 1 and 100000 \(got "0"\)/);
  t.match(err.message, /ALERT_CONCURRENCY must be an integer between 1 and 100 \(got "lots"\)/);
  t.match(err.message, /LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent \(got "loud"\)/);
  t.match(err.message, /MONGODB_MAX_POOL_SIZE must be an integer between 0 and 10000 \(got "-1"\)/);
  t.notMatch(err.message, /\n/, 'one line (scripts/start.ts prints it as is)');
});

t.test('the variables absorbed from lib/ and scripts/ come through the configuration', async (t) => {
  const c = loadConfig({
    MCP_SESSION_IDLE_MS: '60000',
    MCP_KEEPALIVE_MS: '0',
    MONGODB_APP_NAME: 'billing',
    MONGODB_SERVER_SELECTION_TIMEOUT_MS: '2000',
    DEMO_INVOICES: '200',
    ALERT_QUERY_TIMEOUT_MS: '500',
  });
  t.match(c.mcp, { idleTimeoutMs: 60_000, keepAliveMs: 0, maxSessionsPerKey: 10 });
  t.same(c.mongodb, { appName: 'billing', serverSelectionTimeoutMs: 2000, maxPoolSize: 20 });
  t.same(c.demo, { invoices: 200, trips: 3000 });
  t.equal(c.alerts.workerSettings.queryTimeoutMs, 500);
});

t.test("the schema's defaults are the code's own defaults where the code keeps one", async (t) => {
  const c = loadConfig({});
  const { keyCheckIntervalMs: _, ...mcpDefaults } = MCP_DEFAULTS;
  t.same(c.mcp, mcpDefaults, 'MCP');
  const driver = mongoClientOptions();
  t.same(c.mongodb, { appName: driver.appName, serverSelectionTimeoutMs: driver.serverSelectionTimeoutMS, maxPoolSize: driver.maxPoolSize }, 'MongoDB driver');
});

t.test('every variable has a description, and docs/configuration.md lists each once', async (t) => {
  const doc = readFileSync(path.join(root, 'docs/configuration.md'), 'utf8');
  const table = doc.slice(doc.indexOf(TABLE_START), doc.indexOf(TABLE_END));
  for (const [name, schema] of Object.entries(CONFIG_SCHEMA.properties)) {
    t.ok(schema.description.length > 10, `${name} is described`);
    t.equal(table.split(`| \`${name}\` |`).length - 1, 1, `${name}: one row`);
  }
});

t.test('lib/ and handlers/ read no environment but through lib/config.ts', async (t) => {
  const readers: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (file.endsWith('.ts') && file !== path.join('lib', 'config.ts') && /process\.env/.test(readFileSync(path.join(root, file), 'utf8')))
        readers.push(file);
    }
  };
  walk('lib');
  walk('handlers');
  t.same(readers, []);
});
