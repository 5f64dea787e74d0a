/**
 * `npm run seed -- [--invoices N] [--trips N] [--seed S] [--drop]`
 *
 * Loads the deterministic demo dataset (two tenants, TGO and FNO, with their
 * API keys) into MONGODB_URI when set, else into the embedded engine under
 * DATA_DIR (reusing one that `npm start` is running). Database: MONGODB_DB
 * (default `freight`). Without --drop, a database that already holds the demo
 * tenants is left as it is.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { DEFAULT_DEMO_SEED, DEMO_TENANTS, loadDemoData } from './demo/load.ts';
import { progressReporter } from './progress.ts';
import type { RollupProgress } from '../lib/rollups/rollup-kind.ts';

const USAGE = `usage: npm run seed -- [--invoices N] [--trips N] [--seed S] [--drop]

  --invoices N   financial documents per tenant (default 3000)
  --trips N      trips per tenant (default 3000)
  --seed S       dataset seed (default ${DEFAULT_DEMO_SEED}); same seed, same data
  --drop         delete the demo tenants' documents, trips and settings first

Environment: MONGODB_URI (else the embedded engine in DATA_DIR, default ./data), MONGODB_DB (default freight).`;

function fail(message: string): never {
  process.stderr.write(`${message}\n\n${USAGE}\n`);
  process.exit(2);
}

function count(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined) return fallback;
  // Digits only: Number('') is 0, so an empty value (an unset shell variable) would load nothing and, with --drop, erase.
  if (!/^\d[\d_]*$/.test(raw)) fail(`--${name} must be an integer between 0 and 10,000,000 (got "${raw}")`);
  const n = Number(raw.replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 0 || n > 10_000_000) fail(`--${name} must be an integer between 0 and 10,000,000 (got "${raw}")`);
  return n;
}

let parsed: ReturnType<typeof parse>;
function parse() {
  return parseArgs({
    options: {
      invoices: { type: 'string' },
      trips: { type: 'string' },
      seed: { type: 'string' },
      drop: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: false,
    strict: true,
  });
}
try {
  parsed = parse();
} catch (err) {
  fail((err as Error).message);
}
const { values } = parsed;
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const invoices = count('invoices', values.invoices, 3000);
const tripCount = count('trips', values.trips, 3000);
const seed = values.seed === undefined ? DEFAULT_DEMO_SEED : /^-?\d+$/.test(values.seed) ? Number(values.seed) : NaN;
if (!Number.isSafeInteger(seed)) fail(`--seed must be an integer (got "${values.seed}")`);

const config = loadConfig();
const database = await openDatabase(config, { log: (m) => process.stderr.write(`${m}\n`) });
async function run(): Promise<void> {
  await ensureIndexes(database.db);
  const tenants = DEMO_TENANTS.map((t) => t.rfc);
  if (!values.drop) {
    const [docs, trs] = await Promise.all([
      financialDocs(database.db).countDocuments({ company: { $in: tenants } }),
      trips(database.db).countDocuments({ company: { $in: tenants } }),
    ]);
    if (docs + trs > 0) {
      process.stderr.write(
        `the demo tenants already have ${docs} financial documents and ${trs} trips in "${config.mongodbDb}": nothing loaded (pass --drop to replace them)\n`,
      );
      return;
    }
  }
  process.stderr.write(
    `loading the demo dataset into "${config.mongodbDb}": ${invoices} financial documents and ${tripCount} trips per tenant, seed ${seed}${values.drop ? ' (replacing existing demo data)' : ''}\n`,
  );
  const started = Date.now();
  const results = await loadDemoData(database.db, {
    invoices,
    trips: tripCount,
    seed,
    drop: values.drop,
    onProgress: progressReporter('seed'),
    onRollupProgress: rollupProgressReporter(),
  });
  const secs = ((Date.now() - started) / 1000).toFixed(1);
  for (const r of results) {
    const t = DEMO_TENANTS.find((x) => x.rfc === r.tenant)!;
    const dup = r.duplicates ? `, ${r.duplicates} already present` : '';
    process.stdout.write(
      `${t.rfc}  ${t.name.padEnd(32)} ${r.financialDocs} documents, ${r.trips} trips, ${r.receivedDocs} received${dup}  x-api-key: ${t.apiKey}\n`,
    );
  }
  process.stdout.write(`done in ${secs} s\n`);
}

/** One line a second at most, and each kind's last, with the time since the documents were in. */
function rollupProgressReporter(): (p: RollupProgress) => void {
  let started = 0;
  let last = 0;
  return (p) => {
    started ||= Date.now();
    if (Date.now() - last < 1000 && p.done !== p.total) return;
    last = Date.now();
    process.stderr.write(`rollups ${p.kind} ${p.tenant}: ${p.phase} ${p.done}/${p.total} (${((Date.now() - started) / 1000).toFixed(0)} s)\n`);
  };
}

let exitCode = 0;
try {
  await run();
} catch (err) {
  process.stderr.write(`seed failed: ${(err as Error).stack ?? String(err)}\n`);
  exitCode = 1;
} finally {
  await database.close();
}
process.exit(exitCode);
