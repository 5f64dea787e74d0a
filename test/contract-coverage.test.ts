/**
 * The spec and the service describe the same API:
 *
 * 1. Routes: what the service registers is exactly the spec's operations plus
 *    the documented infrastructure (Swagger UI and the document under /docs; /metrics).
 *    Nothing undocumented, nothing missing.
 * 2. Statuses: every status code the spec documents for an operation is
 *    produced here, for real, through HTTP against the running service, and its
 *    body conforms to the spec. A status nothing can produce is a broken
 *    promise (remove it from the spec); a new operation or status without a
 *    producer fails this test until one is added below.
 *
 * Producers are generic where they can be (401 without a key, 429 on a
 * one-request budget, 500 on a database that throws, 503 on one that is
 * unreachable, 400 with an unknown parameter) and specific otherwise.
 */
import t from 'tap';
import type { Db } from 'mongodb';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { startHarness, testConfig, KEY_A, KEY_B, TENANT_A, TENANT_B } from './helpers/harness.ts';
import { listen, openSseStream, seedTwoTenants } from './helpers/mcp.ts';
import { buildApp, loadSpec } from '../handlers/app.ts';
import { loadMcpSpec } from '../lib/app/spec.ts';
import { listOperations, type OperationSchemas } from '../lib/spec/operations.ts';
import { registeredRoutes } from '../lib/http/hardening.ts';
import { createApiKey } from '../lib/auth/api-keys.ts';
import { idempotencyRecordId, requestFingerprint } from '../lib/alerts/idempotency.ts';
import { claimIdempotencyKey } from '../lib/alerts/idempotency-repo.ts';
import { validators } from '../generated/validators.js';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { errorProblem } from './helpers/error-reason.ts';
import { withDerivedFields } from '../lib/finance/derived-fields.ts';
import { CLIENT_COMPANY, freight, makeFinancialDoc } from './fixtures/documents.ts';
import { invoiceXml } from './helpers/cfdi-builder.ts';
import { zipOf } from './helpers/cfdi-fixtures.ts';
import { keepOriginals } from '../lib/originals/originals-repo.ts';
import { ObjectId } from 'mongodb';
import { runExport } from '../lib/exports/run-export.ts';
import { UNROUTABLE_PREFIX } from '../lib/http/hardening.ts';

t.setTimeout(180_000);

const spec = loadSpec();
// The REST document's operations and the MCP transports, described in a document of their own (/docs/mcp.json).
const operations = [...listOperations(spec), ...listOperations(loadMcpSpec())];
const h = await startHarness(t);
await seedTwoTenants(h.db);

/** The harness database behind a switch: 'fail' makes every access throw a plain Error, 'down' an unreachable-server error. */
function switchableDb(db: Db) {
  const state = { mode: 'ok' as 'ok' | 'fail' | 'down' };
  const fault = () =>
    state.mode === 'fail'
      ? new Error('injected failure')
      : Object.assign(new Error('injected: server selection timed out'), { name: 'MongoServerSelectionError' });
  const proxy = new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target) as unknown;
      if (state.mode !== 'ok' && (prop === 'collection' || prop === 'command' || prop === 'aggregate')) {
        return () => {
          throw fault();
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { db: proxy, state };
}

const sw = switchableDb(h.db);
// Documented 500/503 come from database faults: the key cache would answer authentication without it.
const main = await buildApp({
  // EXPORT_MAX_ACTIVE: no worker builds the exports queued here, and every export operation queues some.
  config: testConfig({
    BODY_LIMIT_BYTES: '65536',
    IMPORT_BODY_LIMIT_BYTES: '65536',
    DELIVERIES_BODY_LIMIT_BYTES: '65536',
    API_KEY_CACHE_TTL_MS: '0',
    EXPORT_MAX_ACTIVE: '1000',
  }),
  db: sw.db,
  logger: false,
});
const limited = await buildApp({
  config: testConfig({ RATE_LIMIT_MAX: '1', RATE_LIMIT_WINDOW_MS: '60000', EXPORT_MAX_ACTIVE: '1000' }),
  db: h.db,
  logger: false,
});
// An instance whose embedded engine could not be restarted (scripts/start.ts wires the supervisor in): /health 503.
const failing = await buildApp({ config: testConfig(), db: h.db, logger: false, livenessProblem: () => 'the embedded database engine could not be restarted' });
t.teardown(() => Promise.all([main.close(), limited.close(), failing.close()]));
const base = await listen(main);
const limitedBase = await listen(limited);
const failingBase = await listen(failing);

// --------------------------------------------------------------------------- routes

t.test('the registered routes are exactly the spec operations plus /docs, /metrics and OAuth', async (t) => {
  const served = registeredRoutes(main).map((r) => `${r.method} ${r.url}`);
  // Every GET also answers HEAD (documented in the spec's HTTP section), except the MCP event streams.
  const documented = operations.flatMap((op) => [`${op.method} ${op.route}`, ...(op.method === 'GET' && !op.tags.includes('mcp') ? [`HEAD ${op.route}`] : [])]);
  const infrastructure = served.filter((r) => /^(GET|HEAD) \/docs(\/|$)/.test(r));
  t.ok(infrastructure.length > 0, 'Swagger UI and the document are served under /docs');
  // The Prometheus scrape endpoint: operational, in Prometheus's format, not a REST operation (docs/operations.md).
  const operational = served.filter((r) => /^(GET|HEAD) \/metrics$/.test(r));
  t.equal(operational.length, 2, 'GET and HEAD /metrics are served');
  infrastructure.push(...operational);
  // OAuth for MCP (docs/mcp.md, "Hosted clients: OAuth"): metadata documents of RFC 9728 / RFC 8414 and the
  // authorization server's endpoints (oidc-provider under /oauth/, the consent page): OAuth's own protocol, not REST operations.
  const oauth = served.filter((r) =>
    /^(GET|HEAD|POST) \/(\.well-known\/(oauth-protected-resource(\/mcp|\/sse)?|oauth-authorization-server|openid-configuration)|oauth\/(\*|register|interaction\/:uid))$/.test(
      r,
    ),
  );
  t.same(
    [...new Set(oauth.map((r) => r.split(' ')[1]))].sort(),
    [
      '/.well-known/oauth-authorization-server',
      '/.well-known/oauth-protected-resource',
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource/sse',
      '/.well-known/openid-configuration',
      '/oauth/*',
      '/oauth/interaction/:uid',
      '/oauth/register',
    ],
    'the OAuth routes are served',
  );
  infrastructure.push(...oauth);
  // Where a path the router would refuse is sent (lib/app/unroutable.ts): reached by rewriting only, never by a client's URL.
  const unroutable = served.filter((r) => r.split(' ')[1]!.startsWith(`${UNROUTABLE_PREFIX}/`));
  t.same(
    [...new Set(unroutable.map((r) => r.split(' ')[1]))].sort(),
    [`${UNROUTABLE_PREFIX}/api/:problem`, `${UNROUTABLE_PREFIX}/keyless/:problem`, `${UNROUTABLE_PREFIX}/other/:problem`],
    'the routes of unroutable paths',
  );
  infrastructure.push(...unroutable);
  t.same(served.filter((r) => !infrastructure.includes(r)).sort(), [...documented].sort(), 'every route is a spec operation and every operation a route');
  t.equal(new Set(served).size, served.length, 'no route registered twice');
  const doc = await fetch(`${base}/docs/json`);
  t.equal(doc.status, 200);
  t.same(
    Object.keys(((await doc.json()) as { paths: object }).paths).sort(),
    Object.keys((spec as unknown as { paths: object }).paths).sort(),
    '/docs/json serves the spec',
  );
  const transports = (await (await fetch(`${base}/docs/mcp.json`)).json()) as { paths: object };
  t.same(Object.keys(transports.paths).sort(), ['/mcp', '/messages', '/sse'], '/docs/mcp.json serves the MCP transports, /docs/json none of them');
});

// --------------------------------------------------------------------------- statuses

interface Answer {
  status: number;
  headers: Headers;
  body: string;
}
type Producer = (op: OperationSchemas) => Promise<Answer>;

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'coverage', version: '1' } },
};
const MCP_ACCEPT = 'application/json, text/event-stream';

/** One request; for event streams only the head is read, then the stream is dropped. */
async function call(url: string, init: RequestInit & { headers?: Record<string, string> } = {}): Promise<Answer> {
  const controller = new AbortController();
  const res = await fetch(url, { ...init, signal: controller.signal });
  if ((res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    controller.abort();
    return { status: res.status, headers: res.headers, body: '' };
  }
  return { status: res.status, headers: res.headers, body: await res.text() };
}

const json = (body: unknown, headers: Record<string, string> = {}) => ({
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});

/** Well-formed path parameters nobody has: a UUID never imported, a link token this service never signed, else an id. */
const UNKNOWN_PATH_PARAMETER: Record<string, string> = {
  uuid: '5E2D6AF3-1B4C-4D8E-9F0A-1B2C3D4E5F60',
  token: `${'A'.repeat(40)}.${'A'.repeat(43)}`,
};

/** Well-formed values of required query parameters that are no enum (the originals' period). */
const REQUIRED_QUERY_VALUE: Record<string, string> = { startDate: '2026-03-01', endDate: '2026-03-31' };

/** The operation's required query parameters, well formed (an export's `format`: its first value), as `name=value&…`. */
function requiredQuery(op: OperationSchemas): string {
  const props = (op.querystring?.properties ?? {}) as Record<string, { enum?: string[] }>;
  const required = Array.isArray(op.querystring?.required) ? op.querystring.required.map(String) : [];
  return required.map((n) => `${n}=${encodeURIComponent(props[n]?.enum?.[0] ?? REQUIRED_QUERY_VALUE[n] ?? '')}&`).join('');
}

/** A concrete URL for an operation: path parameters that are well formed. */
function urlOf(op: OperationSchemas, root = base, query = ''): string {
  const path = op.path.replace(/\{([^}]+)\}/g, (_, name: string) => UNKNOWN_PATH_PARAMETER[name] ?? 'aaaaaaaaaaaaaaaaaaaaaaaa');
  return `${root}${path}${query}`;
}

/** A supplier's invoice received by tenant A (imported once; again, the import leaves it as it is): its id. */
async function receivedDocOfA(): Promise<string> {
  const uuid = '9D1C0E55-0001-4000-8000-000000000101';
  const { xml } = invoiceXml({
    issuer: 'PGA010101AB1',
    receiver: TENANT_A,
    uuid,
    fecha: '2026-04-05T10:00:00',
    lines: [{ code: '15101505', desc: 'Diesel', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  const imported = await call(`${base}/api/imports`, { method: 'POST', ...json({ files: [{ name: 'r.xml', content: xml }] }, { 'x-api-key': KEY_A }) });
  if (imported.status !== 200) throw new Error(`cannot import a received CFDI: ${imported.status} ${imported.body}`);
  return `${TENANT_A}-RCFDI-${uuid}`;
}

/**
 * An export of tenant A, created through the API; `built`: then built by the export job's own
 * function (no export worker runs in this file, so an export left unbuilt stays queued).
 */
async function exportOfA(built: boolean): Promise<{ id: string; download: string | null }> {
  const res = await call(`${base}/api/exports/datasets/financial-docs?format=csv`, { method: 'POST', headers: { 'x-api-key': KEY_A } });
  if (res.status !== 202) throw new Error(`cannot create an export: ${res.status} ${res.body}`);
  const id = (JSON.parse(res.body) as { id: string }).id;
  if (!built) return { id, download: null };
  await runExport({ db: h.db, config: h.config, now: () => new Date(), exports: h.config.exports }, TENANT_A, new ObjectId(id));
  const view = await call(`${base}/api/exports/${id}`, { headers: { 'x-api-key': KEY_A } });
  const url = (JSON.parse(view.body) as { download: { url: string } | null }).download?.url;
  if (!url) throw new Error(`the export was not built: ${view.body}`);
  return { id, download: new URL(url).pathname };
}

/** A signed link (path and query) to the original of tenant A's received invoice, minted on `main`. */
async function sharedLinkOfA(): Promise<string> {
  await receivedDocOfA();
  const res = await call(`${base}/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/links`, { method: 'POST', headers: { 'x-api-key': KEY_A } });
  if (res.status !== 201) throw new Error(`cannot mint a link: ${res.status} ${res.body}`);
  return new URL((JSON.parse(res.body) as { url: string }).url).pathname;
}

/**
 * An original over the printed form's bound (1 MiB of XML, lib/originals/printed-form.ts), kept for
 * tenant A as an import keeps one (the service's body limits keep such a file out of a request here).
 */
const BIG_ORIGINAL_UUID = '9D1C0E55-0413-4000-8000-000000000413';
async function bigOriginalOfA(): Promise<string> {
  const bytes = Buffer.from(`<?xml version="1.0" encoding="UTF-8"?><!--${' '.repeat(1_100_000)}-->`);
  await keepOriginals(h.db, TENANT_A, [{ sha256: 'big-original-413', kind: 'cfdi', uuids: [BIG_ORIGINAL_UUID], bytes, name: 'big.xml' }], new Date());
  return BIG_ORIGINAL_UUID;
}

/** The minimal valid request body of an operation, from the spec examples. */
function exampleBody(op: OperationSchemas): unknown {
  // `individual` spelled out: the service fingerprints the body with its defaults applied.
  if (op.operationId === 'scheduleAlerts')
    return {
      userIds: [`user-${Math.random().toString(36).slice(2, 10)}`],
      ruleId: 'overdue-invoices',
      cycleKey: '2026-03',
      nameAlert: 'cobertura',
      individual: true,
    };
  if (op.operationId === 'importDocuments') {
    const acuse = `<Acuse xmlns="http://cancelacfd.sat.gob.mx" Fecha="2026-10-09T18:00:00" RfcEmisor="${TENANT_A}"><Folios><Folio UUID="1A2B3C4D-0008-4000-8000-000000000008" Motivo="02"/></Folios></Acuse>`;
    return { files: [{ name: 'acuse.xml', content: acuse }] };
  }
  if (op.operationId === 'createWebhook') return { url: 'https://hooks.example.com/coverage', events: ['alert.triggered'] };
  if (op.operationId === 'importDeliveries')
    return { rows: [{ tripId: 'NO-SUCH-TRIP', shipmentId: 'S-1', productCode: '15101505', offloaded: 100, offloadDate: '2026-03-06 10:00' }] };
  if (op.operationId === 'recordLegDelivery') return { offloadDate: '2026-03-06T10:00:00-06:00', products: [{ code: '15101505', offloaded: 19_990 }] };
  if (op.operationId === 'recordCancellationStatus')
    return { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada', consultedAt: '2026-03-10T18:00:00Z' };
  if (op.operationId === 'setReceivedCategoryRules') return { rules: [{ code: '78101802', category: 'subcontractedFreight' }] };
  if (op.operationId === 'assignReceivedDoc') return { tripId: 'TGO-VJ-000123' };
  // A UUID the tenant never received: a 200 whose report rejects the line.
  if (op.operationId === 'assignReceivedDocs') return { rows: [{ uuid: '9D1C0E55-0F0F-4000-8000-000000000F0F', vehicle: 'ECO-101' }] };
  if (op.operationId === 'mcpPost') return INIT;
  if (op.operationId === 'mcpLegacyMessage') return { jsonrpc: '2.0', id: 1, method: 'ping' };
  return {};
}

/** The bodies of the operations that take raw bytes, one media type each (XML, zip, CSV): a 200 with a report. */
const ACUSE_XML = `<Acuse xmlns="http://cancelacfd.sat.gob.mx" Fecha="2026-10-09T18:00:00" RfcEmisor="${TENANT_A}"><Folios><Folio UUID="1A2B3C4D-0008-4000-8000-000000000008" Motivo="02"/></Folios></Acuse>`;
const RAW_BODIES: Record<string, { type: string; data: string | Buffer }> = {
  importDocumentsXml: { type: 'application/xml', data: ACUSE_XML },
  importDocumentsZip: { type: 'application/zip', data: await zipOf([{ name: 'acuse.xml', data: Buffer.from(ACUSE_XML) }]) },
  importDeliveriesCsv: { type: 'text/csv', data: 'tripId,shipmentId,productCode,offloaded,offloadDate\nNO-SUCH-TRIP,S-1,15101505,100,2026-03-06 10:00\n' },
  assignReceivedDocsCsv: { type: 'text/csv', data: 'uuid,vehicle,tripId\n9D1C0E55-0F0F-4000-8000-000000000F0F,ECO-101,\n' },
};

/** A plain valid request with `key`, to `root`. */
function validRequest(op: OperationSchemas, key: string, root = base): Promise<Answer> {
  const headers: Record<string, string> = { 'x-api-key': key };
  const raw = RAW_BODIES[op.operationId];
  if (raw) return call(urlOf(op, root), { method: op.method, headers: { ...headers, 'content-type': raw.type }, body: raw.data });
  if (op.route === '/mcp' || op.route === '/sse') headers.accept = op.method === 'GET' ? 'text/event-stream' : MCP_ACCEPT;
  if (op.body) return call(urlOf(op, root, op.route === '/messages' ? '?sessionId=none' : ''), { method: op.method, ...json(exampleBody(op), headers) });
  const required = requiredQuery(op);
  return call(urlOf(op, root, required ? `?${required.slice(0, -1)}` : ''), { method: op.method, headers });
}

/** A call of a tool that changes something (its REST operation needs the `write` scope). */
const WRITE_CALL = { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'cancelAlertJob', arguments: { id: 'no-such-job' } } };

async function mcpSession(key = KEY_A): Promise<string> {
  const res = await call(`${base}/mcp`, { method: 'POST', ...json(INIT, { 'x-api-key': key, accept: MCP_ACCEPT }) });
  const id = res.headers.get('mcp-session-id');
  if (!id) throw new Error(`no MCP session (${res.status} ${res.body})`);
  await call(`${base}/mcp`, {
    method: 'POST',
    ...json({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'x-api-key': key, accept: MCP_ACCEPT, 'mcp-session-id': id }),
  });
  return id;
}

/** Opens a legacy SSE session of tenant A (its id and a closer). */
const sseSession = () => openSseStream(base, KEY_A);

const withDb = async (mode: 'fail' | 'down', run: () => Promise<Answer>): Promise<Answer> => {
  sw.state.mode = mode;
  try {
    return await run();
  } finally {
    sw.state.mode = 'ok';
  }
};

/** Generic producers, used for every operation that documents the status. */
const generic: Record<string, Producer> = {
  async '200'(op) {
    return validRequest(op, KEY_A);
  },
  // Accepted for later (an export queued).
  async '202'(op) {
    return validRequest(op, KEY_A);
  },
  // Every operation refuses unknown query parameters, those that take none included.
  async '400'(op) {
    return call(urlOf(op, base, '?unknownParameter=1'), {
      method: op.method,
      headers: { 'x-api-key': KEY_A, accept: MCP_ACCEPT },
      ...(op.body ? json(exampleBody(op), { 'x-api-key': KEY_A, accept: MCP_ACCEPT }) : {}),
    });
  },
  async '401'(op) {
    return call(urlOf(op), { method: op.method, ...(op.body ? json(exampleBody(op)) : {}) });
  },
  async '403'(op) {
    // A key of the tenant that lacks the scope this operation needs.
    const { key } = await createApiKey(h.db, TENANT_A, `403 ${op.operationId}`, [op.method === 'GET' ? 'write' : 'read']);
    return validRequest(op, key);
  },
  async '413'(op) {
    const big = 'x'.repeat(70_000); // over BODY_LIMIT_BYTES=65536 of `main`
    const type = RAW_BODIES[op.operationId]?.type;
    return call(urlOf(op), {
      method: op.method,
      headers: { 'x-api-key': KEY_A, 'content-type': type ?? 'application/json', accept: MCP_ACCEPT },
      body: type ? big : JSON.stringify({ big }),
    });
  },
  async '415'(op) {
    return call(urlOf(op, base, op.route === '/messages' ? '?sessionId=none' : ''), {
      method: op.method,
      headers: { 'x-api-key': KEY_A, 'content-type': 'text/plain', accept: MCP_ACCEPT },
      body: 'hello',
    });
  },
  async '429'(op) {
    // A fresh key gets its own budget of one request on `limited`.
    const { key } = await createApiKey(h.db, TENANT_A, `429 ${op.operationId}`);
    // An operation that needs no key (/ready, shared links) never looks a presented key up, only in the cache
    // (lib/http/rate-limit.ts): the key is verified first where one is needed, which also spends its budget.
    if (!op.secured) await call(`${limitedBase}/api/financial-docs`, { headers: { 'x-api-key': key } });
    const first = await validRequest(op, key, limitedBase);
    if (first.status === 429) return first;
    return validRequest(op, key, limitedBase);
  },
  // A fresh key: resolved keys are cached, so only an unseen key makes even the
  // authentication step (the first database read of MCP transports) meet the failure.
  async '500'(op) {
    const { key } = await createApiKey(h.db, TENANT_A, `500 ${op.operationId}`);
    return withDb('fail', () => validRequest(op, key));
  },
  async '503'(op) {
    const { key } = await createApiKey(h.db, TENANT_A, `503 ${op.operationId}`);
    return withDb('down', () => validRequest(op, key));
  },
};

/** A fresh webhook endpoint of tenant A; returns its id. */
async function newWebhook(): Promise<string> {
  const res = await call(`${base}/api/webhooks`, {
    method: 'POST',
    ...json({ url: 'https://hooks.example.com/coverage', events: ['alert.triggered'] }, { 'x-api-key': KEY_A }),
  });
  if (res.status !== 201) throw new Error(`cannot create a webhook: ${res.status} ${res.body}`);
  return (JSON.parse(res.body) as { id: string }).id;
}

/** The operation on a real endpoint of tenant A (200/202), or on an id nobody has (404). */
const onWebhook =
  (status: string): Producer =>
  async (op) => {
    const id = status === '404' ? 'aaaaaaaaaaaaaaaaaaaaaaaa' : await newWebhook();
    const res = await call(`${base}${op.path.replace('{id}', id)}`, { method: op.method, headers: { 'x-api-key': KEY_A } });
    if (status !== '404' && op.operationId !== 'deleteWebhook') await call(`${base}/api/webhooks/${id}`, { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
    return res;
  };

/** Producers for what only one operation does. */
/** A cursor in the documented form (spec: Cursor) that this service never issued: 404. */
const UNISSUED_CURSOR = `eyJ2IjoxLCJsIjoi${'A'.repeat(60)}.${'A'.repeat(43)}`;

const specific: Record<string, Record<string, Producer>> = {
  listFinancialDocs: {
    async '404'() {
      return call(`${base}/api/financial-docs?cursor=${UNISSUED_CURSOR}`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  listShipments: {
    async '404'() {
      return call(`${base}/api/shipments?cursor=${UNISSUED_CURSOR}`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  createWebhook: {
    async '201'(op) {
      const res = await validRequest(op, KEY_A);
      if (res.status === 201)
        await call(`${base}/api/webhooks/${(JSON.parse(res.body) as { id: string }).id}`, { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
      return res;
    },
    async '409'(op) {
      // Tenant B fills its 20 endpoints (WEBHOOK_MAX_ENDPOINTS); one more is refused.
      for (let i = 0; i < 25; i++) {
        const res = await call(urlOf(op), {
          method: 'POST',
          ...json({ url: `https://hooks.example.com/b/${i}`, events: ['alert.cleared'] }, { 'x-api-key': KEY_B }),
        });
        if (res.status !== 201) return res;
      }
      throw new Error('no 409 after 25 endpoints');
    },
  },
  getWebhook: { '200': onWebhook('200'), '404': onWebhook('404') },
  deleteWebhook: { '200': onWebhook('200'), '404': onWebhook('404') },
  rotateWebhookSecret: { '200': onWebhook('200'), '404': onWebhook('404') },
  sendWebhookTest: { '202': onWebhook('202'), '404': onWebhook('404') },
  listWebhookDeliveries: { '200': onWebhook('200'), '404': onWebhook('404') },
  scheduleAlerts: {
    async '403'(op) {
      return call(urlOf(op), { method: 'POST', ...json({ ...(exampleBody(op) as object), tenantId: TENANT_B }, { 'x-api-key': KEY_A }) });
    },
    async '409'(op) {
      // Another request with this key is in flight (a pending claim): after waiting for it, 409.
      const body = exampleBody(op);
      const now = new Date();
      await claimIdempotencyKey(h.db, {
        _id: idempotencyRecordId({ tenant: TENANT_A, key: 'in-flight-key', operation: 'scheduleAlerts' }),
        tenant: TENANT_A,
        key: 'in-flight-key',
        operation: 'scheduleAlerts',
        fingerprint: requestFingerprint(body),
        state: 'pending',
        leaseUntil: new Date(now.getTime() + 60_000),
        status: null,
        body: null,
        createdAt: now,
        expiresAt: new Date(now.getTime() + 3_600_000),
      });
      return call(urlOf(op), { method: 'POST', ...json(body, { 'x-api-key': KEY_A, 'idempotency-key': 'in-flight-key' }) });
    },
  },
  cancelAlertJob: {
    async '200'() {
      const scheduled = await call(`${base}/api/alerts/schedule`, {
        method: 'POST',
        ...json(exampleBody({ operationId: 'scheduleAlerts' } as OperationSchemas), { 'x-api-key': KEY_A }),
      });
      const id = (JSON.parse(scheduled.body) as { jobs: { jobId: string }[] }).jobs[0]!.jobId;
      return call(`${base}/api/alerts/jobs/${id}`, { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
    },
  },
  recordCancellationStatus: {
    async '200'(op) {
      // An invoice with a pending cancellation request: the receiver's rejection is recorded.
      const doc = makeFinancialDoc({ tenant: TENANT_A, client: CLIENT_COMPANY, date: '2026-03-05T10:00', concepts: [freight(12_000)] });
      const requestedAt = Date.parse('2026-03-09T17:00:00Z');
      doc.canceled.push({
        id: `cx-${doc.id}`,
        target: 'invoice',
        uuid: doc.invoice.uuid,
        date: requestedAt,
        motive: '02',
        replacementUuid: null,
        status: 'pending',
        requestedAt,
        statusSource: 'acknowledgement',
        satStatus: '201',
      });
      await financialDocs(h.db).insertOne(withDerivedFields(doc));
      return call(`${base}${op.path.replace('{id}', doc.id)}`, { method: 'PUT', ...json(exampleBody(op), { 'x-api-key': KEY_A }) });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'PUT', ...json(exampleBody(op), { 'x-api-key': KEY_A }) });
    },
    async '409'(op) {
      // An invoice without any cancellation request: the SAT's answer has nothing to move.
      const doc = await financialDocs(h.db).findOne({ company: TENANT_A, canceled: { $size: 0 } });
      return call(`${base}${op.path.replace('{id}', doc!._id)}`, { method: 'PUT', ...json(exampleBody(op), { 'x-api-key': KEY_A }) });
    },
  },
  listReceivedDocs: {
    async '404'() {
      return call(`${base}/api/received-docs?cursor=${UNISSUED_CURSOR}`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  listAlerts: {
    async '404'() {
      return call(`${base}/api/alerts?cursor=${UNISSUED_CURSOR}`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  listAlertJobs: {
    async '404'() {
      return call(`${base}/api/alerts/jobs?cursor=${UNISSUED_CURSOR}`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  listExports: {
    async '404'() {
      return call(`${base}/api/exports?cursor=${UNISSUED_CURSOR}`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  getCfdiOriginal: {
    async '200'() {
      await receivedDocOfA();
      return call(`${base}/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
  },
  createCfdiOriginalLink: {
    async '201'() {
      await receivedDocOfA();
      return call(`${base}/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/links?expiresIn=60`, { method: 'POST', headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'POST', headers: { 'x-api-key': KEY_A } });
    },
  },
  getSharedCfdiOriginal: {
    async '200'() {
      return call(`${base}${await sharedLinkOfA()}`);
    },
    // A token this service never signed (well formed: the spec's pattern).
    async '404'(op) {
      return call(urlOf(op));
    },
    // The link is valid: the failure meets the file's lookup.
    async '500'() {
      const link = await sharedLinkOfA();
      return withDb('fail', () => call(`${base}${link}`));
    },
    async '503'() {
      const link = await sharedLinkOfA();
      return withDb('down', () => call(`${base}${link}`));
    },
  },
  getCfdiPrintedForm: {
    async '200'() {
      await receivedDocOfA();
      return call(`${base}/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/pdf`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
    async '413'() {
      return call(`${base}/api/cfdi-originals/${await bigOriginalOfA()}/pdf`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  createCfdiPrintedFormLink: {
    async '201'() {
      await receivedDocOfA();
      return call(`${base}/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/pdf/links?expiresIn=60`, {
        method: 'POST',
        headers: { 'x-api-key': KEY_A },
      });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'POST', headers: { 'x-api-key': KEY_A } });
    },
  },
  getExport: {
    async '200'() {
      return call(`${base}/api/exports/${(await exportOfA(false)).id}`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
  },
  getExportFile: {
    async '200'() {
      return call(`${base}/api/exports/${(await exportOfA(true)).id}/file`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
    // Queued: no worker builds it here.
    async '409'() {
      return call(`${base}/api/exports/${(await exportOfA(false)).id}/file`, { headers: { 'x-api-key': KEY_A } });
    },
  },
  getSharedExport: {
    async '200'() {
      return call(`${base}${(await exportOfA(true)).download!}`);
    },
    // A token this service never signed (well formed: the spec's pattern).
    async '404'(op) {
      return call(urlOf(op));
    },
    // The link is valid: the failure meets the export's lookup.
    async '500'() {
      const link = (await exportOfA(true)).download!;
      return withDb('fail', () => call(`${base}${link}`));
    },
    async '503'() {
      const link = (await exportOfA(true)).download!;
      return withDb('down', () => call(`${base}${link}`));
    },
  },
  getSharedCfdiPrintedForm: {
    async '200'() {
      return call(`${base}${await sharedLinkOfA()}/pdf`);
    },
    // A token this service never signed (well formed: the spec's pattern).
    async '404'(op) {
      return call(urlOf(op));
    },
    async '413'() {
      const uuid = await bigOriginalOfA();
      const res = await call(`${base}/api/cfdi-originals/${uuid}/pdf/links`, { method: 'POST', headers: { 'x-api-key': KEY_A } });
      if (res.status !== 201) throw new Error(`cannot mint a link: ${res.status} ${res.body}`);
      return call(`${base}${new URL((JSON.parse(res.body) as { url: string }).url).pathname}`);
    },
    async '500'() {
      const link = await sharedLinkOfA();
      return withDb('fail', () => call(`${base}${link}/pdf`));
    },
    async '503'() {
      const link = await sharedLinkOfA();
      return withDb('down', () => call(`${base}${link}/pdf`));
    },
  },
  getReceivedDoc: {
    async '200'() {
      return call(`${base}/api/received-docs/${await receivedDocOfA()}`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
  },
  assignReceivedDoc: {
    async '200'() {
      const trip = (await trips(h.db).findOne({ company: TENANT_A }))!;
      return call(`${base}/api/received-docs/${await receivedDocOfA()}/assignment`, { method: 'PUT', ...json({ tripId: trip._id }, { 'x-api-key': KEY_A }) });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'PUT', ...json(exampleBody(op), { 'x-api-key': KEY_A }) });
    },
  },
  unassignReceivedDoc: {
    async '200'() {
      return call(`${base}/api/received-docs/${await receivedDocOfA()}/assignment`, { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
    },
  },
  getFinancialDoc: {
    async '200'() {
      const doc = await financialDocs(h.db).findOne({ company: TENANT_A });
      return call(`${base}/api/financial-docs/${doc!._id}`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
  },
  getShipment: {
    async '200'() {
      const trip = await trips(h.db).findOne({ company: TENANT_A });
      return call(`${base}/api/shipments/${trip!._id}`, { headers: { 'x-api-key': KEY_A } });
    },
    async '404'(op) {
      return call(urlOf(op), { headers: { 'x-api-key': KEY_A } });
    },
  },
  recordLegDelivery: {
    async '200'(op) {
      // A leg of tenant A (seedTwoTenants: one diesel product), delivered with its own loaded litres.
      const trip = (await trips(h.db).findOne({ company: TENANT_A }))!;
      const leg = trip.shipments[0]!;
      const body = {
        offloadDate: new Date(leg.loadDate! + 3_600_000).toISOString(),
        products: leg.products.map((p) => ({ code: p.code, offloaded: p.loaded })),
      };
      return call(`${base}${op.path.replace('{id}', trip._id).replace('{shipmentId}', leg.shipment)}`, {
        method: 'PUT',
        ...json(body, { 'x-api-key': KEY_A }),
      });
    },
    async '404'(op) {
      return call(urlOf(op), { method: 'PUT', ...json(exampleBody(op), { 'x-api-key': KEY_A }) });
    },
  },
  getReady: {
    async '503'() {
      return withDb('down', () => call(`${base}/ready`));
    },
  },
  getHealth: {
    async '503'() {
      return call(`${failingBase}/health`);
    },
  },
  mcpPost: {
    async '202'() {
      const id = await mcpSession();
      return call(`${base}/mcp`, {
        method: 'POST',
        ...json({ jsonrpc: '2.0', method: 'notifications/initialized' }, { 'x-api-key': KEY_A, accept: MCP_ACCEPT, 'mcp-session-id': id }),
      });
    },
    async '400'() {
      return call(`${base}/mcp`, { method: 'POST', ...json({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'x-api-key': KEY_A, accept: MCP_ACCEPT }) });
    },
    // A read-only key calling a tool that changes something.
    async '403'() {
      const { key } = await createApiKey(h.db, TENANT_A, '403 mcpPost', ['read']);
      const id = await mcpSession(key);
      return call(`${base}/mcp`, { method: 'POST', ...json(WRITE_CALL, { 'x-api-key': key, accept: MCP_ACCEPT, 'mcp-session-id': id }) });
    },
    async '404'() {
      return call(`${base}/mcp`, {
        method: 'POST',
        ...json({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'x-api-key': KEY_A, accept: MCP_ACCEPT, 'mcp-session-id': 'no-such-session' }),
      });
    },
    async '406'() {
      return call(`${base}/mcp`, { method: 'POST', ...json(INIT, { 'x-api-key': KEY_A, accept: 'text/html' }) });
    },
  },
  mcpStream: {
    async '200'() {
      const id = await mcpSession();
      return call(`${base}/mcp`, { headers: { 'x-api-key': KEY_A, accept: 'text/event-stream', 'mcp-session-id': id } });
    },
    async '400'() {
      return call(`${base}/mcp`, { headers: { 'x-api-key': KEY_A, accept: 'text/event-stream' } });
    },
    async '404'() {
      return call(`${base}/mcp`, { headers: { 'x-api-key': KEY_A, accept: 'text/event-stream', 'mcp-session-id': 'no-such-session' } });
    },
    async '406'() {
      const id = await mcpSession();
      return call(`${base}/mcp`, { headers: { 'x-api-key': KEY_A, accept: 'application/json', 'mcp-session-id': id } });
    },
    async '409'() {
      const id = await mcpSession();
      const controller = new AbortController();
      const first = await fetch(`${base}/mcp`, {
        headers: { 'x-api-key': KEY_A, accept: 'text/event-stream', 'mcp-session-id': id },
        signal: controller.signal,
      });
      try {
        if (first.status !== 200) return { status: first.status, headers: first.headers, body: await first.text() };
        return await call(`${base}/mcp`, { headers: { 'x-api-key': KEY_A, accept: 'text/event-stream', 'mcp-session-id': id } });
      } finally {
        controller.abort();
      }
    },
  },
  mcpDeleteSession: {
    async '200'() {
      const id = await mcpSession();
      return call(`${base}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEY_A, 'mcp-session-id': id } });
    },
    async '400'() {
      return call(`${base}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEY_A } });
    },
    async '404'() {
      return call(`${base}/mcp`, { method: 'DELETE', headers: { 'x-api-key': KEY_A, 'mcp-session-id': 'no-such-session' } });
    },
  },
  mcpLegacyMessage: {
    async '202'() {
      const session = await sseSession();
      try {
        return await call(`${base}/messages?sessionId=${session.id}`, {
          method: 'POST',
          ...json({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': KEY_A }),
        });
      } finally {
        session.close();
      }
    },
    async '400'() {
      return call(`${base}/messages`, { method: 'POST', ...json({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': KEY_A }) });
    },
    async '403'() {
      const { key } = await createApiKey(h.db, TENANT_A, '403 mcpLegacyMessage', ['read']);
      const session = await openSseStream(base, key);
      try {
        return await call(`${base}/messages?sessionId=${session.id}`, { method: 'POST', ...json(WRITE_CALL, { 'x-api-key': key }) });
      } finally {
        session.close();
      }
    },
    async '404'() {
      return call(`${base}/messages?sessionId=no-such-session`, { method: 'POST', ...json({ jsonrpc: '2.0', id: 1, method: 'ping' }, { 'x-api-key': KEY_A }) });
    },
  },
};

/** Statuses only a generic producer covers when the operation is of the right kind. */
function producerFor(op: OperationSchemas, status: string): Producer | undefined {
  const own = specific[op.operationId]?.[status];
  if (own) return own;
  if ((status === '413' || status === '415') && !op.body && !RAW_BODIES[op.operationId]) return undefined;
  if (status === '401' && !op.secured) return undefined;
  return generic[status];
}

const isJson = (a: Answer) => (a.headers.get('content-type') ?? '').includes('application/json');

for (const op of operations) {
  t.test(`${op.operationId}: every documented status is produced`, async (t) => {
    for (const status of Object.keys(op.responses).sort()) {
      const produce = producerFor(op, status);
      if (!produce) {
        t.fail(`${op.method} ${op.path} documents ${status} but nothing produces it: add a producer in this file, or remove the status from the spec`);
        continue;
      }
      const answer = await produce(op);
      t.equal(answer.status, Number(status), `${op.method} ${op.path} → ${status}${answer.status === Number(status) ? '' : `: ${answer.body.slice(0, 300)}`}`);
      if (answer.status !== Number(status)) continue;
      t.equal(answer.headers.get('x-content-type-options'), 'nosniff', `${status} carries nosniff`);
      if (op.path.startsWith('/api/') || op.path === '/mcp' || op.path === '/messages')
        t.equal(answer.headers.get('cache-control'), 'no-store', `${status} is not cacheable`);
      const validate = validators[`${op.method} ${op.route} response:${status}`];
      if (validate && isJson(answer)) {
        const ok = validate(JSON.parse(answer.body));
        t.ok(ok, `${op.method} ${op.path} ${status} body matches the spec`, { errors: validate.errors?.slice(0, 3), body: answer.body.slice(0, 300) });
      }
      // Errors in the service's shape (not the JSON-RPC ones of the MCP protocol) carry a reason that fits the status.
      if (Number(status) >= 400 && isJson(answer)) {
        const parsed = JSON.parse(answer.body) as { jsonrpc?: string };
        if (parsed.jsonrpc === undefined)
          t.equal(errorProblem(Number(status), parsed), null, `${op.method} ${op.path} ${status}: reason fits the status, fields follow details`, {
            body: answer.body.slice(0, 300),
          });
      }
      if (status === '500') t.notMatch(answer.body, /injected|at .*\.ts|Error:/, 'no internal message or stack in a 500');
    }
  });
}

t.test('one rule for unknown query parameters: every operation answers 400 naming them', async (t) => {
  for (const op of operations) {
    const headers: Record<string, string> = {
      'x-api-key': KEY_A,
      accept: op.route === '/sse' || (op.route === '/mcp' && op.method === 'GET') ? 'text/event-stream' : MCP_ACCEPT,
    };
    const known = op.route === '/messages' ? 'sessionId=none&' : requiredQuery(op);
    const res = await call(urlOf(op, base, `?${known}unknownParameter=1&other_one=2`), {
      method: op.method,
      ...(op.body ? json(exampleBody(op), headers) : { headers }),
    });
    t.equal(res.status, 400, `${op.method} ${op.path}`);
    if (res.status !== 400) continue;
    const e = (JSON.parse(res.body) as { error: { reason: string; fields?: { in: string; name: string }[] } }).error;
    t.equal(e.reason, 'invalid_parameter', `${op.operationId}: invalid_parameter`);
    t.same(e.fields?.map((f) => `${f.in} ${f.name}`).sort(), ['query other_one', 'query unknownParameter'], `${op.operationId}: both named`);
  }
});

t.test('every operation got at least one status checked', async (t) => {
  t.ok(operations.length >= 10, `${operations.length} operations in the spec`);
  t.ok(main.server.listening && limited.server.listening);
});
