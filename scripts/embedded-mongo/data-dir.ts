/**
 * DATA_DIR at the service's start (scripts/start.ts, embedded engine only):
 *
 * - checkDataDir: the directory can be created, written, fsynced and has some free space,
 *   before anything else writes there (the webhook key, the engine's store). A failure is a
 *   DataDirError whose message is one line naming the path and the cause, e.g.
 *   `cannot use DATA_DIR /x: read-only file system (EROFS)`.
 * - acquireServiceLock: one service per DATA_DIR. `DATA_DIR/service.lock` is created with
 *   O_EXCL and holds the owner's PID (and, on Linux, its start time, so a reused PID is not
 *   mistaken for the owner). A lock whose owner is gone (kill -9, a crash) is stale and taken
 *   over; the lock is removed when its owner exits. A live owner: DataDirError naming it.
 * - lockHolder, acquireToolLock: CLI tools (npm run apikey, import, rollups, seed, worker) attach
 *   to a live service's engine and take no lock then; without a service, a tool runs an engine of
 *   its own and holds `DATA_DIR/tool.lock` (the same PID and start time, and its command) while
 *   it does, so another tool is refused at once (DataDirInUseError, toolInUseMessage) instead of
 *   attaching to an engine that stops when its owner ends (scripts/embedded-mongo/open-database.ts).
 */
import { closeSync, fsyncSync, openSync, readFileSync, rmSync, statfsSync, unlinkSync, writeSync, mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

export class DataDirError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirError';
  }
}

/** Free space DATA_DIR must have at start (the engine's store grows from nothing to tens of MB with the demo data). */
export const MIN_FREE_BYTES = 16 * 1024 * 1024;
export const SERVICE_LOCK_FILE = 'service.lock';
/** Held by a CLI tool while it runs an embedded engine of its own on DATA_DIR (acquireToolLock). */
export const TOOL_LOCK_FILE = 'tool.lock';
const PROBE_BYTES = 64 * 1024;

/** `read-only file system (EROFS)` from a Node fs error (its message without the code and the syscall/path). */
export function fsCause(err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (!e || typeof e !== 'object' || !e.code) return String((e as Error | undefined)?.message ?? err);
  const text = (e.message ?? '')
    .replace(/^[A-Z0-9_]+: /, '')
    .replace(/, \w+(?: '.*')?$/s, '')
    .trim();
  return `${text || e.code} (${e.code})`;
}

/** The first existing ancestor of `dir` that is not a directory, if any (DATA_DIR under a regular file). */
function fileInTheWay(dir: string): string | null {
  for (let p = dir; ; p = path.dirname(p)) {
    try {
      return statSync(p).isDirectory() ? null : p;
    } catch {
      if (path.dirname(p) === p) return null;
    }
  }
}

/**
 * The error of creating the first missing directory of `dir` on its own: a recursive mkdir
 * reports ENOENT for a parent on a read-only file system, where this one says EROFS.
 */
function firstMkdirError(dir: string): unknown {
  let missing = dir;
  for (let p = dir; path.dirname(p) !== p; p = path.dirname(p)) {
    try {
      statSync(p);
      break;
    } catch {
      missing = p;
    }
  }
  try {
    mkdirSync(missing);
    return null;
  } catch (err) {
    return err;
  }
}

/** Creates DATA_DIR if needed and proves it writable with free space; throws DataDirError (one line) if not. */
export function checkDataDir(dataDir: string): void {
  const dir = path.resolve(dataDir);
  const fail = (cause: string): never => {
    throw new DataDirError(`cannot use DATA_DIR ${dir}: ${cause}`);
  };
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    const file = fileInTheWay(dir);
    if (file) fail(`${file} is a file, not a directory (ENOTDIR)`);
    fail(fsCause(firstMkdirError(dir) ?? err));
  }
  if (!statSync(dir).isDirectory()) fail('it is a file, not a directory (ENOTDIR)');
  const probe = path.join(dir, `.write-check-${process.pid}`);
  let fd: number | null = null;
  try {
    fd = openSync(probe, 'w', 0o600);
    writeSync(fd, Buffer.alloc(PROBE_BYTES));
    fsyncSync(fd);
  } catch (err) {
    fail(fsCause(err));
  } finally {
    if (fd !== null) closeSync(fd);
    rmSync(probe, { force: true });
  }
  let free: number | null = null;
  try {
    const s = statfsSync(dir);
    free = s.bavail * s.bsize;
  } catch {
    // statfs unsupported: the write above is the check
  }
  if (free !== null && free < MIN_FREE_BYTES) {
    fail(`no space left on device (ENOSPC): ${(free / 1024 ** 2).toFixed(1)} MB free, at least ${MIN_FREE_BYTES / 1024 ** 2} MB needed`);
  }
}

interface LockOwner {
  pid: number;
  /** /proc/<pid>/stat's start time (clock ticks since boot), when known. */
  start: string | null;
}

function processStart(pid: number): string | null {
  try {
    // Field 22 (starttime); the command name (field 2) may contain spaces and parentheses: count from the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

function isAlive(owner: LockOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  // A PID reused by another process since the owner died: not the owner.
  if (owner.start !== null) {
    const now = processStart(owner.pid);
    if (now !== null && now !== owner.start) return false;
  }
  return true;
}

function parseOwner(text: string): LockOwner | null {
  const [pid, start] = text.trim().split(/\s+/);
  const n = Number(pid);
  return Number.isInteger(n) && n > 0 ? { pid: n, start: start || null } : null;
}

export interface ServiceLock {
  file: string;
  /** Removes the lock (if still this process's). Idempotent; also done on process exit. */
  release(): void;
  /** Set when a stale lock (its owner dead) was taken over: that owner's PID. */
  tookOverFrom: number | null;
}

/** A DATA_DIR another live process holds (a service, or a CLI tool running its own engine): the message is one line. */
export class DataDirInUseError extends DataDirError {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirInUseError';
  }
}

/** The live holder of a lock: its PID and, for a tool, its command (`npm run import`). */
export interface LockHolder {
  pid: number;
  command: string | null;
}

/** The live process holding DATA_DIR's `lockFile` (SERVICE_LOCK_FILE, TOOL_LOCK_FILE), or null (none, or a stale one). */
export function lockHolder(dataDir: string, lockFile: string): LockHolder | null {
  let text: string;
  try {
    text = readFileSync(path.join(path.resolve(dataDir), lockFile), 'utf8');
  } catch {
    return null;
  }
  const owner = parseOwner(text);
  if (!owner || owner.pid === process.pid || !isAlive(owner)) return null;
  return { pid: owner.pid, command: text.split('\n')[1]?.trim() || null };
}

/**
 * Creates `file` with O_EXCL holding this process's PID and start time (and `extra`, a second
 * line), taking over a stale one; a live holder is `inUse(holder)`, thrown.
 */
function acquireLock(dir: string, file: string, extra: string, inUse: (holder: LockHolder) => Error): ServiceLock {
  const mine = `${process.pid} ${processStart(process.pid) ?? ''}`.trim() + '\n' + (extra ? `${extra}\n` : '');
  let tookOverFrom: number | null = null;
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o644);
      try {
        writeSync(fd, mine);
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new DataDirError(`cannot use DATA_DIR ${dir}: cannot create ${file}: ${fsCause(err)}`);
    }
    let staleText: string;
    try {
      staleText = readFileSync(file, 'utf8');
    } catch {
      continue; // removed meanwhile: retry the exclusive create
    }
    const owner = parseOwner(staleText);
    if (owner && owner.pid !== process.pid && isAlive(owner)) throw inUse({ pid: owner.pid, command: staleText.split('\n')[1]?.trim() || null });
    if (attempt >= 5) throw new DataDirError(`cannot use DATA_DIR ${dir}: cannot take over the stale lock ${file}`);
    // Stale (its owner is dead, or the file is empty: an owner killed while writing it): take it over,
    // only if it is still the stale one (a concurrent starter may have just taken it).
    tookOverFrom = owner?.pid ?? tookOverFrom;
    try {
      if (readFileSync(file, 'utf8') === staleText) unlinkSync(file);
    } catch {
      // gone meanwhile: retry the exclusive create
    }
  }
  let released = false;
  const release = () => {
    if (released) return;
    released = true;
    process.off('exit', release);
    try {
      if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  process.on('exit', release);
  return { file, release, tookOverFrom };
}

/**
 * Takes DATA_DIR/service.lock for this process, or throws DataDirError (one line, naming the
 * DATA_DIR and the running service's PID) when a live process holds it.
 */
export function acquireServiceLock(dataDir: string): ServiceLock {
  const dir = path.resolve(dataDir);
  const file = path.join(dir, SERVICE_LOCK_FILE);
  return acquireLock(
    dir,
    file,
    '',
    (owner) => new DataDirError(`DATA_DIR ${dir} is already in use by a running service (PID ${owner.pid}, ${file}): stop it first or use another DATA_DIR`),
  );
}

/** The one line a tool refused on a DATA_DIR another tool's engine holds prints (exit 2). */
export function toolInUseMessage(dataDir: string, holder: LockHolder): string {
  return `DATA_DIR ${path.resolve(dataDir)} is in use by another tool (${holder.command ?? 'a CLI tool'}, PID ${holder.pid}): wait for it to finish, or run the tools one after another`;
}

/**
 * Takes DATA_DIR/tool.lock for a CLI tool that runs an engine of its own on DATA_DIR (no service
 * runs there), naming `command` (`npm run import`), for as long as that engine runs; throws
 * DataDirInUseError (toolInUseMessage) when another live tool holds it.
 */
export function acquireToolLock(dataDir: string, command: string): ServiceLock {
  const dir = path.resolve(dataDir);
  return acquireLock(dir, path.join(dir, TOOL_LOCK_FILE), command, (holder) => new DataDirInUseError(toolInUseMessage(dir, holder)));
}
