#!/usr/bin/env node
// Idempotent build of oapi-codegen, the Go client generator test/consumer-matrix.test.ts runs
// (what a Go consumer runs to generate a client from the published spec):
//
//   .cache/oapi-codegen/<version>/oapi-codegen (gitignored)
//
//   .cache/oapi-codegen/<version>/consumer/  go.mod and go.sum of the test's Go consumer, whose
//                                            dependencies (the generated client's runtime,
//                                            OAPI_CODEGEN_RUNTIME_VERSION) are then in Go's module
//                                            and build caches: the test builds offline (GOPROXY=off)
//
// Built with `go install …@<version>` through the Go module proxy (GOPROXY, the module and
// build caches in the user's home apply), into a directory named after the version. Fast
// when present: two stats. Needs Go on PATH. Run by `npm test`'s set-up (scripts/setup-test.mjs),
// never inside the test's timeout (a cold `go install` took more than 300 s on a loaded machine).
//
// Flags: --force (build again), --print-bin (print the binary's path on the last line),
// --print-module (print the consumer module's directory on the last line), --check (build
// nothing: exit 1 naming this script when something is missing; what the test runs).
// Exit code 2 when Go is not on PATH (the test skips its Go client), 1 when the build fails.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const OAPI_CODEGEN_VERSION = 'v2.8.2';
/** The runtime package the generated client imports, pinned in the consumer's go.mod. */
export const OAPI_CODEGEN_RUNTIME_VERSION = 'v1.9.0';

/**
 * -trimpath, as every Go build of the suite (setup-generated-clients.mjs, the consumer matrices,
 * test/spec/patterns-re2): one set of build-cache entries, the standard library compiled once on a cold cache.
 */
const GO_ENV = { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -trimpath`.trim() };
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, '.cache', 'oapi-codegen', OAPI_CODEGEN_VERSION);
const bin = path.join(dir, process.platform === 'win32' ? 'oapi-codegen.exe' : 'oapi-codegen');
const consumer = path.join(dir, 'consumer');
const consumerReady = () => existsSync(path.join(consumer, 'go.sum')) && existsSync(path.join(consumer, '.ready'));
const args = new Set(process.argv.slice(2));
const say = (msg) => process.stdout.write(`[setup-oapi-codegen] ${msg}\n`);

function run(cmd, cmdArgs, env, cwd = root) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, cmdArgs, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: -1, error, output }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const HOW_GO = 'Install Go 1.22+ (Debian: apt-get install golang-go, or https://go.dev/dl) and rerun `node scripts/setup-oapi-codegen.mjs`.';

if (args.has('--check')) {
  if (!existsSync(bin) || !consumerReady()) {
    process.stderr.write(
      `[setup-oapi-codegen] oapi-codegen ${OAPI_CODEGEN_VERSION} and its consumer module are not built in ${dir}: run \`node scripts/setup-oapi-codegen.mjs\` (npm test's set-up, scripts/setup-test.mjs, runs it)\n`,
    );
    process.exit(1);
  }
} else {
  if (args.has('--force')) rmSync(dir, { recursive: true, force: true });
  if (!existsSync(bin) || !consumerReady()) {
    const go = await run('go', ['version'], process.env);
    if (go.code !== 0) {
      process.stderr.write(
        `[setup-oapi-codegen] Go is not on PATH${go.error ? ` (${go.error.message})` : ''}: oapi-codegen not built, test/consumer-matrix.test.ts skips its Go client. ${HOW_GO}\n`,
      );
      process.exit(2);
    }
  }
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    say(`building github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION} with go install`);
    const started = Date.now();
    const res = await run('go', ['install', `github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@${OAPI_CODEGEN_VERSION}`], {
      ...GO_ENV,
      GOBIN: dir,
    });
    if (res.code !== 0 || !existsSync(bin)) {
      process.stderr.write(`${res.output}\n[setup-oapi-codegen] could not build oapi-codegen${res.error ? ` (${res.error.message})` : ''}. ${HOW_GO}\n`);
      process.exit(1);
    }
    say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  if (!consumerReady()) {
    // A module like the test's consumer: the packages a generated `types,client` file imports,
    // resolved (go.sum), downloaded and compiled once, so the test needs neither network nor time for them.
    rmSync(consumer, { recursive: true, force: true });
    mkdirSync(consumer, { recursive: true });
    writeFileSync(
      path.join(consumer, 'go.mod'),
      `module freightconsumer\n\ngo 1.22\n\nrequire github.com/oapi-codegen/runtime ${OAPI_CODEGEN_RUNTIME_VERSION}\n`,
    );
    writeFileSync(
      path.join(consumer, 'main.go'),
      'package main\n\nimport (\n\t"fmt"\n\n\t"github.com/oapi-codegen/runtime"\n\topenapi_types "github.com/oapi-codegen/runtime/types"\n)\n\n' +
        'var _ = runtime.JSONMerge\n\nfunc main() {\n\tvar d openapi_types.Date\n\tfmt.Println(d)\n}\n',
    );
    say(`resolving github.com/oapi-codegen/runtime@${OAPI_CODEGEN_RUNTIME_VERSION} for the Go consumer (go mod tidy, go build)`);
    const started = Date.now();
    for (const step of [
      ['mod', 'tidy'],
      ['build', '-o', process.platform === 'win32' ? 'warm.exe' : 'warm', '.'],
      ['vet', '.'],
    ]) {
      const res = await run('go', step, GO_ENV, consumer);
      if (res.code !== 0) {
        process.stderr.write(
          `${res.output}\n[setup-oapi-codegen] go ${step.join(' ')} of the consumer module failed${res.error ? ` (${res.error.message})` : ''}. ${HOW_GO}\n`,
        );
        process.exit(1);
      }
    }
    rmSync(path.join(consumer, process.platform === 'win32' ? 'warm.exe' : 'warm'), { force: true });
    writeFileSync(path.join(consumer, '.ready'), `${OAPI_CODEGEN_RUNTIME_VERSION}\n`);
    say(`consumer module ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}
if (args.has('--print-bin')) process.stdout.write(`${bin}\n`);
if (args.has('--print-module')) process.stdout.write(`${consumer}\n`);
