/**
 * What the client-generator tests share (openapi-generator, consumer-matrix): a command
 * runner that reports the output of a failure, the tsconfig a generated TypeScript consumer
 * compiles under, and the service as `npm start` runs it (scripts/start.ts; no OAuth, no workers) on the in-memory
 * engine with one dense month of the demo tenants, its served document saved to a work
 * directory the test removes.
 */
import type { Test } from 'tap';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import type { Db } from 'mongodb';
import { startEmbeddedMongo } from '../../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { ensureIndexes } from '../../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../../scripts/demo/load.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { startService, ROOT } from './service.ts';
import { runInGroup, type RunError } from './processes.ts';

/**
 * JVM options for the short Java runs of these tests (the openapi-generator batch, the java consumers): the C1
 * compiler only. C2's optimising threads pay off in long-lived JVMs; in a run of a minute they nearly doubled the CPU
 * time of one batch of the two java clients (17.6 s user without, 9.7 s with, on the shared 2-core machine).
 */
export const SHORT_JVM = ['-XX:TieredStopAtLevel=1'];

/**
 * The same for every JVM a tool starts on its own (Maven, and the javac process the okhttp-gson pom forks), through the
 * variable each JVM reads at launch, plus the serial collector (small heaps, one core's worth of work). The two java
 * clients' `mvn package` (compile, test-compile, javadoc, source jars): 210 CPU-s with the defaults, 79 CPU-s with
 * these (1,087 s and 245 s wall, on the shared 2-core machine at a load average of 14–21); the test now runs
 * `mvn test-compile` (no javadoc or jars): 26 CPU-s. Every such JVM then
 * prints "Picked up JAVA_TOOL_OPTIONS" on stderr: for build tools only, not for a run whose output is read.
 */
export const SHORT_JVM_TOOL_ENV = { JAVA_TOOL_OPTIONS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' };

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  timeout?: number;
}

/**
 * Runs a command; a failure reports its output. In a process group of its own (runInGroup): a timeout kills
 * what the tool started too (Maven's javac, go's compilers), and a file that times out leaves none of it running.
 */
export async function run(cmd: string, args: string[], opts: RunOptions = {}): Promise<string> {
  try {
    const { stdout, stderr } = await runInGroup(cmd, args, {
      cwd: opts.cwd ?? ROOT,
      env: opts.env ?? process.env,
      timeout: opts.timeout ?? 180_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    return `${stdout}${stderr}`;
  } catch (err) {
    const e = err as RunError;
    throw new Error(`${cmd} ${args.join(' ')} failed: ${e.message}\n${e.stdout ?? ''}${e.stderr ?? ''}`.slice(0, 8000));
  }
}

/**
 * A tool `npm test`'s set-up (scripts/setup-test.mjs) built or fetched before tap started: the last
 * line its setup script prints in `--check` mode (`--print-bin`, `--print-jar`, …), the tool's path.
 * Nothing is built or downloaded here, inside a test's timeout: a tool not set up fails the test
 * at once with the command to run.
 */
export async function toolPath(script: string, flag: string): Promise<string> {
  try {
    return (await run(process.execPath, [path.join('scripts', script), '--check', flag], { timeout: 60_000 })).trim().split('\n').pop()!;
  } catch (err) {
    throw new Error(
      `a tool this test needs is not set up: run \`node scripts/${script}\` (or \`node scripts/setup-test.mjs\`, npm test's pretest, for all of them)\n${(err as Error).message}`,
    );
  }
}

/** A generated TypeScript consumer's tsconfig: its own lib, files and extra options over what all of them share. */
export interface ConsumerTsconfig {
  compilerOptions: { lib: string[] } & Record<string, unknown>;
  include: string[];
  exclude?: string[];
}

/** Where tsc keeps what it knows of a consumer's last build (compileConsumer), beside its tsconfig. */
const BUILD_INFO = 'tsconfig.tsbuildinfo';

/** The compiler options of a consumer built by compileConsumer (writeConsumerTsconfig's compilerOptions). */
export const INCREMENTAL = { incremental: true, tsBuildInfoFile: BUILD_INFO };

/**
 * Writes a consumer's tsconfig: `tsc --strict`, ES2022 modules resolved as Node resolves them (what a user's project
 * compiling a generated client would set), emitted to dist/ beside it.
 */
export async function writeConsumerTsconfig(file: string, { compilerOptions, ...files }: ConsumerTsconfig): Promise<void> {
  await writeFile(
    file,
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        outDir: 'dist',
        skipLibCheck: true,
        types: ['node'],
        ...compilerOptions,
      },
      ...files,
    }),
  );
}

/**
 * `tsc -p <dir>/tsconfig.json` (written by writeConsumerTsconfig with INCREMENTAL), incremental across runs (issue 39: the suite
 * within 15 minutes): the build info and dist/ of the last run of `name` are kept in .cache/consumer-tsc/ (per
 * checkout and TypeScript version) and put back beside the tsconfig first. The build info holds the content hash
 * of every file of the program (the generated code, the consumer, the libraries' types) and its diagnostics,
 * errors included: tsc re-checks and re-emits every file whose content, or whose view of another file, changed,
 * and reports the kept errors of the others, so the outcome is a full build's; a document served unchanged is only
 * re-read and hashed, not checked again. What tsc printed when it failed is in the error, as `run` reports it.
 */
export async function compileConsumer(dir: string, name: string, opts: RunOptions = {}): Promise<string> {
  const typescript = path.join(ROOT, 'node_modules', 'typescript');
  const { version } = JSON.parse(readFileSync(path.join(typescript, 'package.json'), 'utf8')) as { version: string };
  const key = createHash('sha256').update(`${ROOT}\n${version}\n${name}`).digest('hex').slice(0, 16);
  const cache = path.join(ROOT, '.cache', 'consumer-tsc', `${name}-${key}`);
  if (existsSync(path.join(cache, BUILD_INFO))) {
    await copyFile(path.join(cache, BUILD_INFO), path.join(dir, BUILD_INFO));
    if (existsSync(path.join(cache, 'dist'))) await cp(path.join(cache, 'dist'), path.join(dir, 'dist'), { recursive: true });
  }
  try {
    return await run(path.join(typescript, 'bin', 'tsc'), ['-p', path.join(dir, 'tsconfig.json')], { cwd: dir, ...opts });
  } finally {
    // Kept whether it compiled or not (its errors are in the build info); replaced whole, so a concurrent run reads
    // one run's build info and output or the other's, never a mix.
    if (existsSync(path.join(dir, BUILD_INFO))) {
      const next = `${cache}.${process.pid}`;
      await rm(next, { recursive: true, force: true });
      await mkdir(next, { recursive: true });
      await copyFile(path.join(dir, BUILD_INFO), path.join(next, BUILD_INFO));
      if (existsSync(path.join(dir, 'dist'))) await cp(path.join(dir, 'dist'), path.join(next, 'dist'), { recursive: true });
      await rm(cache, { recursive: true, force: true });
      await rename(next, cache);
    }
  }
}

export interface DemoService<T> {
  base: string;
  /** The first demo tenant's key. */
  key: string;
  /** One of that tenant's financial documents. */
  docId: string;
  /** Whatever `prepare` read from the database before the service started. */
  prepared: T;
  /** A temporary directory, removed at teardown. */
  work: string;
  /** The document the service serves at /docs/json, saved in `work`. */
  specFile: string;
}

/** The period the calls ask for: the months the demo data covers most densely. */
export const PERIOD = { startDate: '2026-01-01', endDate: '2026-12-31' };

/**
 * The address `npm start` listens at by default. The served document names the loopback address it was fetched from
 * as its first server (lib/http/served-document.ts); fetched as from this one (`servedAs`), it is the same in every
 * run, whatever port the test's service has: what a user running `npm start` gets at http://localhost:3000/docs/json.
 */
export const NPM_START_ORIGIN = 'http://localhost:3000';

/** GET `url` with the Host header of `origin` (fetch sends the URL's own host, whatever the headers say). */
function getAs(url: string, origin: string): Promise<string> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { host: new URL(origin).host } }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`${url}: ${res.statusCode} ${body.slice(0, 500)}`))));
      })
      .on('error', reject);
  });
}

export interface DemoServiceOptions {
  /** The loopback origin the document is fetched as (its Host header), so it names that address, not the service's port. */
  servedAs?: string;
}

export async function startDemoService<T>(
  t: Test,
  dbName: string,
  prepare: (db: Db, tenant: string) => Promise<T>,
  { servedAs }: DemoServiceOptions = {},
): Promise<DemoService<T>> {
  // A test file's engine lives a few minutes: C1 only costs less CPU than it saves (launcher.ts).
  const engine = await startEmbeddedMongo({ shortLived: true });
  t.teardown(() => engine.stop());
  const tenant = DEMO_TENANTS[0]!.rfc;
  const { client, db } = await connectMongo(engine.uri, dbName);
  let docId: string;
  let prepared: T;
  try {
    await ensureIndexes(db);
    // One dense month: some legs are still on the road (offloaded volumes null) when the data ends.
    await loadDemoData(db, { invoices: 300, trips: 300, months: 1 });
    docId = String((await financialDocs(db).findOne({ company: tenant }, { projection: { _id: 1 } }))?._id);
    prepared = await prepare(db, tenant);
  } finally {
    await client.close();
  }
  const service = await startService({
    mongodbUri: engine.uri,
    mongodbDb: dbName,
    // OAuth off: the clients call REST with an API key, and /docs/json is the same without it; its authorization
    // server's start (keys, provider) is work none of these tests use, and under the compiles beside it took
    // more than Fastify's 10 s plugin budget on the shared 2-core machine. An API-only instance too (ALERT_WORKER=false,
    // the documented topology with `npm run worker` elsewhere): no check here waits on a job, and the workers' polls
    // cost the service and the engine ~2.3 CPU-s a minute while the clients compile (idle: 1.87 + 0.46 → 0.48 + 0.08
    // CPU-s a minute; issue 39).
    env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', REPORT_RATE_LIMIT_MAX: '100000', OAUTH_ENABLED: 'false', ALERT_WORKER: 'false' },
    // Started beside generators and compilers: on the shared 2-core machine a start took more than the default 60 s.
    timeoutMs: 180_000,
  });
  t.teardown(() => service.stop());
  const work = await mkdtemp(path.join(os.tmpdir(), `${dbName}-`));
  t.teardown(() => rm(work, { recursive: true, force: true }));
  const specFile = path.join(work, 'openapi.json');
  const url = `${service.base}/docs/json`;
  await writeFile(specFile, servedAs ? await getAs(url, servedAs) : await (await fetch(url)).text());
  return { base: service.base, key: DEMO_TENANTS[0]!.apiKey, docId, prepared, work, specFile };
}
