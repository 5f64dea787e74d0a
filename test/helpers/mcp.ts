/**
 * MCP test helpers: the service on a real port, SDK clients over both
 * transports, demo documents for two tenants, and the REST request a tool
 * call stands for (built independently of lib/mcp, from the spec).
 */
import type { Test } from 'tap';
import type { FastifyInstance } from 'fastify';
import type { Db } from 'mongodb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import type { OperationSchemas } from '../../lib/spec/operations.ts';
import { derefDocument, type Json } from '../../lib/spec/deref.ts';
import { financialDocs } from '../../lib/db/collections.ts';
import { withDerivedFields } from '../../lib/finance/derived-fields.ts';
import { makeFinancialDoc, makeTrip, freight, payment, leg, diesel, CLIENT_COMPANY, CLIENT_COMPANY_2 } from '../fixtures/documents.ts';
import { TENANT_A, TENANT_B } from './harness.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';

const listening = new WeakMap<FastifyInstance, Promise<string>>();

/** The app's base URL on a free loopback port; the same one when a test file's subtests each ask (Fastify listens once). */
export function listen(app: FastifyInstance): Promise<string> {
  let base = listening.get(app);
  if (!base) {
    base = (async () => {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const address = app.server.address();
      if (!address || typeof address === 'string') throw new Error('no port');
      return `http://127.0.0.1:${address.port}`;
    })();
    listening.set(app, base);
  }
  return base;
}

export type Transport = 'streamable' | 'sse';

export async function connect(t: Test, base: string, kind: Transport, headers: Record<string, string>, query = ''): Promise<Client> {
  const client = new Client({ name: `tap-${kind}`, version: '1.0.0' });
  const transport =
    kind === 'streamable'
      ? new StreamableHTTPClientTransport(new URL(`/mcp${query}`, base), { requestInit: { headers } })
      : new SSEClientTransport(new URL(`/sse${query}`, base), { requestInit: { headers } });
  await client.connect(transport);
  t.teardown(() => client.close().catch(() => undefined));
  return client;
}

/** Two invoices and two trips per tenant, distinct clients so isolation is visible. */
export async function seedTwoTenants(db: Db): Promise<void> {
  const docs = [TENANT_A, TENANT_B].flatMap((tenant, i) => [
    makeFinancialDoc({ tenant, client: i === 0 ? CLIENT_COMPANY : CLIENT_COMPANY_2, date: '2026-03-05T10:00', concepts: [freight(10_000 + i)] }),
    makeFinancialDoc({
      tenant,
      client: CLIENT_COMPANY,
      date: '2026-03-12T09:30',
      concepts: [freight(25_000 + i)],
      paymentMethod: 'PPD',
      payments: [payment(5000, '2026-03-20T12:00')],
    }),
  ]);
  await financialDocs(db).insertMany(docs.map(withDerivedFields));
  const tripDocs = [TENANT_A, TENANT_B].flatMap((tenant, i) => [
    makeTrip({ tenant, client: i === 0 ? CLIENT_COMPANY : CLIENT_COMPANY_2, legs: [leg({ products: [diesel(20_000, 19_950)] })] }),
    makeTrip({ tenant, client: CLIENT_COMPANY, idFinan: docs[i * 2]?.id ?? null, legs: [leg({ products: [diesel(31_000, 31_000)] })] }),
  ]);
  await insertTrips(db, tripDocs);
}

function stringify(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint' || v === undefined) return String(v);
  return JSON.stringify(v);
}

/** The REST request a tool call with `args` stands for, as a REST client would send it. */
export async function restCall(app: FastifyInstance, op: OperationSchemas, args: Record<string, unknown>, key: string) {
  const pathNames = Object.keys((op.params?.properties ?? {}) as object);
  const headerNames = Object.keys((op.headers?.properties ?? {}) as object);
  let url = op.path;
  for (const n of pathNames) url = url.replace(`{${n}}`, encodeURIComponent(stringify(args[n])));
  const query: Record<string, string> = {};
  const headers: Record<string, string> = { 'x-api-key': key };
  let payload: string | undefined;
  for (const [k, v] of Object.entries(args)) {
    if (pathNames.includes(k)) continue;
    if (headerNames.includes(k)) headers[k] = stringify(v);
    else if (k === 'body' && op.body) payload = JSON.stringify(v);
    else query[k] = stringify(v);
  }
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await app.inject({ method: op.method as 'GET', url, query, headers, ...(payload !== undefined ? { payload } : {}) });
  return { statusCode: res.statusCode, json: res.body ? res.json<unknown>() : undefined };
}

const isObject = (v: Json | undefined): v is { [key: string]: Json } => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Arguments a tool needs to run: each required parameter from its spec
 * example (or enum/default), the request body from the spec's example.
 * Returns null when the spec gives nothing to build one from.
 */
export function exampleArguments(spec: Json, op: OperationSchemas): Record<string, unknown> | null {
  // Inlined once per document, not per call (a walk of the whole document each: ~10 CPU-s of test/mcp-tools.test.ts).
  const doc = derefDocument(spec);
  const item = isObject(doc) && isObject(doc.paths) ? doc.paths[op.path] : undefined;
  const operation = isObject(item) ? item[op.method.toLowerCase()] : undefined;
  if (!isObject(operation)) return null;
  const args: Record<string, unknown> = {};
  const params = [
    ...(isObject(item) && Array.isArray(item.parameters) ? item.parameters : []),
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
  ];
  for (const p of params) {
    if (!isObject(p) || p.required !== true) continue;
    const schema = isObject(p.schema) ? p.schema : {};
    const value = p.example ?? schema.example ?? (Array.isArray(schema.enum) ? schema.enum[0] : undefined) ?? schema.default;
    if (value === undefined) return null;
    args[p.name as string] = value; // the spec's spelling, headers included (tool arguments keep it)
  }
  if (op.body && op.bodyRequired) {
    const body = isObject(operation.requestBody) && isObject(operation.requestBody.content) ? operation.requestBody.content['application/json'] : undefined;
    if (!isObject(body)) return null;
    const examples = isObject(body.examples) ? Object.values(body.examples) : [];
    const first = examples.find(isObject);
    const value = body.example ?? (first ? first.value : undefined) ?? (isObject(body.schema) ? body.schema.example : undefined);
    if (value === undefined) return null;
    args.body = value;
  }
  return args;
}

/** The `error` member of a JSON error answer (the service's shape or JSON-RPC's). */
export const errorOf = async (res: Response) => ((await res.json()) as { error: { code: number; message: string; details?: string[]; reason?: string } }).error;

/**
 * Opens a legacy SSE stream (`GET /sse`) and reads its `endpoint` event: the session id, a
 * promise of the stream's end (resolved with the time it ended) and a closer.
 */
export async function openSseStream(base: string, key: string): Promise<{ id: string; ended: Promise<number>; close: () => void }> {
  const controller = new AbortController();
  const res = await fetch(`${base}/sse`, { headers: { 'x-api-key': key, accept: 'text/event-stream' }, signal: controller.signal });
  if (res.status !== 200) throw new Error(`GET /sse: ${res.status} ${await res.text()}`);
  const reader = res.body!.getReader();
  let text = '';
  while (!/sessionId=([^\s&]+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const id = /sessionId=([^\s&]+)/.exec(text)?.[1];
  if (!id) throw new Error(`no endpoint event: ${text}`);
  const ended = (async () => {
    try {
      while (!(await reader.read()).done) {
        /* keep-alives and messages */
      }
    } catch {
      /* reset or aborted: ended too */
    }
    return Date.now();
  })();
  return { id, ended, close: () => controller.abort() };
}
