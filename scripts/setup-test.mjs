#!/usr/bin/env node
/**
 * `npm test`'s set-up (pretest), every step idempotent:
 *
 *   scripts/setup.mjs → scripts/setup-tap.mjs   npm packages, the engine's jar and class archive, then tap's Test class
 *   scripts/setup-venv.mjs                      the Python tools (.venv)
 *   scripts/setup-redis.mjs                     redis-server from Debian
 *
 * The three lines run side by side: on a clean clone the venv's pip install
 * (about 50 s, mostly waiting on downloads) used to start only after npm ci and
 * the Maven build had finished. Exits 1 when any step fails.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const scripts = path.dirname(fileURLToPath(import.meta.url));

function step(script) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(scripts, script)], { stdio: 'inherit', env: process.env });
    child.on('error', (err) => {
      console.error(`[setup-test] ${script}: ${err.message}`);
      resolve(false);
    });
    child.on('close', (code, signal) => {
      if (code !== 0) console.error(`[setup-test] ${script} failed (${signal ?? `exit code ${code}`})`);
      resolve(code === 0);
    });
  });
}

const results = await Promise.all([
  step('setup.mjs').then((ok) => ok && step('setup-tap.mjs')),
  step('setup-venv.mjs'),
  step('setup-redis.mjs'),
]);
process.exit(results.every(Boolean) ? 0 : 1);
