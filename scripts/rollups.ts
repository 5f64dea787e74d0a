/**
 * `npm run rollups -- [--verify] [--repair] [--tenant RFC] [--kind NAME]`
 *
 * The totals kept on write (docs/rollups.md), every kind (lib/rollups/kinds.ts) or those named
 * by --kind. Without flags: rebuilds every tenant's kept totals from its documents, with
 * progress, and records the store as built (what the service's rollup worker does by itself on
 * a store written before them). --verify compares every kept day (month…) with the same
 * computed from the documents and lists those that differ (exit 1 if any); --repair also
 * rewrites them. Database: MONGODB_URI, else the embedded engine in DATA_DIR.
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { tenantsWithDocuments } from '../lib/finance/financial-docs-repo.ts';
import { ROLLUP_KINDS, selectRollupKinds } from '../lib/rollups/kinds.ts';
import { withSharedReads } from '../lib/db/shared-reads.ts';
import { isValidRfc, normalizeRfc } from '../lib/tax/rfc.ts';
import type { RollupKind } from '../lib/rollups/rollup-kind.ts';

const USAGE = `usage: npm run rollups -- [--verify] [--repair] [--tenant RFC] [--kind NAME]…

  (no flag)      rebuild the kept totals of every tenant (or --tenant) from the documents
  --verify       compare kept totals with the documents; exit 1 when any differs
  --repair       with --verify: rewrite the totals that differ
  --tenant RFC   only this tenant (exit 2 when it has no documents here)
  --kind NAME    only this kind (repeatable): ${ROLLUP_KINDS.map((k) => k.name).join(', ')}`;

let values: { verify: boolean; repair: boolean; tenant?: string | undefined; kind?: string[] | undefined; help: boolean };
let kinds: readonly RollupKind[];
try {
  values = parseArgs({
    options: {
      verify: { type: 'boolean', default: false },
      repair: { type: 'boolean', default: false },
      tenant: { type: 'string' },
      kind: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  }).values;
  kinds = selectRollupKinds(values.kind ?? []);
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
  process.exit(2);
}
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (values.repair && !values.verify) {
  process.stderr.write(`--repair rewrites what --verify finds: pass both (a rebuild of everything is the command without flags)\n\n${USAGE}\n`);
  process.exit(2);
}
// As the service and the other tools take it: trimmed, upper-cased, an RFC (a typo must not check nothing and pass).
const tenantArg = values.tenant === undefined ? undefined : normalizeRfc(values.tenant);
if (tenantArg !== undefined && !isValidRfc(tenantArg)) {
  process.stderr.write(`--tenant must be an RFC (12 or 13 characters), got "${values.tenant}"\n\n${USAGE}\n`);
  process.exit(2);
}

const database = await openDatabase(loadConfig(), { log: (m) => process.stderr.write(`${m}\n`) });
let exitCode = 0;
try {
  await ensureIndexes(database.db);
  const tenants = tenantArg ? [tenantArg] : await tenantsWithDocuments(database.db);
  let touched = 0;
  // A rebuild of several kinds reads the days a tenant's history touches once for all (lib/db/shared-reads.ts).
  await withSharedReads(async () => {
    for (const kind of kinds) {
      if (values.verify) {
        for (const tenant of tenants) {
          const started = Date.now();
          const r = await kind.verify(database.db, tenant, { repair: values.repair });
          touched += r.checked;
          const what = r.mismatched.length
            ? `${r.mismatched.length} differ: ${r.mismatched.slice(0, 20).join(', ')}${r.mismatched.length > 20 ? ', …' : ''}`
            : 'all equal';
          console.log(
            `${kind.name} ${tenant}: ${r.checked} checked in ${Date.now() - started} ms, ${what}${r.mismatched.length && values.repair ? ' (repaired)' : ''}`,
          );
          if (r.mismatched.length && !values.repair) exitCode = 1;
        }
      } else {
        const started = Date.now();
        let last = 0;
        const r = await kind.rebuild(database.db, {
          ...(tenantArg ? { tenants: [tenantArg] } : {}),
          onProgress: (p) => {
            if (Date.now() - last < 1000 && p.done !== p.total) return;
            last = Date.now();
            console.log(`${p.kind} ${p.tenant}: ${p.phase} ${p.done}/${p.total}`);
          },
        });
        touched += r.units;
        console.log(`${kind.name}: ${r.units} rebuilt for ${r.tenants} tenants in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      }
    }
  });
  if (tenantArg && touched === 0) {
    process.stderr.write(`${tenantArg} has no documents and no kept totals here: nothing was ${values.verify ? 'checked' : 'rebuilt'} (is the RFC right?)\n`);
    exitCode = 2;
  }
} finally {
  await database.close();
}
process.exit(exitCode);
