import { deepFreeze, derefDocument, type Json } from './deref.ts';

/**
 * The operations of the OpenAPI document in the shape every consumer needs:
 * the request schemas Fastify validates (params, querystring, headers, body),
 * the response schemas, and the metadata MCP tools are built from. One walk of
 * the spec, used by `npm run generate`, the MCP tool table and the tests.
 */
export interface OperationSchemas {
  operationId: string;
  method: string;
  /** Path as written in the spec: /api/alerts/jobs/{id} */
  path: string;
  /** Path as Fastify routes it: /api/alerts/jobs/:id */
  route: string;
  summary: string;
  description: string;
  tags: string[];
  secured: boolean;
  extensions: Record<string, Json>;
  params?: JsonSchema;
  querystring?: JsonSchema;
  headers?: JsonSchema;
  /** Header parameters as the spec spells them (`Idempotency-Key`), by the lower-case name Fastify and `headers` use. */
  headerNames: Record<string, string>;
  /** Parameters marked `deprecated: true` (e.g. `x-api-version`), by the name the request schemas use. */
  deprecatedParameters: string[];
  body?: JsonSchema;
  bodyRequired: boolean;
  /** Whether the operation takes a request body at all (of any media type: XML, zip and CSV too). */
  takesBody: boolean;
  responses: Record<string, JsonSchema | null>;
  /** Other JSON media types of a response (e.g. the deprecated version 1 lists), keyed `<status> <media type>`. */
  mediaResponses: Record<string, JsonSchema>;
}

export type JsonSchema = { [key: string]: Json };

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A parameter's name or an operationId: a string in a valid document (`npm run lint:spec`); anything else shown as JSON. */
const text = (v: Json | undefined): string => (typeof v === 'string' ? v : (JSON.stringify(v) ?? 'undefined'));

export const toFastifyRoute = (path: string): string => path.replace(/\{([^}]+)\}/g, ':$1');

function parameterSchema(params: { [key: string]: Json }[], location: string, closed: boolean): JsonSchema | undefined {
  const list = params.filter((p) => p.in === location);
  if (list.length === 0) return undefined;
  const properties: { [key: string]: Json } = {};
  const required: string[] = [];
  for (const p of list) {
    // Header names are case-insensitive; Fastify lower-cases them.
    const name = location === 'header' ? text(p.name).toLowerCase() : text(p.name);
    const schema = isObject(p.schema) ? { ...p.schema } : {};
    // The parameter's own description wins over a referenced schema's (CalendarDate says how dates are typed, `startDate` what it selects).
    if (typeof p.description === 'string') schema.description = p.description;
    properties[name] = schema;
    if (p.required === true) required.push(name);
  }
  const out: JsonSchema = { type: 'object', properties };
  if (required.length) out.required = required;
  // Unknown query/path parameters are rejected; unknown headers are normal.
  if (closed) out.additionalProperties = false;
  return out;
}

const tables = new WeakMap<object, readonly OperationSchemas[]>();

/**
 * The document's operations, computed once per document object and shared (frozen): the
 * metrics, tracing, glue, MCP and test tables of one process all read the same document, and each
 * computation was a fresh dereference of it (issue 39).
 */
export function listOperations(spec: Json): readonly OperationSchemas[] {
  if (spec === null || typeof spec !== 'object') return operationsOf(spec);
  let table = tables.get(spec);
  if (table === undefined) {
    table = Object.freeze(operationsOf(spec).map((op) => deepFreeze(op as unknown as Json) as unknown as OperationSchemas));
    tables.set(spec, table);
  }
  return table;
}

function operationsOf(spec: Json): OperationSchemas[] {
  const doc = derefDocument(spec);
  if (!isObject(doc) || !isObject(doc.paths)) throw new Error('spec has no paths');
  const globalSecurity = Array.isArray(doc.security) && doc.security.some((s) => isObject(s) && Object.keys(s).length > 0);
  const out: OperationSchemas[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    if (!isObject(item)) continue;
    const shared = Array.isArray(item.parameters) ? item.parameters.filter(isObject) : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObject(op)) continue;
      const own = Array.isArray(op.parameters) ? op.parameters.filter(isObject) : [];
      const params = [...shared.filter((s) => !own.some((o) => o.name === s.name && o.in === s.in)), ...own];
      const security = Array.isArray(op.security)
        ? op.security.some((s) => isObject(s) && Object.keys(s).length > 0)
        : globalSecurity;
      const content = isObject(op.requestBody) && isObject(op.requestBody.content) ? op.requestBody.content : undefined;
      const jsonBody = content && isObject(content['application/json']) ? content['application/json'] : undefined;
      const responses: Record<string, JsonSchema | null> = {};
      const mediaResponses: Record<string, JsonSchema> = {};
      if (isObject(op.responses)) {
        for (const [status, res] of Object.entries(op.responses)) {
          const media = isObject(res) && isObject(res.content) ? res.content['application/json'] : undefined;
          responses[status] = isObject(media) && isObject(media.schema) ? media.schema : null;
          for (const [type, other] of Object.entries(isObject(res) && isObject(res.content) ? res.content : {})) {
            if (type !== 'application/json' && type.endsWith('+json') && isObject(other) && isObject(other.schema)) mediaResponses[`${status} ${type}`] = other.schema;
          }
        }
      }
      const extensions: Record<string, Json> = {};
      for (const [k, v] of Object.entries(op)) if (k.startsWith('x-')) extensions[k] = v;
      out.push({
        operationId: text(op.operationId),
        method: method.toUpperCase(),
        path,
        route: toFastifyRoute(path),
        summary: typeof op.summary === 'string' ? op.summary : '',
        description: typeof op.description === 'string' ? op.description : '',
        tags: Array.isArray(op.tags) ? op.tags.map(String) : [],
        secured: security,
        extensions,
        params: parameterSchema(params, 'path', true),
        querystring: parameterSchema(params, 'query', true),
        headers: parameterSchema(params, 'header', false),
        headerNames: Object.fromEntries(params.filter((p) => p.in === 'header').map((p) => [text(p.name).toLowerCase(), text(p.name)])),
        deprecatedParameters: params.filter((p) => p.deprecated === true).map((p) => (p.in === 'header' ? text(p.name).toLowerCase() : text(p.name))),
        body: jsonBody && isObject(jsonBody.schema) ? jsonBody.schema : undefined,
        bodyRequired: isObject(op.requestBody) && op.requestBody.required === true,
        takesBody: isObject(op.requestBody),
        responses,
        mediaResponses,
      });
    }
  }
  return out;
}
