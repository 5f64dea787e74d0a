#!/usr/bin/env node
// Idempotent install step, run by `npm start` / `npm test` (prestart / pretest) and `npm run setup`.
//
// 1. `npm ci` only when node_modules is missing, a package of package.json is not installed, or
//    package-lock.json is newer than node_modules/.package-lock.json (npm's record of what is installed).
//    With --runtime (`npm start`'s prestart) the development packages (tap, ESLint, the generators…)
//    are not needed: a clone without them gets `npm ci --omit=dev`, and the first full set-up
//    (`npm test`'s pretest, `npm run setup`) installs them.
// 2. Builds the embedded MongoDB engine jar (scripts/embedded-mongo/target/embedded-mongo.jar)
//    with Maven only when it is missing or older than pom.xml / the Java sources (beside step 1).
// 3. Writes the engine's class-data archive (target/embedded-mongo.jsa) when it is missing or older
//    than the jar (scripts/engine-class-archive.ts; a failure only warns).
//
// Fast (a few stat calls) when everything is up to date. Plain Node, no dependencies.
// Flags: --runtime (only what `npm start` needs), --force (rebuild the jar and reinstall), --skip-npm, --skip-engine,
// --skip-archive (the jar only: the archive needs tsx, so a caller installing the npm packages beside it runs
// `--skip-npm` again once they are in, as scripts/setup-test.mjs does), --dry-run (only say what would run).
// If MONGODB_URI is set, a failed engine build is only a warning (the engine is not needed).

import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const engineDir = path.join(root, 'scripts', 'embedded-mongo');
const jarPath = path.join(engineDir, 'target', 'embedded-mongo.jar');
const lockPath = path.join(engineDir, 'target', '.setup.lock');

const args = new Set(process.argv.slice(2));
const force = args.has('--force');
const dryRun = args.has('--dry-run');
const runtimeOnly = args.has('--runtime');
const isWindows = process.platform === 'win32';

/** mtime in ms, or undefined if the path does not exist. */
function mtime(p) {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return undefined;
  }
}

/** Newest mtime of the files under dir (recursive). */
function newestUnder(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return newest;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) newest = Math.max(newest, newestUnder(p));
    else newest = Math.max(newest, mtime(p) ?? 0);
  }
  return newest;
}

function say(msg) {
  process.stdout.write(`[setup] ${msg}\n`);
}

function run(cmd, cmdArgs, { cwd, capture = false, env = process.env } = {}) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, cmdArgs, {
      cwd,
      stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit',
      shell: isWindows, // npm.cmd / mvn.cmd
      env,
    });
    if (capture) {
      child.stdout.on('data', (d) => (output += d));
      child.stderr.on('data', (d) => (output += d));
    }
    child.on('error', (err) => resolve({ code: -1, error: err, output }));
    child.on('close', (code, signal) => resolve({ code: code ?? (signal ? 1 : 0), output }));
  });
}

// ---------------------------------------------------------------- npm ci
/** The packages of package.json's section ('dependencies', 'devDependencies'): all, and those not in node_modules. */
function packagesOf(section) {
  const all = Object.keys(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'))[section] ?? {});
  return { all, missing: all.filter((name) => !existsSync(path.join(root, 'node_modules', name, 'package.json'))) };
}

async function ensureNodeModules() {
  const lock = mtime(path.join(root, 'package-lock.json'));
  const installed = mtime(path.join(root, 'node_modules', '.package-lock.json'));
  const runtime = packagesOf('dependencies');
  const dev = packagesOf('devDependencies');
  let reason;
  if (!existsSync(path.join(root, 'node_modules'))) reason = 'node_modules is missing';
  else if (installed === undefined) reason = 'node_modules/.package-lock.json is missing';
  // 1 s of slack: npm writes both lockfiles in the same install, not always in the same order.
  else if (lock !== undefined && lock > installed + 1000) reason = 'package-lock.json changed';
  else if (runtime.missing.length) reason = `${runtime.missing[0]} is not installed`;
  else if (!runtimeOnly && dev.missing.length)
    reason = `development packages are not installed (${dev.missing[0]}…: \`npm start\` installs the runtime ones only)`;
  else if (force) reason = '--force';
  if (!reason) return;

  // Runtime packages only when no development package is there to keep (a clone's first `npm start`).
  const omitDev = runtimeOnly && dev.missing.length === dev.all.length;
  const ciArgs = ['ci', '--no-audit', '--no-fund', ...(omitDev ? ['--omit=dev'] : [])];
  say(`installing node modules (${reason}): npm ${ciArgs.join(' ')}`);
  if (dryRun) return;
  // Prefer the npm that is running us (npm_execpath) so the same npm version is used.
  const npmCli = process.env.npm_execpath;
  const res = npmCli && /\.[cm]?js$/.test(npmCli) ? await run(process.execPath, [npmCli, ...ciArgs], { cwd: root }) : await run('npm', ciArgs, { cwd: root });
  if (res.code !== 0) {
    say(`npm ci failed${res.error ? `: ${res.error.message}` : ` (exit code ${res.code})`}`);
    process.exit(1);
  }
}

// ---------------------------------------------------------------- engine jar
function jarIsStale() {
  const jar = mtime(jarPath);
  if (jar === undefined) return 'jar is missing';
  const sources = Math.max(mtime(path.join(engineDir, 'pom.xml')) ?? 0, newestUnder(path.join(engineDir, 'src')));
  if (sources > jar) return 'sources changed';
  if (force) return '--force';
  return undefined;
}

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}

/** Cross-process lock so concurrent `npm start` / `npm test` don't run Maven on the same target/ at once. */
async function withBuildLock(fn) {
  const STALE_MS = 15 * 60_000;
  statSync(engineDir); // fail early with a clear error if the engine sources are missing
  mkdirSync(path.dirname(lockPath), { recursive: true });
  let waitedSaid = false;
  for (;;) {
    try {
      const fd = openSync(lockPath, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      const age = Date.now() - (mtime(lockPath) ?? Date.now());
      if (age > STALE_MS) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (!waitedSaid) {
        say('another setup is building the engine, waiting…');
        waitedSaid = true;
      }
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockPath, { force: true });
  }
}

async function ensureEngineJar() {
  if (!jarIsStale()) return true;
  if (dryRun) {
    say(`would build embedded MongoDB engine (${jarIsStale()}): mvn -q -B package -DskipTests`);
    return true;
  }
  return withBuildLock(async () => {
    const reason = jarIsStale(); // re-check: a concurrent setup may have just built it
    if (!reason) return true;
    say(`building embedded MongoDB engine (${reason}): mvn -q -B package -DskipTests`);
    if (!existsSync(path.join(process.env.HOME ?? '', '.m2', 'repository', 'de', 'bwaldvogel'))) {
      say('first build: Maven downloads mongo-java-server and plugins from Maven Central (about a minute)');
    }
    const started = Date.now();
    // One short build: the client compiler alone and the serial collector halve Maven's CPU time
    // (16 s → 8 s here); the user's own MAVEN_OPTS come after, so they win.
    const mavenOpts = `-XX:TieredStopAtLevel=1 -XX:+UseSerialGC ${process.env.MAVEN_OPTS ?? ''}`.trim();
    const res = await run('mvn', ['-q', '-B', 'package', '-DskipTests'], { cwd: engineDir, capture: true, env: { ...process.env, MAVEN_OPTS: mavenOpts } });
    // Debian's Maven emits bare ANSI resets even in batch mode; keep only real text.
    const text = res.output
      // eslint-disable-next-line no-control-regex
      .replace(/\x1b\[[0-9;]*m/g, '')
      .split('\n')
      .filter((l) => l.trim())
      .join('\n');
    if (res.error?.code === 'ENOENT') {
      say('Maven (mvn) not found: the embedded MongoDB engine needs Java 17+ and Maven 3.8+');
      say('  (Debian/Ubuntu: apt-get install -y openjdk-17-jdk-headless maven), or set MONGODB_URI');
      return false;
    }
    if (res.code !== 0 || !existsSync(jarPath)) {
      if (text) process.stdout.write(`${text}\n`);
      say(`engine build failed${res.error ? `: ${res.error.message}` : ` (exit code ${res.code})`}`);
      return false;
    }
    if (text) process.stdout.write(`${text}\n`);
    say(`engine built in ${((Date.now() - started) / 1000).toFixed(1)} s: ${path.relative(root, jarPath)}`);
    return true;
  });
}

// ---------------------------------------------------------------- engine class archive
const archivePath = jarPath.replace(/\.jar$/, '.jsa');

/**
 * The engine's class-data archive (scripts/engine-class-archive.ts): written when missing or older
 * than the jar. Only a speed-up for every engine start (scripts/embedded-mongo/launcher.ts), so a failure is a warning.
 */
async function ensureClassArchive() {
  const jar = mtime(jarPath);
  if (jar === undefined || (mtime(archivePath) ?? 0) >= jar) return;
  if (!existsSync(path.join(root, 'node_modules', 'tsx'))) return;
  if (dryRun) {
    say('would write the engine class archive: scripts/engine-class-archive.ts');
    return;
  }
  await withBuildLock(async () => {
    if ((mtime(archivePath) ?? 0) >= (mtime(jarPath) ?? Infinity)) return; // a concurrent setup wrote it
    say('writing the engine class archive (classes parsed once, mapped by every engine start)');
    const res = await run(process.execPath, ['--import', 'tsx/esm', path.join('scripts', 'engine-class-archive.ts')], { cwd: root, capture: true });
    if (res.code !== 0) say(`could not write the engine class archive (the engine starts without it): ${res.output.trim().split('\n').slice(-3).join(' | ')}`);
  });
}

// ---------------------------------------------------------------- main
// npm ci and the Maven build need nothing from each other: on a clean clone they run side by side.
const [, engineBuilt] = await Promise.all([
  args.has('--skip-npm') ? undefined : ensureNodeModules(),
  args.has('--skip-engine') ? undefined : ensureEngineJar(),
]);
if (!args.has('--skip-engine')) {
  if (!engineBuilt) {
    if (process.env.MONGODB_URI) {
      say('continuing without the embedded engine because MONGODB_URI is set');
    } else {
      process.exit(1);
    }
  } else if (!args.has('--skip-archive')) {
    await ensureClassArchive();
  }
}
