/**
 * A response checked as strict generated decoders read it (openapi-generator's Go and Java
 * clients, zod's `.strict()`): every object schema that does not say otherwise is closed
 * (`additionalProperties: false`), so a field the service sends but the document does not
 * declare fails here as it fails there (issue 39).
 */
import type { ErrorObject, ValidateFunction } from 'ajv';
import { bundledSpec, loadMcpSpec, loadV1Spec } from '../../lib/app/spec.ts';
import { createAjv } from '../../lib/spec/ajv.ts';
import { listOperations } from '../../lib/spec/operations.ts';
import type { Json } from '../../lib/spec/deref.ts';

/** The schema with every object closed that declares properties and says nothing of others. */
export function closeObjects(schema: Json): Json {
  if (Array.isArray(schema)) return schema.map(closeObjects);
  if (!schema || typeof schema !== 'object') return schema;
  const out: Record<string, Json> = {};
  for (const [key, value] of Object.entries(schema)) {
    // Examples are data, not schemas; `properties` maps names to schemas.
    if (key === 'example' || key === 'examples' || key === 'enum' || key === 'const' || key === 'default') out[key] = value;
    else if (key === 'properties' && value && typeof value === 'object' && !Array.isArray(value))
      out[key] = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, closeObjects(s)]));
    else out[key] = closeObjects(value);
  }
  const isObjectSchema = out.type === 'object' || 'properties' in out;
  if (isObjectSchema && !('additionalProperties' in out) && !('patternProperties' in out)) out.additionalProperties = false;
  return out;
}

let table: Map<string, Json> | undefined;
const compiled = new Map<string, ValidateFunction>();
const ajv = createAjv('strict');

/** The closed validator of one response (`GET /api/x response:200`, keyed as generated/validators.js), or undefined. */
export function strictValidator(key: string): ValidateFunction | undefined {
  if (!table) {
    table = new Map();
    // The current document (the one the process's apps run on: its operation table is computed once) first, then the version 1 lists' answers it adds, then the MCP transports (as generated/validators.js keys them).
    const set = (key: string, schema: Json) => table!.has(key) || table!.set(key, schema);
    for (const op of [...listOperations(bundledSpec()), ...listOperations(loadV1Spec()), ...listOperations(loadMcpSpec())]) {
      for (const [status, schema] of Object.entries(op.responses)) if (schema) set(`${op.method} ${op.route} response:${status}`, schema);
      for (const [k, schema] of Object.entries(op.mediaResponses)) set(`${op.method} ${op.route} response:${k}`, schema);
    }
  }
  const schema = table.get(key);
  if (schema === undefined) return undefined;
  let validate = compiled.get(key);
  if (!validate) {
    validate = ajv.compile(closeObjects(schema) as object);
    compiled.set(key, validate);
  }
  return validate;
}

/** Where a closed schema refused the answer: the undeclared fields first. */
export const strictErrors = (errors: ErrorObject[] | null | undefined) =>
  (errors ?? [])
    .slice(0, 5)
    .map((e) =>
      e.keyword === 'additionalProperties' ? `${e.instancePath}: undeclared ${String(e.params.additionalProperty)}` : `${e.instancePath} ${e.message}`,
    );
