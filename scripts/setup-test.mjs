#!/usr/bin/env node
/**
 * `npm test`'s set-up (pretest): everything the tests run is built, fetched or installed here,
 * before tap starts, never inside a test's timeout (issue 33: a cold `go install` of
 * oapi-codegen took more than a test's 300 s on a loaded machine). The tests only check their
 * tool is there (each setup script's `--check`) and fail at once naming the command if not.
 * Every step is idempotent and a stat or two when done already.
 *
 *   scripts/setup.mjs --skip-engine → setup-tap.mjs  the npm packages, then tap's Test class (the static checks start here too)
 *                     → setup-test-bundle.mjs        and the test files' bundle (test/helpers/test-bundle.mjs)
 *   scripts/setup.mjs --skip-npm --skip-archive      the engine's jar (Maven), beside the npm packages
 *                     → setup.mjs --skip-npm         its class archive (written with tsx: once the npm packages are in too)
 *                     → setup-openapi-generator      the openapi-generator CLI jar (Maven, after the engine's Maven build)
 *                       → setup-generated-clients    the dependencies of the go and java clients it writes (Maven, Go modules)
 *   scripts/setup-venv.mjs                           the Python tools (.venv): Schemathesis, openapi-python-client, mcp, setuptools
 *   scripts/setup-oapi-codegen.mjs                   oapi-codegen and the Go consumer's modules (go install, go mod tidy)
 *   scripts/setup-redis.mjs → setup-chromium.mjs     redis-server, then Chromium, then poppler-utils (pdftotext, pdftoppm),
 *                     → setup-poppler.mjs            from Debian (apt, one after the other)
 *
 * With --checks (`npm test`'s pretest), the static checks run beside those lines too, as soon as
 * the npm packages are installed (not after the engine's Maven build): the type check and ESLint
 * on one TypeScript program (scripts/typecheck-lint.mjs), generated/ freshness, the spec lint and
 * Prettier (`npm run checks` runs the same one after another). The first is one process on one
 * core for a minute or more, the others one after another on a second lane, while the set-up
 * mostly waits on downloads and Maven. Their output is printed whole when each ends; one failing
 * fails the set-up, so tap does not start.
 *
 * The lines run side by side. Required (exit 1 when one fails: nothing can run without it):
 * setup.mjs's npm packages and engine, setup-tap.mjs, setup-test-bundle.mjs, setup-venv.mjs. The others are tools of
 * one or two test files: a failure is reported in a summary at the end (which tool, which tests,
 * the command to rerun) and the tests run anyway, those files failing with the same message
 * (oapi-codegen without Go: skipped, that client is optional).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const scripts = path.dirname(fileURLToPath(import.meta.url));

/** Tools of a few test files: what each is for, and what its failure means. */
const TOOLS = {
  'setup-openapi-generator.mjs': {
    tool: 'openapi-generator CLI',
    tests: 'test/consumer-matrix-openapi-generator.test.ts',
    fix: 'needs Maven and Java 11+ (apt-get install maven default-jdk-headless) and Maven Central',
  },
  'setup-generated-clients.mjs': {
    tool: "the go and java clients' dependencies (openapi-generator)",
    tests: 'test/consumer-matrix-openapi-generator.test.ts',
    fix: 'needs Java 11+, Maven and Go 1.22+ (apt-get install default-jdk-headless maven golang-go), Maven Central and the Go module proxy',
  },
  'setup-oapi-codegen.mjs': {
    tool: 'oapi-codegen (Go)',
    tests: "test/consumer-matrix.test.ts's Go client",
    fix: 'needs Go 1.22+ (apt-get install golang-go) and the Go module proxy',
    skippedWhen: 2,
    skipped: 'Go is not on PATH: that client is skipped',
  },
  'setup-chromium.mjs': {
    tool: 'Chromium',
    tests: 'test/swagger-ui-browser.test.ts',
    fix: "needs Debian's chromium package (as root: apt-get install -y chromium) or CHROMIUM_PATH",
  },
  'setup-poppler.mjs': {
    tool: 'poppler-utils (pdftotext, pdftoppm)',
    tests: 'test/originals/printed-originals.ts',
    fix: "needs Debian's poppler-utils package (as root: apt-get install -y poppler-utils)",
  },
  'setup-redis.mjs': { tool: 'redis-server', tests: 'test/multi-instance.test.ts', fix: 'apt-get install -y redis-server' },
};

/** step label (the script, with what it does when run more than once) → { code, how, seconds } */
const results = new Map();

/** The static checks (package scripts) --checks runs once the npm packages are in. */
const CHECKS = ['check:ts', 'check:generated', 'lint:spec', 'format:check'];
const withChecks = process.argv.includes('--checks');
/** check → { code, seconds } */
const checkResults = new Map();

/** One package script, its output held and printed whole at its end (four at once would interleave). */
function check(name) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn('npm', ['run', '--silent', name], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const done = (code) => {
      const seconds = (Date.now() - started) / 1000;
      checkResults.set(name, { code, seconds });
      const head = `[setup-test] npm run ${name}: ${code === 0 ? 'passed' : `FAILED (exit code ${code})`} in ${seconds.toFixed(1)} s`;
      process.stdout.write(`${head}\n${output}${output && !output.endsWith('\n') ? '\n' : ''}`);
      resolve(code === 0);
    };
    child.on('error', (err) => {
      output += `${err.message}\n`;
      done(-1);
    });
    child.on('close', (code) => done(code ?? -1));
  });
}

/** The type check and ESLint (the longest) on one lane, the three others one after another on a second. */
async function checks() {
  const lanes = await Promise.all([
    check(CHECKS[0]),
    (async () => {
      let ok = true;
      for (const name of CHECKS.slice(1)) ok = (await check(name)) && ok;
      return ok;
    })(),
  ]);
  return lanes.every(Boolean);
}

/** One set-up script; `label` names it in the summary when it runs more than once (setup.mjs). */
function step(script, args = [], label = script) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(scripts, script), ...args], { stdio: 'inherit', env: process.env });
    const done = (code, how) => {
      results.set(label, { code, how, seconds: (Date.now() - started) / 1000, command: ['node', `scripts/${script}`, ...args].join(' ') });
      resolve(code === 0);
    };
    child.on('error', (err) => done(-1, err.message));
    child.on('close', (code, signal) => done(code ?? -1, signal ?? `exit code ${code}`));
  });
}

const NPM = 'setup.mjs (npm packages)';
const ENGINE = 'setup.mjs (engine)';
const ARCHIVE = 'setup.mjs (class archive)';
const started = Date.now();
// setup.mjs's two halves as two lines: the checks and tap's class need only the npm packages, not
// the engine's Maven build (on a clean clone npm ci and Maven still run side by side).
const npm = step('setup.mjs', ['--skip-engine'], NPM);
const engine = step('setup.mjs', ['--skip-npm', '--skip-archive'], ENGINE);
const required = await Promise.all([
  npm.then(async (ok) => {
    if (!ok) return false;
    const [tap, checked] = await Promise.all([step('setup-tap.mjs').then((ok) => ok && step('setup-test-bundle.mjs')), withChecks ? checks() : true]);
    return tap && checked;
  }),
  engine.then(async (ok) => {
    if (!ok) return false;
    await Promise.all([
      // The class archive is written by tsx: once the npm packages are in as well (a failure only warns).
      npm.then((npmOk) =>
        npmOk && existsSync(path.join(scripts, 'embedded-mongo', 'target', 'embedded-mongo.jar')) ? step('setup.mjs', ['--skip-npm'], ARCHIVE) : true,
      ),
      // setup-openapi-generator after the engine's Maven build: two Maven runs at once would share ~/.m2 while downloading.
      step('setup-openapi-generator.mjs').then((jar) => (jar ? step('setup-generated-clients.mjs') : false)),
    ]);
    return true;
  }),
  step('setup-venv.mjs'),
  step('setup-oapi-codegen.mjs').then(() => true),
  // apt one at a time: two apt-get runs would fight over dpkg's lock.
  step('setup-redis.mjs')
    .then(() => step('setup-chromium.mjs'))
    .then(() => step('setup-poppler.mjs'))
    .then(() => true),
]);

const problems = [];
for (const label of [NPM, ENGINE, 'setup-tap.mjs', 'setup-test-bundle.mjs', 'setup-venv.mjs']) {
  const r = results.get(label);
  if (r && r.code !== 0)
    problems.push(`  FAILED  scripts/${label} (${r.how}): required, the tests cannot run; rerun \`${r.command}\` and see its output above`);
  else if (!r) problems.push(`  FAILED  scripts/${label}: not run (an earlier step failed)`);
}
for (const name of withChecks ? CHECKS : []) {
  const r = checkResults.get(name);
  if (r && r.code !== 0) problems.push(`  FAILED  npm run ${name} (exit code ${r.code}): see its output above`);
  else if (!r) problems.push(`  FAILED  npm run ${name}: not run (the npm packages could not be installed)`);
}
for (const [script, info] of Object.entries(TOOLS)) {
  const r = results.get(script);
  if (!r) problems.push(`  not set up  ${info.tool}: scripts/${script} not run (the engine's set-up failed)`);
  else if (info.skippedWhen !== undefined && r.code === info.skippedWhen)
    problems.push(`  skipped  ${info.tool}: ${info.skipped} (${info.tests}); ${info.fix}`);
  else if (r.code !== 0)
    problems.push(
      `  FAILED  ${info.tool} (scripts/${script}, ${r.how}): ${info.tests} will fail; ${info.fix}; rerun \`node scripts/${script}\` and see its output above`,
    );
}
const secs = ((Date.now() - started) / 1000).toFixed(1);
if (problems.length) {
  console.error(`\n[setup-test] set-up done in ${secs} s with problems:\n${problems.join('\n')}\n`);
} else {
  const timings = [...results].map(([s, r]) => `${s.replace(/\.mjs\b/, '')} ${r.seconds.toFixed(1)} s`);
  for (const [name, r] of checkResults) timings.push(`${name} ${r.seconds.toFixed(1)} s`);
  console.log(`[setup-test] set-up done in ${secs} s (${timings.join(', ')})`);
}
process.exit(required.every(Boolean) ? 0 : 1);
