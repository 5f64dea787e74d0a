/**
 * The test files as tap runs them: one esbuild bundle of every test/*.test.ts (packages external,
 * shared code in chunks; test/helpers/script-bundle-build.mjs), built by `npm test`'s set-up
 * (scripts/setup-test-bundle.mjs) into its store (test/helpers/bundle-store.mjs). ts-loader-hooks.mjs
 * resolves a test process's main module, test/<name>.test.ts, to its bundle, so the process loads a
 * few chunks instead of ~600 TypeScript files one by one through the loader's hooks thread:
 * importing the app costs 0.85 CPU-s instead of 1.85, in each of the suite's test processes (issue 39).
 * Only a fresh bundle is used: anything else (a source edited since the set-up, a test file added,
 * no set-up yet) runs from source, as without a bundle.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundleStore } from './bundle-store.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** test/*.test.ts, as tap's "include" finds them (relative to the checkout, sorted). */
function store() {
  const entries = readdirSync(path.join(ROOT, 'test'))
    .filter((f) => f.endsWith('.test.ts'))
    .sort()
    .map((f) => `test/${f}`);
  return { entries, ...bundleStore('test-bundle', entries) };
}

/** Builds the bundle unless a fresh one exists; answers what it did. Throws when esbuild fails. */
export function buildTestBundle() {
  const s = store();
  if (s.fresh()) return { built: false, entries: s.entries.length };
  const r = s.build();
  if ('changed' in r) return { built: false, entries: s.entries.length, changed: r.changed };
  return { built: true, entries: s.entries.length, inputs: Object.keys(r.inputs).length };
}

/** The URL of a test file's bundle (`fileUrl`: file:// URL of test/<name>.test.ts) when a fresh one exists; else null. */
export function bundledTest(fileUrl) {
  const file = path.relative(ROOT, fileURLToPath(fileUrl)).split(path.sep).join('/');
  if (!/^test\/[^/]+\.test\.ts$/.test(file)) return null;
  try {
    const s = store();
    const manifest = s.entries.includes(file) ? s.fresh() : null;
    return manifest ? pathToFileURL(s.output(manifest, file)).href : null;
  } catch {
    return null;
  }
}
