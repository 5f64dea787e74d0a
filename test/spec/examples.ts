/**
 * An example for every parameter and request body field of the served document (issue 39): a
 * collection generated from it (Postman, Insomnia, Swagger UI's "Try it out") sends the examples,
 * not placeholders such as `<integer>` that answer 400. Each example is valid against its own
 * schema (Ajv, as the service validates); the values are the demo dataset's (its tenant, clients,
 * months), so a request made of them answers with data after `npm run seed`.
 */
import type { Test } from 'tap';
import { loadSpec } from '../../handlers/app.ts';
import { createAjv } from '../../lib/spec/ajv.ts';
import { deref, type Json } from '../../lib/spec/deref.ts';

export default async function examplesTests(t: Test): Promise<void> {
type Node = { [key: string]: Json };
/** A name or an operationId: a string in a valid document (`npm run lint:spec`). */
const text = (v: Json | undefined): string => (typeof v === 'string' ? v : JSON.stringify(v));
const isNode = (v: Json | undefined): v is Node => typeof v === 'object' && v !== null && !Array.isArray(v);

const doc = deref(loadSpec()) as Node;
const ajv = createAjv('strict', { strict: false });
// A parameter travels as text and the service coerces it, but its example is written typed: checked as written.
const check = (schema: Node, value: Json): string | null => {
  const validate = ajv.compile(schema);
  return validate(value) ? null : ajv.errorsText(validate.errors);
};

/** The example a parameter or field states: its own, or its schema's. */
function exampleOf(node: Node, schema: Node | undefined): Json | undefined {
  if (node.example !== undefined) return node.example;
  if (isNode(node.examples)) {
    const first = Object.values(node.examples)[0];
    if (isNode(first)) return first.value;
  }
  return schema?.example;
}

/** Every field of a body schema, nested objects and array items included: `rows[].tripId`. */
function fields(schema: Node, at: string, out: { at: string; schema: Node }[]): void {
  const variants = [
    ...(Array.isArray(schema.allOf) ? schema.allOf : []),
    ...(Array.isArray(schema.oneOf) ? schema.oneOf : []),
    ...(Array.isArray(schema.anyOf) ? schema.anyOf : []),
  ];
  for (const v of variants) if (isNode(v)) fields(v, at, out);
  if (isNode(schema.properties)) {
    for (const [name, sub] of Object.entries(schema.properties)) {
      if (!isNode(sub)) continue;
      const path = at ? `${at}.${name}` : name;
      out.push({ at: path, schema: sub });
      fields(sub, path, out);
    }
  }
  if (isNode(schema.items)) fields(schema.items, `${at}[]`, out);
}

const operations: { id: string; op: Node }[] = [];
for (const item of Object.values(doc.paths as Node)) {
  if (!isNode(item)) continue;
  for (const [method, op] of Object.entries(item)) if (isNode(op) && method !== 'parameters') operations.push({ id: text(op.operationId), op });
}

/**
 * The lists' narrowing filters and the cursor have none on purpose: Swagger UI's "Try it out"
 * pre-fills every example, and all filters at once (a cursor this service never issued among
 * them) answer an empty page or a 404 (test/swagger-ui-browser.test.ts).
 */
const NARROWING = new Set([
  'client',
  'status',
  'uuid',
  'folio',
  'paymentStatus',
  'openAsOf',
  'cancelled',
  'cancellationStatus',
  'updatedSince',
  'cursor',
  'shipmentId',
  'dateFilterBy',
  'loadStartDate',
  'loadEndDate',
  'offloadStartDate',
  'offloadEndDate',
]);

t.test('every parameter has an example valid against its schema (narrowing list filters excepted)', async (t) => {
  let count = 0;
  for (const { id, op } of operations) {
    for (const p of Array.isArray(op.parameters) ? op.parameters : []) {
      if (!isNode(p)) continue;
      count++;
      const schema = isNode(p.schema) ? p.schema : {};
      const example = exampleOf(p, schema);
      if (example === undefined && NARROWING.has(text(p.name))) continue;
      if (example === undefined) {
        t.fail(`${id}: parameter ${text(p.name)} has no example`);
        continue;
      }
      t.equal(check(schema, example), null, `${id}: ${text(p.name)} = ${JSON.stringify(example)}`);
    }
  }
  t.ok(count >= 100, `${count} parameters`);
});

t.test('every request body field has an example valid against its schema, and every body one as a whole', async (t) => {
  let count = 0;
  for (const { id, op } of operations) {
    const content = isNode(op.requestBody) && isNode(op.requestBody.content) ? op.requestBody.content : {};
    for (const [type, media] of Object.entries(content)) {
      if (!isNode(media) || !isNode(media.schema)) continue;
      const body = exampleOf(media, media.schema);
      // A zip archive is bytes no YAML example can hold; every textual body (JSON, XML, CSV) has one.
      if (body === undefined) {
        if (/json|xml|^text\//.test(type)) t.fail(`${id}: the ${type} body has no example`);
      } else if (media.schema.format !== 'binary') t.equal(check(media.schema, body), null, `${id}: the ${type} body example`);
      const list: { at: string; schema: Node }[] = [];
      fields(media.schema, '', list);
      for (const field of list) {
        count++;
        const example = exampleOf(field.schema, field.schema);
        if (example === undefined) {
          t.fail(`${id}: body field ${field.at} has no example`);
          continue;
        }
        t.equal(check(field.schema, example), null, `${id}: ${field.at} = ${JSON.stringify(example).slice(0, 80)}`);
      }
    }
  }
  t.ok(count >= 30, `${count} body fields`);
});
}
