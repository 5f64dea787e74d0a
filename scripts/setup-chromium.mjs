#!/usr/bin/env node
// Idempotent install of the browser test/swagger-ui-browser.test.ts drives: Debian's
// `chromium` package (driven by playwright-core with executablePath; no browser download).
//
// Fast when present: CHROMIUM_PATH, or `chromium` / `chromium-browser` on PATH. Otherwise,
// as root on a Debian-like system: `apt-get update` then `apt-get install -y chromium`.
// Exit code 1 with install instructions when it cannot be had.
//
// Flags: --print-path (print the executable's path on the last line), --check (install nothing:
// exit 1 naming this script when no browser is found; what the test runs).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const say = (msg) => process.stdout.write(`[setup-chromium] ${msg}\n`);
const HOW = "Install Debian's chromium package (as root: apt-get update && apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium/Chrome executable.";

function find() {
  if (process.env.CHROMIUM_PATH) return existsSync(process.env.CHROMIUM_PATH) ? process.env.CHROMIUM_PATH : null;
  for (const name of ['chromium', 'chromium-browser']) {
    const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const p = r.stdout.trim();
    if (r.status === 0 && p) return p;
  }
  return null;
}

function run(cmd, args) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: -1, output: `${output}${error.message}` }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

let found = find();
if (!found && process.argv.includes('--check')) {
  process.stderr.write(
    `[setup-chromium] no Chromium found${process.env.CHROMIUM_PATH ? ` at CHROMIUM_PATH=${process.env.CHROMIUM_PATH}` : ''}: run \`node scripts/setup-chromium.mjs\` (npm test's set-up, scripts/setup-test.mjs, runs it). ${HOW}\n`,
  );
  process.exit(1);
}
if (!found && process.env.CHROMIUM_PATH) {
  process.stderr.write(`[setup-chromium] CHROMIUM_PATH=${process.env.CHROMIUM_PATH} does not exist. ${HOW}\n`);
  process.exit(1);
}
if (!found) {
  const canApt = process.platform === 'linux' && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (!canApt) {
    process.stderr.write(`[setup-chromium] no chromium found and cannot install it here (needs root and apt-get). ${HOW}\n`);
    process.exit(1);
  }
  say('installing Debian package chromium (apt-get update, apt-get install -y chromium; about a minute)');
  const started = Date.now();
  const update = await run('apt-get', ['update', '-qq']);
  const install = update.code === 0 ? await run('apt-get', ['install', '-y', '-qq', 'chromium']) : update;
  found = find();
  if (install.code !== 0 || !found) {
    process.stderr.write(`${install.output.slice(-4000)}\n[setup-chromium] installing chromium failed. ${HOW}\n`);
    process.exit(1);
  }
  say(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s: ${found}`);
}
if (process.argv.includes('--print-path')) process.stdout.write(`${found}\n`);
