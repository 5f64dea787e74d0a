/**
 * The MCP catalogue an agent pays for (issue 22): its size, an outputSchema
 * on every tool that the results conform to (the SDK client validates them),
 * each parameter described by its own words, the reference resources the
 * descriptions name, the prompts, and the 401 challenge of the MCP endpoints.
 */
import t from 'tap';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, KEY_A } from './helpers/harness.ts';
import { connect, exampleArguments, listen } from './helpers/mcp.ts';
import { loadDemoData } from '../scripts/demo/load.ts';
import { loadSpec } from '../handlers/app.ts';
import { listOperations } from '../lib/spec/operations.ts';
import { deref, derefDocument, type Json } from '../lib/spec/deref.ts';

// 30 KB until the four received-CFDI tools (issue 35): the catalogue stood at 30,266 bytes, and their list, get and category rules add 3.7 KB.
const CATALOGUE_LIMIT_BYTES = 30 * 1024;
const spec = loadSpec();
const operations = new Map(listOperations(spec).map((op) => [op.operationId, op]));

type Obj = { [key: string]: Json };
const isObject = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const words = (text: string) =>
  text
    .replace(/[().,;:]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);
/** `brief` is `full` shortened: its words appear in `full` in the same order. */
const isShortenedFrom = (brief: string, full: string): boolean => {
  const have = words(full);
  let i = 0;
  for (const w of words(brief)) {
    while (i < have.length && have[i] !== w) i++;
    if (i++ >= have.length) return false;
  }
  return true;
};

/** Each parameter of an operation as the spec document writes it: its own description and its schema's (read from the raw document, not lib/spec). */
function specParameters(operationId: string): Map<string, { own: string; schemaDescription: string | undefined }> {
  const op = operations.get(operationId)!;
  // Inlined once per document (derefDocument), not for each operation.
  const doc = derefDocument(spec) as { paths: Record<string, Obj> };
  const item = doc.paths[op.path]!;
  const operation = item[op.method.toLowerCase()] as Obj;
  const params = [...((item.parameters as Json[] | undefined) ?? []), ...((operation.parameters as Json[] | undefined) ?? [])].filter(isObject);
  return new Map(
    params.map((p) => [
      p.name as string,
      {
        own: (p.description as string | undefined) ?? '',
        schemaDescription: isObject(p.schema) && typeof p.schema.description === 'string' ? p.schema.description : undefined,
      },
    ]),
  );
}

const h = await startHarness(t, { build: { now: () => new Date('2026-04-01T18:00:00Z') } });
await loadDemoData(h.db, { invoices: 60, trips: 20 });
const base = await listen(h.app);

t.test('tools/list: size, outputSchema on every tool, descriptions', async (t) => {
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const { tools } = await client.listTools();
  const bytes = Buffer.byteLength(JSON.stringify({ tools }));
  const withOutput = tools.filter((tool) => tool.outputSchema?.type === 'object').length;
  t.comment(`tools/list: ${tools.length} tools, ${bytes} bytes (${(bytes / 1024).toFixed(1)} KB); ${withOutput} with an outputSchema`);
  console.log(`tools/list: ${tools.length} tools, ${bytes} bytes (${(bytes / 1024).toFixed(1)} KB); ${withOutput} with an outputSchema`);
  t.ok(bytes <= CATALOGUE_LIMIT_BYTES, `tools/list of the default toolsets is at most 30 KB (${bytes} bytes)`);
  const everyTool = (await (await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all')).listTools()).tools;
  t.equal(withOutput, tools.length, 'every tool has an object outputSchema');
  t.equal(everyTool.filter((tool) => tool.outputSchema?.type === 'object').length, everyTool.length, 'in every toolset');
  for (const tool of everyTool) {
    const op = operations.get(tool.name)!;
    t.ok((tool.description ?? '').length <= 400, `${tool.name}: one short paragraph (${tool.description?.length} characters)`);
    t.notOk((tool.description ?? '').includes('\n'), `${tool.name}: one paragraph`);
    const named = /freight:\/\/docs\/tools\/[A-Za-z]+\.md/.exec(tool.description ?? '')?.[0];
    if (op.description.length > 400) t.ok(named, `${tool.name}: names its reference resource (its spec description is ${op.description.length} characters)`);
    const params = specParameters(tool.name);
    for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {}) as [string, { description?: string }][]) {
      if (name === 'body') continue;
      const spelled = [...params.keys()].find((p) => p.toLowerCase() === name.toLowerCase())!;
      const param = params.get(spelled)!;
      t.equal(schema.description, param.own.replace(/\s+/g, ' ').trim(), `${tool.name}.${name}: its own description, whole`);
      if (param.schemaDescription && param.schemaDescription.trim() !== param.own.trim()) {
        t.notOk(
          isShortenedFrom(schema.description ?? '', param.schemaDescription) && !isShortenedFrom(schema.description ?? '', param.own),
          `${tool.name}.${name}: not the referenced schema's description`,
        );
      }
    }
  }
});

/**
 * The writes that only add (MCP: destructiveHint false), by what each does (docs/mcp.md): every other write replaces
 * or invalidates what is stored (a DELETE, a PUT, an import that replaces an earlier version, a bulk assignment, a
 * webhook secret's rotation).
 */
const ADDITIVE = new Set([
  'scheduleAlerts',
  'createWebhook',
  'sendWebhookTest',
  'createCfdiOriginalLink',
  'createCfdiPrintedFormLink',
  'exportFinancialDocs',
  'exportShipments',
  'exportReceivedDocs',
  'exportTaxPositionLines',
  'exportAlertJobs',
  'exportAlerts',
  'exportTaxSummary',
  'exportTaxPosition',
  'exportDiot',
  'exportReceivablesAging',
  'exportCashInflowForecast',
  'exportDiscountsAndShrinkage',
  'exportFleetUtilization',
  'exportDispatchToBill',
  'exportUnitEconomics',
  'exportOriginals',
]);

t.test('titles, annotations and a fixed order', async (t) => {
  const doc = deref(spec) as { paths: Record<string, Obj> };
  const list = async (query: string) => (await (await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, query)).listTools()).tools;
  const everyTool = await list('?toolsets=all');
  t.same(await list('?toolsets=all'), everyTool, 'two sessions list the same catalogue, in the same order');
  for (const tool of everyTool) {
    const op = operations.get(tool.name)!;
    const raw = doc.paths[op.path]![op.method.toLowerCase()] as Obj;
    const title = typeof raw['x-mcp-title'] === 'string' ? raw['x-mcp-title'] : raw.summary;
    t.equal(tool.title, title, `${tool.name}: titled by the spec ("${tool.title}")`);
    t.equal(tool.annotations?.title, title, `${tool.name}: the same title in annotations`);
    const get = op.method === 'GET';
    t.equal(tool.annotations?.readOnlyHint === true, get, `${tool.name}: readOnlyHint`);
    if (!get) {
      t.equal(tool.annotations?.destructiveHint, !ADDITIVE.has(tool.name), `${tool.name}: destructiveHint`);
      t.equal(tool.annotations?.idempotentHint, op.method === 'PUT' || op.method === 'DELETE', `${tool.name}: idempotentHint`);
    }
    t.type(tool.annotations?.openWorldHint, 'boolean', `${tool.name}: openWorldHint stated (MCP's default is true)`);
  }
  const hint = (name: string) => everyTool.find((tool) => tool.name === name)?.annotations?.openWorldHint;
  // Results quoting imported CFDI text (supplier names, concept descriptions), and a tool that sends out a request.
  for (const name of [
    'listReceivedDocs',
    'getReceivedDoc',
    'getFinancialDoc',
    'listShipments',
    'importDocuments',
    'sendWebhookTest',
    // Suppliers' names as their CFDI state them.
    'getTaxPosition',
    'listTaxPositionLines',
    'getDiot',
  ])
    t.equal(hint(name), true, `${name}: open world`);
  for (const name of ['getReceivedCategoryRules', 'listAlertJobs', 'cancelAlertJob', 'listWebhooks']) t.equal(hint(name), false, `${name}: closed world`);
  const toolsetOf = (name: string) => {
    const op = operations.get(name)!;
    const declared = op.extensions['x-mcp-toolset'];
    return typeof declared === 'string' ? declared : (op.tags[0] ?? '');
  };
  const toolsets = everyTool.map((tool) => toolsetOf(tool.name));
  const blocks = toolsets.filter((set, i) => i === 0 || set !== toolsets[i - 1]);
  t.equal(blocks.length, new Set(toolsets).size, `tools grouped by toolset (${blocks.join(', ')})`);
  const tax = everyTool.find((tool) => tool.name === 'getTaxSummary')!;
  t.match(
    (tax.inputSchema.properties as Record<string, { description?: string }>).basis?.description,
    /`payment`: cash basis, as VAT and retention are due/,
    "an argument's description keeps its later sentences",
  );
});

t.test('the domain notes say each status code once', async (t) => {
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const text = ((await client.readResource({ uri: 'freight://docs/domain-notes.md' })).contents[0] as { text: string }).text;
  const unauthorized = 'The `x-api-key` header is missing, or the key is unknown or revoked.';
  t.equal(text.split(unauthorized).length - 1, 1, 'the 401 paragraph appears once');
  t.match(
    text,
    /### getTaxSummary: [^\n]*\n[^\n]*\n- Arguments: [^\n]*\n(- Status codes:\n( {2}- .*\n)*)?- (Also|Status codes): .*401/,
    'a tool names the shared codes it answers',
  );
  t.ok(Buffer.byteLength(text) < 40_000, `notes of ${Buffer.byteLength(text)} bytes`);
});

t.test('every tool answers structuredContent its outputSchema admits (the SDK client validates), errors included', async (t) => {
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A }, '?toolsets=all');
  await client.listTools(); // the client validates results of the tools it has listed
  for (const op of operations.values()) {
    if (!op.secured || op.tags.includes('mcp') || op.extensions['x-mcp-tool'] === false || (op.bodyRequired && !op.body)) continue; // raw-body operations and files are no tools
    const args = exampleArguments(spec, op);
    if (!args) {
      t.fail(`${op.operationId}: the spec gives no example arguments`);
      continue;
    }
    const result = await client.callTool({ name: op.operationId, arguments: args });
    t.type(result.structuredContent, 'object', `${op.operationId}: structuredContent validated against its outputSchema (isError ${result.isError === true})`);
  }
  const failed = await client.callTool({ name: 'listFinancialDocs', arguments: { limit: 500 } });
  t.equal(failed.isError, true, 'a bad argument is a tool error');
  t.match(failed.structuredContent, { error: { code: 400, reason: 'invalid_parameter' } }, 'whose structuredContent (the error body) the outputSchema admits');
});

t.test('the reference resources the descriptions name are served', async (t) => {
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const { resources } = await client.listResources();
  const read = await client.readResource({ uri: 'freight://docs/tools/getTaxSummary.md' });
  const text = (read.contents[0] as { text: string }).text;
  t.ok(
    resources.some((r) => r.uri === 'freight://docs/tools/importDocuments.md'),
    'one per tool',
  );
  t.ok(text.includes(operations.get('getTaxSummary')!.description.trim()), 'the full description of the operation');
  t.match(text, /`targetMonth` \(query\): /, 'every argument with its whole description');
});

t.test('prompts: listed, filled in, bad arguments refused', async (t) => {
  const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
  const { prompts } = await client.listPrompts();
  t.same(prompts.map((p) => p.name).sort(), ['collections-follow-up', 'month-end-tax-review', 'shrinkage-claim']);
  t.match(prompts.find((p) => p.name === 'month-end-tax-review')?.arguments, [{ name: 'month', required: true }]);
  const tax = await client.getPrompt({ name: 'month-end-tax-review', arguments: { month: '2026-02' } });
  const text = (tax.messages[0]!.content as { text: string }).text;
  t.match(text, /getTaxSummary with \{"targetMonth": "2026-02"\}/, 'names the tool and its arguments');
  t.match(text, /"startDate": "2026-02-01", "endDate": "2026-02-28"/, 'the month as days');
  t.match(text, /getTaxPosition with \{"month": "2026-02"\}/, "and the month's tax position");
  const claim = await client.getPrompt({ name: 'shrinkage-claim', arguments: { client: 'PEM990101AB1', startDate: '2026-01-01' } });
  t.match((claim.messages[0]!.content as { text: string }).text, /auditDiscountsAndShrinkage with \{"client":"PEM990101AB1","startDate":"2026-01-01"\}/);
  const follow = await client.getPrompt({ name: 'collections-follow-up' });
  t.match((follow.messages[0]!.content as { text: string }).text, /listFinancialDocs .*"paymentStatus": "unpaid"/);
  const bad = await client.getPrompt({ name: 'month-end-tax-review', arguments: { month: '2026-13' } }).then(
    () => null,
    (err: unknown) => err,
  );
  t.ok(bad instanceof McpError, 'a bad month is an MCP error');
  t.match(bad, { code: -32602, message: /argument 'month' is '2026-13', expected a calendar month as YYYY-MM/ }, 'InvalidParams saying what is expected');
  await t.rejects(client.getPrompt({ name: 'month-end-tax-review', arguments: {} }), /argument 'month' is required/);
  await t.rejects(client.getPrompt({ name: 'shrinkage-claim', arguments: { client: 'nope' } }), /argument 'client' is 'nope', expected an RFC/);
  await t.rejects(
    client.getPrompt({ name: 'shrinkage-claim', arguments: { client: 'PEM990101AB1', startDate: '2026-02-30' } }),
    /argument 'startDate' is '2026-02-30', expected a day of the calendar as YYYY-MM-DD/,
    'a day that does not exist is refused, not handed to the tools',
  );
  await t.rejects(client.getPrompt({ name: 'no-such-prompt' }), /Unknown prompt/);
});

t.test('401 on the MCP endpoints carries WWW-Authenticate', async (t) => {
  const init = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  });
  const cases: [string, RequestInit, RegExp][] = [
    [
      '/mcp',
      { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: init },
      /^Bearer realm="freight"/,
    ],
    [
      '/mcp',
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: 'Bearer wrong_key_000000000000000' },
        body: init,
      },
      /error="invalid_token"/,
    ],
    ['/mcp', { method: 'DELETE', headers: { 'x-api-key': 'wrong_key_000000000000000' } }, /error="invalid_token"/],
    ['/sse', { method: 'GET', headers: { accept: 'text/event-stream' } }, /^Bearer realm="freight"/],
    ['/messages?sessionId=x', { method: 'POST', headers: { 'content-type': 'application/json' }, body: init }, /^Bearer realm="freight"/],
  ];
  for (const [path, init, challenge] of cases) {
    const res = await fetch(`${base}${path}`, init);
    t.equal(res.status, 401, `${init.method} ${path}: 401`);
    t.match(res.headers.get('www-authenticate') ?? '', challenge, `${init.method} ${path}: ${res.headers.get('www-authenticate')}`);
    await res.arrayBuffer();
  }
  const rest = await fetch(`${base}/api/financial-docs`);
  t.equal(rest.status, 401);
  await rest.arrayBuffer();
});
