/**
 * MCP tools generated from the OpenAPI operations: the same operation table
 * that drives REST (fastify-openapi-glue) drives MCP. Nothing here knows any
 * particular operation.
 *
 * Tool input schema: one object whose top-level properties are the
 * operation's path, query and header parameters (a deprecated one excepted),
 * under their spec names as the spec spells them (`Idempotency-Key`) and with
 * their spec schemas as tool-schema.ts compacts them for the catalogue; the
 * JSON request body, if the operation has one, goes under `body` (required
 * when the body is). The output schema is the success JSON's shape, by the
 * same converter. Unknown properties are refused (`additionalProperties:
 * false`), and a call with one is a tool error naming it, as REST refuses
 * unknown query parameters; header parameters are matched without regard to
 * case, as HTTP matches headers.
 *
 * Execution: the tool call is dispatched as the REST request itself
 * (`app.inject`) with the caller's API key, so authentication, the generated
 * validators, the handler, the domain functions and the error mapping are the
 * very ones REST uses, and the result is the exact REST JSON.
 */
import type { FastifyInstance } from 'fastify';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { listOperations, type JsonSchema, type OperationSchemas } from '../spec/operations.ts';
import type { Json } from '../spec/deref.ts';
import { validators } from '../../generated/validators.js';
import { validationProblems } from '../http/validation-details.ts';
import { errorBody } from '../http/api-error.ts';
import { internalDispatchHeaders, validateOnlyHeaders } from '../http/internal-dispatch.ts';
import { shapeWithin, toolSchema } from './tool-schema.ts';
import { firstSentence } from './brief-text.ts';
import { toolsetNames, toolsetOf } from './toolsets.ts';
import { stripHiddenDeep, thirdPartyFields, thirdPartyNote } from './untrusted-text.ts';
import { renderJson } from './render-json.ts';

/** Where an argument goes in the REST request. */
export type ArgumentLocation = 'path' | 'query' | 'header' | 'body';

export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema: JsonSchema & { type: 'object' };
  annotations: NonNullable<Tool['annotations']>;
  operation: OperationSchemas;
  locations: Map<string, ArgumentLocation>;
}

/** Header parameters an agent must not set through arguments (credentials travel with the MCP request). */
const RESERVED_HEADERS = new Set(['x-api-key', 'authorization', 'content-type', 'content-length', 'host']);

/**
 * The REST data operations that become tools: every secured operation whose
 * route glue registers (MCP's own transport operations are
 * `x-no-fastify-config` and excluded), except those whose body is raw bytes (XML, zip, CSV):
 * arguments are JSON, so their JSON sibling is the tool; and those marked `x-mcp-tool: false`
 * (an answer that is a file, not JSON: its tool would hand an agent raw bytes).
 */
export const isToolOperation = (op: OperationSchemas): boolean =>
  op.secured && op.extensions['x-no-fastify-config'] !== true && !(op.bodyRequired && !op.body) && op.extensions['x-mcp-tool'] !== false;

/** Tool input schema of an operation (see the module comment). */
export function toolInputSchema(op: OperationSchemas): { schema: ToolDefinition['inputSchema']; locations: Map<string, ArgumentLocation> } {
  const properties: { [key: string]: Json } = {};
  const required: string[] = [];
  const locations = new Map<string, ArgumentLocation>();
  const parts: [JsonSchema | undefined, ArgumentLocation][] = [
    [op.params, 'path'],
    [op.querystring, 'query'],
    [op.headers, 'header'],
  ];
  for (const [part, location] of parts) {
    if (!part) continue;
    const props = (part.properties ?? {}) as { [key: string]: Json };
    const req = Array.isArray(part.required) ? part.required.map(String) : [];
    for (const [key, schema] of Object.entries(props)) {
      if (location === 'header' && RESERVED_HEADERS.has(key)) continue;
      // A deprecated parameter (x-api-version) is not offered: a tool answers the current shape only.
      if (op.deprecatedParameters.includes(key)) continue;
      // The spec's spelling (headers are lower-cased in the request schemas Fastify validates).
      const name = location === 'header' ? (op.headerNames[key] ?? key) : key;
      if (locations.has(name))
        throw new Error(`${op.operationId}: parameter "${name}" is declared in ${locations.get(name)} and ${location}; tool arguments need unique names`);
      properties[name] = toolSchema(schema, 1);
      locations.set(name, location);
      if (req.includes(key)) required.push(name);
    }
  }
  if (op.body) {
    if (locations.has('body')) throw new Error(`${op.operationId}: a parameter named "body" collides with the request body argument`);
    properties.body = toolSchema(op.body, 2);
    locations.set('body', 'body');
    if (op.bodyRequired) required.push('body');
  }
  const schema: ToolDefinition['inputSchema'] = { type: 'object', properties, additionalProperties: false };
  if (required.length) schema.required = required;
  return { schema, locations };
}

/** The success answers that carry the JSON a tool returns, in the order looked for. */
const SUCCESS_STATUSES = ['200', '201', '202'];

/** Bytes of each tool's result shape in the catalogue: the deepest cut of the response schema that fits (see shapeWithin). */
export const OUTPUT_SCHEMA_BUDGET = 200;

/**
 * Tool output schema of an operation: the shape of its success JSON
 * (`application/json`, what a tool asks for; a deprecated version's media
 * type is never served to tools) as `toToolResult` carries it in
 * `structuredContent` (an array or scalar wrapped as `{result}`). The full
 * schema is in the OpenAPI resource.
 *
 * A failed call's `structuredContent` is the REST error body `{error}`, and
 * the TypeScript SDK's client validates it against `outputSchema` too (it
 * spares only an absent one): a shape requires no property and closes no
 * object, so it admits `{error}` as long as it does not declare an `error`
 * property of its own, which is checked here.
 */
export function toolOutputSchema(op: OperationSchemas): ToolDefinition['outputSchema'] {
  const status = SUCCESS_STATUSES.find((s) => op.responses[s]);
  if (!status) throw new Error(`${op.operationId}: no JSON success response (${SUCCESS_STATUSES.join('/')}) to derive the tool's output schema from`);
  const full = toolSchema(op.responses[status]!) as JsonSchema;
  const branches = Array.isArray(full.anyOf) ? full.anyOf : [full];
  const isObjectSchema = (s: Json) => typeof s === 'object' && s !== null && !Array.isArray(s) && s.type === 'object';
  const carried = branches.every(isObjectSchema) ? full : { type: 'object', required: ['result'], properties: { result: full }, additionalProperties: false };
  const shape = shapeWithin(carried, OUTPUT_SCHEMA_BUDGET) as JsonSchema;
  const declared = [shape, ...(Array.isArray(shape.anyOf) ? shape.anyOf : [])].some(
    (s) => typeof s === 'object' && s !== null && !Array.isArray(s) && typeof s.properties === 'object' && s.properties !== null && 'error' in s.properties,
  );
  if (declared) throw new Error(`${op.operationId}: its result declares an \`error\` property, which a tool error's structuredContent would have to match`);
  return { ...shape, type: 'object' };
}

/** Spec descriptions longer than this hold domain rules worth naming the reference resource for. */
const REFERENCE_WORTHY = 400;

/** Where the full reference of a tool is served (see resources.ts). */
export const toolDocsUri = (name: string): string => `freight://docs/tools/${name}.md`;

/**
 * The catalogue's description of a tool: one paragraph saying when to use it
 * and what it returns, the spec's `x-mcp-description` (else the summary and
 * the description's first sentence), then the resource holding its full
 * reference (REST operation, rules, formulas, formats, status codes).
 */
export function toolDescription(op: OperationSchemas): string {
  const authored = op.extensions['x-mcp-description'];
  const brief = typeof authored === 'string' ? authored.trim() : [op.summary.trim(), firstSentence(op.description)].filter(Boolean).join('. ');
  // The resource is named where the spec has more to say than a paragraph (rules, formulas, formats);
  // every tool has one, listed in resources/list and in the server instructions.
  return op.description.length > REFERENCE_WORTHY ? `${brief} Docs: ${toolDocsUri(op.operationId)}` : brief;
}

/** A tool's title, for people choosing or approving tools: the operation's `x-mcp-title`, else its summary. */
export function toolTitle(op: OperationSchemas): string {
  const authored = op.extensions['x-mcp-title'];
  return (typeof authored === 'string' ? authored : op.summary).trim() || op.operationId;
}

/**
 * What a tool's hints say (MCP tool annotations). Read-only: a GET. Otherwise
 * destructive for DELETE, PUT and a POST marked `x-mcp-destructive` (one that
 * replaces or invalidates what is stored), idempotent for PUT and DELETE (MCP's defaults are
 * destructive and not idempotent; both mean nothing for a read-only tool).
 * Open world: the result carries text from imported third-party files (the
 * operation lists it in `x-mcp-third-party-text`, see untrusted-text.ts) or
 * the tool reaches outside the service (`x-mcp-open-world: true`: webhooks).
 */
export function toolAnnotations(op: OperationSchemas, title: string): ToolDefinition['annotations'] {
  const openWorldHint = thirdPartyFields(op).length > 0 || op.extensions['x-mcp-open-world'] === true;
  if (op.method === 'GET') return { title, readOnlyHint: true, openWorldHint };
  // readOnlyHint false is MCP's default, left out of a catalogue that is a budget.
  // Destructive (MCP: not only additive): a DELETE, a PUT (it replaces what it names), a POST marked so (an import replaces earlier versions).
  const destructiveHint = op.method === 'DELETE' || op.method === 'PUT' || op.extensions['x-mcp-destructive'] === true;
  return { title, destructiveHint, idempotentHint: op.method === 'PUT' || op.method === 'DELETE', openWorldHint };
}

/**
 * Builds the tool table from the spec; throws at start-up on an operation that
 * cannot be a tool. The order is fixed, so a catalogue is byte-identical from
 * one session to the next (clients cache it): by toolset, in the order the
 * toolsets first appear in the spec, then in the spec's order.
 */
export function buildToolTable(spec: Json): ToolDefinition[] {
  const tools: ToolDefinition[] = [];
  const names = new Set<string>();
  for (const op of listOperations(spec)) {
    if (!isToolOperation(op)) continue;
    if (!/^[A-Za-z0-9_.-]{1,128}$/.test(op.operationId)) throw new Error(`operationId "${op.operationId}" is not a valid MCP tool name`);
    if (names.has(op.operationId)) throw new Error(`duplicate operationId "${op.operationId}"`);
    names.add(op.operationId);
    const { schema, locations } = toolInputSchema(op);
    const title = toolTitle(op);
    tools.push({
      name: op.operationId,
      title,
      description: toolDescription(op),
      inputSchema: schema,
      outputSchema: toolOutputSchema(op),
      annotations: toolAnnotations(op, title),
      operation: op,
      locations,
    });
  }
  const toolsets = toolsetNames(tools);
  return tools
    .map((tool, i) => ({ tool, i }))
    .sort((a, b) => toolsets.indexOf(toolsetOf(a.tool)) - toolsets.indexOf(toolsetOf(b.tool)) || a.i - b.i)
    .map(({ tool }) => tool);
}

/** The MCP `tools/list` entry of a tool: its title both where MCP 2025-06-18 reads it and where earlier clients do (`annotations.title`). */
export const toolListing = (tool: ToolDefinition): Tool => ({
  name: tool.name,
  title: tool.title,
  description: tool.description,
  inputSchema: tool.inputSchema,
  outputSchema: tool.outputSchema,
  annotations: tool.annotations,
});

const isScalar = (value: unknown): boolean => typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';

/** A JSON argument as text: strings as they are, numbers, booleans (and a missing value) as String() shows them, the rest as JSON. */
function scalar(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint' || value === undefined) return String(value);
  return JSON.stringify(value);
}

export interface DispatchContext {
  /** The API key the MCP request was authenticated with. */
  apiKey: string;
  /** Request id of the MCP request, passed on so logs join up. */
  requestId?: string;
  /** Only check the request (authentication, validation): 204 when it would be accepted, its 4xx otherwise; nothing runs. */
  validateOnly?: boolean;
}

export interface DispatchResult {
  statusCode: number;
  /** Parsed JSON body, or the raw text when the body is not JSON; undefined when empty. */
  body: unknown;
}

/** Where an argument goes: its parameter's spec name and location, a header parameter matched without regard to case. */
function argumentOf(tool: ToolDefinition, name: string): { name: string; location: ArgumentLocation } | undefined {
  const location = tool.locations.get(name);
  if (location) return { name, location };
  for (const [known, where] of tool.locations) if (where === 'header' && known.toLowerCase() === name.toLowerCase()) return { name: known, location: where };
  return undefined;
}

/** Builds the REST request of a tool call and runs it through the app (every hook, validator and handler). */
export async function dispatchTool(app: FastifyInstance, tool: ToolDefinition, args: Record<string, unknown>, ctx: DispatchContext): Promise<DispatchResult> {
  const op = tool.operation;
  // An argument the tool does not take is refused, never dropped (the tool's schema says additionalProperties: false).
  const unknown = Object.keys(args).filter((name) => !argumentOf(tool, name));
  if (unknown.length) {
    const accepted = [...tool.locations.keys()].join(', ') || 'none';
    const fields = unknown.map((name) => ({ in: 'query' as const, name, detail: `unknown argument '${name}' (${tool.name} takes: ${accepted})` }));
    return {
      statusCode: 400,
      body: errorBody(
        400,
        'Invalid tool arguments',
        fields.map((f) => f.detail),
        { reason: 'invalid_parameter', fields },
      ),
    };
  }
  // A parameter's value is text in the request: only a JSON scalar (or, for a list, scalars) reads as one. A null or
  // an object would become the text "null" or "{…}" and filter on it; refused, naming the argument.
  const notScalar = Object.entries(args).flatMap(([given, value]) => {
    const where = argumentOf(tool, given)!.location;
    if (where === 'body' || value === undefined) return [];
    const isList = ((tool.inputSchema.properties as Record<string, { type?: unknown }> | undefined)?.[given]?.type ?? null) === 'array';
    const ok = isList && Array.isArray(value) ? value.every(isScalar) : isScalar(value);
    if (ok) return [];
    const shown = value === null ? 'null' : Array.isArray(value) ? 'a list' : 'an object';
    const detail = `argument '${given}' is ${shown}: give ${isList ? 'a list of values' : 'a value'} of its type, or leave it out`;
    return [{ in: where, name: given, detail }];
  });
  if (notScalar.length)
    return {
      statusCode: 400,
      body: errorBody(
        400,
        'Invalid tool arguments',
        notScalar.map((f) => f.detail),
        { reason: 'invalid_parameter', fields: notScalar },
      ),
    };
  const pathArgs: Record<string, unknown> = {};
  const query: Record<string, string | string[]> = {};
  const headers: Record<string, string> = { accept: 'application/json' };
  let body: unknown;
  let hasBody = false;
  for (const [given, value] of Object.entries(args)) {
    if (value === undefined) continue;
    const { name, location } = argumentOf(tool, given)!;
    if (location === 'path') pathArgs[name] = value;
    else if (location === 'header') headers[name.toLowerCase()] = scalar(value);
    else if (location === 'body') {
      body = value;
      hasBody = true;
    } else query[name] = Array.isArray(value) ? value.map(scalar) : scalar(value);
  }
  // A URL always has its path segments; a tool call may not. Refuse it with the REST validator's own words.
  const missing = (op.params?.required as string[] | undefined)?.filter((n) => pathArgs[n] === undefined || pathArgs[n] === '') ?? [];
  if (missing.length) {
    const validate = validators[`${op.method} ${op.route} params`];
    const ok = validate ? validate(Object.fromEntries(Object.entries(pathArgs).filter(([, v]) => v !== ''))) : false;
    const problems =
      !ok && validate?.errors
        ? validationProblems(validate.errors, 'params')
        : { details: missing.map((n) => `${n} is required`), fields: missing.map((n) => ({ in: 'path' as const, name: n, detail: `${n} is required` })) };
    return { statusCode: 400, body: errorBody(400, 'Invalid path parameter', problems.details, { reason: 'invalid_parameter', fields: problems.fields }) };
  }
  // `.` and `..` stay dot segments however they are encoded (the URL standard reads %2E as a dot), and the URL would
  // resolve into another route: refused, naming the argument.
  const dots = Object.keys(pathArgs).filter((n) => pathArgs[n] === '.' || pathArgs[n] === '..');
  if (dots.length) {
    const fields = dots.map((n) => ({ in: 'path' as const, name: n, detail: `${n} cannot be "${String(pathArgs[n])}" (a dot segment of the path)` }));
    return {
      statusCode: 400,
      body: errorBody(
        400,
        'Invalid path parameter',
        fields.map((f) => f.detail),
        { reason: 'invalid_parameter', fields },
      ),
    };
  }
  const url = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(scalar(pathArgs[name])));
  const res = await app.inject({
    method: op.method as 'GET',
    url,
    query,
    headers: {
      ...headers,
      'x-api-key': ctx.apiKey,
      ...(ctx.requestId ? { 'x-request-id': ctx.requestId } : {}),
      ...(ctx.validateOnly ? validateOnlyHeaders() : internalDispatchHeaders()),
      ...(hasBody ? { 'content-type': 'application/json' } : {}),
    },
    ...(hasBody ? { payload: JSON.stringify(body) } : {}),
  });
  let parsed: unknown;
  if (res.body.length > 0) {
    const type = String(res.headers['content-type'] ?? '');
    if (type.includes('json')) {
      try {
        parsed = JSON.parse(res.body);
      } catch {
        parsed = res.body;
      }
    } else parsed = res.body;
  }
  return { statusCode: res.statusCode, body: parsed };
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The MCP result of a REST response: the JSON as `structuredContent` (MCP
 * requires an object there, so an array or scalar is wrapped as
 * `{result: ...}`) and as pretty-printed text; a status ≥ 400 is a tool error
 * carrying the REST error body. Every string is stripped of hidden and
 * bidirectional control characters (untrusted-text.ts); the text opens with
 * the notes a result needs: `notes` (a truncation), then, on success, which
 * fields of the tool hold third-party text.
 */
/**
 * A result that names a file (`x-mcp-resource-link: {field, mimeType?, name?}`: the field holding its URL, a dotted path)
 * also carries it as an MCP resource link, so a client fetches the file instead of the agent
 * reading its bytes. Its name is `name` with `{field}` replaced by the result's fields
 * (`{uuid}.pdf`), else the URL's last path segment.
 */
function resourceLinkOf(op: OperationSchemas, body: Record<string, unknown>): CallToolResult['content'] {
  const declared = op.extensions['x-mcp-resource-link'];
  if (!isRecord(declared) || typeof declared.field !== 'string') return [];
  // A field may be a dotted path (`download.url`: an export's link, null until its file is ready).
  const at = (path: string): unknown => path.split('.').reduce<unknown>((v, key) => (isRecord(v) ? v[key] : undefined), body);
  const uri = at(declared.field);
  if (typeof uri !== 'string') return [];
  const name =
    typeof declared.name === 'string'
      ? declared.name.replace(/\{([\w.]+)\}/g, (_, field: string) => {
          const value = at(field);
          return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
        })
      : decodeURIComponent(new URL(uri).pathname.split('/').pop() ?? 'file');
  return [{ type: 'resource_link', uri, name, ...(typeof declared.mimeType === 'string' ? { mimeType: declared.mimeType } : {}) }];
}

export function toToolResult(res: DispatchResult, tool?: Pick<ToolDefinition, 'operation'>, notes: string[] = []): CallToolResult {
  const isError = res.statusCode >= 400;
  if (res.body === undefined) {
    return { content: [{ type: 'text', text: `HTTP ${res.statusCode} (no content)` }], ...(isError ? { isError } : {}) };
  }
  const { value: body, removed } = stripHiddenDeep(res.body);
  const fields = tool && !isError ? thirdPartyFields(tool.operation) : [];
  const said = [...notes, ...(fields.length ? [thirdPartyNote(fields, removed)] : [])];
  const structured = isRecord(body) ? body : { result: body };
  const link = tool && !isError ? resourceLinkOf(tool.operation, structured) : [];
  return {
    content: [...said.map((text) => ({ type: 'text' as const, text })), { type: 'text', text: renderJson(body) }, ...link],
    structuredContent: structured,
    ...(isError ? { isError } : {}),
  };
}
