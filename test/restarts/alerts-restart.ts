/**
 * "A 200 means the jobs are persisted": schedule through a real service process
 * on the on-disk embedded engine, SIGKILL it right after the 200, start it
 * again on the same data directory: every job is there and runs, once.
 */
import type { Test } from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { TENANT_A, KEY_A } from '../helpers/harness.ts';
import { scriptArgs } from '../helpers/service.ts';

export default async function alertsRestartTests(t: Test): Promise<void> {
  type Json = Record<string, any>;
  const FIXTURE = fileURLToPath(new URL('../fixtures/alerts-service.ts', import.meta.url));
  const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'alerts-restart-'));
  t.teardown(() => rm(dataDir, { recursive: true, force: true }));

  interface Service {
    child: ChildProcess;
    base: string;
    exited: Promise<void>;
  }

  const children: ChildProcess[] = [];
  t.teardown(() => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });

  async function startService(): Promise<Service> {
    const child = spawn(process.execPath, scriptArgs(FIXTURE), {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: {
        ...process.env,
        ALERTS_SERVICE_DATA_DIR: dataDir,
        ALERTS_SERVICE_KEY: KEY_A,
        ALERTS_SERVICE_TENANT: TENANT_A,
        ALERT_WORKER: 'true',
        ALERT_PROCESS_EVERY_MS: '200',
        // A job locked by the killed worker becomes available again after this.
        ALERT_LOCK_LIFETIME_MS: '2000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const port = await new Promise<number>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`service did not start in 60 s\n${stderr}`)), 60_000);
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const m = /LISTENING (\d+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(Number(m[1]));
        }
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`service exited before listening (${code ?? signal})\n${stderr}`));
      });
    });
    return { child, base: `http://127.0.0.1:${port}`, exited };
  }

  const api = async (s: Service, method: string, url: string, body?: unknown): Promise<{ status: number; json: Json }> => {
    const res = await fetch(`${s.base}${url}`, {
      method,
      headers: { 'x-api-key': KEY_A, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Json };
  };

  t.test('jobs answered with 200 survive a SIGKILL and run after the restart', async (t) => {
    const first = await startService();
    const userIds = Array.from({ length: 30 }, (_, i) => `crash-${i}`);
    const scheduled = await api(first, 'POST', '/api/alerts/schedule', {
      userIds,
      ruleId: 'overdue-invoices',
      cycleKey: '2026-03',
      nameAlert: 'crash test',
      dueDate: new Date(Date.now() + 1500).toISOString(),
    });
    first.child.kill('SIGKILL'); // right after the 200, before anything could be flushed "later"
    t.equal(scheduled.status, 200);
    t.equal(scheduled.json.newlyScheduled, 30);
    const ids: string[] = scheduled.json.jobs.map((j: Json) => j.jobId);
    await first.exited;
    t.equal(first.child.signalCode, 'SIGKILL');

    const second = await startService();
    const listed = await api(second, 'GET', '/api/alerts/jobs?cycleKey=2026-03&limit=100');
    t.equal(listed.status, 200);
    t.same(listed.json.data.map((j: Json) => j.id).sort(), [...ids].sort(), 'every job is there after the restart');

    const deadline = Date.now() + 30_000;
    let completed = 0;
    while (Date.now() < deadline) {
      completed = (await api(second, 'GET', '/api/alerts/jobs?cycleKey=2026-03&state=completed&limit=1')).json.meta.total;
      if (completed === 30) break;
      await sleep(200);
    }
    t.equal(completed, 30, 'every job ran');
    const records = await api(second, 'GET', '/api/alerts?cycleKey=2026-03&limit=100');
    t.equal(records.json.meta.total, 30, 'one alert record per job');
    t.same(records.json.data.map((r: Json) => r.jobId).sort(), [...ids].sort());

    const again = await api(second, 'POST', '/api/alerts/schedule', { userIds, ruleId: 'overdue-invoices', cycleKey: '2026-03', nameAlert: 'crash test' });
    t.match(again.json, { newlyScheduled: 0, alreadyScheduled: 30 }, 'the unique index survived the restart too');

    second.child.kill('SIGTERM');
    await second.exited;
    t.equal(second.child.exitCode, 0, 'graceful shutdown');
  });
}
