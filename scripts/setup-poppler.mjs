#!/usr/bin/env node
// Idempotent install of the tools test/originals/printed-originals.ts reads PDFs with: Debian's
// `poppler-utils` (`pdftotext` for the text of a printed CFDI, `pdftoppm` to render its page
// for the QR reader). Nothing is downloaded but the Debian package.
//
// Fast when present: `pdftotext` and `pdftoppm` on PATH. Otherwise, as root on a Debian-like
// system: `apt-get update` then `apt-get install -y poppler-utils`. Exit code 1 with install
// instructions when they cannot be had.
//
// Flags: --check (install nothing: exit 1 naming this script when a tool is missing; what the test runs).

import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const TOOLS = ['pdftotext', 'pdftoppm'];
const say = (msg) => process.stdout.write(`[setup-poppler] ${msg}\n`);
const HOW = "Install Debian's poppler-utils package (as root: apt-get update && apt-get install -y poppler-utils).";

const missing = () => TOOLS.filter((name) => spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' }).status !== 0);

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

let absent = missing();
if (absent.length && process.argv.includes('--check')) {
  process.stderr.write(
    `[setup-poppler] ${absent.join(' and ')} not found: run \`node scripts/setup-poppler.mjs\` (npm test's set-up, scripts/setup-test.mjs, runs it). ${HOW}\n`,
  );
  process.exit(1);
}
if (absent.length) {
  const canApt = process.platform === 'linux' && process.getuid?.() === 0 && existsSync('/usr/bin/apt-get');
  if (!canApt) {
    process.stderr.write(`[setup-poppler] ${absent.join(' and ')} not found and cannot be installed here (needs root and apt-get). ${HOW}\n`);
    process.exit(1);
  }
  say('installing Debian package poppler-utils (apt-get update, apt-get install -y poppler-utils)');
  const started = Date.now();
  const update = await run('apt-get', ['update', '-qq']);
  const install = update.code === 0 ? await run('apt-get', ['install', '-y', '-qq', 'poppler-utils']) : update;
  absent = missing();
  if (install.code !== 0 || absent.length) {
    process.stderr.write(`${install.output.slice(-4000)}\n[setup-poppler] installing poppler-utils failed. ${HOW}\n`);
    process.exit(1);
  }
  say(`installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
