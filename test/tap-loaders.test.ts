/**
 * The suite's own set-up: what every test process loads beyond its test.
 *
 * - scripts/setup-tap.mjs (pretest): test processes start with the loaders package.json asks for
 *   (tsx) and none of tap's default plugin set. On a clean clone, tap's first run rebuilds its
 *   Test class for the configured plugins but still starts that run's test processes with the
 *   default set's loaders (ts-node, the mock loader): about 8 CPU-s more per test file, on every
 *   CI run, unless the class is built before tap starts.
 * - test/helpers/tap-preload.cjs: tap's process-info recorder is not registered, so the processes
 *   a test spawns (services, tsc, generators) do not load it through NODE_OPTIONS.
 * - scripts/setup-test-bundle.mjs (pretest): a test process runs its file's bundle
 *   (test/helpers/test-bundle.mjs) when it is fresh, its source otherwise.
 */
import t from 'tap';
import { pathToFileURL } from 'node:url';
import { bundledTest } from './helpers/test-bundle.mjs';

t.test('no loader of a disabled tap plugin in this test process', async (t) => {
  const args = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const disabled = args.filter((a) => /@tapjs[\\/](typescript|mock)\b/.test(a));
  t.same(disabled, [], `execArgv: ${process.execArgv.join(' ')}`);
});

t.test("the processes a test spawns do not load tap's process-info recorder", async (t) => {
  t.notMatch(process.env.NODE_OPTIONS ?? '', /processinfo/, `NODE_OPTIONS: ${process.env.NODE_OPTIONS ?? ''}`);
});

t.test('a test process runs its bundle when the set-up built a fresh one, its source otherwise', async (t) => {
  const source = pathToFileURL(process.argv[1]!).href;
  const bundle = bundledTest(source);
  // This module's own URL: the bundler writes the source file's URL for `import.meta.url`, not for this form.
  t.equal(import.meta['url'], bundle ?? source, `bundle: ${bundle}`);
  // Under `npm test` the set-up has just built it, and nothing has changed since.
  if (process.env.npm_lifecycle_event === 'test') t.ok(bundle, 'npm test runs the bundles its set-up built');
});
