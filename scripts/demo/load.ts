/**
 * Loads the deterministic demo dataset (scripts/demo/generate.ts) into MongoDB:
 * the two demo tenants with their settings, API keys, trips and financial
 * documents. Documents stream from the generator in batches (insertMany,
 * ordered: false), one batch being generated while the previous one is
 * written, so memory stays flat whatever the counts; a tenant's trips and
 * financial documents load side by side. Financial documents are
 * written with their derived fields (lib/finance/derived-fields.ts), as every
 * writer of the collection does; the generator itself stays the documents'
 * own shape (its golden hash pins that).
 */
import { forgetRollups, rebuildRollups } from '../../lib/rollups/rebuild-rollups.ts';
import { deleteRollupState, readRollupState, writeRollupState } from '../../lib/db/rollup-state.ts';
import { deleteTaxRollupsOf } from '../../lib/tax/tax-rollups-repo.ts';
import type { Db, Collection, Document } from 'mongodb';
import type { RollupProgress } from '../../lib/rollups/rollup-kind.ts';
import { storeApiKey } from '../../lib/auth/api-keys.ts';
import { deleteInBatches } from '../../lib/db/delete-in-batches.ts';
import { financialDocs, tenantSettings, trips } from '../../lib/db/collections.ts';
import { receivedDocs } from '../../lib/received/received-repo.ts';
import { receivedAssignments } from '../../lib/received/received-assignments-repo.ts';
import { settingsCache } from '../../lib/settings/settings-cache.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import type { FinancialDocument, StoredFinancialDocument } from '../../lib/model/financial-document.ts';
import type { StoredTripDocument, TripDocument } from '../../lib/model/trip-document.ts';
import { withOffloadMonths } from '../../lib/trips/offload-months.ts';
import { generateTenant, type GeneratedTenant } from './generate.ts';

export interface DemoTenant {
  rfc: string;
  name: string;
  apiKey: string;
}

export const DEMO_TENANTS: readonly DemoTenant[] = [
  { rfc: 'TGO850101AB1', name: 'Transportes del Golfo SA de CV', apiKey: 'demo_tgo_1f0c2b7a9e4d4c58b6a1' },
  { rfc: 'FNO900202CD2', name: 'Fletes del Norte SA de CV', apiKey: 'demo_fno_7d3e9a1c5b2f4e60a8c3' },
];

/** Seed of the demo dataset when none is given (tenant i uses DEFAULT_DEMO_SEED + i). */
export const DEFAULT_DEMO_SEED = 20_261_115;
export const DEFAULT_BATCH_SIZE = 1000;

export type ProgressFn = (done: number, total: number) => void;

/** Groups an iterable into arrays of `size` (the last one may be shorter). */
export function* batched<T>(items: Iterable<T>, size: number): Generator<T[]> {
  if (!(size >= 1)) throw new RangeError('batched: size must be ≥ 1');
  let batch: T[] = [];
  for (const item of items) {
    batch.push(item);
    if (batch.length >= size) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

interface BulkLikeError {
  writeErrors?: { code?: number }[] | { code?: number };
}

/**
 * insertMany, unordered. Duplicate-key errors (the same deterministic record
 * already stored: a re-run) are counted as skipped; anything else is thrown.
 */
async function insertBatch<T extends Document>(coll: Collection<T>, docs: T[]): Promise<{ inserted: number; duplicates: number }> {
  try {
    // The generated documents carry their own string _id.
    const res = await coll.insertMany(docs as unknown as Parameters<Collection<T>['insertMany']>[0], { ordered: false });
    return { inserted: res.insertedCount, duplicates: 0 };
  } catch (err) {
    const e = err as BulkLikeError;
    const writeErrors = Array.isArray(e.writeErrors) ? e.writeErrors : e.writeErrors ? [e.writeErrors] : [];
    if (writeErrors.length > 0 && writeErrors.every((w) => w.code === 11000)) {
      // Every failure is a duplicate, so the rest went in (the reported insertedCount is not
      // reliable across servers: the embedded engine counts the duplicates too).
      return { inserted: docs.length - writeErrors.length, duplicates: writeErrors.length };
    }
    throw err;
  }
}

/** Lazily, the trips as stored. */
function* storedTrips(docs: Iterable<TripDocument>): Generator<StoredTripDocument> {
  for (const d of docs) yield withOffloadMonths(d);
}

/** Lazily, the documents as stored. */
function* stored(docs: Iterable<FinancialDocument>): Generator<StoredFinancialDocument> {
  for (const d of docs) yield withDerivedFields(d);
}

export interface InsertResult {
  tenant: string;
  financialDocs: number;
  trips: number;
  receivedDocs: number;
  /** Records already present (same _id) and left as they were. */
  duplicates: number;
}

export interface InsertOptions {
  batchSize?: number;
  /** Added to `done` and `total` reported to onProgress (when several tenants share one bar). */
  progressOffset?: number;
  progressTotal?: number;
}

/**
 * Writes one generated tenant: upserts its settings, then inserts its trips and
 * financial documents in batches. onProgress(done, total) counts records.
 */
export async function insertTenantData(db: Db, generated: GeneratedTenant, onProgress?: ProgressFn, opts: InsertOptions = {}): Promise<InsertResult> {
  const batchSize = opts.batchSize ?? DEFAULT_BATCH_SIZE;
  const own = generated.counts.financialDocs + generated.counts.trips;
  const offset = opts.progressOffset ?? 0;
  const total = opts.progressTotal ?? own;
  const result: InsertResult = { tenant: generated.settings._id, financialDocs: 0, trips: 0, receivedDocs: 0, duplicates: 0 };

  await tenantSettings(db).replaceOne({ _id: generated.settings._id }, generated.settings, { upsert: true });
  settingsCache(db).forget(generated.settings._id);

  let done = 0;
  onProgress?.(offset, total);
  const run = async <T extends Document>(coll: Collection<T>, items: Iterable<T>, key: 'financialDocs' | 'trips'): Promise<void> => {
    // Keep one insert in flight while the next batch is generated.
    let pending: Promise<void> | null = null;
    for (const batch of batched(items, batchSize)) {
      if (pending) await pending;
      pending = insertBatch(coll, batch).then((r) => {
        result[key] += r.inserted;
        result.duplicates += r.duplicates;
        done += batch.length;
        onProgress?.(offset + done, total);
      });
    }
    if (pending) await pending;
  };
  // The two collections load side by side: a server writes to two collections at once (MongoDB, and
  // the embedded engine, which writes one collection at a time), and each stream waits on its own inserts.
  await Promise.all([run(trips(db), storedTrips(generated.trips), 'trips'), run(financialDocs(db), stored(generated.financialDocs), 'financialDocs')]);
  // The received CFDIs: a few hundred, one batch or two (not counted in the progress).
  const received = generated.received();
  for (const batch of batched(received.docs, batchSize)) {
    const r = await insertBatch(receivedDocs(db), batch);
    result.receivedDocs += r.inserted;
    result.duplicates += r.duplicates;
  }
  if (received.assignments.length) result.duplicates += (await insertBatch(receivedAssignments(db), received.assignments)).duplicates;
  return result;
}

export interface LoadDemoOptions {
  invoices: number;
  trips: number;
  seed?: number;
  onProgress?: ProgressFn;
  /** Delete the demo tenants' existing trips, documents and settings first. */
  drop?: boolean;
  batchSize?: number;
  endDate?: Date;
  months?: number;
  /** Who builds the tax summary's kept days: this call (default), or the service's rollup worker after start-up. */
  rollups?: 'now' | 'worker';
  /** Progress of that rebuild (kind, tenant, days done of total): at 300k documents it takes minutes. */
  onRollupProgress?: (p: RollupProgress) => void;
  /** Kinds of totals rebuilt at once (default 2: the seed's figures in docs/benchmarks.md, "Seed time"). */
  rollupLanes?: number;
  /**
   * The demo tenants to load, by RFC (default: all of DEMO_TENANTS). Each is generated as it is in the
   * whole dataset (its own seed), so a test that calls as one tenant can load only that one.
   */
  tenants?: readonly string[];
  /** `npm start`'s load: recorded as under way until its last document, so a start after a crash loads it again (`demoLoadCutShort`). */
  resumable?: boolean;
}

/** Deletes a tenant's demo records (trips, financial and received documents, settings); API keys are kept. */
export async function deleteTenantData(db: Db, tenant: string): Promise<{ financialDocs: number; trips: number }> {
  // One collection after the other, in batches: the engine's heap holds what one commit deletes.
  const d = await deleteInBatches(financialDocs(db), { company: tenant });
  const t = await deleteInBatches(trips(db), { company: tenant });
  await deleteInBatches(receivedDocs(db), { tenant });
  await deleteInBatches(receivedAssignments(db), { tenant });
  await tenantSettings(db).deleteOne({ _id: tenant });
  await deleteTaxRollupsOf(db, tenant);
  settingsCache(db).forget(tenant);
  return { financialDocs: d, trips: t };
}

/**
 * Loads both demo tenants (TGO, FNO; or those `tenants` names): settings, API keys (label 'demo'),
 * `trips` trips and `invoices` financial documents each. Deterministic: the
 * same options always store the same records.
 */
export async function loadDemoData(db: Db, opts: LoadDemoOptions): Promise<InsertResult[]> {
  const seed = opts.seed ?? DEFAULT_DEMO_SEED;
  const unknown = opts.tenants?.filter((rfc) => !DEMO_TENANTS.some((t) => t.rfc === rfc)) ?? [];
  if (unknown.length) throw new RangeError(`loadDemoData: not a demo tenant: ${unknown.join(', ')}`);
  const tenants = DEMO_TENANTS.filter((t) => !opts.tenants || opts.tenants.includes(t.rfc));
  const generated = tenants.map((t) =>
    generateTenant({
      tenant: t.rfc,
      name: t.name,
      seed: seed + DEMO_TENANTS.indexOf(t),
      invoices: opts.invoices,
      trips: opts.trips,
      ...(opts.endDate ? { endDate: opts.endDate } : {}),
      ...(opts.months ? { months: opts.months } : {}),
    }),
  );
  const total = generated.reduce((s, g) => s + g.counts.financialDocs + g.counts.trips, 0);
  // Written in bulk, not through the repositories: the totals kept on write are forgotten before the first
  // document, so a load cut short (a crash, a kill) leaves totals the rollup worker rebuilds, never ones that
  // read as built.
  await forgetRollups(db);
  if (opts.resumable) await writeRollupState(db, DEMO_LOADING, 1);
  const results: InsertResult[] = [];
  let offset = 0;
  for (const [i, t] of tenants.entries()) {
    const g = generated[i]!;
    if (opts.drop) await deleteTenantData(db, t.rfc);
    await storeApiKey(db, { key: t.apiKey, tenant: t.rfc, label: 'demo' });
    results.push(
      await insertTenantData(db, g, opts.onProgress, {
        progressOffset: offset,
        progressTotal: total,
        ...(opts.batchSize ? { batchSize: opts.batchSize } : {}),
      }),
    );
    offset += g.counts.financialDocs + g.counts.trips;
  }
  if (opts.resumable) await deleteRollupState(db, DEMO_LOADING);
  // The totals are rebuilt from the documents (docs/rollups.md), here or, for a service about to start, by its rollup
  // worker once it listens (forgotten again: a worker of another process may have built them meanwhile).
  if (opts.rollups === 'worker') await forgetRollups(db);
  else
    await rebuildRollups(db, {
      lanes: opts.rollupLanes ?? 2,
      tenants: tenants.map((t) => t.rfc),
      ...(opts.onRollupProgress ? { onProgress: opts.onRollupProgress } : {}),
    });
  return results;
}

/** The state entry that records a demo load under way (lib/db/rollup-state.ts: one entry per store). */
const DEMO_LOADING = 'demoDataLoading';

/** Whether a demo load began on this store and did not finish (a crash, a kill): `npm start` loads it again, dropping what it wrote. */
export async function demoLoadCutShort(db: Db): Promise<boolean> {
  return (await readRollupState(db, DEMO_LOADING)) !== null;
}
