/**
 * The official MCP Python SDK (`mcp`, installed in .venv by scripts/setup-venv.mjs) against
 * the service as `npm start` runs it (issue 22): initialize, list the tools, call three with
 * their structured results validated against outputSchema by the SDK's ClientSession, and
 * close the session cleanly: more sessions are opened and closed one after another than the
 * per-key cap allows at once, so each close must have ended its session on the server.
 */
import t from 'tap';
import { loadSpec } from '../handlers/app.ts';
import { listOperations } from '../lib/spec/operations.ts';
import path from 'node:path';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { startService, ROOT } from './helpers/service.ts';
import { runInGroup } from './helpers/processes.ts';

t.setTimeout(420_000);
// Its children in process groups of their own (runInGroup): a timeout or the file's end leaves no Python client running.
const run = runInGroup;
const SESSIONS_PER_KEY = 2;
const SESSIONS_OPENED = 5;

// The SDK in .venv, installed by `npm test`'s set-up (scripts/setup-test.mjs), never here: checked only.
await run(process.execPath, [path.join(ROOT, 'scripts', 'setup-venv.mjs'), '--check'], { cwd: ROOT, timeout: 60_000 }).catch(
  (err: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(
      `the MCP Python SDK is not installed: run \`node scripts/setup-venv.mjs\` (needs Python 3.10+ with venv, apt-get install -y python3-venv, and PyPI)\n${err.stdout ?? ''}${err.stderr ?? ''}`,
    );
  },
);
const python = path.join(ROOT, '.venv', process.platform === 'win32' ? 'Scripts/python.exe' : 'bin/python');

const engine = await startEmbeddedMongo({ shortLived: true });
t.teardown(() => engine.stop());
{
  const { client, db } = await connectMongo(engine.uri, 'mcp_python');
  await ensureIndexes(db);
  await loadDemoData(db, { invoices: 80, trips: 30 });
  await client.close();
}
const service = await startService({
  mongodbUri: engine.uri,
  mongodbDb: 'mcp_python',
  env: { MCP_MAX_SESSIONS_PER_KEY: String(SESSIONS_PER_KEY), LOG_LEVEL: 'info' },
});
t.teardown(() => service.stop());

t.test('the MCP Python SDK lists, calls three tools with validated results, and closes its sessions', async (t) => {
  const script = path.join(ROOT, 'test', 'contract', 'mcp_python_client.py');
  const { stdout } = await run(python, [script, service.base, DEMO_TENANTS[0]!.apiKey, String(SESSIONS_OPENED)], { cwd: ROOT, timeout: 120_000 }).catch(
    (err: Error & { stdout?: string; stderr?: string }) => {
      throw new Error(`the Python client failed:\n${err.stderr ?? ''}\n${err.stdout ?? ''}\n--- service output ---\n${service.output().slice(-4000)}`);
    },
  );
  const report = JSON.parse(stdout.trim().split('\n').pop()!) as {
    tools: number;
    withOutputSchema: number;
    calls: Record<string, { isError: boolean; keys: string[] }>;
    prompts: string[];
    closedSessions: number;
  };
  t.comment(JSON.stringify(report));
  // The default toolsets: every data operation of the spec but the webhooks, settings, filing, originals and exports ones (docs/mcp.md, "Toolsets").
  const byDefault = listOperations(loadSpec()).filter(
    (op) =>
      op.secured &&
      !op.tags.includes('mcp') &&
      !op.tags.includes('webhooks') &&
      !op.tags.includes('originals') &&
      !op.tags.includes('exports') &&
      !['settings', 'filing'].includes(op.extensions['x-mcp-toolset'] as string) &&
      !(op.bodyRequired && !op.body), // raw bodies (XML, zip, CSV): their JSON siblings are the tools
  ).length;
  t.equal(report.tools, byDefault, `${report.tools} tools listed: the default toolsets`);
  t.equal(report.withOutputSchema, report.tools, 'every tool has an outputSchema');
  t.match(
    report.calls,
    {
      listFinancialDocs: { isError: false, keys: ['data', 'detail', 'meta'] },
      getTaxSummary: { isError: false, keys: Array },
      listShipments: { isError: false, keys: ['data', 'detail', 'meta'] },
    },
    'three tools answered structured results the SDK validated',
  );
  t.ok(report.calls.getTaxSummary!.keys.includes('totals'), 'the tax summary carries its totals');
  t.same(report.prompts, ['collections-follow-up', 'month-end-tax-review', 'shrinkage-claim'], 'the prompts');
  t.equal(
    report.closedSessions,
    SESSIONS_OPENED,
    `${SESSIONS_OPENED} sessions opened and closed one after another under a cap of ${SESSIONS_PER_KEY} per key: each close (DELETE /mcp) ended its session`,
  );
  const deletes = service
    .output()
    .split('\n')
    .filter((line) => line.includes('request completed') && /"method":"DELETE","url":"\/mcp"/.test(line));

  t.equal(deletes.filter((line) => /"statusCode":2\d\d/.test(line)).length, SESSIONS_OPENED, 'the service saw each DELETE /mcp and answered 2xx');
});
