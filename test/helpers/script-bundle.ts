/**
 * The project's scripts as the tests spawn them (spawnScript, scriptArgs): an esbuild bundle of
 * scripts/start.ts, worker.ts, import.ts, apikey.ts and the alerts-restart test's service
 * (test/fixtures/alerts-service.ts), built by test/helpers/script-bundle-build.mjs,
 * so a spawned service loads one bundle instead of ~450 TypeScript files through the loader's hooks:
 * scripts/start.ts up to "listening" costs its process 4.8 CPU-s bundled, 6.1 through
 * ts-loader.mjs, 8.0 through tsx (issue 39).
 *
 * Never stale: the bundle records every input file's mtime and size, and each spawn checks them
 * all (a few ms); any change, a new builder or esbuild version, rebuilds it. The bundle lives in
 * .cache/script-bundle/<hash of this checkout's path>/ (worktrees share .cache), each build in a
 * directory of its own and the manifest naming the current one replaced atomically, so parallel
 * test processes never see a half-written build. If the build fails, the script runs through the
 * TypeScript loader instead, which reports the error as the source has it.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BUILDER = fileURLToPath(new URL('./script-bundle-build.mjs', import.meta.url));
/** Built together, so the modules they share are built once. */
const ENTRIES = ['scripts/start.ts', 'scripts/worker.ts', 'scripts/import.ts', 'scripts/apikey.ts', 'test/fixtures/alerts-service.ts'];
const DIR = path.join(ROOT, '.cache', 'script-bundle', createHash('sha256').update(ROOT).digest('hex').slice(0, 16));
const MANIFEST = path.join(DIR, 'manifest.json');
/** A build no manifest names any more is removed once this old (a service started from it has loaded its chunks long before). */
const STALE_BUILD_MS = 3_600_000;

interface Manifest {
  key: string;
  /** The build's directory, in DIR. */
  out: string;
  /** Input file (relative to ROOT) -> [mtimeMs, size] when it was built. */
  inputs: Record<string, [number, number]>;
}

/** What else a build depends on: the builder, esbuild, Node (the target) and the entry list. */
function buildKey(): string {
  const esbuild = readFileSync(path.join(ROOT, 'node_modules', 'esbuild', 'package.json'), 'utf8');
  return createHash('sha256').update(readFileSync(BUILDER)).update(esbuild).update(process.version).update(ENTRIES.join('\n')).digest('hex');
}

function stamp(file: string): [number, number] | null {
  try {
    const s = statSync(path.join(ROOT, file));
    return [s.mtimeMs, s.size];
  } catch {
    return null;
  }
}

function readManifest(): Manifest | null {
  try {
    return JSON.parse(readFileSync(MANIFEST, 'utf8')) as Manifest;
  } catch {
    return null;
  }
}

function isFresh(m: Manifest | null, key: string): m is Manifest {
  if (!m || m.key !== key || !existsSync(path.join(DIR, m.out))) return false;
  return Object.entries(m.inputs).every(([file, was]) => {
    const now = stamp(file);
    return now !== null && now[0] === was[0] && now[1] === was[1];
  });
}

function build(key: string): Manifest | null {
  mkdirSync(DIR, { recursive: true });
  const out = `b-${Date.now()}-${process.pid}`;
  const started = Date.now();
  let inputs: string[];
  try {
    inputs = JSON.parse(
      execFileSync(process.execPath, [BUILDER, path.join(DIR, out), ...ENTRIES], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, NODE_OPTIONS: '' },
      }),
    ) as string[];
  } catch {
    rmSync(path.join(DIR, out), { recursive: true, force: true });
    return null;
  }
  const stamps: Manifest['inputs'] = {};
  for (const file of inputs) {
    const s = stamp(file);
    // Changed while esbuild read it: this build may hold the old text, so it is not used.
    if (s === null || s[0] >= started) return null;
    stamps[file] = s;
  }
  const manifest: Manifest = { key, out, inputs: stamps };
  const tmp = `${MANIFEST}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(manifest));
  renameSync(tmp, MANIFEST);
  for (const dir of readdirSync(DIR)) {
    if (!dir.startsWith('b-') || dir === out) continue;
    try {
      if (Date.now() - statSync(path.join(DIR, dir)).mtimeMs > STALE_BUILD_MS) rmSync(path.join(DIR, dir), { recursive: true, force: true });
    } catch {
      /* removed by another process meanwhile */
    }
  }
  return manifest;
}

/** The bundled form of `script` (one of ENTRIES; relative to the checkout or absolute), built or rebuilt if needed; null: run the source. */
export function bundledScript(script: string): string | null {
  const entry = path.relative(ROOT, path.resolve(ROOT, script)).split(path.sep).join('/');
  if (!ENTRIES.includes(entry)) return null;
  const key = buildKey();
  const current = readManifest();
  const manifest = isFresh(current, key) ? current : build(key);
  return manifest ? path.join(DIR, manifest.out, entry.replace(/\.ts$/, '.mjs')) : null;
}
