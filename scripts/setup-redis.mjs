#!/usr/bin/env node
/**
 * Installs redis-server from Debian's package for the multi-instance tests
 * (test/multi-instance.test.ts), idempotently: nothing to do when it is on
 * PATH; otherwise `apt-get update` once and `apt-get install -y redis-server`
 * (as root, or through sudo). Run by `npm test` (pretest). A failure is not
 * fatal here: the tests that need Redis fail with how to install it.
 */
import { spawnSync } from 'node:child_process';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

if (has('redis-server')) process.exit(0);
if (!has('apt-get')) {
  console.warn(
    'setup-redis: redis-server is not installed and apt-get is not available; install Redis 6+ (redis-server on PATH) to run the multi-instance tests',
  );
  process.exit(0);
}
const root = typeof process.getuid === 'function' && process.getuid() === 0;
const prefix = root ? [] : has('sudo') ? ['sudo', '-n'] : null;
if (!prefix) {
  console.warn('setup-redis: redis-server is missing; run `sudo apt-get install -y redis-server` to run the multi-instance tests');
  process.exit(0);
}
const run = (args) => {
  const [cmd, ...rest] = [...prefix, ...args];
  return spawnSync(cmd, rest, { stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } }).status === 0;
};
console.log('setup-redis: installing redis-server from Debian (apt-get)');
// Straight install first (the package lists may be fresh); `apt-get update` once if that fails.
if (!run(['apt-get', 'install', '-y', '--no-install-recommends', 'redis-server'])) {
  run(['apt-get', 'update']);
  if (!run(['apt-get', 'install', '-y', '--no-install-recommends', 'redis-server'])) {
    console.warn('setup-redis: could not install redis-server; run `apt-get update && apt-get install -y redis-server` by hand');
  }
}
// apt may start the system service; the tests start their own servers on free ports.
process.exit(0);
