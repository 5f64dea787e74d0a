/**
 * Where the tests' esbuild bundles live and when one may be used (test/helpers/script-bundle.ts: the
 * scripts the tests spawn; test/helpers/test-bundle.mjs: the test files). A store is
 * .cache/<name>/<hash of this checkout's path>/ (worktrees share .cache): each build in a directory
 * of its own (test/helpers/script-bundle-build.mjs), the manifest naming the current one replaced
 * atomically, so parallel processes never see a half-written build. A build is fresh while its key
 * (the builder, esbuild, Node, tsconfig.json and the entries) and every input file's mtime and size
 * are unchanged (a few ms of stats). Plain JavaScript: the loader's hooks thread imports it too.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILDER = fileURLToPath(new URL('./script-bundle-build.mjs', import.meta.url));
/** A build no manifest names any more is removed once this old (a process started from it may still load a lazy chunk). */
const STALE_BUILD_MS = 3_600_000;

function stamp(file) {
  try {
    const s = statSync(path.join(ROOT, file));
    return [s.mtimeMs, s.size];
  } catch {
    return null;
  }
}

/** The store `name` (a directory of .cache) of bundles of `entries` (paths relative to the checkout). */
export function bundleStore(name, entries) {
  const dir = path.join(ROOT, '.cache', name, createHash('sha256').update(ROOT).digest('hex').slice(0, 16));
  const manifestPath = path.join(dir, 'manifest.json');

  function key() {
    const hash = createHash('sha256').update(readFileSync(BUILDER));
    for (const file of [path.join('node_modules', 'esbuild', 'package.json'), 'tsconfig.json']) hash.update(readFileSync(path.join(ROOT, file)));
    return hash.update(process.version).update(entries.join('\n')).digest('hex');
  }

  function readManifest() {
    try {
      return JSON.parse(readFileSync(manifestPath, 'utf8'));
    } catch {
      return null;
    }
  }

  /** The current manifest when its build is fresh; else null. */
  function fresh() {
    const m = readManifest();
    if (!m || m.key !== key() || !existsSync(path.join(dir, m.out))) return null;
    const unchanged = Object.entries(m.inputs).every(([file, was]) => {
      const now = stamp(file);
      return now !== null && now[0] === was[0] && now[1] === was[1];
    });
    return unchanged ? m : null;
  }

  /**
   * Builds the entries and names the build in the manifest. Answers the manifest, or `{ changed }`
   * when an input changed while esbuild read it (the build may hold the old text: no manifest
   * names it). Throws with esbuild's message when it cannot bundle them.
   */
  function build() {
    const k = key();
    mkdirSync(dir, { recursive: true });
    const out = `b-${Date.now()}-${process.pid}`;
    const started = Date.now();
    let inputs;
    try {
      inputs = JSON.parse(
        execFileSync(process.execPath, [BUILDER, path.join(dir, out), ...entries], {
          cwd: ROOT,
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, NODE_OPTIONS: '' },
        }),
      );
    } catch (err) {
      rmSync(path.join(dir, out), { recursive: true, force: true });
      throw new Error(`esbuild could not bundle ${entries.length} entries: ${String(err.stderr || err.message).trim()}`);
    }
    const stamps = {};
    for (const file of inputs) {
      const s = stamp(file);
      if (s === null || s[0] >= started) return { changed: file };
      stamps[file] = s;
    }
    const manifest = { key: k, out, inputs: stamps };
    const tmp = `${manifestPath}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(manifest));
    renameSync(tmp, manifestPath);
    for (const old of readdirSync(dir)) {
      if (!old.startsWith('b-') || old === out) continue;
      try {
        if (Date.now() - statSync(path.join(dir, old)).mtimeMs > STALE_BUILD_MS) rmSync(path.join(dir, old), { recursive: true, force: true });
      } catch {
        /* removed by another process meanwhile */
      }
    }
    return manifest;
  }

  /** The built file of `entry` (relative to the checkout, `.ts` → `.mjs`) in this manifest's build. */
  const output = (manifest, entry) => path.join(dir, manifest.out, entry.replace(/\.ts$/, '.mjs'));

  return { fresh, build, output };
}
