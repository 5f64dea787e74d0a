/**
 * Start-up through the real entry point (scripts/start.ts on the embedded engine, as `npm start`
 * runs it), issue 33 point 6:
 *
 * - a DATA_DIR it cannot use — on a read-only file system (a read-only tmpfs mounted for the
 *   test: as root, chmod does not stop writes), on a full one (a 1 MB tmpfs filled up), or under
 *   a regular file — and an engine store it cannot open (a corrupt store file): exit 1 and
 *   exactly one line on stderr naming the path and the cause, no stack trace;
 * - a second service on a DATA_DIR a running one serves: refused with one line naming the
 *   DATA_DIR and the first's PID, exit 1, while the first keeps serving (/health and data 200)
 *   and a CLI tool (`npm run apikey`) still attaches to the first's engine; after the first is
 *   killed (SIGKILL: its lock is left behind, stale), a new service starts on the same store
 *   and removes its lock when it stops; two tools at once beside it both attach, taking no lock;
 * - a CLI tool running an engine of its own (`npm run worker` without a service: it holds
 *   DATA_DIR/tool.lock) is never shared: another tool (`npm run apikey`, `import`) is refused at
 *   once with exit 2 and one line naming it, while it keeps running; its lock goes with it (a
 *   clean stop removes it, one left by a SIGKILL is taken over by the next tool); two tools
 *   started at once on a fresh DATA_DIR: each either runs or is refused that way, never a stack.
 *
 * The mounts need root (CI runs as root); without it those two cases are skipped with a message.
 * Nothing here depends on timing: every wait is for an exit, a "listening" line or a file (a
 * bounded poll).
 */
import t, { type Test } from 'tap';
import { execFile, execFileSync, type ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { ROOT, scriptArgs, SHORT_LIVED_ENGINE_JAVA_OPTS, spawnScript, startService } from './helpers/service.ts';
import { enginePidUnder, isRunning, runInGroup, type RunError } from './helpers/processes.ts';
import { DEMO_TENANTS } from '../scripts/demo/load.ts';
import { EMBEDDED_STORE_FILE } from '../scripts/embedded-mongo/launcher.ts';
import { SERVICE_LOCK_FILE, TOOL_LOCK_FILE } from '../scripts/embedded-mongo/data-dir.ts';

t.setTimeout(420_000);
const exec = promisify(execFile);

const tmp = (prefix: string) => {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
};

/** scripts/start.ts on `dataDir` until it exits: its exit code and stderr (stdout apart). */
async function startExpectingFailure(dataDir: string): Promise<{ code: number | string; stderr: string; stdout: string }> {
  const child = spawnScript('scripts/start.ts', { DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'warn', DEMO_INVOICES: '20', DEMO_TRIPS: '20' });
  let stderr = '';
  let stdout = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const code = await new Promise<number | string>((resolve) => child.on('close', (c, s) => resolve(c ?? s ?? 'unknown')));
  return { code, stderr, stdout };
}

/** Exit `code` (1 unless told) and exactly one line on stderr matching `line`, without a stack frame. */
function oneLine(t: Test, run: { code: number | string; stderr: string; stdout: string }, line: RegExp, what: string, code = 1): void {
  const lines = run.stderr.split('\n').filter((l) => l.trim() !== '');
  t.equal(run.code, code, `${what}: exit code ${code}`);
  t.equal(lines.length, 1, `${what}: one line on stderr (${JSON.stringify(lines.slice(0, 3))}${lines.length > 3 ? ` and ${lines.length - 3} more` : ''})`);
  t.match(lines[0] ?? '', line, `${what}: ${lines[0]}`);
  t.notMatch(`${run.stderr}${run.stdout}`, /^\s+at /m, `${what}: no stack trace`);
  t.notMatch(run.stdout, /listening on/, `${what}: never listened`);
}

/** Why a tmpfs cannot be mounted here (not root, no permission), or false when it can. */
const cannotMount: string | false = (() => {
  if (process.getuid?.() !== 0) return 'mounting a tmpfs needs root (CI runs as root)';
  const probe = mkdtempSync(path.join(os.tmpdir(), 'startup-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'pipe' });
    execFileSync('umount', [probe], { stdio: 'pipe' });
    return false;
  } catch (err) {
    return `cannot mount a tmpfs here: ${(err as Error).message.split('\n')[0]}`;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

/** A tmpfs mounted on a fresh directory, unmounted at teardown. */
function mountTmpfs(options: string): string {
  const dir = tmp('startup-mnt-');
  execFileSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { stdio: 'pipe' });
  t.teardown(() => execFileSync('umount', ['-l', dir], { stdio: 'ignore' }));
  return dir;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

t.test('read-only DATA_DIR: one line naming it and EROFS, exit 1', { skip: cannotMount }, async (t) => {
  const mounted = { dir: mountTmpfs('size=1m,ro') };
  // Inside the mount (to be created) and the mount itself (exists, not writable).
  for (const dataDir of [path.join(mounted.dir, 'data'), mounted.dir]) {
    const run = await startExpectingFailure(dataDir);
    oneLine(
      t,
      run,
      new RegExp(`^cannot use DATA_DIR ${escape(dataDir)}: read-only file system \\(EROFS\\)$`),
      dataDir === mounted.dir ? 'the mount point' : 'a directory to create in it',
    );
  }
});

t.test('full DATA_DIR: one line naming it and ENOSPC, exit 1', { skip: cannotMount }, async (t) => {
  const mounted = { dir: mountTmpfs('size=1m') };
  try {
    writeFileSync(path.join(mounted.dir, 'filler'), Buffer.alloc(2 * 1024 * 1024));
  } catch (err) {
    t.equal((err as NodeJS.ErrnoException).code, 'ENOSPC', 'the tmpfs is full');
  }
  const run = await startExpectingFailure(mounted.dir);
  oneLine(t, run, new RegExp(`^cannot use DATA_DIR ${escape(mounted.dir)}: no space left on device \\(ENOSPC\\)`), 'full');
});

t.test('DATA_DIR under a regular file: one line naming the file, ENOTDIR, exit 1', async (t) => {
  const file = path.join(tmp('startup-file-'), 'not-a-dir');
  writeFileSync(file, 'a file');
  const dataDir = path.join(file, 'data');
  const run = await startExpectingFailure(dataDir);
  oneLine(t, run, new RegExp(`^cannot use DATA_DIR ${escape(dataDir)}: ${escape(file)} is a file, not a directory \\(ENOTDIR\\)$`), 'under a file');
});

t.test('a store the engine cannot open: one line naming the file and the cause, exit 1', async (t) => {
  const dataDir = tmp('startup-corrupt-');
  const store = path.join(dataDir, EMBEDDED_STORE_FILE);
  writeFileSync(store, randomBytes(64 * 1024));
  const run = await startExpectingFailure(dataDir);
  oneLine(
    t,
    run,
    new RegExp(`^cannot start the embedded database on DATA_DIR ${escape(dataDir)}: .*Store header is corrupt: ${escape(store)}$`),
    'corrupt store',
  );
  t.notOk(existsSync(path.join(dataDir, SERVICE_LOCK_FILE)), 'the lock is gone with the process');
});

t.test('a second service on the same DATA_DIR is refused; the first keeps serving; after kill -9 a new one starts', async (t) => {
  const dataDir = tmp('startup-second-');
  const env = { DATA_DIR: dataDir, DEMO_INVOICES: '20', DEMO_TRIPS: '20', WEBHOOK_ENCRYPTION_KEY: '' };
  const first = await startService({ mongodbDb: 'freight', env, timeoutMs: 240_000 });
  t.teardown(() => first.stop());
  const lockFile = path.join(dataDir, SERVICE_LOCK_FILE);
  t.equal(readFileSync(lockFile, 'utf8').split(/\s/)[0], String(first.child.pid), 'the lock names the running service');

  const second = await startExpectingFailure(dataDir);
  oneLine(t, second, new RegExp(`^DATA_DIR ${escape(dataDir)} is already in use by a running service \\(PID ${first.child.pid}, `), 'second instance');
  t.notMatch(second.stdout, /starting embedded MongoDB/, 'the second never started an engine');

  const key = DEMO_TENANTS[0]!.apiKey;
  t.equal((await fetch(`${first.base}/health`)).status, 200, 'the first: /health 200');
  const data = await fetch(`${first.base}/api/financial-docs?limit=1`, { headers: { 'x-api-key': key } });
  t.equal(data.status, 200, 'the first: data 200');
  t.equal(readFileSync(lockFile, 'utf8').split(/\s/)[0], String(first.child.pid), 'its lock untouched');

  // A CLI tool still attaches to the running service's engine (no second engine on the store).
  const list = await exec(process.execPath, [...scriptArgs('scripts/apikey.ts'), 'list', '--tenant', DEMO_TENANTS[0]!.rfc], {
    cwd: ROOT,
    env: { ...process.env, TAP: '', NODE_OPTIONS: '', DATA_DIR: dataDir, MONGODB_DB: 'freight', MONGODB_URI: '' },
    timeout: 120_000,
  });
  t.match(list.stderr, /using the embedded MongoDB already running on port/, "npm run apikey attached to the service's engine");
  t.match(list.stdout, /active/, "and listed the tenant's keys");
  // Two at once beside the service: both attach (neither runs an engine of its own, so neither takes tool.lock).
  const both = await Promise.all(
    [1, 2].map(() => runTool('scripts/apikey.ts', ['list', '--tenant', DEMO_TENANTS[0]!.rfc], dataDir, { MONGODB_DB: 'freight' })),
  );
  for (const [i, run] of both.entries()) {
    t.equal(run.code, 0, `tool ${i + 1} of two at once beside the service: exit 0 (${run.stderr.trim()})`);
    t.match(run.stderr, /using the embedded MongoDB already running on port/, `tool ${i + 1} attached to the service's engine`);
  }
  t.notOk(existsSync(path.join(dataDir, TOOL_LOCK_FILE)), 'tools attached to the service take no tool.lock');
  t.equal((await fetch(`${first.base}/health`)).status, 200, 'the first: /health still 200 after the tool exited');
  t.equal(
    (await fetch(`${first.base}/api/financial-docs?limit=1`, { headers: { 'x-api-key': key } })).status,
    200,
    'the first: data still 200 after the tool exited',
  );

  // kill -9: the lock stays behind with a dead PID; the next service takes it over.
  first.child.kill('SIGKILL');
  await first.exited;
  t.ok(existsSync(lockFile), 'the killed service left its lock');
  const third = await startService({ mongodbDb: 'freight', env, timeoutMs: 240_000 });
  t.teardown(() => third.stop());
  t.equal(readFileSync(lockFile, 'utf8').split(/\s/)[0], String(third.child.pid), 'the stale lock was taken over');
  t.equal((await fetch(`${third.base}/health`)).status, 200, 'the new service: /health 200');
  t.equal(
    (await fetch(`${third.base}/api/financial-docs?limit=1`, { headers: { 'x-api-key': key } })).status,
    200,
    'the new service: data 200 on the same store',
  );
  t.equal(await third.stop(), 0, 'the new service stops cleanly');
  t.notOk(existsSync(lockFile), 'and removes its lock');
});

/** A CLI tool (scripts/<name>.ts) run to its end on the embedded engine in `dataDir`: its exit code and output. */
async function runTool(
  script: string,
  args: string[],
  dataDir: string,
  env: Record<string, string> = {},
): Promise<{ code: number | string; stderr: string; stdout: string }> {
  const fullEnv: NodeJS.ProcessEnv = {
    ...process.env,
    TAP: '',
    NODE_OPTIONS: '',
    LOG_LEVEL: 'warn',
    EMBEDDED_MONGO_JAVA_OPTS: SHORT_LIVED_ENGINE_JAVA_OPTS,
    DATA_DIR: dataDir,
    ...env,
  };
  delete fullEnv.MONGODB_URI;
  try {
    const { stdout, stderr } = await runInGroup(process.execPath, [...scriptArgs(script), ...args], { cwd: ROOT, env: fullEnv, timeout: 180_000 });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as RunError;
    return { code: e.code ?? e.signal ?? 'unknown', stdout: e.stdout, stderr: e.stderr };
  }
}

/** `npm run worker` on `dataDir` with no service there: it runs an engine of its own until stopped; resolves once that engine is up. */
async function startWorker(dataDir: string): Promise<{ child: ChildProcess; exited: Promise<number | string>; output: () => string }> {
  const child = spawnScript('scripts/worker.ts', { DATA_DIR: dataDir, LOG_LEVEL: 'warn', WEBHOOK_ENCRYPTION_KEY: '' });
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  t.teardown(() => void child.kill('SIGKILL'));
  // The port file is written once its engine listens (scripts/embedded-mongo/open-database.ts): a bounded poll.
  const portFile = path.join(dataDir, 'embedded-mongo.port');
  for (const until = Date.now() + 180_000; !existsSync(portFile);) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the worker exited before its engine was up:\n${out}`);
    if (Date.now() > until) throw new Error(`the worker's engine was not up within 180 s:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  return { child, exited, output: () => out };
}

t.test("a tool's own engine is never shared: another tool is refused with one line, exit 2; its lock goes with it", async (t) => {
  const dataDir = tmp('startup-tools-');
  const lockFile = path.join(dataDir, TOOL_LOCK_FILE);
  const worker = await startWorker(dataDir);
  const pid = worker.child.pid!;
  t.equal(existsSync(lockFile) ? readFileSync(lockFile, 'utf8').split('\n')[1] : null, 'npm run worker', 'the worker holds tool.lock, naming itself');
  const inUse = new RegExp(
    `^DATA_DIR ${escape(dataDir)} is in use by another tool \\(npm run worker, PID ${pid}\\): wait for it to finish, or run the tools one after another$`,
  );

  const apikey = await runTool('scripts/apikey.ts', ['list', '--tenant', DEMO_TENANTS[0]!.rfc], dataDir);
  oneLine(t, apikey, inUse, 'npm run apikey beside the worker', 2);
  t.notMatch(apikey.stderr, /using the embedded MongoDB already running/, "it never attached to the worker's engine");
  const imported = await runTool('scripts/import.ts', ['--tenant', DEMO_TENANTS[0]!.rfc, path.join(dataDir, 'none.xml')], dataDir);
  oneLine(t, imported, inUse, 'npm run import beside the worker', 2);
  t.ok(isRunning(pid) && enginePidUnder(pid) !== null, 'the worker and its engine run on');

  worker.child.kill('SIGTERM');
  t.equal(await worker.exited, 0, `the worker stops cleanly (${worker.output().trim().split('\n').slice(-2).join(' | ')})`);
  t.notOk(existsSync(lockFile), 'and removes tool.lock');
  const after = await runTool('scripts/apikey.ts', ['list', '--tenant', DEMO_TENANTS[0]!.rfc], dataDir);
  t.equal(after.code, 0, `then a tool runs on the store (${after.stderr.trim()})`);
  t.match(after.stderr, /starting embedded MongoDB/, 'with an engine of its own');
  t.notOk(existsSync(lockFile), 'which it lets go of when it ends');

  // kill -9: the lock stays behind with a dead PID; the next tool takes it over.
  const killed = await startWorker(dataDir);
  killed.child.kill('SIGKILL');
  await killed.exited;
  t.ok(existsSync(lockFile), 'a worker killed with SIGKILL left its lock');
  const next = await runTool('scripts/apikey.ts', ['list', '--tenant', DEMO_TENANTS[0]!.rfc], dataDir);
  t.equal(next.code, 0, `the next tool takes the stale lock over (${next.stderr.trim()})`);
  t.notOk(existsSync(lockFile), 'and removes it when it ends');

  // Two at once on a fresh DATA_DIR: each runs on an engine of its own in turn or is refused; never a stack, never exit 1.
  const fresh = tmp('startup-tools-fresh-');
  const both = await Promise.all([1, 2].map(() => runTool('scripts/apikey.ts', ['list', '--tenant', DEMO_TENANTS[0]!.rfc], fresh)));
  for (const [i, run] of both.entries()) {
    if (run.code === 2) {
      oneLine(t, run, new RegExp(`^DATA_DIR ${escape(fresh)} is in use by another tool \\(npm run apikey, PID \\d+\\): `), `tool ${i + 1} of two at once`, 2);
    } else {
      t.equal(run.code, 0, `tool ${i + 1} of two at once: exit 0 or 2 (${run.stderr.trim()})`);
      t.notMatch(run.stderr, /^\s+at /m, `tool ${i + 1} of two at once: no stack trace`);
    }
  }
  t.notOk(existsSync(path.join(fresh, TOOL_LOCK_FILE)), 'no lock left behind');
});
