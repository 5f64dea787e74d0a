#!/usr/bin/env node
// Idempotent build of oapi-codegen, the Go client generator test/consumer-matrix.test.ts runs
// (what a Go consumer runs to generate a client from the published spec):
//
//   .cache/oapi-codegen/<version>/oapi-codegen (gitignored)
//
// Built with `go install …@<version>` through the Go module proxy (GOPROXY, the module and
// build caches in the user's home apply), into a directory named after the version. Fast
// when present: one stat. Needs Go on PATH.
//
// Flags: --force (build again), --print-bin (print the binary's path on the last line).
// Exit code 1 when Go is missing or the build fails.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const OAPI_CODEGEN_VERSION = 'v2.8.2';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, '.cache', 'oapi-codegen', OAPI_CODEGEN_VERSION);
const bin = path.join(dir, process.platform === 'win32' ? 'oapi-codegen.exe' : 'oapi-codegen');
const args = new Set(process.argv.slice(2));
const say = (msg) => process.stdout.write(`[setup-oapi-codegen] ${msg}\n`);

function run(cmd, cmdArgs, env) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, cmdArgs, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: -1, error, output }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

if (args.has('--force')) rmSync(dir, { recursive: true, force: true });
if (!existsSync(bin)) {
  mkdirSync(dir, { recursive: true });
  say(`building github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION} with go install`);
  const started = Date.now();
  const res = await run('go', ['install', `github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION}`], { ...process.env, GOBIN: dir });
  if (res.code !== 0 || !existsSync(bin)) {
    process.stderr.write(
      `${res.output}\n[setup-oapi-codegen] could not build oapi-codegen${res.error ? ` (${res.error.message})` : ''}.\n` +
        'Install Go 1.22+ (Debian: apt-get install golang-go, or https://go.dev/dl) and rerun `node scripts/setup-oapi-codegen.mjs`.\n',
    );
    process.exit(1);
  }
  say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
if (args.has('--print-bin')) process.stdout.write(`${bin}\n`);
