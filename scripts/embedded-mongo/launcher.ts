/**
 * Embedded MongoDB-compatible engine (mongo-java-server, the Java sources beside this file):
 * launched by scripts/start.ts and the CLI tools when MONGODB_URI is unset (open-database.ts),
 * and by tests; the service itself is handed only a connected database.
 *
 * - In-memory backend by default; `dataDir` switches to the on-disk H2 backend
 *   (file `<dataDir>/embedded-mongo.mv.db`, survives restarts).
 * - The JVM exits by itself when this Node process goes away (it watches its stdin pipe),
 *   so a crashed or killed parent never leaves an orphan JVM.
 * - The JVM runs in a process group (and session) of its own: a Ctrl-C in a terminal, or a
 *   signal to the service's whole process group, reaches the service but not the engine, so
 *   the service can drain its requests first and stop the engine last (`stop()`). An exit
 *   nobody asked for (a crash, `kill -9`) resolves `exited` with `expected: false`
 *   (scripts/embedded-mongo/supervisor.ts restarts it).
 * - The child process is unref'd once it is listening: a running engine does not keep the
 *   Node event loop alive on its own. Call `stop()` for a clean shutdown anyway.
 *
 * Environment:
 *   EMBEDDED_MONGO_XMX        max heap of the engine JVM (default DEFAULT_ENGINE_HEAP_MB, whatever the store's size)
 *   EMBEDDED_MONGO_JAVA_OPTS  extra JVM options, whitespace separated
 *   EMBEDDED_MONGO_JAR        path to the launcher jar (default scripts/embedded-mongo/target/embedded-mongo.jar)
 *   EMBEDDED_MONGO_CACHE_MB   on-disk store's page cache in MB (default: a quarter of the engine's max heap)
 *   MALLOC_ARENA_MAX          glibc malloc arenas of the engine JVM (default 2: engineEnv)
 *   EMBEDDED_MONGO_START_TIMEOUT_MS  how long the engine may go without progress while opening
 *                             (default: 60 s plus 60 s per GB of on-disk store; see defaultStartTimeoutMs)
 *   JAVA_HOME                 if set, $JAVA_HOME/bin/java is used instead of `java` from PATH
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface EmbeddedMongo {
  /** `mongodb://127.0.0.1:<port>/` */
  uri: string;
  port: number;
  /** The engine JVM's max heap (-Xmx value), e.g. `2048m`. */
  maxHeap: string;
  /** SIGTERM, wait for exit (data committed for the on-disk backend); SIGKILL after 10 s. Idempotent. */
  stop(): Promise<void>;
  /**
   * SIGKILL at once (crash simulation). With a dataDir, writes since the last commit may be lost
   * (every 200 ms, between whole operations: never a document without its index entries).
   */
  kill(): void;
  /** The JVM's process id. */
  pid: number;
  /** Resolves once the JVM has exited; `expected` is false unless stop() or kill() was called. */
  exited: Promise<EngineExit>;
}

export interface EngineExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  expected: boolean;
  /** Why, when the engine said so: out of memory, and what to set (EMBEDDED_MONGO_XMX); its store failed (e.g. disk full), and how. */
  reason?: string;
}

/**
 * The reason an engine's last words (stderr and stdout tails) and exit status give for its exit:
 * the launcher's GC watchdog line, or the JVM's own -XX:+ExitOnOutOfMemoryError exit (whose
 * message names no setting: the reason does).
 */
const OUT_OF_MEMORY_EXIT_CODE = 3;
/** The launcher's status when its store failed (disk full, I/O error): StoreCommits.STORE_FAILED_EXIT_STATUS. */
export const STORE_FAILED_EXIT_CODE = 4;
export function exitReason(output: string, maxHeap: string, code: number | null = null): string | undefined {
  const store = /^embedded-mongo: store failed: .*$/m.exec(output);
  if (store) return store[0].replace(/^embedded-mongo: /, '');
  if (code === STORE_FAILED_EXIT_CODE) return "store failed (see the engine's log)";
  const watchdog = /^embedded-mongo: out of memory: .*$/m.exec(output);
  if (watchdog) return watchdog[0].replace(/^embedded-mongo: /, '');
  // 3: the status of -XX:+ExitOnOutOfMemoryError (and of the launcher's GC watchdog)
  if (/OutOfMemoryError/.test(output) || code === OUT_OF_MEMORY_EXIT_CODE) {
    return `out of memory (java.lang.OutOfMemoryError) with a max heap of ${maxHeap}; give the engine more heap with EMBEDDED_MONGO_XMX or run on a real MongoDB with MONGODB_URI`;
  }
  return undefined;
}

export interface StartEmbeddedMongoOptions {
  /** Directory for the on-disk (H2) backend; omitted = in-memory backend. Created if missing. */
  dataDir?: string;
  /** An engine that lives seconds (a test file): the JVM compiles with C1 only, which costs less CPU than it saves. */
  shortLived?: boolean;
  /** Port to bind; 0 or omitted = ephemeral. Pass a previous engine's port to restart on it. */
  port?: number;
  /** Interface to bind (default 127.0.0.1). */
  host?: string;
  /**
   * How long the engine may go without reporting progress before it counts as hung (default:
   * EMBEDDED_MONGO_START_TIMEOUT_MS, else 60 s plus 60 s per GB of on-disk store). Every
   * `PROGRESS` line the launcher prints while opening a large store restarts this clock.
   */
  startTimeoutMs?: number;
  /** Extra launcher arguments (scripts/embedded-mongo: e.g. `--cache-mb 64`, `--stock-store` in tests). */
  launcherArgs?: string[];
  /** The JVM's max heap (an -Xmx value) for this engine; default EMBEDDED_MONGO_XMX, else DEFAULT_ENGINE_HEAP_MB. */
  maxHeap?: string;
}

/** Name of the on-disk store inside a data dir (the launcher's DATA_FILE_NAME). */
export const EMBEDDED_STORE_FILE = 'embedded-mongo.mv.db';
const BASE_START_TIMEOUT_MS = 60_000;
const START_TIMEOUT_MS_PER_GB = 60_000;

/**
 * Start timeout that follows the data: opening reads the store, so a bigger store may take
 * longer. EMBEDDED_MONGO_START_TIMEOUT_MS overrides it (an invalid value is an error, not a
 * silent default).
 */
export function defaultStartTimeoutMs(dataDir?: string, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.EMBEDDED_MONGO_START_TIMEOUT_MS?.trim();
  if (raw) {
    const ms = Number(raw);
    if (!Number.isInteger(ms) || ms < 1000 || ms > 86_400_000) {
      throw new EmbeddedMongoStartError(`EMBEDDED_MONGO_START_TIMEOUT_MS must be an integer number of milliseconds between 1000 and 86400000 (got "${raw}")`);
    }
    return ms;
  }
  const bytes = dataDir ? storeBytes(dataDir) : 0;
  return BASE_START_TIMEOUT_MS + Math.ceil((bytes / 1024 ** 3) * START_TIMEOUT_MS_PER_GB);
}

/**
 * Default max heap of the engine in MB, the same for any store: its documents and secondary
 * indexes are in the on-disk store, read through a page cache of a quarter of the heap; the rest
 * is for what a query decodes and an aggregation's stages. Small enough that the JVM's resident
 * memory stays under 1.5 GB (docs/benchmarks.md: 1280 MB peaked at 1.65–1.75 GB over every read at
 * 1M/1M, 1024 MB at 1.48 GB with no read slower); an engine that runs out of it exits with a line
 * naming EMBEDDED_MONGO_XMX (EngineExit.reason) instead of thrashing.
 */
export const DEFAULT_ENGINE_HEAP_MB = 1024;

function storeBytes(dataDir: string): number {
  try {
    return statSync(path.join(dataDir, EMBEDDED_STORE_FILE)).size;
  } catch {
    return 0;
  }
}

export const DEFAULT_EMBEDDED_MONGO_JAR = fileURLToPath(new URL('./target/embedded-mongo.jar', import.meta.url));

/**
 * The engine's class-data archive (AppCDS), written by `npm run setup` from a short session
 * through the driver (scripts/engine-class-archive.ts): the classes the engine loads, already
 * parsed and verified. Every start maps it instead of reading them from the jar again: about
 * 0.4 s of CPU less per start (a test file starts one or more engines).
 */
export const DEFAULT_ENGINE_CLASS_ARCHIVE = DEFAULT_EMBEDDED_MONGO_JAR.replace(/\.jar$/, '.jsa');

/**
 * The JVM options that map the class archive: only for the default jar, and only when the
 * archive was written after it (the JVM checks the jar too, and falls back to the jar itself on
 * any mismatch, e.g. another JDK; its warning about that is silenced, it changes nothing).
 */
export function classArchiveArgs(jar: string): string[] {
  if (jar !== DEFAULT_EMBEDDED_MONGO_JAR) return [];
  try {
    if (statSync(DEFAULT_ENGINE_CLASS_ARCHIVE).mtimeMs < statSync(jar).mtimeMs) return [];
  } catch {
    return [];
  }
  return [`-XX:SharedArchiveFile=${DEFAULT_ENGINE_CLASS_ARCHIVE}`, '-Xlog:cds=off', '-Xlog:cds+dynamic=off'];
}

const STOP_GRACE_MS = 10_000;
const STDERR_TAIL_BYTES = 8 * 1024;
/** A fixed port (or the H2 file lock) may still be held for a moment by a just-stopped engine. */
const BIND_RETRY_WINDOW_MS = 10_000;
const BIND_RETRY_DELAY_MS = 250;

export class EmbeddedMongoStartError extends Error {
  readonly stderrTail: string;
  readonly timedOut: boolean;
  constructor(message: string, stderrTail = '', timedOut = false) {
    super(stderrTail.trim() ? `${message}\n--- embedded-mongo stderr (tail) ---\n${stderrTail.trimEnd()}` : message);
    this.name = 'EmbeddedMongoStartError';
    this.stderrTail = stderrTail;
    this.timedOut = timedOut;
  }
}

/**
 * A start failure in one line, for a person at a terminal (scripts/start.ts): the message without
 * the stderr tail, then the launcher's `failed to start:` line and its deepest `caused by:`,
 * without Java class names, stack frames or H2's version tag, e.g. `… exited before listening
 * (exit code 1): Store header is corrupt: /data/embedded-mongo.mv.db`.
 */
export function startFailureSummary(err: EmbeddedMongoStartError): string {
  const head = err.message.split('\n')[0]!;
  const clean = (s: string) =>
    s
      .replace(/^(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)?: /, '') // java.nio.file.FileSystemException: …
      .replace(/\s*\[\d+\.\d+\.\d+\/\d+\]\s*$/, '') // H2's [2.3.232/6]
      .trim();
  const failed = /^embedded-mongo: failed to start: (.*)$/m.exec(err.stderrTail)?.[1];
  const causes = [...err.stderrTail.matchAll(/^ {2}caused by: (.*)$/gm)].map((m) => m[1]!);
  const lastWords = /^embedded-mongo: (?!failed to start)(.*)$/m.exec(err.stderrTail)?.[1];
  const parts = [failed, causes[causes.length - 1]].filter((p): p is string => !!p).map(clean);
  // `Could not open file /d/x.mv.db` caused by `/d/x.mv.db: Is a directory`: the path once.
  if (parts.length === 2) {
    const [, subject, rest] = /^(.*?): (.*)$/.exec(parts[1]!) ?? [];
    if (parts[0]!.includes(parts[1]!)) parts.pop();
    else if (subject && rest && parts[0]!.endsWith(subject)) parts[1] = rest;
  }
  const why = parts.length ? parts.join(': ') : lastWords ? clean(lastWords) : '';
  return why ? `${head}: ${why}` : head;
}

function javaBinary(): string {
  const home = process.env.JAVA_HOME;
  if (home) {
    const candidate = path.join(home, 'bin', process.platform === 'win32' ? 'java.exe' : 'java');
    if (existsSync(candidate)) return candidate;
  }
  return 'java';
}

function maxHeapFor(): string {
  return process.env.EMBEDDED_MONGO_XMX?.trim() || `${DEFAULT_ENGINE_HEAP_MB}m`;
}

/** A -Xmx value (`1280m`, `2g`, `700000k`) in MB, or null if it is not one of those forms. */
function heapMb(xmx: string): number | null {
  const m = /^(\d+)([kmg])?$/i.exec(xmx);
  if (!m) return null;
  const n = Number(m[1]);
  const unit = (m[2] ?? '').toLowerCase();
  return unit === 'g' ? n * 1024 : unit === 'm' ? n : unit === 'k' ? n / 1024 : n / (1024 * 1024);
}

/**
 * The young generation: 40 % of a heap of 512 MB or more, fixed (the JVM's default starts it at a
 * third of a small initial heap and grows it only with the whole heap). A write-heavy engine (the
 * seed, an import) allocates a few hundred MB a second of short-lived pages and keys; a small young
 * generation collected twice a second, each time scanning the page cache in the old one for
 * references, was a quarter of a seed's time. Smaller heaps keep the JVM's own sizing.
 */
function youngGenArgs(xmx: string): string[] {
  const mb = heapMb(xmx);
  return mb !== null && mb >= 512 ? [`-Xmn${Math.round(mb * 0.4)}m`] : [];
}

function jvmArgs(xmx: string, shortLived: boolean): string[] {
  const extra = (process.env.EMBEDDED_MONGO_JAVA_OPTS ?? '').split(/\s+/).filter(Boolean);
  return [
    `-Xmx${xmx}`,
    ...youngGenArgs(xmx),
    '-XX:+UseSerialGC', // small heap, quick start, no GC threads competing on a 2-core box
    '-XX:+ExitOnOutOfMemoryError',
    '-XX:-UsePerfData',
    '-Djava.awt.headless=true',
    // A JVM that lives seconds never repays the C2 compiler's CPU (a test file: 20 % less CPU
    // with C1 alone); a long-running one does (Schemathesis' engine: 8 % more CPU without C2).
    // EMBEDDED_MONGO_JAVA_OPTS comes last and wins.
    ...(shortLived ? ['-XX:TieredStopAtLevel=1'] : []),
    ...extra,
  ];
}

/**
 * The engine's environment: glibc's malloc limited to two arenas unless set (MALLOC_ARENA_MAX).
 * The JVM's native allocations (compiler, threads, the network buffers) otherwise spread over
 * up to eight arenas per core, each holding freed memory: at 1M/1M the engine's resident memory
 * peaked ~200 MB higher with the same heap (docs/benchmarks.md).
 */
function engineEnv(): NodeJS.ProcessEnv {
  return { ...process.env, MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2' };
}

function tail(s: string, max = STDERR_TAIL_BYTES): string {
  return s.length > max ? s.slice(s.length - max) : s;
}

function isRetryableStartFailure(stderr: string): boolean {
  return /cannot bind|Address already in use|BindException|file is locked|locked by another process/i.test(stderr);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function startEmbeddedMongo(opts: StartEmbeddedMongoOptions = {}): Promise<EmbeddedMongo> {
  const jar = process.env.EMBEDDED_MONGO_JAR?.trim() || DEFAULT_EMBEDDED_MONGO_JAR;
  if (!existsSync(jar)) {
    throw new EmbeddedMongoStartError(`embedded MongoDB engine jar not found at ${jar}: run \`npm run setup\` (needs Java 17+ and Maven) or set MONGODB_URI`);
  }
  const port = opts.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new EmbeddedMongoStartError(`invalid port for embedded MongoDB engine: ${String(opts.port)}`);
  }
  const host = opts.host ?? '127.0.0.1';
  let dataDir: string | undefined;
  if (opts.dataDir) {
    dataDir = path.resolve(opts.dataDir);
    await mkdir(dataDir, { recursive: true });
  }
  const timeoutMs = opts.startTimeoutMs ?? defaultStartTimeoutMs(dataDir);

  const maxHeap = opts.maxHeap ?? maxHeapFor();
  const args = [...classArchiveArgs(jar), ...jvmArgs(maxHeap, opts.shortLived === true), '-jar', jar, '--host', host, '--port', String(port)];
  if (dataDir) args.push('--data-dir', dataDir);
  const cacheMb = process.env.EMBEDDED_MONGO_CACHE_MB?.trim();
  if (cacheMb) args.push('--cache-mb', cacheMb);
  args.push(...(opts.launcherArgs ?? []));

  const deadline = Date.now() + timeoutMs;
  const retryUntil = Date.now() + Math.min(BIND_RETRY_WINDOW_MS, timeoutMs);
  let lastRetryable: EmbeddedMongoStartError | undefined;
  for (;;) {
    try {
      return { ...(await spawnOnce(args, host, deadline, timeoutMs, dataDir, maxHeap)), maxHeap };
    } catch (err) {
      if (!(err instanceof EmbeddedMongoStartError)) throw err;
      if (err.timedOut && lastRetryable) throw lastRetryable; // the real reason, not "timed out while retrying"
      const retryable = (port !== 0 || dataDir !== undefined) && isRetryableStartFailure(err.stderrTail) && Date.now() + BIND_RETRY_DELAY_MS < retryUntil;
      if (!retryable) throw err;
      lastRetryable = err;
      await sleep(BIND_RETRY_DELAY_MS);
    }
  }
}

/** What to tell a user whose engine did not start in time. */
function timeoutMessage(timeoutMs: number, dataDir: string | undefined, lastProgress: string): string {
  const secs = +(timeoutMs / 1000).toFixed(1);
  const store = dataDir ? ` opening ${path.join(dataDir, EMBEDDED_STORE_FILE)} (${(storeBytes(dataDir) / 1024 ** 2).toFixed(0)} MB)` : '';
  return (
    `embedded MongoDB engine made no progress for ${secs} s${store}${lastProgress ? `; last progress: ${lastProgress}` : ''}. ` +
    `If the store is large or the machine busy, allow more time with EMBEDDED_MONGO_START_TIMEOUT_MS=${Math.max(2 * timeoutMs, 120_000)} ` +
    `(milliseconds without progress); or run on a real MongoDB with MONGODB_URI`
  );
}

function spawnOnce(
  args: string[],
  host: string,
  deadline: number,
  timeoutMs: number,
  dataDir: string | undefined,
  maxHeap: string,
): Promise<Omit<EmbeddedMongo, 'maxHeap'>> {
  const java = javaBinary();
  return new Promise<Omit<EmbeddedMongo, 'maxHeap'>>((resolve, reject) => {
    let child: ChildProcess;
    try {
      // detached: a process group of its own, out of reach of signals sent to the service's group.
      child = spawn(java, args, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true, detached: true, env: engineEnv() });
    } catch (err) {
      reject(new EmbeddedMongoStartError(`cannot spawn ${java}: ${(err as Error).message}`));
      return;
    }

    let stderr = '';
    let stdoutBuf = '';
    let settled = false;
    let started = false;
    let exited = false;
    const exitWaiters: Array<() => void> = [];

    let lastProgress = '';
    const onTimeout = () => {
      fail(new EmbeddedMongoStartError(timeoutMessage(timeoutMs, dataDir, lastProgress), stderr, true));
      child.kill('SIGKILL');
    };
    let timer = setTimeout(onTimeout, Math.max(0, deadline - Date.now()));

    function fail(err: Error): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      reject(err);
    }

    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') {
        fail(
          new EmbeddedMongoStartError(
            `Java not found (${java}): the embedded MongoDB engine needs a Java 17+ runtime on PATH or JAVA_HOME, or set MONGODB_URI`,
          ),
        );
      } else {
        fail(new EmbeddedMongoStartError(`cannot run ${java}: ${err.message}`, stderr));
      }
    });

    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (chunk: string) => {
      stderr = tail(stderr + chunk);
      if (started) process.stderr.write(chunk.replace(/^(?=.)/gm, '[embedded-mongo] '));
    });

    child.stdout!.setEncoding('utf8');
    let stdoutTail = ''; // after LISTENING: only the JVM's own last words (its out-of-memory exit prints there)
    child.stdout!.on('data', (chunk: string) => {
      if (started) {
        stdoutTail = tail(stdoutTail + chunk, 4096);
        return;
      }
      stdoutBuf += chunk;
      // `PROGRESS <what>` while a large store opens: the engine is alive and working, restart the clock.
      const progress = [...stdoutBuf.matchAll(/^PROGRESS (.*)$/gm)];
      if (progress.length && !settled) {
        lastProgress = progress[progress.length - 1]![1]!.trim();
        clearTimeout(timer);
        timer = setTimeout(onTimeout, timeoutMs);
      }
      const m = /^LISTENING (\d+)\s*$/m.exec(stdoutBuf);
      if (!m) {
        const lastNewline = stdoutBuf.lastIndexOf('\n');
        stdoutBuf = tail(stdoutBuf.slice(lastNewline + 1), 4096);
        return;
      }
      started = true;
      const actualPort = Number(m[1]);
      settled = true;
      clearTimeout(timer);
      // The engine lives as long as this process (or until stop()); don't let it hold the event loop.
      child.unref();
      unrefStream(child.stdin);
      unrefStream(child.stdout);
      unrefStream(child.stderr);
      resolve(makeHandle(actualPort));
    });

    // Closing our end of a pipe we never write to is harmless; swallow EPIPE after the child died.
    child.stdin!.on('error', () => {});

    // 'close' comes after 'exit' once stdout/stderr are drained, so the error carries the whole stderr tail.
    child.on('close', (code, signal) => {
      if (!started) {
        fail(new EmbeddedMongoStartError(`embedded MongoDB engine exited before listening (${signal ? `signal ${signal}` : `exit code ${code}`})`, stderr));
      }
    });

    let resolveExit: (exit: EngineExit) => void = () => {};
    const exitPromise = new Promise<EngineExit>((res) => (resolveExit = res));
    // 'close': the stderr pipe is drained, so the last words are in the tail.
    child.on('close', (code, signal) => {
      exited = true;
      const reason = stopping ? undefined : exitReason(`${stderr}\n${stdoutTail}`, maxHeap, code);
      if (started && !stopping) {
        process.stderr.write(
          `[embedded-mongo] engine exited unexpectedly (${signal ? `signal ${signal}` : `exit code ${code}`})${reason ? `: ${reason}` : ''}\n`,
        );
      }
      resolveExit({ code, signal, expected: stopping, ...(reason ? { reason } : {}) });
      for (const w of exitWaiters.splice(0)) w();
    });

    let stopping = false;
    let stopPromise: Promise<void> | undefined;

    function waitForExit(): Promise<void> {
      if (exited) return Promise.resolve();
      return new Promise((res) => exitWaiters.push(res));
    }

    function makeHandle(actualPort: number): Omit<EmbeddedMongo, 'maxHeap'> {
      const uriHost = host.includes(':') ? `[${host}]` : host;
      return {
        uri: `mongodb://${uriHost}:${actualPort}/`,
        port: actualPort,
        pid: child.pid!,
        exited: exitPromise,
        stop(): Promise<void> {
          if (stopPromise) return stopPromise;
          stopping = true;
          stopPromise = (async () => {
            if (exited) return;
            child.ref(); // keep the loop alive until the engine has flushed and exited
            child.kill('SIGTERM');
            const killTimer = setTimeout(() => {
              if (!exited) child.kill('SIGKILL');
            }, STOP_GRACE_MS);
            try {
              await waitForExit();
            } finally {
              clearTimeout(killTimer);
              child.stdin?.destroy();
            }
          })();
          return stopPromise;
        },
        kill(): void {
          stopping = true;
          if (!exited) child.kill('SIGKILL');
          child.stdin?.destroy();
          if (!stopPromise) stopPromise = waitForExit();
        },
      };
    }
  });
}

function unrefStream(stream: unknown): void {
  const s = stream as { unref?: () => void } | null;
  if (s && typeof s.unref === 'function') s.unref();
}
