/**
 * The spec drives MCP: every secured REST operation is a tool with the
 * operation's parameters as input schema, and each tool answers what the REST
 * operation answers for the same arguments, over both transports.
 */
import t, { type Test } from 'tap';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { connect, exampleArguments, listen, restCall, seedTwoTenants, type Transport } from './helpers/mcp.ts';
import { loadSpec } from '../handlers/app.ts';
import { loadMcpSpec } from '../lib/app/spec.ts';
import { listOperations, type OperationSchemas } from '../lib/spec/operations.ts';
import { MCP_OPERATION_IDS } from '../lib/mcp/operation-ids.ts';
import { buildToolTable } from '../lib/mcp/tools-from-spec.ts';
import { derefDocument } from '../lib/spec/deref.ts';

const spec = loadSpec();
const operations = listOperations(spec);
// Every secured operation but MCP's transports, those whose body is raw bytes (their JSON siblings are the tools)
// and `x-mcp-tool: false` ones (an operation answering a file, not JSON: the original XML).
const dataOperations = operations.filter(
  (op) => op.secured && !MCP_OPERATION_IDS.includes(op.operationId as never) && !(op.bodyRequired && !op.body) && op.extensions['x-mcp-tool'] !== false,
);

/** Header parameter names as the spec document spells them (read from the document itself, not from lib/spec). */
function spelledHeaderNames(op: OperationSchemas): Map<string, string> {
  // Inlined once per document (derefDocument): a walk of the whole document for each of ~600 checks was ~20 CPU-s of this file.
  const doc = derefDocument(spec) as {
    paths: Record<string, Record<string, { parameters?: { in: string; name: string }[] } | { in: string; name: string }[]>>;
  };
  const item = doc.paths[op.path]!;
  const params = [
    ...((item.parameters as { in: string; name: string }[] | undefined) ?? []),
    ...((item[op.method.toLowerCase()] as { parameters?: { in: string; name: string }[] }).parameters ?? []),
  ];
  return new Map(params.filter((p) => p.in === 'header').map((p) => [p.name.toLowerCase(), p.name]));
}

/**
 * What a tool's input schema must offer, derived here from the operation independently of lib/mcp:
 * its parameters (spec spelling; a deprecated one, x-api-version, is not offered) and body, with
 * their required set and their spec types (nullable as JSON Schema's type list).
 */
function expectedArguments(op: OperationSchemas) {
  const types: Record<string, unknown> = {};
  const required: string[] = [];
  const spelled = spelledHeaderNames(op);
  const jsonType = (schema: Record<string, unknown>) => (schema.nullable === true && typeof schema.type === 'string' ? [schema.type, 'null'] : schema.type);
  for (const part of [op.params, op.querystring, op.headers]) {
    if (!part) continue;
    const rename = (name: string) => (part === op.headers ? (spelled.get(name) ?? name) : name);
    for (const [name, schema] of Object.entries(part.properties as Record<string, Record<string, unknown>>)) {
      if (op.deprecatedParameters.includes(name) || name === 'x-api-key') continue;
      types[rename(name)] = jsonType(schema);
    }
    required.push(...((part.required as string[] | undefined) ?? []).map(rename));
  }
  if (op.body) {
    types.body = jsonType(op.body);
    if (op.bodyRequired) required.push('body');
  }
  return { types, required };
}

function checkInputSchema(
  t: Test,
  name: string,
  schema: { type?: unknown; properties?: unknown; required?: unknown; additionalProperties?: unknown },
  op: OperationSchemas,
) {
  const { types, required } = expectedArguments(op);
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown }>;
  t.equal(schema.type, 'object', `${name}: input is an object`);
  t.equal(schema.additionalProperties, false, `${name}: unknown arguments refused`);
  t.same(Object.keys(properties).sort(), Object.keys(types).sort(), `${name}: one argument per parameter, body under \`body\``);
  t.same(((schema.required as string[] | undefined) ?? []).slice().sort(), required.slice().sort(), `${name}: required arguments`);
  for (const [arg, type] of Object.entries(types)) t.same(properties[arg]?.type, type, `${name}.${arg}: the spec's type`);
}

t.test('spec: the MCP transport operations are self-routed, in their own document, and never tools', async (t) => {
  const transports = listOperations(loadMcpSpec());
  const selfRouted = transports.filter((op) => op.extensions['x-no-fastify-config'] === true).map((op) => op.operationId);
  t.same(selfRouted.sort(), [...MCP_OPERATION_IDS].sort(), 'x-no-fastify-config operations are exactly the MCP ones');
  t.same(
    operations.filter((op) => op.extensions['x-no-fastify-config'] === true || op.tags.includes('mcp')).map((op) => op.operationId),
    [],
    'the REST document has none',
  );
  for (const op of transports) {
    t.same(op.tags, ['mcp'], `${op.operationId} is tagged mcp`);
    t.ok(op.secured, `${op.operationId} needs the API key`);
  }
  t.ok(dataOperations.length >= 2, `${dataOperations.length} data operations`);
});

t.test('spec: every data operation has a tool with its parameters as input schema', async (t) => {
  const tools = new Map(buildToolTable(spec).map((tool) => [tool.name, tool]));
  for (const op of dataOperations) {
    const tool = tools.get(op.operationId);
    if (!tool) {
      t.fail(`operation ${op.operationId} (${op.method} ${op.path}) has no MCP tool`);
      continue;
    }
    checkInputSchema(t, op.operationId, tool.inputSchema, op);
    const authored = op.extensions['x-mcp-description'];
    t.type(authored, 'string', `${op.operationId}: the spec authors its catalogue paragraph (x-mcp-description)`);
    t.ok(tool.description.startsWith(authored as string), `${op.operationId}: description is its x-mcp-description`);
  }
  t.same([...tools.keys()].sort(), dataOperations.map((op) => op.operationId).sort(), 'no tool without an operation');
});

// Every data operation as a tool and as REST, over two transports (the exports toolset alone adds 18): beyond tap's 120 s on a loaded runner.
t.setTimeout(360_000);
// Each export tool and its REST operation queue an export per call, both sides, for two transports: beyond the default cap.
const h = await startHarness(t, { env: { EXPORT_MAX_ACTIVE: '1000' }, build: { now: () => new Date('2026-04-01T18:00:00Z') } });
await seedTwoTenants(h.db);
const base = await listen(h.app);

t.test('routes: the MCP operations of the spec are served', async (t) => {
  for (const op of operations.filter((o) => MCP_OPERATION_IDS.includes(o.operationId as never))) {
    t.ok(h.app.hasRoute({ method: op.method, url: op.route }), `${op.method} ${op.route} is routed`);
  }
});

for (const kind of ['streamable', 'sse'] as Transport[]) {
  t.test(`${kind}: tools/list matches the spec`, async (t) => {
    const client = await connect(t, base, kind, { 'x-api-key': KEY_A }, '?toolsets=all');
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    for (const op of dataOperations) {
      const tool = byName.get(op.operationId);
      if (!tool) {
        t.fail(`operation ${op.operationId} has no tool over ${kind}`);
        continue;
      }
      checkInputSchema(t, `${op.operationId} over ${kind}`, tool.inputSchema, op);
      t.equal(tool.outputSchema?.type, 'object', `${op.operationId}: has an object outputSchema`);
      t.equal(tool.annotations?.readOnlyHint === true, op.method === 'GET', `${op.operationId}: readOnlyHint`);
    }
    t.equal(tools.length, dataOperations.length, 'one tool per data operation, no more');
  });

  t.test(`${kind}: each tool answers what its REST operation answers`, async (t) => {
    const client = await connect(t, base, kind, { 'x-api-key': KEY_A }, '?toolsets=all');
    for (const op of dataOperations) {
      const example = exampleArguments(spec, op);
      if (!example) {
        t.fail(`${op.operationId}: the spec gives no example for its required parameters/body; add one`);
        continue;
      }
      const variants: Record<string, unknown>[] = [example];
      const props = Object.keys(expectedArguments(op).types);
      if (props.includes('limit')) variants.push({ ...example, limit: 1 });
      if (props.includes('detail')) variants.push({ ...example, detail: 'full' });
      if (props.includes('limit')) variants.push({ ...example, limit: 500 }); // a validation error
      for (const args of variants) {
        const rest = await restCall(h.app, op, args, KEY_A);
        const result = await client.callTool({ name: op.operationId, arguments: args });
        const label = `${op.operationId} ${JSON.stringify(args)}`;
        t.equal(result.isError === true, rest.statusCode >= 400, `${label}: tool error iff REST ${rest.statusCode}`);
        if (rest.json === undefined) continue;
        const expected = Array.isArray(rest.json) ? { result: rest.json } : rest.json;
        if (op.method === 'GET' || rest.statusCode >= 400) {
          t.same(result.structuredContent, expected, `${label}: structuredContent = REST JSON`);
        } else {
          // A write answers per request (ids, timestamps): same status class and shape.
          t.same(Object.keys(result.structuredContent ?? {}).sort(), Object.keys(expected as object).sort(), `${label}: same shape as REST`);
        }
        // The JSON is the last text; notes (third-party text, truncation) come before it.
        const text = (result.content as { type: string; text?: string }[]).at(-1);
        t.equal(text?.type, 'text', `${label}: has a text rendering`);
        const rendered: unknown = JSON.parse(text?.text ?? 'null');
        if (op.method === 'GET' || rest.statusCode >= 400) t.same(rendered, rest.json, `${label}: text is the REST JSON`);
      }
    }
  });
}

t.test("list tools on the demo data return the tenant's documents", async (t) => {
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const docs = await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 10 } });
  const data = docs.structuredContent as { meta: { total: number; tenant: string }; data: { company: string }[] };
  t.equal(data.meta.tenant, TENANT_A);
  t.equal(data.meta.total, 2);
  t.ok(data.data.every((d) => d.company === TENANT_A));
  const ships = await client.callTool({ name: 'listShipments', arguments: {} });
  t.equal((ships.structuredContent as { meta: { total: number } }).meta.total, 2);
});
