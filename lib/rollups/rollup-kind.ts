/**
 * A kind of totals kept on write (docs/rollups.md): what the rollup worker, `npm run rollups`,
 * the demo loader and the bench need of it. Each area keeps its own kinds (the tax summary's
 * days in lib/tax, ...); lib/rollups/kinds.ts lists them.
 */
import type { Db } from 'mongodb';
import type { DrainWindow } from '../db/rollup-marks.ts';

export interface RollupProgress {
  kind: string;
  tenant: string;
  phase: 'marking' | 'computing';
  done: number;
  total: number;
}

export interface RebuildOptions {
  /** Default: every tenant with documents (and then the store is recorded as built). */
  tenants?: readonly string[];
  maxTimeMS?: number;
  onProgress?: (p: RollupProgress) => void;
  /** Asked between passes: a rebuild told to stop (the service shutting down) leaves its marks for the next start. */
  stopped?: () => boolean;
}

export interface RebuildOutcome {
  tenants: number;
  /** Days, months or whatever the kind keeps, recomputed. */
  units: number;
  stopped: boolean;
}

export interface VerifyOutcome {
  checked: number;
  /** The keys (days, months…) whose kept totals differ from the documents. */
  mismatched: string[];
}

export interface RollupKind {
  /** For the logs and `npm run rollups -- --kind`. */
  readonly name: string;
  /** Whether this store's totals of this kind were built by the current version (else its reports read the documents). */
  ready(db: Db): Promise<boolean>;
  rebuild(db: Db, opts?: RebuildOptions): Promise<RebuildOutcome>;
  /** Records the store as not built (after a bulk load that bypassed the marks): the worker rebuilds it. */
  forget(db: Db): Promise<void>;
  /** A store without documents needs no rebuild: recorded as built, so every write from now on keeps the totals. */
  markEmptyStoreBuilt(db: Db): Promise<boolean>;
  /** One pass over the marks of any tenant (within `window`, when given); answers how many it worked on (0: nothing to do). */
  drain(db: Db, limit: number, maxTimeMS: number, window?: DrainWindow): Promise<number>;
  /** Compares a tenant's kept totals with the documents; `repair` rewrites those that differ. */
  verify(db: Db, tenant: string, opts?: { repair?: boolean }): Promise<VerifyOutcome>;
  /** Marks not settled yet. */
  outstanding(db: Db): Promise<number>;
}
