/**
 * The service as production runs it: `scripts/start.ts` in a child process
 * (`node --import` the suite's TypeScript loader, one process, so signals reach it directly), on a
 * database the caller provides (MONGODB_URI) or, without one, on the embedded
 * engine it starts itself in DATA_DIR (as `npm start` does), listening on an
 * ephemeral port. `launcher: 'npm'` runs `npm start` itself (npm, its shell, the
 * service), in a process group of its own (`group`) so a test can signal the whole
 * group as a terminal's Ctrl-C does.
 * Used by the contract (schemathesis), shutdown, fault and soak tests and `npm run soak`.
 */
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { bundledScript } from './script-bundle.ts';
import { spawnInGroup } from './processes.ts';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface RunningService {
  /** http://127.0.0.1:<port> */
  base: string;
  child: ChildProcess;
  /** The process group of npm and the service (`launcher: 'npm'`), else null. */
  group: number | null;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process is gone. */
  exited: Promise<number | string>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<number | string>;
}

export interface StartServiceOptions {
  /** A database; omitted: the embedded engine in `env.DATA_DIR` (started, supervised and stopped by the service). */
  mongodbUri?: string;
  mongodbDb: string;
  /** `node` (default): the service process itself; `npm`: `npm start` (npm and the service under it), in a process group of their own. */
  launcher?: 'node' | 'npm';
  env?: Record<string, string>;
  /** How long to wait for the "listening on" line (default 60 s). */
  timeoutMs?: number;
}

/**
 * How a test runs TypeScript in a process of its own: the suite's own loader (test/helpers/ts-loader.mjs,
 * also every tap file's), about 1 CPU-s cheaper per process than tsx's hooks. A file URL, so the
 * child's working directory does not matter.
 */
export const TS_IMPORT = ['--import', pathToFileURL(path.join(ROOT, 'test', 'helpers', 'ts-loader.mjs')).href] as const;

/**
 * Node's arguments for one of the project's scripts (then its own arguments): the scripts the
 * tests spawn run from their bundle (test/helpers/script-bundle.ts, rebuilt when a source
 * changes), anything else through TS_IMPORT.
 */
export function scriptArgs(script: string): string[] {
  const bundled = bundledScript(script);
  return bundled ? ['--enable-source-maps', bundled] : [...TS_IMPORT, script];
}

/** EMBEDDED_MONGO_JAVA_OPTS for an engine that lives seconds (launcher.ts `shortLived`: the C2 compiler never repays itself). */
export const SHORT_LIVED_ENGINE_JAVA_OPTS = '-XX:TieredStopAtLevel=1';

/**
 * One of the project's scripts as a process of its own (`node` with scriptArgs, so
 * signals reach it directly), with nothing of the test runner's environment
 * leaking into its config. In a process group of its own that dies with the test process
 * (test/helpers/processes.ts): a file that times out leaves no service running.
 */
export function spawnScript(script: string, env: Record<string, string>, opts: { launcher?: 'node' | 'npm' } = {}): ChildProcess {
  const fullEnv: NodeJS.ProcessEnv = { ...process.env, TAP: '', NODE_OPTIONS: '', ...env };
  if (!env.MONGODB_URI) {
    delete fullEnv.MONGODB_URI;
    // The engine it starts for itself lives as long as the test: C1 only, as startEmbeddedMongo's
    // `shortLived` (launcher.ts); the test's own options come after and win.
    fullEnv.EMBEDDED_MONGO_JAVA_OPTS = `${SHORT_LIVED_ENGINE_JAVA_OPTS} ${fullEnv.EMBEDDED_MONGO_JAVA_OPTS ?? ''}`.trim();
  }
  if (opts.launcher === 'npm') {
    // The package script of that name (`npm start` for scripts/start.ts), exactly as a user runs it.
    const name = /^scripts\/(\w+)\.ts$/.exec(script)?.[1];
    if (!name) throw new Error(`${script} is not a package script`);
    return spawnInGroup('npm', name === 'start' ? ['start', '--silent'] : ['run', name, '--silent'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: fullEnv,
    });
  }
  return spawnInGroup(process.execPath, scriptArgs(script), { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: fullEnv });
}

/**
 * How long a child service may take to answer: generous, because tap runs three files at once and
 * the consumer files compile (tsc, Maven) beside it; a start that never comes still fails.
 */
const START_TIMEOUT_MS = 180_000;

export async function startService(opts: StartServiceOptions): Promise<RunningService> {
  const child = spawnScript(
    'scripts/start.ts',
    {
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ...(opts.mongodbUri ? { MONGODB_URI: opts.mongodbUri } : {}),
      MONGODB_DB: opts.mongodbDb,
      // A real database needs the key from the environment (webhook operations are 503 without it).
      WEBHOOK_ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff',
      ...opts.env,
    },
    { launcher: opts.launcher },
  );
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number | string>((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal ?? 'unknown')));
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the service did not start within ${opts.timeoutMs ?? START_TIMEOUT_MS} ms:\n${out}`));
    }, opts.timeoutMs ?? START_TIMEOUT_MS);
    const onData = () => {
      const m = /listening on (http:\/\/[^\s]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', onData);
    void exited.then((how) => {
      clearTimeout(timer);
      reject(new Error(`the service exited (${how}) before listening:\n${out}`));
    });
  });
  return {
    base,
    child,
    group: opts.launcher === 'npm' ? child.pid! : null,
    output: () => out,
    exited,
    async stop(graceMs = 10_000) {
      if (child.exitCode === null && child.signalCode === null) {
        // Under npm, the whole group: npm killed alone would orphan the service.
        const signal = (sig: NodeJS.Signals) => {
          try {
            if (opts.launcher === 'npm') process.kill(-child.pid!, sig);
            else child.kill(sig);
          } catch {
            /* gone meanwhile */
          }
        };
        signal('SIGTERM');
        const timer = setTimeout(() => signal('SIGKILL'), graceMs);
        const how = await exited;
        clearTimeout(timer);
        return how;
      }
      return exited;
    },
  };
}
