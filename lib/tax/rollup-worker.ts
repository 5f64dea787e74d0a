/**
 * The background side of the totals kept on write (docs/rollups.md): on start, a store whose
 * days were built by no or another version is rebuilt (summaries read the documents meanwhile);
 * then the marks writes leave are drained every `everyMs`, so a summary seldom finds a day to
 * recompute. Any number of workers may run: a recompute is idempotent and a mark is cleared
 * only by the recompute that saw its last write.
 */
import type { Db } from 'mongodb';
import { drainTaxMarks, rebuildTaxRollups, taxRollupsReady, type RebuildProgress } from './refresh-tax-rollups.ts';

export interface RollupWorkerLogger {
  info(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface RollupWorker {
  start(): Promise<void>;
  stop(): Promise<void>;
}

const MARKS_PER_PASS = 1000;

export function createRollupWorker(opts: { db: Db; logger: RollupWorkerLogger; everyMs?: number; maxTimeMS?: number }): RollupWorker {
  const everyMs = opts.everyMs ?? 1000;
  const maxTimeMS = opts.maxTimeMS ?? 120_000;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();

  const progress = (p: RebuildProgress): void => opts.logger.info({ ...p }, `tax rollups: ${p.phase} ${p.done}/${p.total} days of ${p.tenant}`);

  async function pass(): Promise<void> {
    if (!(await taxRollupsReady(opts.db))) {
      opts.logger.info({}, 'tax rollups: rebuilding the kept days of a store written before them (summaries read the documents meanwhile)');
      const r = await rebuildTaxRollups(opts.db, { onProgress: progress, maxTimeMS, stopped: () => stopped });
      opts.logger.info(r, r.stopped ? 'tax rollups: rebuild stopped; the next start goes on' : 'tax rollups: rebuilt');
    }
    while (!stopped && (await drainTaxMarks(opts.db, MARKS_PER_PASS, maxTimeMS)) === MARKS_PER_PASS);
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass()
        .catch((err: unknown) => opts.logger.error({ err }, 'tax rollups: pass failed; the marks stay and the next pass retries'))
        .finally(schedule);
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
