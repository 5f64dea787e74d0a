/**
 * The service a differential test of the totals kept on write runs against (test/*-rollups-differential.test.ts,
 * docs/rollups.md): started on an empty store recorded as built, so every write from then on keeps
 * its totals; its clients (HTTP import as tenant A, MCP); and the steps that are not writes:
 * the rollup worker's drain, a rebuild of the whole store, a restart.
 */
import type { Test } from 'tap';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Db } from 'mongodb';
import type { LightMyRequestResponse } from 'fastify';
import { startHarness, KEY_A, type Harness } from './harness.ts';
import { connect, listen } from './mcp.ts';
import { seeded, type Seeded } from './differential.ts';
import type { ServiceContext } from '../../lib/context.ts';
import type { RollupKind } from '../../lib/rollups/rollup-kind.ts';

export interface DifferentialService extends Seeded {
  h: Harness;
  /** The domain functions' context, for the references computed from the documents. */
  ctx: ServiceContext;
}

export interface DifferentialServiceOptions {
  /** The environment variable that replays a seed, and the seed without it. */
  seedEnv: string;
  seed: number;
  /** How long the whole file may take (milliseconds). */
  timeout: number;
  /** Records the empty store as built (the kind's rebuild). */
  build: (db: Db) => Promise<unknown>;
}

/** The seeded generator (seed printed), the service, the store recorded as built. */
export async function startDifferential(t: Test, o: DifferentialServiceOptions): Promise<DifferentialService> {
  const s = seeded(t, o.seedEnv, o.seed);
  t.setTimeout(o.timeout);
  const h = await startHarness(t);
  await o.build(h.db); // an empty store: recorded as built, every write from here keeps the totals
  const ctx: ServiceContext = { db: h.db, config: h.config, now: () => new Date() };
  return { ...s, h, ctx };
}

export interface ImportSummary {
  rejected: number;
  created: number;
  updated: number;
  skipped: number;
}
export interface ImportFile {
  name: string;
  content: string;
}

/**
 * POST /api/imports as tenant A; any answer but 200 throws. `strict`: a file rejected throws too
 * (the tests whose every file must land); else what the import rejects is part of the writes.
 */
export function importer(h: Harness, opts: { strict?: boolean } = {}): (files: ImportFile[]) => Promise<ImportSummary> {
  return async (files) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
      payload: { files },
    });
    if (res.statusCode !== 200) throw new Error(`import ${res.statusCode}: ${res.body}`);
    const summary = res.json<{ summary: ImportSummary }>().summary;
    if (opts.strict && summary.rejected > 0) throw new Error(`import rejected: ${res.body.slice(0, 2000)}`);
    return summary;
  };
}

/** GET `path` with the query as tenant A; any answer but 200 throws (a report that fails is a fault, not a difference). */
export async function getOk(h: Harness, path: string, q: Record<string, string>): Promise<LightMyRequestResponse> {
  const res = await h.app.inject({ method: 'GET', url: `${path}?${new URLSearchParams(q).toString()}`, headers: { 'x-api-key': KEY_A } });
  if (res.statusCode !== 200) throw new Error(`${res.statusCode} ${res.body}`);
  return res;
}

/** The service restarted on the same store (a write step: what was marked must survive it). */
export function restarter(h: Harness): () => Promise<string> {
  return async () => {
    await h.rebuild();
    return 'restart';
  };
}

/** The rollup worker's pass over the marks, or (`rebuild`) a rebuild of the whole store, as after an upgrade. */
export async function workerPass(kind: RollupKind, db: Db, rebuild: boolean): Promise<string> {
  if (!rebuild) return `drained ${await kind.drain(db, 50, 60_000)} marks`;
  const r = await kind.rebuild(db);
  if (!(await kind.ready(db))) throw new Error('a rebuild of every tenant leaves the store built');
  return `rebuilt ${r.units} days`;
}

/** Passes of the worker, `limit` marks each, until none is left; answers how many passes worked. */
export async function drainAll(kind: RollupKind, db: Db, limit: number): Promise<number> {
  let passes = 0;
  while ((await kind.drain(db, limit, 60_000)) > 0) passes++;
  return passes;
}

/** An MCP client of tenant A over streamable HTTP (closed with the test). */
export async function mcpClient(t: Test, h: Harness): Promise<Client> {
  return connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
}
