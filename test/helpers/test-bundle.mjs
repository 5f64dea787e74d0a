/**
 * The test files as tap runs them: one esbuild bundle of every test/*.test.ts (packages external,
 * shared code in chunks; test/helpers/script-bundle-build.mjs), built by `npm test`'s set-up
 * (scripts/setup-test-bundle.mjs). ts-loader-hooks.mjs resolves a test process's main module,
 * test/<name>.test.ts, to its bundle, so the process loads a few chunks instead of ~500 TypeScript
 * files one by one through the loader's hooks thread: importing the app costs 0.85 CPU-s instead of
 * 1.85, in each of the suite's test processes (issue 39).
 *
 * Never stale: the manifest records the build's key (builder, esbuild, Node, tsconfig.json) and every
 * input file's mtime and size, and the main module is redirected only when all are unchanged
 * (~600 stats, a few ms). Anything else (a source edited since the set-up, a test file added, no
 * set-up yet) runs from source, as without a bundle. Plain JavaScript: the hooks thread loads it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILDER = fileURLToPath(new URL('./script-bundle-build.mjs', import.meta.url));
const DIR = path.join(ROOT, '.cache', 'test-bundle', createHash('sha256').update(ROOT).digest('hex').slice(0, 16));
const MANIFEST = path.join(DIR, 'manifest.json');
const STALE_BUILD_MS = 3_600_000;

/** test/*.test.ts, as tap's "include" finds them (relative to the checkout, sorted). */
function testEntries() {
  return readdirSync(path.join(ROOT, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `test/${f}`);
}

/** What else a build depends on besides its inputs. */
function buildKey(entries) {
  const esbuild = readFileSync(path.join(ROOT, 'node_modules', 'esbuild', 'package.json'), 'utf8');
  const tsconfig = readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8');
  return createHash('sha256').update(readFileSync(BUILDER)).update(esbuild).update(tsconfig).update(process.version).update(entries.join('\n')).digest('hex');
}

function stamp(file) {
  try {
    const s = statSync(path.join(ROOT, file));
    return [s.mtimeMs, s.size];
  } catch {
    return null;
  }
}

function readManifest() {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8'));
  } catch {
    return null;
  }
}

function isFresh(m, key) {
  if (!m || m.key !== key || !existsSync(path.join(DIR, m.out))) return false;
  return Object.entries(m.inputs).every(([file, was]) => {
    const now = stamp(file);
    return now !== null && now[0] === was[0] && now[1] === was[1];
  });
}

/**
 * Builds the bundle unless a fresh one exists; answers what it did. Throws when esbuild fails
 * (a syntax error: the set-up says so, and the tests would fail on the same source).
 */
export function buildTestBundle() {
  const entries = testEntries();
  const key = buildKey(entries);
  if (isFresh(readManifest(), key)) return { built: false, entries: entries.length };
  mkdirSync(DIR, { recursive: true });
  const out = `b-${Date.now()}-${process.pid}`;
  const started = Date.now();
  let inputs;
  try {
    inputs = JSON.parse(
      execFileSync(process.execPath, [BUILDER, path.join(DIR, out), ...entries], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_OPTIONS: '' },
      }),
    );
  } catch (err) {
    rmSync(path.join(DIR, out), { recursive: true, force: true });
    throw new Error(`esbuild could not bundle the test files: ${String(err.stderr || err.message).trim()}`);
  }
  const inputStamps = {};
  for (const file of inputs) {
    const s = stamp(file);
    // Changed while esbuild read it: the build may hold the old text, so no manifest names it.
    if (s === null || s[0] >= started) return { built: false, entries: entries.length, changed: file };
    inputStamps[file] = s;
  }
  const tmp = `${MANIFEST}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify({ key, out, entries, inputs: inputStamps }));
  renameSync(tmp, MANIFEST);
  // Builds no manifest names go once an hour old: a test process started from one may still load a lazy chunk.
  for (const dir of readdirSync(DIR)) {
    if (!dir.startsWith('b-') || dir === out) continue;
    try {
      if (Date.now() - statSync(path.join(DIR, dir)).mtimeMs > STALE_BUILD_MS) rmSync(path.join(DIR, dir), { recursive: true, force: true });
    } catch {
      /* removed by another process meanwhile */
    }
  }
  return { built: true, entries: entries.length, inputs: inputs.length };
}

/** The URL of a test file's bundle (`fileUrl`: file:// URL of test/<name>.test.ts) when a fresh one exists; else null. */
export function bundledTest(fileUrl) {
  const file = path.relative(ROOT, fileURLToPath(fileUrl)).split(path.sep).join('/');
  if (!/^test\/[^/]+\.test\.ts$/.test(file)) return null;
  const m = readManifest();
  if (!m?.entries?.includes(file)) return null;
  try {
    if (!isFresh(m, buildKey(testEntries()))) return null;
  } catch {
    return null;
  }
  return pathToFileURL(path.join(DIR, m.out, file.replace(/\.ts$/, '.mjs'))).href;
}
