/**
 * API key administration.
 *   npm run apikey -- create --tenant <RFC> [--label <text>]   prints the new key alone on the last line
 *   npm run apikey -- revoke <id-or-prefix>
 *   npm run apikey -- list --tenant <RFC>
 */
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { createApiKey, listApiKeys, revokeApiKey } from '../lib/auth/api-keys.ts';
import { isValidRfc, normalizeRfc } from '../lib/tax/rfc.ts';
import { API_SCOPES, type ApiScope } from '../lib/auth/api-key-record.ts';

const usage = 'usage: npm run apikey -- create --tenant <RFC> [--label <text>] [--scopes read,write] | revoke <id-or-prefix> | list --tenant <RFC>';
let parsed: { positionals: string[]; values: { tenant?: string; label?: string; scopes?: string; help?: boolean } };
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { tenant: { type: 'string' }, label: { type: 'string' }, scopes: { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } },
  });
} catch (err) {
  console.error(`${(err as Error).message}. ${usage}`);
  process.exit(2);
}
const { positionals, values } = parsed;
if (values.help) {
  console.log(usage);
  process.exit(0);
}
const [command, arg] = positionals;
// revoke takes one id; create and list none (a second word is a mistake, never silently dropped).
if (positionals.length > (command === 'revoke' ? 2 : 1)) {
  console.error(`unexpected argument "${positionals[command === 'revoke' ? 2 : 1]}". ${usage}`);
  process.exit(2);
}

function parseScopes(): ApiScope[] | undefined {
  if (values.scopes === undefined) return undefined;
  const scopes = values.scopes.split(',').map((s) => s.trim());
  const unknown = scopes.filter((s) => !(API_SCOPES as readonly string[]).includes(s));
  if (unknown.length || scopes.length === 0) {
    console.error(`--scopes takes a comma-separated list of ${API_SCOPES.join(', ')}. ${usage}`);
    process.exit(2);
  }
  return scopes as ApiScope[];
}

function requireTenant(): string {
  // Trimmed and upper-cased as the service stores tenants: " TGO…" would name a tenant of its own.
  const tenant = values.tenant === undefined ? undefined : normalizeRfc(values.tenant);
  if (!tenant || !isValidRfc(tenant)) {
    console.error(`--tenant must be an RFC (12 or 13 characters). ${usage}`);
    process.exit(2);
  }
  return tenant;
}

if (!['create', 'revoke', 'list'].includes(command ?? '')) {
  console.error(usage);
  process.exit(2);
}
const tenant = command === 'revoke' ? '' : requireTenant();
const scopes = parseScopes();
if (command === 'revoke' && !arg) {
  console.error(usage);
  process.exit(2);
}

const database = await openDatabase(loadConfig(), { log: (m) => console.error(m) });
try {
  await ensureIndexes(database.db);
  if (command === 'create') {
    const { key, record } = await createApiKey(database.db, tenant, values.label ?? 'cli', scopes);
    console.error(`created ${record._id} for ${tenant} (label "${record.label}", scopes ${record.scopes?.join(',')}). The key is shown once:`);
    console.log(key);
  } else if (command === 'revoke') {
    const { revoked, ambiguous } = await revokeApiKey(database.db, arg as string);
    if (!revoked) {
      console.error(ambiguous ? `"${arg}" matches several keys: use the id` : `no active key with id or prefix "${arg}"`);
      process.exitCode = 1;
    } else console.log(`revoked ${arg}`);
  } else {
    for (const k of await listApiKeys(database.db, tenant)) {
      console.log(
        `${k._id}  ${k.prefix}…  ${k.label}  scopes ${(k.scopes ?? API_SCOPES).join(',')}  created ${k.createdAt.toISOString()}  ${k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active'}`,
      );
    }
  }
} finally {
  await database.close();
}
