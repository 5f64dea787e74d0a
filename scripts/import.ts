/**
 * Imports a carrier's CFDI 4.0 XML (and zips of them) into the database the
 * service reads, for one tenant:
 *
 *   npm run import -- --tenant <RFC> <files or folders…> [--json]
 *
 * Folders are walked recursively: .xml, .zip and .txt (the SAT bulk download's
 * metadata) files are read; anything else, e.g. the PDF of each invoice that
 * PAC and SAT downloads come with, is not a CFDI: ignored, and listed as such.
 * Same rules and report as POST /api/imports (lib/imports/import-documents.ts).
 * Prints a summary, every rejected file and metadata line with its reason, and
 * the ignored files (bounded; `--json`: the whole report). Exit code 0 when
 * every CFDI was imported or skipped (ignored files do not count), 3 when any
 * file or metadata line was rejected, 2 on a usage error (docs/importing.md,
 * test/imports/operations.ts).
 */
import { readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../lib/config.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { prepareDatabase } from '../lib/prepare-database.ts';
import { isValidRfc, normalizeRfc } from '../lib/tax/rfc.ts';
import { importDocuments } from '../lib/imports/import-documents.ts';
import { formatOfName, type ImportInput } from '../lib/imports/import-sources.ts';

const usage = 'usage: npm run import -- --tenant <RFC> <files or folders…> [--json]';
let parsed: { positionals: string[]; values: { tenant?: string; json?: boolean; help?: boolean } };
try {
  parsed = parseArgs({
    allowPositionals: true,
    options: { tenant: { type: 'string' }, json: { type: 'boolean', default: false }, help: { type: 'boolean', short: 'h', default: false } },
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
// Trimmed and upper-cased as the service stores tenants (lib/tax/rfc.ts).
const tenant = values.tenant === undefined ? undefined : normalizeRfc(values.tenant);
if (!tenant || !isValidRfc(tenant) || positionals.length === 0) {
  console.error(!tenant || !isValidRfc(tenant) ? `--tenant must be an RFC (12 or 13 characters). ${usage}` : usage);
  process.exit(2);
}

/** Files to import, in a stable order: explicit files as given, folders walked (sorted); files that are not CFDI marked ignored. */
async function* filesOf(args: string[]): AsyncGenerator<ImportInput> {
  for (const arg of args) {
    const info = await stat(arg).catch(() => null);
    if (!info) {
      yield { name: arg, rejection: 'no such file or folder' };
      continue;
    }
    if (info.isFile()) {
      yield { name: arg, path: arg };
      continue;
    }
    if (!info.isDirectory()) {
      yield { name: arg, rejection: 'not a regular file or folder (a device, a pipe or a socket)' };
      continue;
    }
    const walk = async function* (dir: string): AsyncGenerator<ImportInput> {
      let entries;
      try {
        entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => a.name.localeCompare(b.name));
      } catch (err) {
        // An unreadable folder is rejected with its reason; the rest of the walk is imported.
        yield { name: dir, rejection: `cannot read the folder (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})` };
        return;
      }
      for (const e of entries) {
        const full = path.join(dir, e.name);
        if (e.isDirectory()) yield* walk(full);
        else if (e.isFile()) yield formatOfName(e.name) === 'other' ? { name: full, ignored: true } : { name: full, path: full };
        else if (e.isSymbolicLink()) {
          // A link to a file is read as the file; a link to a folder is not followed (links can loop).
          const target = await stat(full).catch(() => null);
          if (target?.isFile()) yield formatOfName(e.name) === 'other' ? { name: full, ignored: true } : { name: full, path: full };
          else yield { name: full, rejection: target ? 'a symbolic link to a folder is not followed: give the folder itself' : 'a symbolic link to nothing' };
        }
      }
    };
    yield* walk(arg);
  }
}

const config = loadConfig();
const database = await openDatabase(config, { log: (m) => console.error(m) });
let rejected = 0;
try {
  // As the service does at start: documents stored without their derived fields would
  // otherwise compare as changed and be rewritten by a re-import.
  await prepareDatabase(database.db, { log: (m) => console.error(m) });
  const started = Date.now();
  const report = await importDocuments({ db: database.db, config, now: () => new Date() }, tenant, filesOf(positionals), {
    onFile: (result, done) => {
      if (done % 500 === 0) console.error(`[import] ${done} files…`);
      if (values.json) return;
      if (result.status === 'rejected') console.error(`rejected ${result.name}: ${result.reason}`);
      for (const l of result.metadata?.rejectedLines ?? []) console.error(`rejected ${result.name} line ${l.line}: ${l.reason}`);
      if (result.metadata?.moreRejectedLines) console.error(`rejected ${result.name}: ${result.metadata.moreRejectedLines} more lines`);
    },
  });
  rejected = report.summary.rejected + report.summary.rejectedLines;
  if (values.json) console.log(JSON.stringify(report, null, 2));
  else {
    const s = report.summary;
    console.log(
      `${tenant}: ${s.files} files in ${((Date.now() - started) / 1000).toFixed(1)} s: ${s.created} created, ${s.updated} updated, ${s.skipped} skipped, ${s.rejected} rejected`,
    );
    if (s.ignored) {
      const { names } = report.ignored;
      console.log(
        `${s.ignored} files ignored (not CFDI): ${names.slice(0, 10).join(', ')}${s.ignored > 10 ? `, and ${s.ignored - Math.min(10, names.length)} more` : ''}`,
      );
    }
    for (const f of report.files) {
      const m = f.metadata;
      if (m)
        console.log(
          `${f.name}: SAT metadata, ${m.lines} lines: ${m.cancelled} cancellations recorded, ${m.alreadyCancelled} recorded before, ${m.vigente} vigente, ${m.notImported} about CFDI not imported, ${m.otherTaxpayers} of other taxpayers, ${m.rejectedLines.length + m.moreRejectedLines} rejected`,
        );
    }
    const pending = report.files.filter((f) => f.pendingInvoices?.length).length;
    if (pending) console.log(`${pending} payments, credit notes or cancellations wait for their invoice; they apply when it is imported`);
  }
} finally {
  await database.close();
}
process.exit(rejected ? 3 : 0);
