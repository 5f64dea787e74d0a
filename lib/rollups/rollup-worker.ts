/**
 * The background side of the totals kept on write (docs/rollups.md), for every kind
 * (lib/rollups/kinds.ts): on start, a kind whose store was built by no or another version is
 * rebuilt (its reports read the documents meanwhile); then the marks writes leave are drained
 * every `everyMs`, so a report seldom finds a day to recompute. A mark is taken once nothing
 * marked it again for `quietMs` (or `maxWaitMs` after it was first made): an import of thousands
 * of files marks the same days batch after batch, and each is recomputed once after it, not after
 * every batch (docs/benchmarks.md, import throughput). Any number of workers may run:
 * a recompute is idempotent and a mark is cleared only by the recompute that saw its last write.
 */
import type { Db } from 'mongodb';
import { anyRipeMarks, type DrainWindow } from '../db/rollup-marks.ts';
import { TenantsFailedError } from '../db/settle-by-tenant.ts';
import { ROLLUP_KINDS } from './kinds.ts';
import type { RollupKind, RollupProgress } from './rollup-kind.ts';

export interface RollupWorkerLogger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RollupWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

const MARKS_PER_PASS = 1000;
/** How long a tenant whose recompute failed waits before the drain retries it (its reports still settle on read). */
const FAILED_TENANT_RETRY_MS = 60_000;

export function createRollupWorker(opts: {
  db: Db;
  logger: RollupWorkerLogger;
  everyMs?: number;
  quietMs?: number;
  maxWaitMs?: number;
  maxTimeMS?: number;
  kinds?: readonly RollupKind[];
  failedTenantRetryMs?: number;
}): RollupWorker {
  const everyMs = opts.everyMs ?? 1000;
  const quietMs = opts.quietMs ?? 2000;
  const maxWaitMs = opts.maxWaitMs ?? 30_000;
  const maxTimeMS = opts.maxTimeMS ?? 120_000;
  const kinds = opts.kinds ?? ROLLUP_KINDS;
  const retryMs = opts.failedTenantRetryMs ?? FAILED_TENANT_RETRY_MS;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  // Per kind, the tenants whose recompute failed and when each is retried: the drain skips them until then.
  const held = new Map<string, Map<string, number>>();
  const heldTenants = (kind?: string): string[] => {
    const now = Date.now();
    const out = new Set<string>();
    for (const [name, tenants] of held)
      for (const [tenant, until] of tenants) {
        if (until <= now) tenants.delete(tenant);
        else if (kind === undefined || kind === name) out.add(tenant);
      }
    return [...out];
  };
  const window = (kind?: string): DrainWindow => ({
    quietBefore: new Date(Date.now() - quietMs),
    waitedBefore: new Date(Date.now() - maxWaitMs),
    skipTenants: heldTenants(kind),
  });
  const hold = (kind: string, err: TenantsFailedError): void => {
    const tenants = held.get(kind) ?? new Map<string, number>();
    for (const [tenant, cause] of err.failures) {
      tenants.set(tenant, Date.now() + retryMs);
      opts.logger.error(
        { err: cause, kind, tenant },
        `rollups ${kind}: recompute of ${tenant} failed; its marks stay, retried in ${retryMs / 1000} s, the other tenants go on`,
      );
    }
    held.set(kind, tenants);
  };
  const progress = (p: RollupProgress): void => opts.logger.info({ ...p }, `rollups ${p.kind}: ${p.phase} ${p.done}/${p.total} of ${p.tenant}`);

  async function passOf(kind: RollupKind, marked: boolean): Promise<void> {
    if (!(await kind.ready(opts.db))) {
      opts.logger.info(
        { kind: kind.name },
        `rollups ${kind.name}: rebuilding the totals of a store written before them (reports read the documents meanwhile)`,
      );
      const r = await kind.rebuild(opts.db, { onProgress: progress, maxTimeMS, stopped: () => stopped });
      opts.logger.info(
        { kind: kind.name, ...r },
        r.stopped ? `rollups ${kind.name}: rebuild stopped; the next start goes on` : `rollups ${kind.name}: rebuilt`,
      );
    }
    // With no mark to take when the pass began there is nothing to drain (a mark made or ripe since waits a pass).
    if (!marked) return;
    while (!stopped && (await kind.drain(opts.db, MARKS_PER_PASS, maxTimeMS, window(kind.name))) === MARKS_PER_PASS);
  }

  async function pass(): Promise<void> {
    // An idle service, or one whose marks are all still being made (an import), reads one mark a
    // second, not every kind's marks of every source (about 20 reads a second).
    // Held tenants' marks do not count: a tenant held by one kind has its other marks drained on the pass that held it.
    const marked = await anyRipeMarks(opts.db, window()).catch(() => true);
    // One kind failing leaves its marks for the next pass; the others go on.
    for (const kind of kinds) {
      if (stopped) return;
      // A rebuild (a kind not ready) marks days and settles them itself; what it leaves, the next pass sees.
      await passOf(kind, marked).catch((err: unknown) => {
        if (err instanceof TenantsFailedError) hold(kind.name, err);
        else opts.logger.error({ err, kind: kind.name }, `rollups ${kind.name}: pass failed; the marks stay and the next pass retries`);
      });
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(schedule);
    }, everyMs);
    timer.unref();
  }

  return {
    async start() {
      stopped = false;
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
