/**
 * The MCP cases of `npm run bench -- --mcp` (scripts/bench.ts): every tool the service offers
 * (`tools/list` with every toolset) called by the SDK's MCP client over Streamable HTTP on
 * 127.0.0.1, as an agent calls it, for the bench's tenant: issue 37 asks each to answer a 1M/1M
 * tenant within 5 s. Reads run with their defaults (a report's default period, a list's first
 * page) and ids taken from the tenant's own data; writes with the spec's examples on real
 * documents, in an order that hands each its ids (the webhook it creates is then deleted, the
 * alert job cancelled, the exports discarded before they are built, the category rules set to
 * what they were). A tool error is an answer too (its status is shown): the goal is the time.
 */
import type { FastifyInstance } from 'fastify';
import type { AddressInfo } from 'node:net';
import type { Db } from 'mongodb';
import { ObjectId } from 'mongodb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { COLLECTIONS } from '../lib/db/collections.ts';
import { exportsCollection } from '../lib/exports/exports-repo.ts';
import { percentile } from '../lib/analytics/stats.ts';
import { cpuMs } from './proc-stats.ts';

export interface McpResult {
  tool: string;
  calls: number;
  medianMs: number;
  maxMs: number;
  cpuMs: number;
  /** `ok`, or the tool error's HTTP status and reason. */
  answer: string;
  /** The JSON text of the last answer. */
  bytes: number;
}

/** What the tenant's own data and the earlier calls hand the later ones. */
interface Ids {
  doc: string;
  trip: string;
  leg: { shipment: string; products: { code: string; litres: number }[]; offloadDate: string };
  received: { id: string; uuid: string } | null;
  cfdiUuid: string;
  vehicle: string;
  rules: unknown;
  webhook?: string;
  alertJob?: string;
  exportId?: string;
}

type Args = Record<string, unknown>;
type Answer = Record<string, unknown> | undefined;

/**
 * Arguments of the tools that need some, in call order (a tool not listed runs with none). `after`
 * keeps what an answer hands a later call; `runs: 'once'` for a write that must not repeat.
 */
const CASES: { tool: string; args: (ids: Ids) => Args; after?: (ids: Ids, answer: Answer) => void; once?: boolean }[] = [
  { tool: 'getFinancialDoc', args: (ids) => ({ id: ids.doc }) },
  { tool: 'getShipment', args: (ids) => ({ id: ids.trip }) },
  { tool: 'getReceivedDoc', args: (ids) => ({ id: ids.received?.id ?? `${ids.doc}-none` }) },
  { tool: 'createCfdiOriginalLink', args: (ids) => ({ uuid: ids.cfdiUuid }) },
  { tool: 'createCfdiPrintedFormLink', args: (ids) => ({ uuid: ids.cfdiUuid }) },
  { tool: 'listTaxPositionLines', args: () => ({ figure: 'vatCollected' }) },
  // Writes: an SAT answer without a pending request, the leg's own delivery again, the spec's acknowledgement example.
  {
    tool: 'recordCancellationStatus',
    args: (ids) => ({ id: ids.doc, body: { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada', consultedAt: '2026-11-16T17:00:00Z' } }),
  },
  {
    tool: 'recordLegDelivery',
    args: (ids) => ({
      id: ids.trip,
      shipmentId: ids.leg.shipment,
      body: { offloadDate: ids.leg.offloadDate, ticket: 'TK-BENCH-1', products: ids.leg.products.map((p) => ({ code: p.code, offloaded: p.litres })) },
    }),
  },
  {
    tool: 'importDeliveries',
    args: (ids) => ({
      body: {
        rows: ids.leg.products.map((p) => ({
          tripId: ids.trip,
          shipmentId: ids.leg.shipment,
          productCode: p.code,
          offloaded: p.litres,
          offloadDate: ids.leg.offloadDate,
          ticket: 'TK-BENCH-1',
        })),
      },
    }),
  },
  {
    tool: 'importDocuments',
    args: () => ({
      body: {
        files: [
          {
            name: 'acuse-bench.xml',
            content:
              '<Acuse xmlns="http://cancelacfd.sat.gob.mx" Fecha="2026-10-09T18:00:00" RfcEmisor="TGO850101AB1"><Folios><Folio UUID="1A2B3C4D-0008-4000-8000-000000000008" Motivo="02" EstatusUUID="201"/></Folios></Acuse>',
          },
        ],
      },
    }),
  },
  { tool: 'assignReceivedDoc', args: (ids) => ({ id: ids.received?.id ?? `${ids.doc}-none`, body: { vehicle: ids.vehicle } }) },
  { tool: 'unassignReceivedDoc', args: (ids) => ({ id: ids.received?.id ?? `${ids.doc}-none` }) },
  { tool: 'assignReceivedDocs', args: (ids) => ({ body: { rows: [{ uuid: ids.received?.uuid ?? ids.cfdiUuid }] } }) },
  { tool: 'setReceivedCategoryRules', args: (ids) => ({ body: ids.rules }) },
  {
    tool: 'scheduleAlerts',
    args: () => ({
      body: {
        tenantId: 'TGO850101AB1',
        userIds: ['user-bench'],
        ruleId: 'overdue-invoices',
        cycleKey: '2026-11',
        nameAlert: 'Bench',
        extraData: {},
        dueDate: '2026-12-01T14:00:00Z',
        individual: true,
      },
    }),
    after: (ids, a) => {
      const jobs = a?.jobs;
      const first = Array.isArray(jobs) ? (jobs[0] as { jobId?: string } | undefined) : undefined;
      if (first?.jobId) ids.alertJob = first.jobId;
    },
  },
  { tool: 'cancelAlertJob', args: (ids) => ({ id: ids.alertJob ?? '000000000000000000000000' }) },
  {
    tool: 'createWebhook',
    args: () => ({ body: { url: 'https://hooks.example.com/freight-bench', events: ['alert.triggered'], description: 'bench' } }),
    after: (ids, a) => {
      if (typeof a?.id === 'string') ids.webhook = a.id;
    },
  },
  { tool: 'getWebhook', args: (ids) => ({ id: ids.webhook }) },
  { tool: 'listWebhookDeliveries', args: (ids) => ({ id: ids.webhook }) },
  { tool: 'rotateWebhookSecret', args: (ids) => ({ id: ids.webhook }) },
  { tool: 'sendWebhookTest', args: (ids) => ({ id: ids.webhook }) },
  { tool: 'deleteWebhook', args: (ids) => ({ id: ids.webhook }) },
  {
    tool: 'exportFinancialDocs',
    args: () => ({ format: 'csv' }),
    after: (ids, a) => {
      if (typeof a?.id === 'string') ids.exportId = a.id;
    },
  },
  { tool: 'getExport', args: (ids) => ({ id: ids.exportId ?? '000000000000000000000000' }) },
  { tool: 'exportOriginals', args: () => ({ startDate: '2026-10-01', endDate: '2026-10-31' }) },
];

/** Every other export tool: a CSV of the dataset's defaults. */
const isExportTool = (name: string): boolean => /^export[A-Z]/.test(name);

async function discoverIds(app: FastifyInstance, apiKey: string): Promise<Ids> {
  const get = async (url: string): Promise<Record<string, unknown>> => {
    const res = await app.inject({ method: 'GET', url, headers: { 'x-api-key': apiKey } });
    if (res.statusCode !== 200) throw new Error(`bench --mcp: GET ${url} answered ${res.statusCode}`);
    return res.json<Record<string, unknown>>();
  };
  const first = (page: Record<string, unknown>): Record<string, unknown> | undefined => (page.data as Record<string, unknown>[] | undefined)?.[0];
  const doc = first(await get('/api/financial-docs?limit=1&detail=full'));
  const trip = first(await get('/api/shipments?limit=1&detail=full'));
  if (!doc || !trip) throw new Error('bench --mcp: the tenant has no financial document or no trip');
  const leg = (trip.shipments as Record<string, unknown>[])[0] as {
    shipment: string;
    loadDate: number | null;
    unloadDate: number | null;
    products: { code: string; loaded: number; offloaded?: number | null }[];
  };
  const received = first(await get('/api/received-docs?limit=1'));
  const rules = await get('/api/received-category-rules');
  return {
    doc: String(doc.id),
    trip: String(trip.id),
    leg: {
      shipment: leg.shipment,
      products: leg.products.map((p) => ({ code: p.code, litres: p.offloaded ?? p.loaded })),
      // A leg in transit is offloaded a minute after it was loaded (the clock's today may be that very day).
      offloadDate: new Date(leg.unloadDate ?? (leg.loadDate ?? Date.parse('2026-11-01T12:00:00Z')) + 60_000).toISOString(),
    },
    received: received ? { id: String(received.id), uuid: String(received.uuid) } : null,
    cfdiUuid: (doc.invoice as { uuid?: string } | undefined)?.uuid ?? '5E2D6AF3-1B4C-4D8E-9F0A-1B2C3D4E5F60',
    vehicle: (trip.vehicle as { id?: string } | undefined)?.id ?? 'ECO-101',
    rules: { rules: (rules.rules as unknown[] | undefined) ?? [] },
  };
}

export async function runMcpCases(opts: {
  app: FastifyInstance;
  db: Db;
  apiKey: string;
  jvmPid: number | null;
  runs: number;
  warmup: number;
  only?: string;
}): Promise<McpResult[]> {
  const { app, apiKey, jvmPid } = opts;
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const client = new Client({ name: 'bench-mcp', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp?toolsets=all', base), { requestInit: { headers: { 'x-api-key': apiKey } } }));
  const ids = await discoverIds(app, apiKey);
  const exportIds: string[] = [];
  try {
    const { tools } = await client.listTools();
    const cases = new Map(CASES.map((c) => [c.tool, c]));
    for (const tool of tools) {
      const required = (tool.inputSchema.required ?? []).filter((r) => r !== 'format');
      if (!cases.has(tool.name) && required.length)
        throw new Error(`bench --mcp: the tool ${tool.name} needs arguments (${required.join(', ')}): add it to CASES`);
    }
    // Listed order: reads without arguments first, then the cases in their order, then the exports.
    const order = [
      ...tools.filter((t) => !cases.has(t.name) && !isExportTool(t.name)).map((t) => t.name),
      ...CASES.map((c) => c.tool).filter((n) => tools.some((t) => t.name === n)),
      ...tools.filter((t) => !cases.has(t.name) && isExportTool(t.name)).map((t) => t.name),
    ];
    const results: McpResult[] = [];
    for (const name of order) {
      if (opts.only && !name.includes(opts.only)) continue;
      const c = cases.get(name);
      const writes = tools.find((t) => t.name === name)?.annotations?.readOnlyHint !== true;
      const calls = writes ? 1 : opts.warmup + opts.runs;
      const times: number[] = [];
      const cpu: number[] = [];
      let answer = 'ok';
      let bytes = 0;
      for (let i = 0; i < calls; i++) {
        const args = c ? c.args(ids) : isExportTool(name) ? { format: 'csv' } : {};
        const node0 = process.cpuUsage();
        const jvm0 = cpuMs(jvmPid);
        const t0 = performance.now();
        const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600_000 });
        const ms = performance.now() - t0;
        const node = process.cpuUsage(node0);
        const structured = r.structuredContent as Answer;
        if (writes || i >= opts.warmup) {
          times.push(ms);
          cpu.push((node.user + node.system) / 1000 + cpuMs(jvmPid) - jvm0);
        }
        const error = structured?.error as { code?: number; reason?: string; message?: string; details?: string[] } | undefined;
        answer = r.isError ? `${error?.code ?? 'error'} ${error?.reason ?? ''}`.trim() : 'ok';
        if (r.isError) process.stderr.write(`  mcp ${name}: ${error?.message ?? ''} ${(error?.details ?? []).join('; ')}\n`);
        bytes = JSON.stringify(structured ?? r.content).length;
        c?.after?.(ids, structured);
        if (isExportTool(name) && typeof structured?.id === 'string') exportIds.push(structured.id);
      }
      const round = (x: number | null): number => Math.round((x ?? 0) * 10) / 10;
      results.push({
        tool: name,
        calls: times.length,
        medianMs: round(percentile(times, 50)),
        maxMs: round(Math.max(...times)),
        cpuMs: round(percentile(cpu, 50)),
        answer,
        bytes,
      });
      process.stderr.write(`  mcp ${name}: median ${round(percentile(times, 50))} ms, ${answer}\n`);
    }
    return results;
  } finally {
    await client.close();
    // The exports queued here are discarded before any worker builds them (a bench store is someone's `npm start` store too).
    const oids = exportIds.map((id) => new ObjectId(id));
    await opts.db.collection(COLLECTIONS.exportJobs).deleteMany({ _id: { $in: oids } });
    await exportsCollection(opts.db).deleteMany({ _id: { $in: oids } });
  }
}

export function formatMcpResults(results: readonly McpResult[]): string {
  const w = Math.max(...results.map((r) => r.tool.length), 4);
  return [
    `| ${'tool'.padEnd(w)} | calls | median ms | max ms | CPU ms (median) | answer | bytes |`,
    `| ${'-'.repeat(w)} | ----: | --------: | -----: | --------------: | ------ | ----: |`,
    ...results.map(
      (r) =>
        `| ${r.tool.padEnd(w)} | ${String(r.calls).padStart(5)} | ${String(r.medianMs).padStart(9)} | ${String(r.maxMs).padStart(6)} | ${String(r.cpuMs).padStart(15)} | ${r.answer} | ${r.bytes} |`,
    ),
  ].join('\n');
}
