/**
 * "A restart loses nothing": `npm start`'s own script on the on-disk embedded
 * engine (DATA_DIR in a temp directory, the secret-encryption key generated
 * there). A delivery to a receiver that is down is queued and tried; the
 * service is SIGKILLed; the receiver comes back; the restarted service
 * delivers it, signed with the secret shown before the crash.
 */
import type { Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ROOT, scriptArgs } from '../helpers/service.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { DEMO_TENANTS } from '../../scripts/demo/load.ts';
import { KEY_FILE } from '../../lib/webhooks/encryption-key.ts';

export default async function webhooksRestartTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  // Two cold starts of the service with its embedded engine on a shared 2-core machine.
  t.setTimeout(300_000);
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
  const KEY = DEMO_TENANTS[0]!.apiKey;

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'webhooks-restart-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));
  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  async function start(): Promise<{ child: ChildProcess; base: string; exited: Promise<unknown> }> {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      TAP: '',
      NODE_OPTIONS: '',
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'warn',
      DATA_DIR: dataDir,
      DEMO_INVOICES: '20',
      DEMO_TRIPS: '20',
      WEBHOOK_ALLOW_PRIVATE: 'true',
      WEBHOOK_ALLOWED_PORTS: '*',
      WEBHOOK_PROCESS_EVERY_MS: '100',
      WEBHOOK_RETRY_DELAY_MS: '300',
      WEBHOOK_RETRY_MAX_DELAY_MS: '600',
      WEBHOOK_LOCK_LIFETIME_MS: '2000',
    };
    delete env.MONGODB_URI;
    delete env.WEBHOOK_ENCRYPTION_KEY;
    const child = spawn(process.execPath, scriptArgs('scripts/start.ts'), { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let out = '';
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const base = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no start in 90 s\n${out}`)), 90_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
      void exited.then(() => reject(new Error(`exited before listening\n${out}`)));
    });
    return { child, base, exited };
  }

  const api = async (base: string, method: string, url: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: { 'x-api-key': KEY, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, json: (await res.json()) as Json };
  };

  async function waitFor<T>(what: string, fn: () => Promise<T | null | undefined | false>, timeoutMs = 30_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await fn();
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await sleep(100);
    }
  }

  /** The engine of a killed service exits once it sees its parent gone: wait until its port refuses. */
  async function engineGone(port: number): Promise<void> {
    await waitFor(
      'the old engine to exit',
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(port, '127.0.0.1');
          s.once('connect', () => (s.destroy(), resolve(false)));
          s.once('error', () => resolve(true));
        }),
    );
  }

  t.test('a queued delivery survives SIGKILL and is delivered after the restart', async (t) => {
    const receiver = await startReceiver();
    t.teardown(() => receiver.close());
    await receiver.down();

    const first = await start();
    const created = await api(first.base, 'POST', '/api/webhooks', { url: receiver.url('/hook'), events: ['alert.triggered'] });
    t.equal(created.status, 201, JSON.stringify(created.json));
    const { id, secret } = created.json;
    receiver.secrets.set('/hook', secret);
    const keyFile = path.join(dataDir, KEY_FILE);
    t.equal((await stat(keyFile)).mode & 0o777, 0o600, 'the generated key file is private');
    const keyBefore = await readFile(keyFile, 'utf8');

    const queued = await api(first.base, 'POST', `/api/webhooks/${id}/test`);
    t.equal(queued.status, 202);
    await waitFor('a refused attempt', async () => {
      const d = (await api(first.base, 'GET', `/api/webhooks/${id}/deliveries`)).json.data[0];
      return d && d.attempts.length >= 1 && d.status === 'pending';
    });
    const enginePort = Number(await readFile(path.join(dataDir, 'embedded-mongo.port'), 'utf8'));
    first.child.kill('SIGKILL');
    await first.exited;
    await engineGone(enginePort);

    await receiver.up();
    const second = await start();
    const got = await waitFor('the delivery after the restart', async () => receiver.received.find((r) => r.path === '/hook'));
    t.ok(got.verified, 'signed with the secret shown before the crash (the key in DATA_DIR survived)');
    t.equal(got.eventId, queued.json.eventId);
    t.equal(await readFile(keyFile, 'utf8'), keyBefore, 'the same key');
    const d = await waitFor('succeeded', async () => {
      const x = (await api(second.base, 'GET', `/api/webhooks/${id}/deliveries`)).json.data[0];
      return x?.status === 'succeeded' && x;
    });
    t.ok(d.attempts.length >= 2, `${d.attempts.length} attempts, the last one after the restart`);
    t.match(d.attempts.at(-1), { statusCode: 200, error: null });
    t.match(d.attempts[0], { statusCode: null });
    second.child.kill('SIGTERM');
    await second.exited;
  });
}
