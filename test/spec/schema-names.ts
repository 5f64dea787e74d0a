/**
 * Schema names every generator accepts (issue 22): the names generators derive from the served
 * document, computed here as they compute them, never meet a component's name or each other.
 *
 * - openapi-python-client: a component is a class named after it (PascalCase); an inline object
 *   or enum under a property is Parent + Property, an inline array item Parent + Property + Item,
 *   an inline enum parameter OperationId + Parameter.
 * - oapi-codegen: components of schemas, parameters, responses and request bodies share one Go
 *   namespace; an inline enum under a property is Parent + Property, one in a parameter
 *   OperationId + Params + Parameter; each operation adds OperationId + Params, + Response,
 *   + JSONBody, + JSONRequestBody (and the other body kinds); the client adds Client,
 *   ClientInterface, ClientWithResponses, … and Scheme + Scopes.
 * - @hey-api/openapi-ts: each operation adds OperationId + Data, Error, Errors, Response, Responses;
 *   the client adds ClientOptions.
 *
 * A collision made openapi-python-client drop the forecast's 200 and oapi-codegen stop with
 * "duplicate typename"; test/consumer-matrix.test.ts runs the generators themselves.
 */
import type { Test } from 'tap';
import { loadSpec } from '../../handlers/app.ts';

export default async function schemaNamesTests(t: Test): Promise<void> {
type Node = Record<string, unknown>;
const spec = loadSpec() as unknown as { paths: Record<string, Record<string, Node>>; components: Record<string, Record<string, Node>> };

/** PascalCase as the generators make it: words split on non-alphanumerics, each capitalised, the rest kept. */
const pascal = (name: string) =>
  name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

const isRef = (s: unknown): boolean => !!s && typeof s === 'object' && '$ref' in s;
const isObject = (s: Node) => s.type === 'object' || 'properties' in s;
const isEnum = (s: Node) => Array.isArray(s.enum) && s.enum.length > 1;
const operations = Object.values(spec.paths).flatMap((item) =>
  Object.values(item).filter((op): op is Node & { operationId: string } => typeof op?.operationId === 'string'),
);
const components = (kind: string) => Object.keys(spec.components[kind] ?? {});
const resolveParameter = (p: Node): Node => (isRef(p) ? spec.components.parameters![String(p.$ref).split('/').pop()!]! : p);

/** Names a generator derives, each with where it comes from; `add` reports a name derived twice from different places. */
class Namespace {
  readonly names = new Map<string, string>();
  readonly clashes: string[] = [];
  add(name: string, from: string): void {
    const before = this.names.get(name);
    if (before !== undefined && before !== from) this.clashes.push(`${name}: ${before} and ${from}`);
    else this.names.set(name, from);
  }
}

/** Inline objects and enums under a schema's properties (and array items), named Parent + Property (+ Item). */
function inlineNames(ns: Namespace, parent: string, schema: Node, opts: { objects: boolean; item: string }): void {
  for (const [prop, sub] of Object.entries((schema.properties ?? {}) as Record<string, Node>)) {
    if (isRef(sub)) continue;
    const name = `${parent}${pascal(prop)}`;
    if (isEnum(sub) || (opts.objects && isObject(sub))) ns.add(name, `inline ${parent}.${prop}`);
    if (isObject(sub)) inlineNames(ns, name, sub, opts);
    const items = sub.items as Node | undefined;
    if (sub.type === 'array' && items && !isRef(items) && (isEnum(items) || (opts.objects && isObject(items)))) {
      ns.add(`${name}${opts.item}`, `inline ${parent}.${prop}[]`);
      if (isObject(items)) inlineNames(ns, `${name}${opts.item}`, items, opts);
    }
  }
}

function pythonNames(): Namespace {
  const ns = new Namespace();
  for (const name of components('schemas')) ns.add(pascal(name), `component ${name}`);
  for (const [name, schema] of Object.entries(spec.components.schemas ?? {})) inlineNames(ns, pascal(name), schema, { objects: true, item: 'Item' });
  for (const op of operations) {
    for (const p of (op.parameters ?? []) as Node[]) {
      const param = resolveParameter(p);
      if (!isRef(param.schema) && isEnum(param.schema as Node))
        ns.add(`${pascal(op.operationId)}${pascal(String(param.name))}`, `${op.operationId} parameter ${String(param.name)}`);
    }
  }
  return ns;
}

function goNames(): Namespace {
  const ns = new Namespace();
  for (const kind of ['schemas', 'parameters', 'responses', 'requestBodies'])
    for (const name of components(kind)) ns.add(pascal(name), `component ${kind} ${name}`);
  for (const [name, schema] of Object.entries(spec.components.schemas ?? {})) inlineNames(ns, pascal(name), schema, { objects: false, item: 'Item' });
  for (const name of ['Client', 'ClientInterface', 'ClientOption', 'ClientWithResponses', 'ClientWithResponsesInterface', 'HttpRequestDoer', 'RequestEditorFn'])
    ns.add(name, 'the generated client');
  for (const scheme of components('securitySchemes')) ns.add(`${pascal(scheme)}Scopes`, `security scheme ${scheme}`);
  for (const op of operations) {
    const id = pascal(op.operationId);
    ns.add(`${id}Response`, `${op.operationId} response`);
    const params = ((op.parameters ?? []) as Node[]).map(resolveParameter);
    if (params.length) ns.add(`${id}Params`, `${op.operationId} parameters`);
    for (const param of params)
      if (!isRef(param.schema) && isEnum(param.schema as Node))
        ns.add(`${id}Params${pascal(String(param.name))}`, `${op.operationId} parameter ${String(param.name)}`);
    const body = (op.requestBody as { content?: Record<string, unknown> } | undefined)?.content ?? {};
    for (const media of Object.keys(body)) {
      const kind =
        media === 'application/json'
          ? 'JSON'
          : media === 'text/csv' || media.startsWith('text/')
            ? 'Text'
            : media === 'multipart/form-data'
              ? 'Multipart'
              : media === 'application/x-www-form-urlencoded'
                ? 'Formdata'
                : null;
      if (kind) for (const suffix of ['Body', 'RequestBody']) ns.add(`${id}${kind}${suffix}`, `${op.operationId} ${media} body`);
    }
  }
  return ns;
}

function heyApiNames(): Namespace {
  const ns = new Namespace();
  for (const kind of ['schemas', 'parameters']) for (const name of components(kind)) ns.add(pascal(name), `component ${kind} ${name}`);
  ns.add('ClientOptions', 'the generated client');
  for (const op of operations)
    for (const suffix of ['Data', 'Error', 'Errors', 'Response', 'Responses'])
      ns.add(`${pascal(op.operationId)}${suffix}`, `${op.operationId} ${suffix.toLowerCase()}`);
  return ns;
}

t.ok(operations.length >= 30 && components('schemas').length >= 100, `${operations.length} operations, ${components('schemas').length} schema components`);
for (const [generator, ns] of [
  ['openapi-python-client', pythonNames()],
  ['oapi-codegen', goNames()],
  ['@hey-api/openapi-ts', heyApiNames()],
] as const) {
  t.same(ns.clashes, [], `${generator}: ${ns.names.size} names, none derived twice`);
}

t.test('the guard sees the collisions issue 22 found', async (t) => {
  // The four names as they were: the guard must report each (a guard that cannot fail proves nothing).
  const ns = new Namespace();
  ns.add('CashInflowForecastResponseForecastBucket', 'component CashInflowForecastResponseForecastBucket');
  inlineNames(
    ns,
    'CashInflowForecastResponseForecast',
    { properties: { bucket: { type: 'string', enum: ['week', 'month'] } } },
    { objects: true, item: 'Item' },
  );
  t.same(
    ns.clashes,
    ['CashInflowForecastResponseForecastBucket: component CashInflowForecastResponseForecastBucket and inline CashInflowForecastResponseForecast.bucket'],
    'an inline enum named like a component',
  );
  const go = goNames();
  for (const name of ['Client', 'CancelAlertJobResponse', 'DeleteWebhookResponse']) {
    t.ok(go.names.has(name), `${name} is a name oapi-codegen derives (${go.names.get(name)}), so no component may take it`);
    t.notOk(components('schemas').includes(name) || components('parameters').includes(name), `no component is named ${name}`);
  }
});
}
