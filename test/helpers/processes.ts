/** Processes as Linux shows them in /proc (a service's embedded engine, whether a pid still runs), and children that die with the test process. */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Parent pid and process group of `pid`, or null when it is gone. */
function stat(pid: number): { ppid: number; pgid: number; state: string } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, ppid: Number(fields[1]), pgid: Number(fields[2]) };
  } catch {
    return null;
  }
}

/** Whether `pid` runs (a zombie waiting for its parent counts as gone). */
export function isRunning(pid: number): boolean {
  const s = stat(pid);
  return s !== null && s.state !== 'Z';
}

/** Process group of `pid`, or null when it is gone. */
export const processGroup = (pid: number): number | null => stat(pid)?.pgid ?? null;

/** The embedded engine's JVM among the descendants of `root` (its command line names embedded-mongo), or null. */
export const enginePidUnder = (root: number): number | null => descendantRunning(root, 'embedded-mongo');

/** A running descendant of `root` whose command line includes `needle`, or null. */
export function descendantRunning(root: number, needle: string): number | null {
  const pids = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number);
  const parents = new Map(pids.map((p) => [p, stat(p)?.ppid ?? -1]));
  const descends = (p: number): boolean => {
    for (let cur = parents.get(p), hops = 0; cur !== undefined && cur > 1 && hops < 10; cur = parents.get(cur), hops++) if (cur === root) return true;
    return false;
  };
  for (const pid of pids) {
    if (!descends(pid) || !isRunning(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(needle)) return pid;
    } catch {
      /* gone meanwhile */
    }
  }
  return null;
}

// --------------------------------------------------------------------------- children that die with this test process

/**
 * Process groups of the children this test process started (each the leader of a group of its own, `detached`), killed
 * with SIGKILL when this process ends, however it ends: the last test done, an uncaught error, process.exit(), or a
 * signal. A file's timeout is a signal: tap's runner asks the file to time out and it then kills itself with SIGALRM
 * (SIGKILL half a second later if it is still there); t.teardown() callbacks do not run then. Without this, a
 * Schemathesis run, a service or a build tool a file had started ran on after the file was gone, with what it
 * started under it (npm's shell and the service, Maven's javac, go's compilers): a whole group, so nothing under
 * it is missed. Kept until this process exits: a group outlives its leader (npm dies of a Ctrl-C at once, the
 * service under it drains), and a group id cannot be reused while any member runs.
 */
const groups = new Set<number>();
const TERMINATING = ['SIGALRM', 'SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** SIGKILL to process group `pgid` (its leader's pid); false when no process of it is left. */
export function killGroup(pgid: number, signal: NodeJS.Signals = 'SIGKILL'): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: the whole group is gone
  }
}

function killGroups(): void {
  for (const g of groups) killGroup(g);
}

/**
 * On a terminating signal: kill the groups, then let the signal do what it did before (tap's signal-exit handler
 * reports a timeout and the process dies): this listener takes itself off and the signal is sent again. While it
 * is listening, signal-exit sees a listener besides its own and leaves the signal to it.
 */
function onSignal(signal: NodeJS.Signals): void {
  killGroups();
  for (const s of TERMINATING) process.removeListener(s, onSignal);
  process.kill(process.pid, signal);
}

/** `child` (spawned `detached`, so the leader of a group of its own) and its group die with this process. */
export function diesWithThisProcess<T extends ChildProcess>(child: T): T {
  if (child.pid === undefined) return child; // not started (the 'error' event says why)
  if (groups.size === 0 && process.listeners('exit').every((l) => l !== killGroups)) {
    process.on('exit', killGroups);
    for (const s of TERMINATING) process.on(s, onSignal);
  }
  groups.add(child.pid);
  return child;
}

/**
 * util-linux's setpriv, to give a child Linux's parent-death signal (prctl PR_SET_PDEATHSIG) before it execs: the
 * kernel kills it when this process dies, even of a SIGKILL, when no hook of this process runs. That happens: on a
 * loaded machine tap's runner, which sends SIGKILL a second after asking a file to time out, killed a
 * contract-schemathesis process before its SIGALRM listener ran, and the service it had started ran on.
 */
const SETPRIV = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p)) ?? null;

/**
 * spawn() in a process group of its own that dies with this process (diesWithThisProcess), and the child itself
 * with a parent-death SIGKILL where setpriv is there (the same process: setpriv execs the command).
 */
export function spawnInGroup(command: string, args: readonly string[], options: SpawnOptions = {}): ChildProcess {
  const [cmd, argv] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', command, ...args]] : [command, args];
  return diesWithThisProcess(spawn(cmd, argv, { ...options, detached: true }));
}

export interface RunInGroupOptions {
  cwd?: string | URL;
  env?: NodeJS.ProcessEnv;
  /** Kill the whole group (SIGKILL) and fail after this many ms (default: none). */
  timeout?: number;
  /** Bytes of stdout or stderr kept (default 64 MB); beyond it the group is killed and the run fails, as execFile. */
  maxBuffer?: number;
}

/** What a failed runInGroup throws: execFile's error fields, so callers read `stdout` and `stderr` as before. */
export type RunError = Error & { stdout: string; stderr: string; code: number | null; signal: NodeJS.Signals | null; killed: boolean };

/**
 * execFile() for a tool a test runs to completion, in a process group of its own: on its timeout the whole group is
 * killed (execFile's timeout signals the direct child alone: a `bash -c` line's npx, Maven's javac or go's
 * compilers ran on), and whatever of the group is left once the tool has exited is killed too. It dies with this
 * process like spawnInGroup's children. Resolves with stdout and stderr; a non-zero exit, a signal or the timeout
 * rejects with a RunError.
 */
export function runInGroup(command: string, args: readonly string[], opts: RunInGroupOptions = {}): Promise<{ stdout: string; stderr: string }> {
  const maxBuffer = opts.maxBuffer ?? 64 * 1024 * 1024;
  return new Promise((resolve, reject) => {
    const child = spawnInGroup(command, args, { cwd: opts.cwd, env: opts.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let why: string | null = null;
    const stop = (reason: string) => {
      why ??= reason;
      if (child.pid !== undefined) killGroup(child.pid);
    };
    const timer = opts.timeout ? setTimeout(() => stop(`timed out after ${opts.timeout} ms`), opts.timeout) : undefined;
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (stdout.length > maxBuffer) stop('stdout maxBuffer exceeded');
    });
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      if (stderr.length > maxBuffer) stop('stderr maxBuffer exceeded');
    });
    const fail = (message: string, code: number | null, signal: NodeJS.Signals | null) => {
      const err: RunError = Object.assign(new Error(message), { stdout, stderr, code, signal, killed: why !== null });
      reject(err);
    };
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(`${command}: ${err.message}`, null, null);
    });
    // Anything it left running under it goes once it exits (a grandchild holding its stdout would also keep
    // 'close' from coming until the timeout); what was written to the pipes is still read to the end.
    child.on('exit', () => child.pid !== undefined && killGroup(child.pid));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (why) fail(`Command failed: ${command} ${args.join(' ')} (${why})`, code, signal);
      else if (code !== 0) fail(`Command failed: ${command} ${args.join(' ')} (${signal ? `signal ${signal}` : `exit code ${code}`})`, code, signal);
      else resolve({ stdout, stderr });
    });
  });
}
