/**
 * A spec schema as a tool schema: OpenAPI 3.0 (`nullable`, `discriminator`,
 * `example`) turned into the plain JSON Schema MCP clients validate with
 * (the official SDKs compile `outputSchema` with Ajv / jsonschema, which do
 * not read `nullable`: a `nullable` string would refuse `null`), and
 * compacted for the catalogue every agent pays for on each conversation.
 *
 * Kept: types, enums, bounds, defaults, required and closed objects (not the
 * patterns, lengths and formats the descriptions state in words, nor
 * subschemas nested over NESTING_LIMIT levels: the service's validators
 * check those, and a mismatch is a tool error naming the argument), and
 * `description` where the caller asks for it (a parameter's own text, a body
 * field's), whole: a cut description loses what its later sentences say (the
 * tax summary's `basis` is what `payment` means). Dropped: examples, titles,
 * annotations and vendor extensions, which no client validates with and the
 * OpenAPI document resource still carries.
 */
import type { Json } from '../spec/deref.ts';
import { wholeText } from './brief-text.ts';
import { addTo } from '../shared/add-to.ts';

type JsonObject = { [key: string]: Json };

const isObject = (v: Json | undefined): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Annotations an agent does not need to fill an argument or read a result. */
const DROPPED = new Set(['example', 'examples', 'title', 'discriminator', 'deprecated', 'readOnly', 'writeOnly', 'xml', 'externalDocs', 'nullable']);
/**
 * Size limits and formats the parameter descriptions state in words: the
 * service's validators check them and name the argument on a mismatch.
 */
const STATED_IN_WORDS = new Set([
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'format',
]);

/** Keywords whose value is one schema. */
const SUBSCHEMA = new Set(['items', 'additionalProperties', 'not', 'contains', 'propertyNames', 'if', 'then', 'else']);
/** Keywords whose value is a list of schemas. */
const SUBSCHEMA_LIST = new Set(['allOf', 'anyOf', 'oneOf']);

/**
 * How deep descriptions are kept: 0 none, 1 this schema's own, 2 also its
 * properties' (a request body and its fields).
 */
export type DescriptionDepth = 0 | 1 | 2;

/** Subschemas nested deeper than this accept any value in the tool schema (the service's validators still apply). */
export const NESTING_LIMIT = 3;

export function toolSchema(node: Json, keepDescriptions: DescriptionDepth = 0, nesting = 0): Json {
  if (!isObject(node)) return node;
  if (nesting > NESTING_LIMIT) return {};
  const inner = Math.max(0, keepDescriptions - 1) as DescriptionDepth;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key) || STATED_IN_WORDS.has(key) || key.startsWith('x-')) continue;
    if (key === 'description') {
      if (keepDescriptions > 0 && typeof value === 'string') out.description = wholeText(value);
      continue;
    }
    if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, toolSchema(schema, inner, nesting + 1)]));
    } else if (SUBSCHEMA.has(key)) {
      out[key] = toolSchema(value, 0, nesting + 1);
    } else if (SUBSCHEMA_LIST.has(key) && Array.isArray(value)) {
      // oneOf → anyOf: the spec's oneOf branches are told apart by a discriminator, which clients do not read,
      // and a value that happens to fit two branches is still a valid result.
      out[key === 'oneOf' ? 'anyOf' : key] = value.map((schema) => toolSchema(schema, 0, nesting + 1));
    } else out[key] = value;
  }
  // A default the description states ("`summary` (default)") is said once.
  if (typeof out.description === 'string' && /\bdefault\b/i.test(out.description)) delete out.default;
  return node.nullable === true ? withNull(out) : out;
}

/** `nullable: true` in JSON Schema: `null` added to the type (and to the enum), or as an alternative. */
function withNull(schema: JsonObject): JsonObject {
  if (typeof schema.type === 'string') {
    const out: JsonObject = { ...schema, type: [schema.type, 'null'] };
    if (Array.isArray(schema.enum) && !schema.enum.includes(null)) out.enum = [...schema.enum, null];
    return out;
  }
  const { description, ...rest } = schema;
  return { ...(description !== undefined ? { description } : {}), anyOf: [rest, { type: 'null' }] };
}

/**
 * Keywords dropped from result shapes: what narrows values (results come from
 * the service; the shape is what an agent reads), what requires or forbids a
 * property (a tool error's `{error}` must fit too), and prose.
 */
const NARROWING = new Set([
  'additionalProperties',
  'required',
  'enum',
  'pattern',
  'format',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'multipleOf',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'description',
  'default',
]);

/**
 * A result schema's shape, at most `levels` levels of properties (and array
 * items) deep: below, a value keeps only its type. Nothing is required and no
 * object is closed, so whatever the full schema accepts, the shape accepts.
 */
export function shapeSchema(node: Json, levels: number): Json {
  if (!isObject(node)) return node;
  const out: JsonObject = {};
  for (const [key, value] of Object.entries(node)) {
    if (NARROWING.has(key) || (SUBSCHEMA.has(key) && key !== 'items')) continue; // not, if/then/else narrow too
    if (key === 'properties' || key === 'items') {
      if (levels <= 0) continue;
      out[key] =
        key === 'properties' && isObject(value)
          ? Object.fromEntries(Object.entries(value).map(([name, schema]) => [name, shapeSchema(schema, levels - 1)]))
          : shapeSchema(value, levels - 1);
    } else if (SUBSCHEMA_LIST.has(key) && Array.isArray(value)) out[key] = value.map((schema) => shapeSchema(schema, levels));
    else out[key] = value;
  }
  return Array.isArray(out.anyOf) ? mergeObjectBranches(out) : out;
}

/**
 * Alternatives that are all objects (a summary and a full form) as one shape:
 * every property of either, typed where the branches agree (enums joined),
 * any value where they do not. It accepts whatever a branch accepts.
 */
function mergeObjectBranches(schema: JsonObject): JsonObject {
  const branches = schema.anyOf as Json[];
  if (!branches.every((b) => isObject(b) && b.type === 'object' && Object.keys(b).every((k) => k === 'type' || k === 'properties'))) return schema;
  const byName = new Map<string, Json[]>();
  for (const b of branches as JsonObject[]) for (const [name, s] of Object.entries(isObject(b.properties) ? b.properties : {})) addTo(byName, name, s);
  const properties: JsonObject = {};
  for (const [name, schemas] of byName) {
    const first = schemas[0] as Json;
    const sameType = schemas.every((s) => isObject(s) && isObject(first) && JSON.stringify(s.type) === JSON.stringify(first.type));
    if (schemas.length === branches.length && schemas.every((s) => JSON.stringify(s) === JSON.stringify(first))) properties[name] = first;
    else if (sameType && isObject(first) && first.type !== undefined && schemas.every((s) => isObject(s) && Array.isArray(s.enum)))
      properties[name] = { type: first.type, enum: [...new Set(schemas.flatMap((s) => (s as JsonObject).enum as Json[]))] };
    else properties[name] = sameType && isObject(first) && first.type !== undefined ? { type: first.type } : {};
  }
  const { anyOf: _branches, ...rest } = schema;
  return { ...rest, type: 'object', properties };
}

/**
 * The deepest `shapeSchema` of `node` whose JSON fits `bytes`; when not even the
 * top level with its types does, the top-level property names alone (each
 * admitting any value): what a result holds, its types being in the OpenAPI
 * resource. The catalogue's bytes go to the arguments' descriptions first.
 */
export function shapeWithin(node: Json, bytes: number, maxLevels = 8): Json {
  let best = shapeSchema(node, 1);
  if (JSON.stringify(best).length > bytes && isObject(best) && isObject(best.properties))
    return { ...best, properties: Object.fromEntries(Object.keys(best.properties).map((name) => [name, {}])) };
  for (let levels = 2; levels <= maxLevels; levels++) {
    const candidate = shapeSchema(node, levels);
    if (JSON.stringify(candidate).length > bytes) break;
    best = candidate;
  }
  return best;
}
