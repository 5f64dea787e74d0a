#!/usr/bin/env node
// Idempotent install of the Python tools the tests run, by `npm test` (pretest) and by
// the tests that use them (contract-schemathesis, openapi-generator, consumer-matrix):
//
//   .venv/ (gitignored)  a Python virtual environment with PACKAGES (pinned)
//
// Fast when up to date: one stat of .venv/.packages-<hash of PACKAGES> (written after a
// successful install) and of .venv/bin/st. Otherwise `python3 -m venv .venv` (reused when
// present) and one install of PACKAGES with uv (UV_VERSION, fetched from PyPI into .cache/uv by
// the interpreter's own pip: ~11 CPU-s in all where the venv's pip took ~41, issue 39), or with
// the venv's pip where uv cannot be had. A lock directory keeps two concurrent setups from
// installing into the same venv at once.
//
// Flags: --force (reinstall), --print-bin (print the path of `st` on the last line),
// --check (install nothing: exit 1 naming this script when the venv is not up to date; what
// the tests run, so that nothing is installed inside a test's timeout).
// Env: PYTHON (interpreter to create the venv with; default python3, then python).
// Exit code 1 when Python or the install fails: the contract tests cannot run without it.

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SCHEMATHESIS_VERSION = '4.32.5';
export const MCP_PYTHON_VERSION = '2.3.0';
/** One pip install: a change here reinstalls (the stamp is named after the list). */
export const PACKAGES = [
  `schemathesis==${SCHEMATHESIS_VERSION}`,
  // test/consumer-matrix.test.ts: the generator, and what the clients it writes import (httpx and attrs come with schemathesis).
  'openapi-python-client==0.29.1',
  'python-dateutil==2.9.0.post0',
  // test/mcp-python-sdk.test.ts: the official MCP Python SDK (its client validates structured results against outputSchema).
  `mcp==${MCP_PYTHON_VERSION}`,
  // test/consumer-matrix-openapi-generator.test.ts: the build backend of the python client it generates, installed with
  // `pip install --no-index --no-build-isolation` (offline: nothing fetched inside the test's timeout).
  'setuptools==80.9.0',
];

/** The installer, and the pip it puts in the venv (the tests run `.venv/bin/pip install --no-index` on generated clients). */
const UV_VERSION = '0.13.9';
const PIP_VERSION = '25.3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const venv = path.join(root, '.venv');
const uvDir = path.join(root, '.cache', 'uv', UV_VERSION);
const isWindows = process.platform === 'win32';
const uvBin = path.join(uvDir, 'bin', isWindows ? 'uv.exe' : 'uv');
const bin = path.join(venv, isWindows ? 'Scripts' : 'bin');
const st = path.join(bin, isWindows ? 'st.exe' : 'st');
const pip = path.join(bin, isWindows ? 'pip.exe' : 'pip');
const stamp = path.join(venv, `.packages-${createHash('sha256').update(PACKAGES.join('\n')).digest('hex').slice(0, 12)}`);
const lockDir = path.join(venv, '.setup.lock');
/**
 * Hypothesis' storage directory for the tests that run Schemathesis (HYPOTHESIS_STORAGE_DIRECTORY): it keeps
 * the Unicode tables Hypothesis derives once per Python (which code points each category holds, which
 * ones UTF-8 encodes: ~3 CPU-s to compute), which it would otherwise recompute in every fresh working directory.
 * test/contract-schemathesis.test.ts names the same directory.
 * Tables only: the tests run without Hypothesis' example database, so nothing in it changes what is generated.
 */
const HYPOTHESIS_STORAGE = path.join(root, '.cache', 'hypothesis');

const args = new Set(process.argv.slice(2));
const force = args.has('--force');

const say = (msg) => process.stdout.write(`[setup-venv] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What Schemathesis' string strategies ask of Hypothesis first: the category table and the UTF-8 code points. */
const WARM_HYPOTHESIS = "from hypothesis.internal.charmap import charmap, intervals_from_codec; charmap(); intervals_from_codec('utf-8')";

const run = (cmd, cmdArgs) => runWithEnv(cmd, cmdArgs, {});

function runWithEnv(cmd, cmdArgs, env) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, cmdArgs, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: -1, error, output }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const upToDate = () => !force && existsSync(stamp) && existsSync(st);

async function withLock(fn) {
  const STALE_MS = 10 * 60_000;
  mkdirSync(venv, { recursive: true }); // `python -m venv` is fine with an existing directory
  for (let said = false; ;) {
    try {
      mkdirSync(lockDir);
      break;
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      let age = 0;
      try {
        age = Date.now() - statSync(lockDir).mtimeMs;
      } catch {
        continue;
      }
      if (age > STALE_MS) {
        rmSync(lockDir, { recursive: true, force: true });
        continue;
      }
      if (!said) say('another setup is installing the Python tools, waiting…');
      said = true;
      await sleep(500);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/**
 * uv UV_VERSION in .cache/uv (fetched once by the interpreter's own pip, `--target`: nothing installed
 * outside the checkout), or null when it cannot be had (no pip, no network): the venv's pip installs then.
 */
async function getUv() {
  if (existsSync(uvBin)) return uvBin;
  const candidates = process.env.PYTHON ? [process.env.PYTHON] : ['python3', 'python'];
  for (const interpreter of candidates) {
    const res = await run(interpreter, [
      '-m',
      'pip',
      'install',
      '--quiet',
      '--disable-pip-version-check',
      '--no-warn-script-location',
      '--target',
      uvDir,
      `uv==${UV_VERSION}`,
    ]);
    if (res.code === 0 && existsSync(uvBin)) return uvBin;
    if (res.error?.code !== 'ENOENT') {
      say(
        `uv ${UV_VERSION} could not be fetched (${interpreter} -m pip, exit code ${res.code}); installing with pip instead:\n${res.output.trim().split('\n').slice(-3).join('\n')}`,
      );
      return null;
    }
  }
  return null;
}

async function install() {
  if (upToDate()) return true;
  return withLock(async () => {
    if (upToDate()) return true; // a concurrent setup just did it
    const started = Date.now();
    const python = path.join(bin, isWindows ? 'python.exe' : 'python');
    const uv = await getUv();
    if (!existsSync(python)) {
      const candidates = process.env.PYTHON ? [process.env.PYTHON] : ['python3', 'python'];
      let created = false;
      for (const interpreter of candidates) {
        // uv installs pip with the packages: ensurepip's own copy would only cost its install.
        const venvArgs = ['-m', 'venv', ...(uv ? ['--without-pip'] : []), venv];
        say(`creating the virtual environment: ${interpreter} ${venvArgs.join(' ')}`);
        const res = await run(interpreter, venvArgs);
        if (res.code === 0) {
          created = true;
          break;
        }
        say(res.error?.code === 'ENOENT' ? `${interpreter} not found` : `${interpreter} -m venv failed:\n${res.output.trim()}`);
      }
      if (!created) {
        say('Python 3.9+ with the venv module is needed for the contract tests (Debian/Ubuntu: apt-get install -y python3-venv)');
        return false;
      }
    }
    say(`installing ${PACKAGES.join(' ')} into .venv${uv ? ` with uv ${UV_VERSION}` : ''}`);
    let res;
    if (uv) {
      res = await runWithEnv(uv, ['pip', 'install', '--quiet', '--python', python, `pip==${PIP_VERSION}`, ...PACKAGES], {
        UV_CACHE_DIR: path.join(root, '.cache', 'uv', 'cache'),
        UV_NO_CONFIG: '1',
        UV_PYTHON_DOWNLOADS: 'never',
      });
    } else {
      if (!existsSync(pip)) await run(python, ['-m', 'ensurepip', '--upgrade']);
      res = await run(pip, ['install', '--quiet', '--disable-pip-version-check', ...PACKAGES]);
    }
    if (res.code !== 0 || !existsSync(st) || !existsSync(pip)) {
      say(`${uv ? 'uv pip install' : 'pip install'} failed (exit code ${res.code}):\n${res.output.trim()}`);
      return false;
    }
    // Stamps of other versions go: the stamp names what is installed.
    for (const f of readdirSync(venv)) if (f.startsWith('.schemathesis-') || f.startsWith('.packages-')) rmSync(path.join(venv, f), { force: true });
    writeFileSync(stamp, `${PACKAGES.join('\n')}\n`);
    // The tables, now rather than in the first contract test (best effort: the test computes what is missing).
    const warm = await runWithEnv(path.join(bin, isWindows ? 'python.exe' : 'python'), ['-c', WARM_HYPOTHESIS], {
      HYPOTHESIS_STORAGE_DIRECTORY: HYPOTHESIS_STORAGE,
    });
    if (warm.code !== 0) say(`Hypothesis' Unicode tables not precomputed (the first contract test will):\n${warm.output.trim()}`);
    say(`${PACKAGES.length} packages installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return true;
  });
}

if (args.has('--check')) {
  if (!upToDate()) {
    process.stderr.write(
      `[setup-venv] the Python tools (${PACKAGES.join(' ')}) are not installed in .venv: run \`node scripts/setup-venv.mjs\` (npm test's set-up, scripts/setup-test.mjs, runs it)\n`,
    );
    process.exit(1);
  }
} else if (!(await install())) process.exit(1);
if (args.has('--print-bin')) process.stdout.write(`${st}\n`);
