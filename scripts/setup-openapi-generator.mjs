#!/usr/bin/env node
// Idempotent fetch of the openapi-generator CLI used by test/consumer-matrix-openapi-generator.test.ts
// (what a consumer runs to generate a client from the published spec):
//
//   .cache/openapi-generator/openapi-generator-cli-<version>.jar (gitignored)
//
// Fetched from Maven Central with Maven itself (`mvn dependency:copy`, the client the
// embedded engine's build already needs), so the local repository and any mirror in
// ~/.m2/settings.xml apply. Fast when present: one stat. Needs Java 11+ to run.
//
// Flags: --force (fetch again), --print-jar (print the jar's path on the last line),
// --check (fetch nothing: exit 1 naming this script when the jar is missing; what the test runs).
// Exit code 1 when Maven is missing or the fetch fails.

import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const OPENAPI_GENERATOR_VERSION = '7.25.0';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, '.cache', 'openapi-generator');
const jar = path.join(dir, `openapi-generator-cli-${OPENAPI_GENERATOR_VERSION}.jar`);
const args = new Set(process.argv.slice(2));
const say = (msg) => process.stdout.write(`[setup-openapi-generator] ${msg}\n`);

function run(cmd, cmdArgs) {
  return new Promise((resolve) => {
    let output = '';
    const child = spawn(cmd, cmdArgs, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: process.env, shell: process.platform === 'win32' });
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('error', (error) => resolve({ code: -1, error, output }));
    child.on('close', (code) => resolve({ code: code ?? 1, output }));
  });
}

const present = () => {
  try {
    return statSync(jar).size > 1_000_000;
  } catch {
    return false;
  }
};

if (args.has('--check') && !present()) {
  process.stderr.write(
    `[setup-openapi-generator] the openapi-generator CLI ${OPENAPI_GENERATOR_VERSION} is not at ${jar}: run \`node scripts/setup-openapi-generator.mjs\` (npm test's set-up, scripts/setup-test.mjs, runs it)\n`,
  );
  process.exit(1);
}
if (args.has('--force') && existsSync(jar)) rmSync(jar);
if (!present()) {
  mkdirSync(dir, { recursive: true });
  say(`fetching org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION} with Maven`);
  const started = Date.now();
  const res = await run('mvn', [
    '-q',
    '-B',
    'dependency:copy',
    `-Dartifact=org.openapitools:openapi-generator-cli:${OPENAPI_GENERATOR_VERSION}:jar`,
    `-DoutputDirectory=${dir}`,
  ]);
  if (res.code !== 0 || !present()) {
    process.stderr.write(
      `${res.output}\n[setup-openapi-generator] could not fetch the openapi-generator CLI jar${res.error ? ` (${res.error.message})` : ''}.\n` +
        'Install Maven and Java (Debian: apt-get install maven default-jdk-headless) and rerun `node scripts/setup-openapi-generator.mjs`.\n',
    );
    process.exit(1);
  }
  say(`fetched in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
if (args.has('--print-jar')) process.stdout.write(`${jar}\n`);
