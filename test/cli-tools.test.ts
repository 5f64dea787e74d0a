/**
 * The command-line tools as a user types them (README, docs/rollups.md): `npm run apikey`,
 * `npm run rollups`, `npm run seed`, `npm start` and `npm run worker`, each a process of its own on the test's database
 * (MONGODB_URI). An argument mistake is exit 2 with the usage and no stack trace, `--help` is exit
 * 0, and an RFC is taken as the service stores it (trimmed, upper-cased): ` TGO… ` once made a key
 * of a tenant of its own, and `--tenant tgo…` a verify that checked nothing and passed.
 * (`npm run import`: test/imports/operations.ts.)
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { startHarness, TENANT_A } from './helpers/harness.ts';
import { ROOT, scriptArgs } from './helpers/service.ts';
import { apiKeys } from '../lib/auth/api-keys.ts';
import { invoiceXml } from './helpers/cfdi-builder.ts';

t.setTimeout(300_000);
const h = await startHarness(t);

function run(script: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...scriptArgs(script), ...args], {
    cwd: ROOT,
    env: { ...process.env, TAP: '', NODE_OPTIONS: '', MONGODB_URI: h.engine.uri, MONGODB_DB: h.db.databaseName, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  // Every case here exits by itself at once; one that runs on (a service that ignored its arguments) is stopped, code null.
  const stop = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(stop);
      resolve({ code, stdout, stderr });
    }),
  );
}
const STACK = /\n\s+at /;

t.test('apikey: the tenant trimmed and upper-cased; argument mistakes are exit 2 with the usage, never a stack', async (t) => {
  const created = await run('scripts/apikey.ts', ['create', '--tenant', ` ${TENANT_A.toLowerCase()} `, '--label', 'spaced']);
  t.equal(created.code, 0, created.stderr);
  const key = created.stdout.trim();
  t.equal((await apiKeys(h.db).findOne({ label: 'spaced' }))?.tenant, TENANT_A, "stored under the tenant's RFC");
  const res = await h.app.inject({ method: 'GET', url: '/api/financial-docs?limit=1', headers: { 'x-api-key': key } });
  t.equal(res.statusCode, 200);
  t.equal(res.json().meta.tenant, TENANT_A, 'and it reads that tenant');

  for (const args of [
    ['create', '--tenant'],
    ['create', '--tenant', TENANT_A, '--bogus'],
    ['revoke', 'a', 'b'],
    ['list', '--tenant', TENANT_A, 'extra'],
  ]) {
    const r = await run('scripts/apikey.ts', args);
    t.equal(r.code, 2, `exit 2: ${args.join(' ')}`);
    t.match(r.stderr, 'usage: npm run apikey');
    t.notMatch(r.stderr, STACK, 'no stack trace');
  }
  const help = await run('scripts/apikey.ts', ['--help']);
  t.equal(help.code, 0);
  t.match(help.stdout, 'usage: npm run apikey');
});

t.test('rollups: --tenant as stored; an RFC with nothing here, a bad one, or --repair alone is exit 2, not a pass', async (t) => {
  const xml = invoiceXml({
    issuer: TENANT_A,
    receiver: 'GDI920315QR4',
    uuid: 'C11700A0-0000-4000-8000-000000000001',
    fecha: '2026-10-05T10:00:00',
    lines: [{ code: '78101802', desc: 'Flete', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
  }).xml;
  const imported = await h.app.inject({
    method: 'POST',
    url: '/api/imports',
    headers: { 'x-api-key': (await run('scripts/apikey.ts', ['create', '--tenant', TENANT_A])).stdout.trim(), 'content-type': 'application/json' },
    payload: { files: [{ name: 'i.xml', content: xml }] },
  });
  t.equal(imported.statusCode, 200, imported.body);

  const lower = await run('scripts/rollups.ts', ['--verify', '--kind', 'tax-summary', '--tenant', ` ${TENANT_A.toLowerCase()}`]);
  t.equal(lower.code, 0, lower.stderr);
  t.match(lower.stdout, new RegExp(`tax-summary ${TENANT_A}: [1-9]\\d* checked in \\d+ ms, all equal`), 'the tenant checked, not nothing');

  const nothing = await run('scripts/rollups.ts', ['--verify', '--kind', 'tax-summary', '--tenant', 'FNO900202CD2']);
  t.equal(nothing.code, 2, nothing.stdout);
  t.match(nothing.stderr, 'FNO900202CD2 has no documents and no kept totals here: nothing was checked');

  for (const args of [['--verify', '--tenant', 'NOPE'], ['--repair']]) {
    const r = await run('scripts/rollups.ts', args);
    t.equal(r.code, 2, `exit 2: ${args.join(' ')}`);
    t.match(r.stderr, 'usage: npm run rollups');
    t.notMatch(r.stderr, STACK);
  }
});

t.test('seed: an empty count or seed (an unset shell variable) is exit 2, never 0 documents or seed 0', async (t) => {
  for (const args of [
    ['--invoices', '', '--trips', '10', '--drop'],
    ['--trips', ' '],
    ['--seed', ''],
  ]) {
    const r = await run('scripts/seed.ts', args);
    t.equal(r.code, 2, `exit 2: ${JSON.stringify(args)}`);
    t.match(r.stderr, /must be an integer/);
    t.match(r.stderr, 'usage: npm run seed');
  }
});

t.test('npm start and npm run worker take their settings from the environment: --help prints the usage, any other argument is exit 2', async (t) => {
  for (const [script, command] of [
    ['scripts/start.ts', 'npm start'],
    ['scripts/worker.ts', 'npm run worker'],
  ] as const) {
    const help = await run(script, ['--help']);
    t.equal(help.code, 0, `${command} --help`);
    t.match(help.stdout, `usage: ${command}`);
    const port = await run(script, ['--port', '4000']);
    t.equal(port.code, 2, `${command} --port 4000: ${port.stderr}`);
    t.match(port.stderr, `${command} takes no arguments (got "--port" "4000"): its settings are environment variables, e.g. PORT=4000 ${command}`);
    t.notMatch(port.stderr, STACK);
  }
});
