/**
 * Durability and a failing store, through HTTP against the service as `npm start` runs it
 * (scripts/start.ts, no MONGODB_URI: the embedded engine on disk in DATA_DIR, supervised):
 *
 * 1. Acknowledged writes survive `kill -9` of the engine JVM: rounds of one write of each kind (a
 *    leg's delivery PUT, a cancellation status PUT, an import POST, an alert schedule POST), the
 *    engine killed as soon as the last of them is answered; after the supervisor's restarts, every
 *    acknowledged write is there. (Before issue 33 the engine answered before its store committed,
 *    every 200 ms: such a kill lost most of them.)
 * 2. A full disk: DATA_DIR on a small tmpfs filled up until a write fails. The engine exits
 *    (`embedded-mongo: store failed: … No space left on device`), the failed write answers 503,
 *    `/ready` 503 naming the cause, nothing answers 500; once space is freed the restarted engine
 *    serves again, with what was written before the failure. Needs root (mount); fails otherwise.
 *
 * Beside the other files (it was in the serial phase): it kills only the engine under its own
 * service (by pid) and fills only its own tmpfs, and nothing it asserts is a time bound a busy
 * machine could miss (recovery is awaited, up to 60–90 s), so it needs no machine to itself.
 *
 * One service serves both (a service's start, engine and demo load, costs about 5 CPU-s): DATA_DIR
 * is the tmpfs the second fills, the first's kills done before; neither needs a fresh store.
 */
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { closeSync, openSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startService, type RunningService } from './helpers/service.ts';
import { enginePidUnder } from './helpers/processes.ts';
import { invoiceXml, requestXml } from './helpers/cfdi-builder.ts';
import { DEMO_TENANTS } from '../scripts/demo/load.ts';

t.setTimeout(600_000);

const TGO = DEMO_TENANTS[0]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Json = Record<string, unknown>;

interface Answer {
  status: number | string;
  body: string;
}

async function call(base: string, p: string, init: { method?: string; body?: unknown } = {}): Promise<Answer> {
  try {
    const res = await fetch(`${base}${p}`, {
      method: init.method ?? 'GET',
      headers: { 'x-api-key': TGO.apiKey, ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: res.status, body: await res.text() };
  } catch (err) {
    const e = err as { cause?: { code?: string }; name?: string };
    return { status: e.cause?.code ?? e.name ?? 'error', body: '' };
  }
}

const json = (a: Answer): Json => JSON.parse(a.body) as Json;
const reasonOf = (a: Answer): string | undefined => {
  try {
    return (json(a).error as { reason?: string } | undefined)?.reason;
  } catch {
    return undefined;
  }
};

/**
 * The data directory: a 96 MB tmpfs the full-disk test fills (the kill test writes a few records to
 * it first). Without root it is a plain directory: the kill test runs, the full-disk test fails.
 */
const dataDir = await mkdtemp(path.join(os.tmpdir(), 'durability-'));
let cannotMount: string | null = null;
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=96m', 'tmpfs', dataDir], { stdio: 'pipe' });
} catch (err) {
  cannotMount = (err as { stderr?: Buffer }).stderr?.toString().trim() ?? String(err);
}
let started: RunningService | null = null;
t.teardown(async () => {
  await started?.stop(5000);
  if (!cannotMount) execFileSync('umount', ['-l', dataDir]);
  await rm(dataDir, { recursive: true, force: true });
});
// Restarts without limit: the kill test kills the engine six times. 60 demo trips hold the six
// delivered legs it writes to; it imports the invoices it needs.
const service = (started = await startService({
  mongodbDb: 'freight',
  timeoutMs: 120_000,
  env: {
    DATA_DIR: dataDir,
    DEMO_INVOICES: '60',
    DEMO_TRIPS: '60',
    LOG_LEVEL: 'info',
    RATE_LIMIT_MAX: '1000000',
    RATE_LIMIT_IP_MAX: '1000000',
    EMBEDDED_MONGO_MAX_RESTARTS: '100',
  },
}));

/** Waits until an engine other than `old` runs under the service and a data request answers 200. */
async function recovered(service: RunningService, old: number | null, withinMs = 60_000): Promise<number> {
  for (const until = Date.now() + withinMs; Date.now() < until; await sleep(100)) {
    const pid = enginePidUnder(service.child.pid!);
    if (pid && pid !== old && (await call(service.base, '/api/financial-docs?limit=1')).status === 200) return pid;
    if (service.child.exitCode !== null) throw new Error(`the service exited:\n${service.output().slice(-3000)}`);
  }
  throw new Error(`no recovery within ${withinMs} ms:\n${service.output().slice(-3000)}`);
}

let uuidSeq = 0;
/** One stamped invoice of the tenant, with a UUID of its own. */
function importBody(tag: string, invoices = 1): { files: { name: string; content: string }[]; uuids: string[] } {
  const uuids: string[] = [];
  const files = Array.from({ length: invoices }, () => {
    const n = ++uuidSeq;
    const uuid = `5D0C${String(n).padStart(4, '0')}-3300-4000-8000-${String(Date.now() % 1e12).padStart(12, '0')}`;
    uuids.push(uuid);
    const { xml } = invoiceXml({
      issuer: TGO.rfc,
      receiver: 'XAXX010101000',
      uuid,
      fecha: '2025-01-06T10:00:00',
      lines: [{ desc: `Flete ${tag}`, amount: 1000 + n, transfers: [{ tax: '002', rate: 0.16 }] }],
    });
    return { name: `${tag}-${n}.xml`, content: xml };
  });
  return { files, uuids };
}

t.test('kill -9 of the engine right after acknowledged writes of each kind: none is lost', async (t) => {
  const { base } = service;

  const ROUNDS = 6;
  // Set-up: invoices with a pending cancellation request (imported), and delivered legs (a new
  // ticket recorded on a delivered leg is a write too).
  const invoices = importBody('cancel', ROUNDS);
  t.equal((await call(base, '/api/imports', { method: 'POST', body: { files: invoices.files } })).status, 200, 'invoices imported');
  const requests = invoices.uuids.map((uuid, i) => ({
    name: `request-${i}.xml`,
    content: requestXml({ issuer: TGO.rfc, fecha: '2025-01-13T09:00:00', folios: [{ uuid, motive: '02' }] }),
  }));
  const requested = await call(base, '/api/imports', { method: 'POST', body: { files: requests } });
  const pending = (json(requested).files as { financialDocIds?: string[] }[]).map((f) => f.financialDocIds?.[0] ?? '');
  t.ok(pending.every(Boolean), 'cancellation requests imported', { body: requested.body.slice(0, 500) });
  const legs: { trip: string; leg: string; offloadDate: string; products: { code: string; offloaded: number }[] }[] = [];
  for (const trip of json(await call(base, `/api/shipments?limit=${ROUNDS}`)).data as {
    id: string;
    shipments: { shipmentId: string; status: number; offloadDate: string; volumes: { products: { code: string; loaded: number }[] } }[];
  }[]) {
    const leg = trip.shipments.find((l) => l.status === 4)!;
    legs.push({
      trip: trip.id,
      leg: leg.shipmentId,
      offloadDate: leg.offloadDate,
      products: leg.volumes.products.map((p) => ({ code: p.code, offloaded: p.loaded - 7 })),
    });
  }
  t.equal(legs.length, ROUNDS, `${ROUNDS} delivered legs`);

  interface Acked {
    kind: string;
    check: () => Promise<boolean>;
  }
  const acked: Acked[] = [];
  let engine = enginePidUnder(service.child.pid!);
  for (let round = 0; round < ROUNDS; round++) {
    const leg = legs[round]!;
    const ticket = `REC-DUR-${round}`;
    const imported = importBody(`dur${round}`);
    const user = `durability-${round}`;
    const writes: [string, Promise<Answer>, () => Promise<boolean>][] = [
      [
        'delivery',
        call(base, `/api/shipments/${leg.trip}/legs/${leg.leg}/delivery`, {
          method: 'PUT',
          body: { offloadDate: leg.offloadDate, ticket, products: leg.products },
        }),
        async () =>
          (json(await call(base, `/api/shipments/${leg.trip}`)).shipments as { shipmentId: string; deliveryTicket?: string }[]).find(
            (l) => l.shipmentId === leg.leg,
          )?.deliveryTicket === ticket,
      ],
      [
        'cancellation status',
        call(base, `/api/financial-docs/${encodeURIComponent(pending[round]!)}/cancellation`, {
          method: 'PUT',
          body: { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada', consultedAt: '2025-01-14T17:00:00Z' },
        }),
        async () =>
          (json(await call(base, `/api/financial-docs/${encodeURIComponent(pending[round]!)}`)).cancellations as { status: string }).status === 'rejected',
      ],
      [
        'import',
        call(base, '/api/imports', { method: 'POST', body: { files: imported.files } }),
        async () => (json(await call(base, `/api/financial-docs?uuid=${imported.uuids[0]}`)).data as unknown[]).length === 1,
      ],
      [
        'alert schedule',
        call(base, '/api/alerts/schedule', {
          method: 'POST',
          body: { userIds: [user], ruleId: 'overdue-invoices', cycleKey: '2026-10', nameAlert: 'durability' },
        }),
        async () => (json(await call(base, `/api/alerts/jobs?userId=${user}`)).data as unknown[]).length === 1,
      ],
    ];
    const answers = await Promise.all(writes.map(([, answer]) => answer));
    process.kill(engine!, 'SIGKILL'); // right after the last answer
    writes.forEach(([kind, , check], i) => {
      const a = answers[i]!;
      t.equal(a.status, 200, `round ${round}: ${kind} acknowledged`, { body: a.body.slice(0, 300) });
      if (a.status === 200) acked.push({ kind, check });
    });
    engine = await recovered(service, engine);
  }
  const lost: string[] = [];
  for (const a of acked) if (!(await a.check())) lost.push(a.kind);
  t.same(lost, [], `0 of ${acked.length} acknowledged writes lost across ${ROUNDS} kills`);
  t.equal(service.child.exitCode, null, 'the same service process throughout');
  t.comment(`${acked.length} acknowledged writes, ${ROUNDS} kills, lost: ${lost.length} (${lost.join(', ')})`);
});

t.test('a full disk: the engine exits, 503 (not 500) meanwhile, recovery once space is freed', async (t) => {
  if (cannotMount) {
    t.fail(`this test needs to mount a tmpfs (run as root): ${cannotMount}`);
    return;
  }
  const { base } = service;
  const before = importBody('before');
  t.equal((await call(base, '/api/imports', { method: 'POST', body: { files: before.files } })).status, 200, 'a write before the disk fills');

  // Readers all along: nothing may answer 500.
  const seen: { path: string; answer: Answer }[] = [];
  let polling = true;
  const pollers = ['/ready', '/api/financial-docs?limit=1', '/health'].map(async (p) => {
    while (polling) {
      seen.push({ path: p, answer: await call(base, p) });
      await sleep(20);
    }
  });

  // Fill the file system (the filler, then the last blocks).
  const filler = path.join(dataDir, 'filler');
  const fd = openSync(filler, 'w');
  for (const size of [1 << 20, 4096]) {
    const block = Buffer.alloc(size, 1);
    for (;;) {
      try {
        writeSync(fd, block);
      } catch {
        break;
      }
    }
  }
  closeSync(fd);

  let failed: Answer | null = null;
  let attempts = 0;
  const engine = enginePidUnder(service.child.pid!);
  for (; attempts < 300 && !failed; attempts++) {
    const a = await call(base, '/api/imports', { method: 'POST', body: { files: importBody('full', 20).files } });
    if (a.status !== 200) failed = a;
  }
  t.ok(failed, `a write failed once the disk was full (after ${attempts} imports)`);
  t.equal(failed?.status, 503, 'it answered 503', { body: failed?.body.slice(0, 300) });
  t.equal(failed && reasonOf(failed), 'database_unavailable', 'with a reason');
  // /ready names the cause while the engine restarts. (Between the engine's line and its exit, about
  // 100 ms, /ready's ping fails plainly: 503 without the cause. Wait for the restart's answer and log.)
  const named = () => seen.some((s) => s.path === '/ready' && s.answer.status === 503 && /store failed: .*No space left on device/.test(s.answer.body));
  const logged = () => /embedded database engine exited unexpectedly \(store failed: .*No space left on device.*\); restarting it/.test(service.output());
  for (const until = Date.now() + 20_000; Date.now() < until && !(named() && logged());) await sleep(50);
  const ready503 = seen.filter((s) => s.path === '/ready' && s.answer.status === 503);
  t.ok(ready503.length > 0, '/ready answered 503 after the failure');
  t.ok(
    ready503.some((s) => /store failed: .*No space left on device/.test(s.answer.body)),
    '/ready names the cause',
    { body: ready503[0]?.answer.body.slice(0, 400) },
  );
  t.match(service.output(), /embedded-mongo: store failed: .*No space left on device/, 'the engine said why');
  t.match(
    service.output(),
    /embedded database engine exited unexpectedly \(store failed: .*No space left on device.*\); restarting it/,
    "the supervisor's log names the cause",
  );

  await rm(filler);
  const restarted = await recovered(service, engine, 90_000);
  polling = false;
  await Promise.all(pollers);
  t.ok(restarted !== engine, 'a new engine serves');
  t.equal((await call(base, '/ready')).status, 200, '/ready 200 again');
  t.equal((json(await call(base, `/api/financial-docs?uuid=${before.uuids[0]}`)).data as unknown[]).length, 1, 'the data written before the failure is there');
  const after = importBody('after');
  t.equal((await call(base, '/api/imports', { method: 'POST', body: { files: after.files } })).status, 200, 'writes work again');
  const fiveHundreds = seen.filter((s) => s.answer.status === 500 || typeof s.answer.status === 'string');
  t.same(
    fiveHundreds.map((s) => `${s.path} ${s.answer.status} ${s.answer.body.slice(0, 200)}`),
    [],
    `no 500 and no dropped connection among ${seen.length} reads`,
  );
  t.ok(
    seen.filter((s) => s.path !== '/health').every((s) => s.answer.status === 200 || reasonOf(s.answer) === 'database_unavailable'),
    'every 503 is database_unavailable',
  );
  t.equal(service.child.exitCode, null, 'the same service process');
  t.comment(`failed after ${attempts} imports; ${seen.length} reads (${ready503.length} /ready 503); ${ready503[0]?.answer.body.slice(0, 300)}`);
});
