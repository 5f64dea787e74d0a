/**
 * `npm run rollups -- [--verify] [--repair] [--tenant RFC]`
 *
 * The totals kept on write (docs/rollups.md). Without flags: rebuilds every tenant's kept days
 * from its documents, with progress, and records the store as built (what the service's
 * rollup worker does by itself on a store written before them). --verify compares every kept
 * day with the same day computed from the documents and lists the days that differ (exit 1 if
 * any); --repair also rewrites them. Database: MONGODB_URI, else the embedded engine in DATA_DIR.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { tenantsWithDocuments } from '../lib/finance/financial-docs-repo.ts';
import { rebuildTaxRollups, verifyTaxRollups } from '../lib/tax/refresh-tax-rollups.ts';

const USAGE = `usage: npm run rollups -- [--verify] [--repair] [--tenant RFC]

  (no flag)      rebuild the kept days of every tenant (or --tenant) from the documents
  --verify       compare kept days with the documents; exit 1 when any differs
  --repair       with --verify: rewrite the days that differ
  --tenant RFC   only this tenant`;

let values: { verify: boolean; repair: boolean; tenant?: string | undefined; help: boolean };
try {
  values = parseArgs({
    options: {
      verify: { type: 'boolean', default: false },
      repair: { type: 'boolean', default: false },
      tenant: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values;
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}

const database = await openDatabase(loadConfig(), { log: (m) => process.stderr.write(`${m}\n`) });
let exitCode = 0;
try {
  await ensureIndexes(database.db);
  const tenants = values.tenant ? [values.tenant] : await tenantsWithDocuments(database.db);
  if (values.verify) {
    for (const tenant of tenants) {
      const started = Date.now();
      const r = await verifyTaxRollups(database.db, tenant, { repair: values.repair });
      const what = r.mismatched.length
        ? `${r.mismatched.length} differ: ${r.mismatched.slice(0, 20).join(', ')}${r.mismatched.length > 20 ? ', …' : ''}`
        : 'all equal';
      console.log(`${tenant}: ${r.days} days checked in ${Date.now() - started} ms, ${what}${r.mismatched.length && values.repair ? ' (repaired)' : ''}`);
      if (r.mismatched.length && !values.repair) exitCode = 1;
    }
  } else {
    const started = Date.now();
    let last = 0;
    const r = await rebuildTaxRollups(database.db, {
      ...(values.tenant ? { tenants: [values.tenant] } : {}),
      onProgress: (p) => {
        if (Date.now() - last < 1000 && p.done !== p.total) return;
        last = Date.now();
        console.log(`${p.tenant}: ${p.phase} ${p.done}/${p.total} days`);
      },
    });
    console.log(`rebuilt ${r.days} days of ${r.tenants} tenants in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
} finally {
  await database.close();
}
process.exit(exitCode);
