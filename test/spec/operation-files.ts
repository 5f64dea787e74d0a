/**
 * House rule: an operation's code is found from its operationId. Every REST
 * operation of the spec has exactly one service file `lib/<area>/<kebab-id>.ts`
 * exporting a function named after the operationId, and a handler imports it.
 * The MCP transport operations are routes lib/mcp registers itself (no service
 * behind them); they are checked against lib/mcp/operation-ids.ts instead.
 */
import type { Test } from 'tap';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { loadSpec } from '../../handlers/app.ts';
import { loadMcpSpec } from '../../lib/app/spec.ts';
import { listOperations } from '../../lib/spec/operations.ts';
import { MCP_OPERATION_IDS } from '../../lib/mcp/operation-ids.ts';

export default async function operationFilesTests(t: Test): Promise<void> {
const root = fileURLToPath(new URL('../..', import.meta.url));
const kebab = (id: string): string => id.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const areas = readdirSync(join(root, 'lib'), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const handlerSources = readdirSync(join(root, 'handlers'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(join(root, 'handlers', f), 'utf8'))
  .join('\n');

const operations = listOperations(loadSpec());
/** Spec tags whose lib/ area has another name (docs/architecture.md, "Folders and tags"); every other tag is its area's name. */
const AREA_OF_TAG: Readonly<Record<string, string>> = { financial: 'finance', shipments: 'trips' };
const mcpIds: readonly string[] = MCP_OPERATION_IDS;

t.test('kebab case of an operationId', async (t) => {
  t.equal(kebab('getCashInflowForecast'), 'get-cash-inflow-forecast');
  t.equal(kebab('listAlertJobs'), 'list-alert-jobs');
});

t.test('the MCP transport operations are exactly the ones lib/mcp lists, in their own document (not the REST one)', async (t) => {
  t.same(
    operations.filter((op) => mcpIds.includes(op.operationId) || op.extensions['x-no-fastify-config'] === true).map((op) => op.operationId),
    [],
    'none in the REST document',
  );
  t.same(
    listOperations(loadMcpSpec())
      .filter((op) => op.extensions['x-no-fastify-config'] === true)
      .map((op) => op.operationId)
      .sort(),
    [...mcpIds].sort(),
  );
});

for (const op of operations.filter((o) => !mcpIds.includes(o.operationId))) {
  t.test(`${op.operationId} → lib/<area>/${kebab(op.operationId)}.ts`, async (t) => {
    const files = areas.map((area) => join('lib', area, `${kebab(op.operationId)}.ts`)).filter((f) => existsSync(join(root, f)));
    t.equal(files.length, 1, `exactly one service file for ${op.operationId}: ${files.join(', ') || 'none'}`);
    const file = files[0];
    if (!file) return;
    const mod = (await import(pathToFileURL(join(root, file)).href)) as Record<string, unknown>;
    t.type(mod[op.operationId], 'function', `${file} exports ${op.operationId}()`);
    const tag = op.tags[0] ?? '';
    t.equal(file.split('/')[1], AREA_OF_TAG[tag] ?? tag, `${file} is in the area of its tag (${tag})`);
    t.ok(handlerSources.includes(`'../${file}'`), `a handler imports ${file}`);
  });
}
}
