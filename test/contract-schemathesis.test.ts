/**
 * Contract testing against the live service with Schemathesis.
 *
 * The service runs as production runs it (scripts/start.ts in a child process,
 * API-only: its job workers off) on its own in-memory embedded engine loaded with the demo dataset; the rate
 * limit is raised through the environment (RATE_LIMIT_MAX), not switched off.
 * Schemathesis (pinned, installed into .venv/ by scripts/setup-venv.mjs) reads
 * the document the service serves at /docs/json and runs every phase
 * (examples, coverage, fuzzing, stateful through the spec's links: schedule
 * alerts → list / cancel jobs) with all of its default checks: server errors,
 * status codes, content types, response schemas and headers, negative data
 * rejected, positive data accepted, missing auth, unsupported methods, …
 *
 * Every operation of the document is tested but the zip upload (Schemathesis cannot serialize
 * application/zip without a custom serializer): the MCP transports (/mcp, /sse, /messages stream
 * JSON-RPC over SSE) are not in it but in /docs/mcp.json (test/mcp-*.test.ts cover them).
 * No hooks: this is the run a consumer makes with the published document as it
 * is. Rules a JSON Schema cannot relate (date ranges, targetMonth with dates)
 * have semantics that accept every schema-valid request (see the spec); the one
 * rule left unstated (extraData at most 8 KiB as JSON) is documented there. A
 * `cursor` in the documented form that this service did not issue for the walk
 * is a 404 (it designates no page), and webhook URLs state in their pattern (and `not`)
 * which hosts are accepted, so the positive-data check holds without hooks too.
 *
 * Knobs: CONTRACT_FUZZ_EXAMPLES (default 20 per operation in the fuzzing phase), CONTRACT_MAX_EXAMPLES (default 40:
 * the stateful phase's scenarios), CONTRACT_SEED
 * (default fixed, so a CI failure reproduces; `random` for a new one each run),
 * CONTRACT_WORKERS (default 1: with 2, Schemathesis 4.32.5's coverage phase errs on this seed, a KeyError
 * from a generation cache its threads share), CONTRACT_VERBOSE (print Schemathesis' whole report even when it passes).
 */
import t from 'tap';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import type { Db } from 'mongodb';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { startService, ROOT } from './helpers/service.ts';
import { killGroup, runInGroup, spawnInGroup } from './helpers/processes.ts';
import { testConfig } from './helpers/harness.ts';
import { ObjectId } from 'mongodb';
import { exportsCollection, insertExport } from '../lib/exports/exports-repo.ts';
import { runExport } from '../lib/exports/run-export.ts';
import { queuedExportDocument } from '../lib/exports/queue-export.ts';
import spec from '../generated/openapi.json' with { type: 'json' };

t.setTimeout(900_000);

const MAX_EXAMPLES = process.env.CONTRACT_MAX_EXAMPLES ?? '40';
const FUZZ_EXAMPLES = process.env.CONTRACT_FUZZ_EXAMPLES ?? '20';
const SEED = process.env.CONTRACT_SEED === 'random' ? String(Math.floor(Math.random() * 2 ** 31)) : (process.env.CONTRACT_SEED ?? '20261121');
const WORKERS = process.env.CONTRACT_WORKERS ?? '1';

// 1. Schemathesis in .venv, installed by the set-up (`npm test`'s pretest, `npm run test:contract`), never here: checked only.
const setup = await runInGroup(process.execPath, [path.join(ROOT, 'scripts', 'setup-venv.mjs'), '--check', '--print-bin'], {
  cwd: ROOT,
  timeout: 60_000,
}).catch((err: Error & { stdout?: string; stderr?: string }) => {
  throw new Error(
    `Schemathesis is not installed: run \`node scripts/setup-venv.mjs\`; cannot run the contract tests without it\n${err.stdout ?? ''}${err.stderr ?? ''}`,
  );
});
const st = setup.stdout.trim().split('\n').pop()!;
// Hypothesis' storage directory, as scripts/setup-venv.mjs fills it: the Unicode tables it derives (~3 CPU-s per fresh
// directory) are computed once, not in each run's working directory. No example database is in it (`--generation-database none`).
const HYPOTHESIS_STORAGE = path.join(ROOT, '.cache', 'hypothesis');
/**
 * `st` as its entry point runs it (.venv/bin/st), with the cyclic garbage collector's thresholds raised: Hypothesis
 * allocates containers by the million while the parsed 660 KB document and the strategies stay alive all run, and at
 * the defaults (700, 10, 10) the collector ran ~6,400 times for 7.8 of Schemathesis' 80 CPU-s; with a young generation
 * of 50,000 (and what is loaded at start frozen out of its scans) 124 times for 6.4. Reference counting frees memory
 * as before and cyclic garbage is still collected, less often.
 */
const ST_MAIN = [
  'import gc, sys',
  'from schemathesis.cli import schemathesis',
  'gc.freeze()',
  'gc.set_threshold(50_000, 20, 20)',
  "sys.argv[0] = 'st'",
  'sys.exit(schemathesis())',
].join('\n');
const python = path.join(path.dirname(st), process.platform === 'win32' ? 'python.exe' : 'python');

// 2. The database: in-memory engine with the demo tenants (small, every feature present). Not C1 only
// (`shortLived`): tried, no less CPU over the ~10,000 requests (150 and 165 CPU-s against 160) and a slower answer each.
const engine = await startEmbeddedMongo({});
t.teardown(() => engine.stop());
const dbName = 'contract';
{
  const { client, db } = await connectMongo(engine.uri, dbName);
  await ensureIndexes(db);
  await loadDemoData(db, { invoices: 400, trips: 400 });
  await readyExportOfTheExample(db);
  await client.close();
}

/**
 * The export whose id the spec gives as its example (ExportIdParameter), built and ready: the
 * examples phase then downloads a file from GET /api/exports/{id}/file (no export worker runs in
 * this API-only service, so an export the fuzzer queues stays queued and its file answers 409).
 * Written as POST /api/exports/datasets/financial-docs?format=csv queues one (queuedExportDocument), under that id.
 */
async function readyExportOfTheExample(db: Db): Promise<void> {
  const id: unknown = spec.components.parameters.ExportIdParameter.example;
  if (typeof id !== 'string') throw new Error('the spec gives no example for ExportIdParameter');
  const tenant = DEMO_TENANTS[0]!.rfc;
  const now = new Date();
  const doc = queuedExportDocument(new ObjectId(id), tenant, { dataset: 'financial-docs', format: 'csv', table: null, query: {} }, now);
  await insertExport(db, doc, now);
  const config = testConfig();
  await runExport({ db, config, now: () => new Date(), exports: config.exports }, tenant, doc._id);
  const built = await exportsCollection(db).findOne({ tenant, _id: doc._id });
  if (built?.status !== 'ready' || !built.rows) throw new Error(`the example's export was not built: ${JSON.stringify(built)}`);
}

// 3. The service, as `npm start` runs it, as an API-only instance (ALERT_WORKER=false, the documented
// topology with `npm run worker` elsewhere): the contract is what the HTTP answers say. With the job
// workers in-process they ran the hundreds of alert jobs the fuzzer schedules while it fuzzed, a third of
// this file's CPU, and changed job states under a seeded run; the workers have test files of their own.
// The per-tenant endpoint limit (20, a documented 409) is raised like the rate limit: the fuzzer creates hundreds.
// So is the exports quota (EXPORT_MAX_ACTIVE, a documented 429): no worker builds the exports it queues.
const service = await startService({
  mongodbUri: engine.uri,
  mongodbDb: dbName,
  env: {
    RATE_LIMIT_MAX: '10000000',
    RATE_LIMIT_IP_MAX: '10000000',
    REPORT_RATE_LIMIT_MAX: '10000000',
    WEBHOOK_MAX_ENDPOINTS: '10000',
    EXPORT_MAX_ACTIVE: '1000',
    ALERT_WORKER: 'false',
  },
});
t.teardown(() => service.stop());

/**
 * Schemathesis' environment: only what a Python process and an HTTP client need (the search path,
 * home, locale, temporary directory, proxy and CA settings). `requests` reads the whole environment
 * for proxy and netrc settings on every request; under `npm test`, with npm's and tap's ~80 variables,
 * that was ~0.3 CPU-ms of the ~10,000 requests each. Also leaves out the test runner's colour settings
 * (Schemathesis would draw progress bars) and any SCHEMATHESIS_* setting: the run is the one the file states.
 */
function plainEnv(): NodeJS.ProcessEnv {
  const keep = /^(PATH|HOME|USER|LOGNAME|LANG|LC_\w+|TZ|TMPDIR|TEMP|TMP|SYSTEMROOT|\w*_proxy|\w*_PROXY|SSL_CERT_\w+|REQUESTS_CA_BUNDLE|CURL_CA_BUNDLE)$/;
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => keep.test(name)));
}

t.test(`schemathesis: every operation, all checks, ${FUZZ_EXAMPLES} fuzzed examples each (seed ${SEED})`, async (t) => {
  const workdir = await mkdtemp(path.join(os.tmpdir(), 'schemathesis-'));
  t.teardown(() => rm(workdir, { recursive: true, force: true }));
  // The fuzzing phase (Schemathesis' settings for that phase only, in a config file: no CLI option scopes one):
  // - 20 examples per operation, was 40: half its CPU (the phase was ~60 % of Schemathesis' ~85 CPU-s, generation
  //   mostly), and it still catches a status code broken on purpose (docs/benchmarks.md, issue 39). The coverage
  //   phase before it already sends every boundary and every kind of negative value of each operation (5,596 cases).
  // - `unique-inputs`: each distinct input is sent once; Hypothesis drew an input it had sent already for ~40 % of its
  //   cases (1,007–1,091 of 2,526), and a copy is judged as its first sending was, without being sent again.
  // The stateful phase keeps 40 scenarios and repeats steps (a replayed step would give no response to follow links from).
  const config = path.join(workdir, 'schemathesis.toml');
  await writeFile(
    config,
    `[generation]\nmax-examples = ${MAX_EXAMPLES}\n\n[phases.fuzzing.generation]\nmax-examples = ${FUZZ_EXAMPLES}\nunique-inputs = true\n`,
  );
  const args = [
    '--config-file',
    config,
    'run',
    `${service.base}/docs/json`,
    '--url',
    service.base,
    '--header',
    `x-api-key: ${DEMO_TENANTS[0]!.apiKey}`,
    // Schemathesis has no serializer for application/zip (its documentation asks for a custom one, a hook): the
    // zip operation, whose one media type it is, is left out; test/sdk, contract-coverage and index-coverage call it.
    '--exclude-operation-id',
    'importDocumentsZip',
    '--seed',
    SEED,
    '--workers',
    WORKERS,
    '--request-timeout',
    '15',
    '--generation-database',
    'none',
    '--no-color',
  ];
  const started = Date.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    // In a process group of its own, killed with the test (teardown) and with this process however it ends
    // (test/helpers/processes.ts): a run that meets the file's timeout does not go on against a service left behind.
    const child = spawnInGroup(python, ['-c', ST_MAIN, ...args], {
      cwd: workdir, // Hypothesis and Schemathesis write nothing into the repository (but the tables above, in .cache/)
      env: { ...plainEnv(), HYPOTHESIS_STORAGE_DIRECTORY: HYPOTHESIS_STORAGE, PYTHONUNBUFFERED: '1', COLUMNS: '120', NO_COLOR: '1', TERM: 'dumb' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    t.teardown(() => void (child.pid && killGroup(child.pid)));
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.on('error', (err) => resolve({ code: -1, output: `${out}\ncannot run ${st}: ${err.message}` }));
    // eslint-disable-next-line no-control-regex
    child.on('close', (c) => resolve({ code: c, output: out.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '\n') }));
  });
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const summary = /(No issues found|\d+ failures?[^=\n]*|\d+ errors?[^=\n]*|\d+ warnings?[^=\n]*) in [\d.]+s/.exec(output)?.[0] ?? 'no summary line';
  t.comment(`schemathesis ${summary} (${seconds} s, seed ${SEED}; reproduce with CONTRACT_SEED=${SEED})`);
  const tested = /Tested:\s+(\d+)/.exec(output)?.[1];
  t.ok(Number(tested) >= 10, `schemathesis tested ${tested} operations`);
  t.match(output, /API Links:\s+\d+ covered \/ \d+ selected \/ \d+ total/, 'the stateful phase ran through the spec links');
  // The example's export is ready (readyExportOfTheExample): Schemathesis reached the file with data (issue 38).
  const warnings = /={3,} WARNINGS ={3,}([\s\S]*?)={3,} SUMMARY/.exec(output)?.[1] ?? '';
  t.notMatch(warnings, 'GET /api/exports/{id}/file', 'GET /api/exports/{id}/file is not among the operations Schemathesis found no test data for');
  if (code !== 0 || process.env.CONTRACT_VERBOSE) t.comment(output);
  t.equal(code, 0, `schemathesis exits 0 (${summary})`);
  // The alert worker runs too (stateful cases schedule jobs due now and cancel them while it
  // may be running them); its own bookkeeping is not a request the contract covers.
  const errors = service
    .output()
    .split('\n')
    .filter((l) => /"level":(50|60)/.test(l) && !l.includes('"component":"alert-worker"'));
  t.same(
    errors.map((l) => l.slice(0, 300)),
    [],
    'no request logged an error while being fuzzed',
  );
});
