#!/usr/bin/env node
// Idempotent warm-up of what the clients openapi-generator writes need to build, for
// test/consumer-matrix-openapi-generator.test.ts, which builds them offline:
//
//   `java` (--library okhttp-gson and --library native): the generated pom's dependencies and
//   plugins in Maven's local repository (~/.m2), from `mvn dependency:go-offline
//   dependency:resolve-plugins` and one `mvn test-compile` with both compilations skipped (the
//   compiler's own dependencies, which go-offline misses, are resolved when its goals load; the
//   test compiles the clients, nothing here needs to), so the test's `mvn -o test-compile
//   dependency:build-classpath` needs no network (checked on an empty local repository, after
//   setup-openapi-generator.mjs's `mvn dependency:copy`, which fetches the dependency plugin the
//   test's parent pom uses);
//   `go`: the generated module's requirements (and those of its tests) in Go's module cache,
//   from `go mod tidy` and `go build`, so the test's build runs with the cache as its only proxy.
//
// The clients are generated once from the committed bundled document (generated/openapi.json)
// as the service serves it at `npm start`'s address (below, SERVED_AS) with the jar
// scripts/setup-openapi-generator.mjs fetched, in .cache/openapi-generator/clients-<version>/
// (gitignored); `.ready` there marks the work done (the dependencies are the generator's
// templates', the same whatever the document holds). Fast when done: one read.
//
// Flags: --force (warm again), --print-dir (print that directory on the last line), --check
// (do nothing: exit 1 naming this script when not done; what the test runs).
// Exit code 1 when Java, Maven or Go is missing or a step fails.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Read, not imported: importing that script would run it (with this script's flags).
const OPENAPI_GENERATOR_VERSION = /OPENAPI_GENERATOR_VERSION = '([^']+)'/.exec(
  readFileSync(path.join(root, 'scripts', 'setup-openapi-generator.mjs'), 'utf8'),
)[1];
const jar = path.join(root, '.cache', 'openapi-generator', `openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`);
const dir = path.join(root, '.cache', 'openapi-generator', `clients-${OPENAPI_GENERATOR_VERSION}`);
const ready = path.join(dir, '.ready');
/**
 * The go client is generated from the document the test generates it from: the committed one with the first server
 * the service names when its document is fetched as from `npm start`'s address (lib/http/served-document.ts;
 * startDemoService's `servedAs` in test/helpers/generator-service.ts), so the package compiled here is the test's byte
 * for byte and its `go build` takes it from Go's build cache (both with -trimpath: the package's directory is then no
 * part of the cache key). Should this drift from what the service serves, the test compiles the package itself:
 * slower, never wrong. `.ready` holds this stamp: another one (an older set-up's) is redone.
 */
const SERVED_AS = { url: 'http://localhost:3000', description: 'This service (the local address this document was fetched from)' };
const GO_FLAGS = '-trimpath';
const STAMP = `${OPENAPI_GENERATOR_VERSION} served-as ${SERVED_AS.url} GOFLAGS=${GO_FLAGS}\n`;
const args = new Set(process.argv.slice(2));
const say = (msg) => process.stdout.write(`[setup-generated-clients] ${msg}\n`);

/** The clients the test builds: generator, library, directory. */
export const GENERATED_CLIENTS = [
  { generatorName: 'go', dir: 'go' },
  { generatorName: 'java', library: 'okhttp-gson', dir: 'java-okhttp-gson' },
  { generatorName: 'java', library: 'native', dir: 'java-native' },
];

/**
 * Every JVM here runs a minute or two: C1 only, and Maven's and the ones it forks (through JAVA_TOOL_OPTIONS) with the
 * serial collector too, as the test runs them (test/helpers/generator-service.ts, SHORT_JVM).
 */
const SHORT_JVM = ['-XX:TieredStopAtLevel=1'];
const SHORT_JVM_TOOL_ENV = { ...process.env, JAVA_TOOL_OPTIONS: '-XX:TieredStopAtLevel=1 -XX:+UseSerialGC' };

function run(cmd, cmdArgs, cwd, env = process.env) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, cmdArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: -1, error, output }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

async function step(what, cmd, cmdArgs, cwd, env) {
  const res = await run(cmd, cmdArgs, cwd, env);
  if (res.code !== 0) {
    process.stderr.write(
      `${res.output.slice(-6000)}\n[setup-generated-clients] ${what} failed${res.error ? ` (${res.error.message})` : ''}: ` +
        'needs Java 11+, Maven and Go 1.22+ (Debian: apt-get install default-jdk-headless maven golang-go), Maven Central and the Go module proxy; ' +
        'rerun `node scripts/setup-generated-clients.mjs`\n',
    );
    process.exit(1);
  }
}

if (args.has('--check')) {
  if (!existsSync(ready)) {
    process.stderr.write(
      `[setup-generated-clients] the dependencies of the Java and Go clients openapi-generator ${OPENAPI_GENERATOR_VERSION} writes are not fetched (${ready} missing): ` +
        "run `node scripts/setup-generated-clients.mjs` (npm test's set-up, scripts/setup-test.mjs, runs it)\n",
    );
    process.exit(1);
  }
} else {
  if (args.has('--force')) rmSync(dir, { recursive: true, force: true });
  if (!existsSync(ready) || readFileSync(ready, 'utf8') !== STAMP) {
    if (!existsSync(jar)) {
      process.stderr.write(`[setup-generated-clients] ${jar} is missing: run \`node scripts/setup-openapi-generator.mjs\` first\n`);
      process.exit(1);
    }
    const started = Date.now();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const committed = JSON.parse(readFileSync(path.join(root, 'generated', 'openapi.json'), 'utf8'));
    const servedFile = path.join(dir, 'openapi.json');
    writeFileSync(servedFile, JSON.stringify({ ...committed, servers: [SERVED_AS, ...committed.servers.filter((s) => s.url !== SERVED_AS.url)] }));
    const configs = GENERATED_CLIENTS.map((c) => {
      const file = path.join(dir, `${c.dir}.json`);
      const { dir: out, ...config } = c;
      writeFileSync(file, JSON.stringify({ ...config, inputSpec: servedFile, outputDir: path.join(dir, out) }));
      return file;
    });
    say(`generating the go and java clients with openapi-generator ${OPENAPI_GENERATOR_VERSION}`);
    await step('openapi-generator batch', 'java', [...SHORT_JVM, '-jar', jar, 'batch', '--fail-fast', '--threads', '2', ...configs], dir);
    // Maven one client at a time (two runs would download into ~/.m2 at once); Go beside them.
    const maven = (async () => {
      for (const c of GENERATED_CLIENTS.filter((c) => c.generatorName === 'java')) {
        const cwd = path.join(dir, c.dir);
        say(`fetching the dependencies of the java ${c.library} client (mvn dependency:go-offline, test-compile)`);
        await step(
          `mvn dependency:go-offline in ${cwd}`,
          'mvn',
          ['-B', '-q', 'dependency:go-offline', 'dependency:resolve-plugins', 'dependency:build-classpath'],
          cwd,
          SHORT_JVM_TOOL_ENV,
        );
        // The compiler's own dependencies, resolved as its goals load; compiling ~1,000 classes here (and `package`'s
        // javadoc, as before) fetched nothing more (issue 39: set-up is on the suite's critical path).
        await step(
          `mvn test-compile (compilations skipped) in ${cwd}`,
          'mvn',
          ['-B', '-q', '-Dmaven.main.skip=true', '-Dmaven.test.skip=true', 'test-compile'],
          cwd,
          SHORT_JVM_TOOL_ENV,
        );
      }
    })();
    const go = (async () => {
      const cwd = path.join(dir, 'go');
      const env = { ...process.env, GOFLAGS: GO_FLAGS };
      say("fetching the go client's modules (go mod tidy, go build)");
      await step(`go mod tidy in ${cwd}`, 'go', ['mod', 'tidy'], cwd, env);
      await step(`go build in ${cwd}`, 'go', ['build', './...'], cwd, env);
    })();
    await Promise.all([maven, go]);
    writeFileSync(ready, STAMP);
    say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
if (args.has('--print-dir')) process.stdout.write(`${dir}\n`);
