/**
 * The project's scripts as the tests spawn them (spawnScript, scriptArgs): an esbuild bundle of
 * scripts/start.ts, worker.ts, import.ts, apikey.ts and the alerts-restart test's service
 * (test/fixtures/alerts-service.ts), built by test/helpers/script-bundle-build.mjs,
 * so a spawned service loads one bundle instead of ~450 TypeScript files through the loader's hooks:
 * scripts/start.ts up to "listening" costs its process 4.8 CPU-s bundled, 6.1 through
 * ts-loader.mjs, 8.0 through tsx (issue 39).
 *
 * Never stale (test/helpers/bundle-store.mjs: each spawn checks every input's mtime and size, a few
 * ms); any change, a new builder or esbuild version, rebuilds it. If the build fails, the script runs
 * through the TypeScript loader instead, which reports the error as the source has it.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { bundleStore } from './bundle-store.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** Built together, so the modules they share are built once. */
const ENTRIES = ['scripts/start.ts', 'scripts/worker.ts', 'scripts/import.ts', 'scripts/apikey.ts', 'test/fixtures/alerts-service.ts'];
const store = bundleStore('script-bundle', ENTRIES);

/** The bundled form of `script` (one of ENTRIES; relative to the checkout or absolute), built or rebuilt if needed; null: run the source. */
export function bundledScript(script: string): string | null {
  const entry = path.relative(ROOT, path.resolve(ROOT, script)).split(path.sep).join('/');
  if (!ENTRIES.includes(entry)) return null;
  let manifest = store.fresh();
  if (!manifest) {
    try {
      const built = store.build();
      manifest = 'changed' in built ? null : built;
    } catch {
      return null;
    }
  }
  return manifest ? store.output(manifest, entry) : null;
}
