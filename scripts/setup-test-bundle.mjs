#!/usr/bin/env node
/**
 * Bundles the test files (test/helpers/test-bundle.mjs) before tap starts: run by `npm test`'s
 * set-up once the npm packages are in (esbuild), a few seconds, nothing when the bundle is fresh.
 * Exit 1 when esbuild cannot bundle them (the tests would fail on the same source).
 */
import { buildTestBundle } from '../test/helpers/test-bundle.mjs';

const started = Date.now();
try {
  const r = buildTestBundle();
  if (r.built) console.log(`[setup-test-bundle] ${r.entries} test files bundled (${r.inputs} sources) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  else if (r.changed) console.log(`[setup-test-bundle] ${r.changed} changed while it was bundled: the tests run from source`);
} catch (err) {
  console.error(`[setup-test-bundle] ${err.message}`);
  process.exit(1);
}
