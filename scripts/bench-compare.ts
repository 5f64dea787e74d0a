/**
 * `npm run bench -- --compare`: the service side by side with bare baselines,
 * on the same engine, the same data and the same driver client (issue 9, §4).
 *
 *  - Lists: autocannon (own worker thread) against the service's route and
 *    against a bare Fastify route that replays the driver commands the service
 *    sent for that request (captured with the driver's command monitoring),
 *    with no auth, validation, response schema or shaping: req/s at 1, 10 and
 *    50 connections and the ratio service ÷ bare (target ≥ 0.85).
 *  - Tax summary and audits: median time of the HTTP request vs the median time
 *    of its captured pipelines run directly through the driver (target ≤ 1.2×).
 *  - /health vs a Fastify hello-world (target ≥ 0.9× req/s).
 *  - The deepest page that holds data vs page 1 (target ≤ 1.5× the time).
 *
 * The captured commands are replayed concurrently (Promise.all), the fastest
 * the bare side could run them, so the ratios are conservative for the service.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import autocannon from 'autocannon';
import type { CommandStartedEvent, Db, Document, Filter, MongoClient, Sort } from 'mongodb';

export interface CompareCase {
  name: string;
  url: string;
}

export interface CompareInput {
  app: FastifyInstance;
  client: MongoClient;
  db: Db;
  apiKey: string;
  lists: CompareCase[];
  reports: CompareCase[];
  /** [page 1, deepest page with data] of each list. */
  depth: [CompareCase, CompareCase][];
  seconds: number;
  connections: number[];
  runs: number;
  log: (line: string) => void;
}

interface Captured {
  name: string;
  collection: string;
  command: Document;
}

/** The fields of a captured find, aggregate, count or distinct that a replay sends again, as the driver sent them. */
interface ReplayedCommand {
  filter?: Filter<Document>;
  query?: Filter<Document>;
  sort?: Sort;
  skip?: number;
  limit?: number;
  projection?: Document;
  batchSize?: number;
  maxTimeMS?: number;
  pipeline?: Document[];
  allowDiskUse?: boolean;
  cursor?: { batchSize?: number };
  key?: string;
}

/** Commands that read data; session, handshake and cursor housekeeping are left out. */
const DATA_COMMANDS = new Set(['find', 'aggregate', 'count', 'distinct']);

/** The driver commands one request makes (run after a warm-up, so caches hold the key and settings). */
async function capture(input: CompareInput, url: string): Promise<Captured[]> {
  const seen: Captured[] = [];
  const onStart = (e: CommandStartedEvent) => {
    if (!DATA_COMMANDS.has(e.commandName)) return;
    seen.push({ name: e.commandName, collection: String(e.command[e.commandName]), command: e.command });
  };
  await get(input, url);
  input.client.on('commandStarted', onStart);
  try {
    await get(input, url);
  } finally {
    input.client.off('commandStarted', onStart);
  }
  if (seen.length === 0) throw new Error(`${url}: no driver command captured (is monitorCommands on?)`);
  return seen;
}

/** Runs one captured command through the driver's public API, reading every result. */
async function replay(db: Db, c: Captured): Promise<unknown> {
  const coll = db.collection(c.collection);
  const cmd = c.command as ReplayedCommand;
  const maxTimeMS = cmd.maxTimeMS;
  switch (c.name) {
    case 'find':
      return coll
        .find(cmd.filter ?? {}, { sort: cmd.sort, skip: cmd.skip, limit: cmd.limit, projection: cmd.projection, batchSize: cmd.batchSize, maxTimeMS })
        .toArray();
    case 'aggregate':
      // The same batches as the service's cursor (an audit reads AUDIT_BATCH_SIZE rows per round trip).
      return coll.aggregate(cmd.pipeline, { maxTimeMS, allowDiskUse: cmd.allowDiskUse, batchSize: cmd.cursor?.batchSize }).toArray();
    case 'count':
      return coll.countDocuments(cmd.query ?? {}, { skip: cmd.skip, limit: cmd.limit, maxTimeMS });
    default:
      return coll.distinct(cmd.key!, cmd.query ?? {}, { maxTimeMS });
  }
}

const replayAll = (db: Db, commands: Captured[]) => Promise.all(commands.map((c) => replay(db, c)));

async function get(input: CompareInput, url: string): Promise<void> {
  const res = await input.app.inject({ method: 'GET', url, headers: { 'x-api-key': input.apiKey } });
  if (res.statusCode !== 200) throw new Error(`${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
}

async function listen(app: FastifyInstance): Promise<string> {
  return app.listen({ host: '127.0.0.1', port: 0 });
}

interface Load {
  reqPerSec: number;
  p50Ms: number;
  errors: number;
}

async function load(base: string, path: string, connections: number, seconds: number, headers: Record<string, string> = {}): Promise<Load> {
  const r = await autocannon({ url: `${base}${path}`, connections, duration: seconds, timeout: 30, workers: 1, headers });
  // Requests abandoned at the end may still be running: let them finish before the next run.
  await new Promise((res) => setTimeout(res, 500));
  return { reqPerSec: Math.round(r.requests.average * 10) / 10, p50Ms: r.latency.p50, errors: r.errors + r.timeouts + r.non2xx };
}

async function medianMs(runs: number, fn: () => Promise<unknown>): Promise<number> {
  await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(times.length / 2)]! * 10) / 10;
}

const ratio = (a: number, b: number): number => (b === 0 ? 0 : Math.round((a / b) * 100) / 100);

export interface CompareReport {
  lists: { name: string; connections: number; service: Load; bare: Load; ratio: number; commands: string[] }[];
  health: { connections: number; service: Load; helloWorld: Load; ratio: number }[];
  reports: { name: string; serviceMs: number; pipelinesMs: number; ratio: number; commands: string[] }[];
  depth: { list: string; firstMs: number; deepestMs: number; deepestUrl: string; ratio: number }[];
}

export async function runCompare(input: CompareInput): Promise<CompareReport> {
  const { app, db, apiKey, log } = input;
  const captured = new Map<string, Captured[]>();
  for (const c of [...input.lists, ...input.reports]) captured.set(c.name, await capture(input, c.url));

  const bare = Fastify({ logger: false });
  input.lists.forEach((c, i) => {
    const commands = captured.get(c.name)!;
    bare.get(`/bare/${i}`, async () => ({ data: await replayAll(db, commands) }));
  });
  const hello = Fastify({ logger: false });
  hello.get('/', async () => ({ hello: 'world' }));

  const serviceBase = await listen(app);
  const bareBase = await listen(bare);
  const helloBase = await listen(hello);
  const report: CompareReport = { lists: [], health: [], reports: [], depth: [] };
  try {
    for (const connections of input.connections) {
      const service = await load(serviceBase, '/health', connections, input.seconds);
      const helloWorld = await load(helloBase, '/', connections, input.seconds);
      report.health.push({ connections, service, helloWorld, ratio: ratio(service.reqPerSec, helloWorld.reqPerSec) });
      log(`  /health vs hello-world, ${connections} conn: ${service.reqPerSec} vs ${helloWorld.reqPerSec} req/s`);
    }
    for (const [i, c] of input.lists.entries()) {
      for (const connections of input.connections) {
        const service = await load(serviceBase, c.url, connections, input.seconds, { 'x-api-key': apiKey });
        const b = await load(bareBase, `/bare/${i}`, connections, input.seconds);
        report.lists.push({
          name: c.name,
          connections,
          service,
          bare: b,
          ratio: ratio(service.reqPerSec, b.reqPerSec),
          commands: captured.get(c.name)!.map((x) => `${x.name} ${x.collection}`),
        });
        log(`  ${c.name}, ${connections} conn: ${service.reqPerSec} vs ${b.reqPerSec} req/s`);
      }
    }
    for (const c of input.reports) {
      const commands = captured.get(c.name)!;
      const serviceMs = await medianMs(input.runs, () => fetchOk(`${serviceBase}${c.url}`, apiKey));
      const pipelinesMs = await medianMs(input.runs, () => replayAll(db, commands));
      report.reports.push({
        name: c.name,
        serviceMs,
        pipelinesMs,
        ratio: ratio(serviceMs, pipelinesMs),
        commands: commands.map((x) => `${x.name} ${x.collection}`),
      });
      log(`  ${c.name}: ${serviceMs} ms vs ${pipelinesMs} ms`);
    }
    for (const [first, deepest] of input.depth) {
      const firstMs = await medianMs(input.runs, () => fetchOk(`${serviceBase}${first.url}`, apiKey));
      const deepestMs = await medianMs(input.runs, () => fetchOk(`${serviceBase}${deepest.url}`, apiKey));
      report.depth.push({ list: first.name, firstMs, deepestMs, deepestUrl: deepest.url, ratio: ratio(deepestMs, firstMs) });
      log(`  ${first.name} deepest page: ${deepestMs} ms vs page 1 ${firstMs} ms`);
    }
  } finally {
    await bare.close();
    await hello.close();
  }
  return report;
}

async function fetchOk(url: string, apiKey: string): Promise<void> {
  const res = await fetch(url, { headers: { 'x-api-key': apiKey } });
  const body = await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${Buffer.from(body).toString('utf8').slice(0, 300)}`);
}

/** Markdown tables of a report, with the targets of issue 9 §4. */
export function formatCompare(r: CompareReport): string {
  const ok = (pass: boolean) => (pass ? 'yes' : '**no**');
  const lines: string[] = [];
  lines.push(
    '| list | conn | service req/s | bare req/s | ratio (≥ 0.85) | service p50 ms | bare p50 ms | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const x of r.lists)
    lines.push(
      `| ${x.name} | ${x.connections} | ${x.service.reqPerSec} | ${x.bare.reqPerSec} | ${x.ratio} ${ok(x.ratio >= 0.85)} | ${x.service.p50Ms} | ${x.bare.p50Ms} | ${x.service.errors + x.bare.errors} |`,
    );
  lines.push(
    '',
    '| /health vs hello-world | conn | service req/s | hello-world req/s | ratio (≥ 0.9) | errors |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
  );
  for (const x of r.health)
    lines.push(
      `| health | ${x.connections} | ${x.service.reqPerSec} | ${x.helloWorld.reqPerSec} | ${x.ratio} ${ok(x.ratio >= 0.9)} | ${x.service.errors + x.helloWorld.errors} |`,
    );
  lines.push('', '| report | service ms (median) | its pipelines through the driver ms | ratio (≤ 1.2) | commands |', '| --- | ---: | ---: | ---: | --- |');
  for (const x of r.reports) lines.push(`| ${x.name} | ${x.serviceMs} | ${x.pipelinesMs} | ${x.ratio} ${ok(x.ratio <= 1.2)} | ${x.commands.join(', ')} |`);
  lines.push('', '| list | page 1 ms | deepest page with data ms | deepest page | ratio (≤ 1.5) |', '| --- | ---: | ---: | --- | ---: |');
  for (const x of r.depth) lines.push(`| ${x.list} | ${x.firstMs} | ${x.deepestMs} | \`${x.deepestUrl}\` | ${x.ratio} ${ok(x.ratio <= 1.5)} |`);
  return lines.join('\n');
}
