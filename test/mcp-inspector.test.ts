/**
 * The README's MCP Inspector command lines work as written on the Node the
 * project requires (issue 10, item 7): each `npx @modelcontextprotocol/inspector…
 * --cli` line of the README runs in a shell against a live service on the demo
 * data, with only the address changed, and answers the expected JSON.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startHarness } from './helpers/harness.ts';
import { listen } from './helpers/mcp.ts';
import { loadDemoData } from '../scripts/demo/load.ts';
import { runInGroup } from './helpers/processes.ts';

t.setTimeout(180_000);
const root = new URL('..', import.meta.url);

const readme = readFileSync(new URL('README.md', root), 'utf8');
const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((m) => m[1]!.replace(/\\\n\s*/g, '').split('\n'))
  .filter((line) => line.includes('@modelcontextprotocol/inspector') && line.includes('--cli'));

const h = await startHarness(t);
// The rollups' rebuild skipped (kept totals recorded as not built): the calls here list tools and documents, no report.
await loadDemoData(h.db, { invoices: 300, trips: 60, rollups: 'worker' });
const base = await listen(h.app);

t.test('the README documents the command lines', async (t) => {
  t.equal(commands.length, 2, 'tools/list and tools/call');
  for (const c of commands) t.match(c, /^npx @modelcontextprotocol\/inspector@\d+\.\d+\.\d+ --cli http:\/\/localhost:3000\/mcp /, 'a pinned version');
});

// In a process group of its own (runInGroup): a timeout kills npx and the Inspector under the shell, not the shell alone.
const inspector = async (command: string) => {
  const { stdout } = await runInGroup('bash', ['-c', command.replace('http://localhost:3000', base)], {
    cwd: root,
    timeout: 90_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
};

t.test('tools/list', async (t) => {
  const out = (await inspector(commands.find((c) => c.includes('tools/list'))!)) as { tools: { name: string }[] };
  const names = out.tools.map((x) => x.name);
  t.ok(names.includes('listFinancialDocs') && names.includes('getTaxSummary'), `${names.length} tools listed`);
});

t.test('tools/call', async (t) => {
  const out = (await inspector(commands.find((c) => c.includes('tools/call'))!)) as { isError?: boolean; content: { type: string; text: string }[] };
  t.notOk(out.isError, 'not a tool error');
  const page = JSON.parse(out.content.at(-1)!.text) as { meta: { limit: number; total: number }; data: { paymentStatus?: string }[] };
  t.equal(page.meta.limit, 2);
  t.ok(page.meta.total > 0, `${page.meta.total} partially paid invoices in the demo data`);
  t.equal(page.data.length, 2);
});
