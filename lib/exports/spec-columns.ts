/**
 * The columns of a list's export (docs/exports.md, "Columns"): the JSON paths of its answer's items
 * as the spec declares them, in the schema's order. An object with declared properties is opened
 * into its fields (`amounts.total`); anything else — a scalar, an array, a free-form object, a
 * choice of shapes — is one column, an array or object written as its JSON text. The same rule
 * reads a cell from an item, so a file's cells are the JSON answer's values.
 */
import { readFileSync } from 'node:fs';
import type { Json } from '../spec/deref.ts';
import { listOperations, type JsonSchema, type OperationSchemas } from '../spec/operations.ts';
import type { ExportCell, ExportColumn } from './export-dataset.ts';

const SPEC_PATH = new URL('../../generated/openapi.json', import.meta.url);

let operations: Map<string, OperationSchemas> | null = null;
/** The spec's operations by operationId (the bundled document, read once). */
export function specOperation(operationId: string): OperationSchemas {
  operations ??= new Map(listOperations(JSON.parse(readFileSync(SPEC_PATH, 'utf8')) as Json).map((op) => [op.operationId, op]));
  const op = operations.get(operationId);
  if (!op) throw new Error(`no operation ${operationId} in the spec`);
  return op;
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/** An object schema's declared properties (allOf members merged), or null when it declares none. */
function propertiesOf(schema: JsonSchema): [string, JsonSchema][] | null {
  const parts = Array.isArray(schema.allOf) ? schema.allOf.filter(isObject) : [schema];
  const out: [string, JsonSchema][] = [];
  for (const part of parts) if (isObject(part.properties)) for (const [k, v] of Object.entries(part.properties)) if (isObject(v)) out.push([k, v]);
  return out.length ? out : null;
}

export function columnsOf(schema: JsonSchema, prefix = ''): ExportColumn[] {
  const props = propertiesOf(schema);
  if (!props) return [{ name: prefix, description: typeof schema.description === 'string' ? schema.description.trim() : '' }];
  return props.flatMap(([key, sub]) => columnsOf(sub, prefix ? `${prefix}.${key}` : key));
}

/** The item schema of a list's answer (`data[]`); for an answer with a choice of shapes, the `detail=summary` one. */
export function listItemSchema(op: OperationSchemas): JsonSchema {
  const answer = op.responses['200'];
  if (!answer) throw new Error(`${op.operationId} has no 200 answer`);
  const branches = Array.isArray(answer.oneOf) ? answer.oneOf.filter(isObject) : [answer];
  const detail = (b: JsonSchema) => (isObject(b.properties) && isObject(b.properties.detail) ? b.properties.detail.enum : undefined);
  const page = branches.find((b) => Array.isArray(detail(b)) && (detail(b) as Json[]).includes('summary')) ?? branches[0];
  const data = page && isObject(page.properties) ? page.properties.data : undefined;
  if (!isObject(data) || !isObject(data.items)) throw new Error(`${op.operationId}'s answer has no data[] items`);
  return data.items;
}

/** The cell a column reads from an item: its value at the path; an array or object as JSON text; missing as null. */
export function cellAt(item: unknown, path: string): ExportCell {
  let value: unknown = item;
  for (const key of path.split('.')) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return null;
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return value;
  return JSON.stringify(value);
}
