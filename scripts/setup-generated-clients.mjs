#!/usr/bin/env node
// Idempotent warm-up of what the clients openapi-generator writes need to build, for
// test/consumer-matrix-openapi-generator.test.ts, which builds them offline:
//
//   `java` (--library okhttp-gson and --library native): the generated pom's dependencies and
//   plugins in Maven's local repository (~/.m2), from `mvn dependency:go-offline
//   dependency:resolve-plugins` and one `mvn package` (the compiler's and surefire's own
//   dependencies, which go-offline misses), so the test's `mvn -o package` needs no network;
//   `go`: the generated module's requirements (and those of its tests) in Go's module cache,
//   from `go mod tidy` and `go build`, so the test's build runs with the cache as its only proxy.
//
// The clients are generated once from the committed bundled document (generated/openapi.json)
// with the jar scripts/setup-openapi-generator.mjs fetched, in
// .cache/openapi-generator/clients-<version>/ (gitignored); `.ready` there marks the work done
// (the dependencies are the generator's templates', the same whatever the document holds).
// Fast when done: one stat.
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
const args = new Set(process.argv.slice(2));
const say = (msg) => process.stdout.write(`[setup-generated-clients] ${msg}\n`);

/** The clients the test builds: generator, library, directory. */
export const GENERATED_CLIENTS = [
  { generatorName: 'go', dir: 'go' },
  { generatorName: 'java', library: 'okhttp-gson', dir: 'java-okhttp-gson' },
  { generatorName: 'java', library: 'native', dir: 'java-native' },
];

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
  if (!existsSync(ready)) {
    if (!existsSync(jar)) {
      process.stderr.write(`[setup-generated-clients] ${jar} is missing: run \`node scripts/setup-openapi-generator.mjs\` first\n`);
      process.exit(1);
    }
    const started = Date.now();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const configs = GENERATED_CLIENTS.map((c) => {
      const file = path.join(dir, `${c.dir}.json`);
      const { dir: out, ...config } = c;
      writeFileSync(file, JSON.stringify({ ...config, inputSpec: path.join(root, 'generated', 'openapi.json'), outputDir: path.join(dir, out) }));
      return file;
    });
    say(`generating the go and java clients with openapi-generator ${OPENAPI_GENERATOR_VERSION}`);
    await step('openapi-generator batch', 'java', ['-jar', jar, 'batch', '--fail-fast', '--threads', '2', ...configs], dir);
    // Maven one client at a time (two runs would download into ~/.m2 at once); Go beside them.
    const maven = (async () => {
      for (const c of GENERATED_CLIENTS.filter((c) => c.generatorName === 'java')) {
        const cwd = path.join(dir, c.dir);
        say(`fetching the dependencies of the java ${c.library} client (mvn dependency:go-offline, package)`);
        await step(
          `mvn dependency:go-offline in ${cwd}`,
          'mvn',
          ['-B', '-q', 'dependency:go-offline', 'dependency:resolve-plugins', 'dependency:build-classpath'],
          cwd,
        );
        // package: the compiler's and surefire's own dependencies (the generated tests compile and run); no failure on what the document makes of them.
        await run('mvn', ['-B', '-q', '-Dmaven.test.failure.ignore=true', 'package'], cwd);
      }
    })();
    const go = (async () => {
      const cwd = path.join(dir, 'go');
      say("fetching the go client's modules (go mod tidy, go build)");
      await step(`go mod tidy in ${cwd}`, 'go', ['mod', 'tidy'], cwd);
      await step(`go build in ${cwd}`, 'go', ['build', './...'], cwd);
    })();
    await Promise.all([maven, go]);
    writeFileSync(ready, `${OPENAPI_GENERATOR_VERSION}\n`);
    say(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
if (args.has('--print-dir')) process.stdout.write(`${dir}\n`);
