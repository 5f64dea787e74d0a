/**
 * Keeps the embedded engine (scripts/embedded-mongo/launcher.ts) running under `npm start`: when the JVM exits
 * without being asked to (a crash, an out-of-memory exit, `kill -9`), it is started again on the
 * same port and store, after 0.5 s, then 1, 2, 4 and 8 s between further attempts. The driver's
 * client keeps its address and reconnects by itself, so the service recovers without a restart
 * of its own: requests waiting for a server meanwhile are served once it is back (or answer 503
 * after the driver's server selection timeout), and `/ready` answers 503 at once while it is down.
 *
 * It gives up when the engine has been (re)started `maxRestarts` times within `windowMs` (a
 * crash loop) or a start fails that often: state `failed`, one fatal log line, and `onGiveUp`
 * (scripts/start.ts fails `/health` and exits non-zero, so a supervisor restarts the service).
 */
import { startEmbeddedMongo, type EmbeddedMongo, type EngineExit, type StartEmbeddedMongoOptions } from './launcher.ts';

export type EngineState = 'up' | 'restarting' | 'failed' | 'stopped';

export interface SupervisorLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
  fatal(obj: object, msg: string): void;
}

export interface EngineSupervisorOptions {
  /** The on-disk store the engine was started on (undefined: in-memory). */
  dataDir?: string;
  /** Starts an engine (default startEmbeddedMongo). */
  start?: (opts: StartEmbeddedMongoOptions) => Promise<EmbeddedMongo>;
  /** Restarts allowed within `windowMs` before giving up (default 5 within 5 minutes). */
  maxRestarts?: number;
  windowMs?: number;
  /** First delay before a restart (default 500 ms), doubled each attempt up to `maxDelayMs` (default 8 s). */
  baseDelayMs?: number;
  maxDelayMs?: number;
  log?: SupervisorLog;
  onGiveUp?: (reason: string) => void;
}

export const DEFAULT_MAX_RESTARTS = 5;
export const DEFAULT_RESTART_WINDOW_MS = 5 * 60_000;

const consoleLog: SupervisorLog = {
  info: (obj, msg) => console.log(msg, obj),
  warn: (obj, msg) => console.warn(msg, obj),
  error: (obj, msg) => console.error(msg, obj),
  fatal: (obj, msg) => console.error(msg, obj),
};

const describeExit = (exit: EngineExit): string => (exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`);

export class EngineSupervisor {
  private current: EmbeddedMongo;
  private status: EngineState = 'up';
  private log: SupervisorLog;
  private readonly starts: number[] = [];
  private restartCount = 0;
  private wake: (() => void) | null = null;
  private restarting: Promise<void> | null = null;
  private readonly listeners = new Set<(state: EngineState) => void>();
  /** Why the engine last exited, when it said so (its store failed, out of memory). */
  private lastReason: string | undefined;

  constructor(
    first: EmbeddedMongo,
    private readonly opts: EngineSupervisorOptions = {},
  ) {
    this.current = first;
    this.log = opts.log ?? consoleLog;
    this.watch(first);
  }

  get state(): EngineState {
    return this.status;
  }

  /** The engine running now (or the last one, while restarting). */
  get engine(): EmbeddedMongo {
    return this.current;
  }

  /** Restarts done so far. */
  get restarts(): number {
    return this.restartCount;
  }

  /** Logs through `log` from now on (the service's logger, once it exists). */
  useLogger(log: SupervisorLog): void {
    this.log = log;
  }

  /** Calls `listener` on every change of state; returns the unsubscribe. */
  onState(listener: (state: EngineState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Why the engine cannot be used now, or null when it is up. */
  problem(): string | null {
    if (this.status === 'up') return null;
    const cause = this.lastReason ? ` (${this.lastReason})` : '';
    if (this.status === 'restarting') return `the embedded database engine is restarting${cause}`;
    if (this.status === 'failed') return `the embedded database engine could not be restarted${cause}`;
    return 'the embedded database engine is stopped';
  }

  /** Stops supervising and stops the engine (waits for a restart under way). Idempotent. */
  async stop(): Promise<void> {
    if (this.status === 'stopped') return;
    this.setState('stopped');
    this.wake?.();
    await this.restarting;
    await this.current.stop();
  }

  private setState(state: EngineState): void {
    if (this.status === state) return;
    this.status = state;
    for (const listener of this.listeners) listener(state);
  }

  private watch(engine: EmbeddedMongo): void {
    void engine.exited.then((exit) => {
      if (exit.expected || engine !== this.current || this.status === 'stopped' || this.status === 'failed') return;
      this.log.error(
        { component: 'embedded-engine', enginePid: engine.pid, port: engine.port, exit: describeExit(exit), ...(exit.reason ? { reason: exit.reason } : {}) },
        exit.reason
          ? `embedded database engine exited unexpectedly (${exit.reason}); restarting it`
          : 'embedded database engine exited unexpectedly; restarting it',
      );
      this.lastReason = exit.reason;
      this.setState('restarting');
      this.restarting = this.restart(engine.port, exit.reason ? `${describeExit(exit)}: ${exit.reason}` : describeExit(exit)).finally(() => {
        this.restarting = null;
      });
    });
  }

  private async restart(port: number, cause: string): Promise<void> {
    const start = this.opts.start ?? startEmbeddedMongo;
    const maxRestarts = this.opts.maxRestarts ?? DEFAULT_MAX_RESTARTS;
    const windowMs = this.opts.windowMs ?? DEFAULT_RESTART_WINDOW_MS;
    const down = Date.now();
    let lastError = cause;
    for (let attempt = 1; ; attempt++) {
      const now = Date.now();
      while (this.starts.length && this.starts[0]! <= now - windowMs) this.starts.shift();
      if (this.starts.length >= maxRestarts) {
        this.giveUp(`${this.starts.length} restarts within ${Math.round(windowMs / 1000)} s (last: ${lastError})`);
        return;
      }
      const delay = Math.min((this.opts.baseDelayMs ?? 500) * 2 ** (attempt - 1), this.opts.maxDelayMs ?? 8_000);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = null;
      if (this.status !== 'restarting') return;
      this.starts.push(Date.now());
      try {
        const engine = await start({ dataDir: this.opts.dataDir, port });
        if (this.status !== 'restarting') {
          await engine.stop();
          return;
        }
        this.current = engine;
        this.restartCount += 1;
        this.watch(engine);
        this.setState('up');
        this.log.warn({ component: 'embedded-engine', enginePid: engine.pid, port, attempt, downMs: Date.now() - down }, 'embedded database engine restarted');
        return;
      } catch (err) {
        lastError = (err as Error).message.split('\n')[0] ?? String(err);
        this.log.error({ component: 'embedded-engine', attempt, err: { message: lastError } }, 'embedded database engine did not start');
      }
    }
  }

  private giveUp(reason: string): void {
    this.setState('failed');
    this.log.fatal(
      { component: 'embedded-engine', reason },
      `embedded database engine could not be restarted (${reason}); the service exits so that its supervisor restarts it`,
    );
    this.opts.onGiveUp?.(reason);
  }
}
