#!/usr/bin/env node
/**
 * Builds tap's Test class for the plugin set in package.json ("tap.plugin")
 * before the suite runs; idempotent, run by `npm test` (pretest).
 *
 * Why: tap rebuilds that class itself when its plugins differ from the ones
 * it was built with, which is always the case right after `npm ci`. But the
 * run that rebuilds still starts every test process with the default set's
 * loaders (ts-node, the mock loader): about 8 CPU-s more per test file, on a
 * clean clone's first run, which is every CI run. `tap plugin list` prints the
 * configured set; the built class records its own in `signature`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tapBin = path.join(root, 'node_modules', 'tap', 'dist', 'esm', 'run.mjs');
const built = path.join(root, 'node_modules', '@tapjs', 'test', 'test-built', 'dist', 'esm', 'index.js');

function tap(...args) {
  const res = spawnSync(process.execPath, [tapBin, ...args], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  if (res.status !== 0) {
    console.error(`setup-tap: \`tap ${args.join(' ')}\` failed (exit ${res.status ?? res.signal})`);
    process.exit(1);
  }
  return res.stdout;
}

const signature = (text) =>
  text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .sort((a, b) => a.localeCompare(b, 'en'))
    .join('\n');

const wanted = signature(tap('plugin', 'list'));
const have = existsSync(built) ? (/export const signature = `([^`]*)`/.exec(readFileSync(built, 'utf8'))?.[1] ?? '') : '';
if (signature(have) === wanted) process.exit(0);

console.log(`setup-tap: building tap's Test class for the configured plugins (${wanted.split('\n').length})`);
tap('build');
