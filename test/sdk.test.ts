/**
 * The typed client SDK (generated/sdk.ts: openapi-fetch over the spec's types) against the live
 * service as `npm start` runs it, on the demo dataset. Every operation of the spec is called
 * through it (the last test fails naming any operation nobody called), with the compiler
 * checking paths, parameters and bodies; the answers are the service's, not stubs.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import { createFreightClient, type FreightClient, type paths } from '../generated/sdk.ts';
import type { paths as mcpPaths } from '../generated/api-mcp.d.ts';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { listOperations } from '../lib/spec/operations.ts';
import { startService } from './helpers/service.ts';
import { invoiceXml } from './helpers/cfdi-builder.ts';
import { zipOf } from './helpers/cfdi-fixtures.ts';
import { V1_SUNSET_AT } from '../lib/http/deprecation.ts';

t.setTimeout(300_000);

const engine = await startEmbeddedMongo({ shortLived: true });
t.teardown(() => engine.stop());
{
  const { client, db } = await connectMongo(engine.uri, 'sdk');
  await ensureIndexes(db);
  // Only the demo tenant every call below is made as: the other's load (its rollup rebuild the larger part) was half the load's CPU.
  await loadDemoData(db, { invoices: 300, trips: 300, tenants: [DEMO_TENANTS[0]!.rfc] });
  await client.close();
}
// EXPORT_MAX_ACTIVE: every dataset's export is queued at once below.
const service = await startService({
  mongodbUri: engine.uri,
  mongodbDb: 'sdk',
  env: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_ALLOWED_PORTS: '*', EXPORT_MAX_ACTIVE: '50', EXPORT_PROCESS_EVERY_MS: '100' },
});
t.teardown(() => service.stop());

const key = DEMO_TENANTS[0]!.apiKey;
const api: FreightClient = createFreightClient({ baseUrl: service.base, apiKey: key });
const bearer: FreightClient = createFreightClient({ baseUrl: service.base, apiKey: key, bearer: true });
const called = new Set<string>();
const MCP_ACCEPT = 'application/json, text/event-stream';
const initialize = {
  jsonrpc: '2.0' as const,
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sdk-test', version: '1' } },
};

t.test('health and readiness (no key needed)', async (t) => {
  const health = await createFreightClient({ baseUrl: service.base, apiKey: 'none' }).GET('/health');
  t.equal(health.data?.status, 'ok');
  called.add('getHealth');
  const ready = await api.GET('/ready');
  t.match(ready.data, { status: 'ready', database: 'up' });
  called.add('getReady');
});

t.test('financial documents: summary and full pages, one document', async (t) => {
  const summary = await api.GET('/api/financial-docs', { params: { query: { limit: 2, paymentStatus: 'partial' } } });
  t.equal(summary.response.status, 200);
  const page = summary.data!;
  t.equal(page.detail, 'summary', 'the discriminator');
  if (page.detail === 'summary') {
    // Narrowed by the discriminator: a FinancialSummary.
    t.equal(page.data.length, 2);
    t.ok(
      page.data.every((d: { balance: { paid: number; pending: number } }) => d.balance.paid > 0 && d.balance.pending > 0),
      'partial: something paid, something pending',
    );
  }
  const full = await bearer.GET('/api/financial-docs', { params: { query: { limit: 1, detail: 'full' } } });
  t.equal(full.data?.detail, 'full', 'Bearer works as well as x-api-key');
  const id = full.data!.data[0]!.id;
  const one = await api.GET('/api/financial-docs/{id}', { params: { path: { id } } });
  t.equal(one.data?.id, id);
  const missing = await api.GET('/api/financial-docs/{id}', { params: { path: { id: 'NO-SUCH-DOC' } } });
  t.equal(missing.response.status, 404);
  t.equal(missing.error?.error.code, 404, 'errors are typed too');
  const reason: 'not_found' | undefined = missing.error?.error.reason === 'not_found' ? missing.error.error.reason : undefined;
  t.equal(reason, 'not_found', 'with their stable reason');
  const invalid = await api.GET('/api/financial-docs', { params: { query: { cursor: 'forged.cursor' } } });
  t.same(
    invalid.error?.error.fields?.map((f) => [f.in, f.name]),
    [['query', 'cursor']],
    'and the parameter each detail is about',
  );
  called.add('listFinancialDocs').add('getFinancialDoc');
});

t.test('shipments: summary page, deprecated version 1 (its own document) under its own media type, one trip', async (t) => {
  const res = await api.GET('/api/shipments', { params: { query: { limit: 3, dateFilterBy: 'offload', startDate: '2026-09-01' } } });
  t.equal(res.data?.detail, 'summary');
  t.equal(res.data?.data.length, 3);
  // Version 1 is not in the current document (it would make the list's answer a union): asked for by its header, read as text.
  const v1 = await api.GET('/api/shipments', { params: { query: { limit: 1 } }, headers: { 'x-api-version': '1' }, parseAs: 'text' });
  // The service runs on the real clock: version 1 is served until its sunset, then 410 Gone.
  if (Date.now() < V1_SUNSET_AT.getTime()) {
    t.match(v1.response.headers.get('content-type'), /^application\/vnd\.freight\.v1\+json/);
    t.ok(Array.isArray(JSON.parse(v1.data!)), 'version 1 is a bare array');
  } else t.equal(v1.response.status, 410, 'version 1 after its sunset: 410 Gone');
  const page = res.data!;
  if (page.detail !== 'summary') throw new Error('expected a summary page');
  const id = page.data[0]!.id; // narrowed by the discriminator: a TripSummary
  const one = await api.GET('/api/shipments/{id}', { params: { path: { id } } });
  t.equal((one.data as { id?: string } | undefined)?.id, id, 'the summary form by default');
  // Both members of the union name the trip `id` (typed without narrowing): the stored form's key is no longer `_id`.
  const full = await api.GET('/api/shipments/{id}', { params: { path: { id }, query: { detail: 'full' } } });
  const fullId: string | undefined = full.data?.id;
  t.equal(fullId, id, 'the stored form by its id');
  called.add('listShipments').add('getShipment');
});

t.test('a client with openapi-fetch defaults (every media type): each list answers one schema, `meta` and `data` typed without narrowing', async (t) => {
  // createClient<paths>() unions every media type of a status: the lists' 200 has only application/json (version 1 is in /docs/v1.json).
  const plain = createClient<paths>({ baseUrl: service.base, headers: { 'x-api-key': key } });
  const docs = await plain.GET('/api/financial-docs', { params: { query: { limit: 2, detail: 'full' } } });
  const total: number | undefined = docs.data?.meta.total;
  t.ok((total ?? 0) > 0, 'meta.total typed as a number');
  const ids: string[] | undefined = docs.data?.data.map((d) => d.id);
  t.equal(ids?.length, 2, 'data items typed (both detail forms carry id)');
  const trips = await plain.GET('/api/shipments', { params: { query: { limit: 1, detail: 'full' } } });
  const hasMore: boolean | undefined = trips.data?.meta.hasMore;
  t.equal(hasMore, true);
  const tripIds: string[] | undefined = trips.data?.data.map((d) => d.id);
  t.equal(tripIds?.length, 1, 'trip items typed (both detail forms carry id)');
});

t.test('shipments: record a leg delivery (a correction of a demo ticket), typed body and answer', async (t) => {
  const page = (await api.GET('/api/shipments', { params: { query: { limit: 1 } } })).data!;
  if (page.detail !== 'summary') throw new Error('expected a summary page');
  const trip = page.data[0]!;
  const leg = trip.shipments[0]!;
  const body = {
    offloadDate: leg.offloadDate ?? leg.loadDate!,
    ticket: 'SDK-0001',
    products: leg.volumes.products.map((p) => ({ code: p.code, offloaded: p.loaded })),
  };
  const res = await api.PUT('/api/shipments/{id}/legs/{shipmentId}/delivery', { params: { path: { id: trip.id, shipmentId: leg.shipmentId } }, body });
  t.equal(res.response.status, 200, JSON.stringify(res.error));
  const delivered = res.data!.shipments[0]!;
  t.match(delivered, { delivered: true, deliveryTicket: 'SDK-0001', volumes: { shrinkageVolume: 0, exceedsTolerance: false } });
  const wrong = await api.PUT('/api/shipments/{id}/legs/{shipmentId}/delivery', {
    params: { path: { id: trip.id, shipmentId: leg.shipmentId } },
    body: { ...body, products: [{ code: '00000000', offloaded: 1 }] },
  });
  t.equal(wrong.error?.error.reason, 'invalid_body', 'an unknown product is a typed 400');
  called.add('recordLegDelivery');
});

t.test('deliveries: the JSON rows of a tickets file', async (t) => {
  const res = await api.POST('/api/deliveries', {
    body: { rows: [{ tripId: 'NO-SUCH-TRIP', shipmentId: 'S-1', productCode: '15101505', offloaded: 100, offloadDate: '2026-03-06 10:00' }] },
  });
  t.equal(res.response.status, 200);
  t.same(
    res.data?.rows.map((r) => [r.line, r.status, r.reason]),
    [[1, 'rejected', 'no shipment NO-SUCH-TRIP for this tenant']],
  );
  called.add('importDeliveries');
  // The CSV of the same tickets, to its own operation: one media type per request body, sent as the SDK is told.
  const csv = await api.POST('/api/deliveries/csv', {
    body: 'tripId,shipmentId,productCode,offloaded,offloadDate\nNO-SUCH-TRIP,S-1,15101505,100,2026-03-06 10:00\n',
    bodySerializer: (b: string) => b,
    headers: { 'content-type': 'text/csv' },
  });
  t.equal(csv.response.status, 200, JSON.stringify(csv.error));
  t.same(
    csv.data?.rows.map((r) => [r.line, r.status, r.reason]),
    [[2, 'rejected', 'no shipment NO-SUCH-TRIP for this tenant']],
    'the CSV row (line 2, after the header) as the JSON one',
  );
  called.add('importDeliveriesCsv');
});

t.test('tax summary and the five audits', async (t) => {
  const tax = await api.GET('/api/tax-summary', { params: { query: { targetMonth: '2026-10', basis: 'payment' } } });
  t.equal(tax.data?.basis, 'payment');
  t.ok(tax.data!.totals.documents > 0, 'documents in October');
  called.add('getTaxSummary');
  const period = { startDate: '2026-06-01', endDate: '2026-10-31' };
  const cash = await api.GET('/api/analytics/cash-inflow-forecast', { params: { query: { ...period, bucket: 'month' } } });
  t.ok(cash.data!.forecast.buckets.length > 0);
  const discounts = await api.GET('/api/analytics/discounts-and-shrinkage', { params: { query: period } });
  t.equal(discounts.data?.period.days, 153);
  const fleet = await api.GET('/api/analytics/fleet-utilization', { params: { query: { ...period, groupBy: 'driver' } } });
  t.ok(fleet.data!.rows.length > 0);
  const dtb = await api.GET('/api/analytics/dispatch-to-bill', { params: { query: period } });
  t.equal(dtb.response.status, 200);
  const unit = await api.GET('/api/analytics/unit-economics', { params: { query: { ...period, litresBasis: 'offloaded' } } });
  t.equal(unit.data?.parameters.litresBasis, 'offloaded');
  called.add('getCashInflowForecast').add('auditDiscountsAndShrinkage').add('auditFleetUtilization').add('auditDispatchToBill').add('getFreightUnitEconomics');
  const aging = await api.GET('/api/receivables/aging', { params: { query: { asOf: '2026-10-31', limit: 5 } } });
  t.equal(aging.data?.asOf.date, '2026-10-31');
  const b = aging.data!.totals.buckets;
  const cents = (x: number) => Math.round(x * 100);
  t.equal(
    cents(b.current.amount) + cents(b.days1to30.amount) + cents(b.days31to60.amount) + cents(b.days61to90.amount) + cents(b.over90.amount),
    cents(aging.data!.totals.outstanding),
    'the buckets add up to the total',
  );
  const open = await api.GET('/api/financial-docs', { params: { query: { openAsOf: '2026-10-31', limit: 1 } } });
  t.equal(open.data?.meta.total, aging.data!.totals.openInvoices, 'the list open that day has as many invoices');
  called.add('getReceivablesAging');
});

t.test('alerts: schedule (optional fields left out), list jobs, cancel, list alerts', async (t) => {
  const scheduled = await api.POST('/api/alerts/schedule', {
    params: { header: { 'Idempotency-Key': `sdk-${Date.now()}` } },
    body: { userIds: ['sdk-user'], ruleId: 'overdue-invoices', cycleKey: '2026-10', nameAlert: 'SDK', dueDate: '2099-01-01T00:00:00Z' },
  });
  t.equal(scheduled.data?.scheduled, 1);
  t.equal(scheduled.data?.individual, true, 'individual defaults to true');
  const jobs = await api.GET('/api/alerts/jobs', { params: { query: { userId: 'sdk-user' } } });
  t.equal(jobs.data?.meta.total, 1);
  const cancelled = await api.DELETE('/api/alerts/jobs/{id}', { params: { path: { id: scheduled.data!.jobs[0]!.jobId } } });
  t.equal(cancelled.data?.cancelled, true);
  const alerts = await api.GET('/api/alerts', { params: { query: { limit: 5 } } });
  t.equal(alerts.response.status, 200);
  t.type(alerts.data?.meta.total, 'number');
  called.add('scheduleAlerts').add('listAlertJobs').add('cancelAlertJob').add('listAlerts');
});

t.test('webhooks: create, read, list, test, deliveries, rotate, delete', async (t) => {
  const created = await api.POST('/api/webhooks', { body: { url: 'http://127.0.0.1:9/hook', events: ['alert.triggered'] } });
  t.ok(created.response.status < 300, `created (${created.response.status})`);
  const id = (created.data as { id: string }).id;
  t.ok((await api.GET('/api/webhooks/{id}', { params: { path: { id } } })).response.ok);
  t.ok((await api.GET('/api/webhooks')).response.ok);
  t.ok((await api.POST('/api/webhooks/{id}/test', { params: { path: { id } } })).response.ok);
  t.ok((await api.GET('/api/webhooks/{id}/deliveries', { params: { path: { id } } })).response.ok);
  t.ok((await api.POST('/api/webhooks/{id}/rotate-secret', { params: { path: { id } } })).response.ok);
  t.ok((await api.DELETE('/api/webhooks/{id}', { params: { path: { id } } })).response.ok);
  called
    .add('createWebhook')
    .add('getWebhook')
    .add('listWebhooks')
    .add('sendWebhookTest')
    .add('listWebhookDeliveries')
    .add('rotateWebhookSecret')
    .add('deleteWebhook');
});

t.test('imports: CFDI files sent as JSON', async (t) => {
  const acuse =
    '<Acuse xmlns="http://cancelacfd.sat.gob.mx" Fecha="2026-10-09T18:00:00" RfcEmisor="TGO850101AB1"><Folios><Folio UUID="1A2B3C4D-0008-4000-8000-000000000008" Motivo="02" EstatusUUID="201"/></Folios></Acuse>';
  const res = await api.POST('/api/imports', { body: { files: [{ name: 'acuse.xml', content: acuse }] } });
  t.equal(res.response.status, 200);
  t.equal(res.data?.summary.files, 1, 'one file read');
  called.add('importDocuments');
  // The same file as the body of its own operation (application/xml), then in a zip (application/zip).
  const xml = await api.POST('/api/imports/xml', { body: acuse, bodySerializer: (b: string) => b, headers: { 'content-type': 'application/xml' } });
  t.equal(xml.response.status, 200, JSON.stringify(xml.error));
  t.match(xml.data?.files[0], { name: 'upload.xml', kind: 'cancellation' });
  const archive = await zipOf([{ name: 'acuses/acuse.xml', data: Buffer.from(acuse) }]);
  const zip = await api.POST('/api/imports/zip', {
    body: archive as unknown as string, // format: binary is typed string; the bytes go as they are
    bodySerializer: (b: unknown) => b as string,
    headers: { 'content-type': 'application/zip' },
  });
  t.equal(zip.response.status, 200, JSON.stringify(zip.error));
  t.match(zip.data?.files[0], { name: 'upload.zip/acuses/acuse.xml', kind: 'cancellation' });
  called.add('importDocumentsXml').add('importDocumentsZip');
});

t.test("received CFDIs: a supplier's invoice imported, listed, read, and the category rules set and read", async (t) => {
  const uuid = '9D1C0E55-0001-4000-8000-000000000101';
  const economics = (await api.GET('/api/analytics/unit-economics', { params: { query: { limit: 1 } } })).data!;
  const vehicle = economics.byVehicle.data[0]!.vehicle;
  // The demo dataset's received CFDIs give the last 90 days costs: diesel naming the trucks' plates (assigned), tolls and insurance (spread).
  const fuel = economics.costs.categories.find((c) => c.category === 'fuel')!;
  t.ok(fuel.amount > 0 && fuel.assigned > 0, `fuel costs assigned by plate (${fuel.assigned} of ${fuel.amount})`);
  t.ok(economics.costs.spread > 0 && economics.totals.cost > 0 && economics.totals.margin !== economics.totals.revenue, 'costs and a margin');
  const { xml } = invoiceXml({
    issuer: 'PGA010101AB1',
    receiver: DEMO_TENANTS[0]!.rfc,
    uuid,
    fecha: '2026-10-03T09:00:00',
    method: 'PPD',
    lines: [{ code: '15101505', desc: 'Diesel', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  const imported = await api.POST('/api/imports', { body: { files: [{ name: 'r1.xml', content: xml }] } });
  t.match(imported.data?.files[0], { status: 'created', direction: 'received' });
  const list = await api.GET('/api/received-docs', { params: { query: { supplier: 'PGA010101AB1', category: 'fuel' } } });
  t.equal(list.response.status, 200);
  const id = list.data!.data[0]!.id;
  t.equal(id, `${DEMO_TENANTS[0]!.rfc}-RCFDI-${uuid}`);
  const one = await api.GET('/api/received-docs/{id}', { params: { path: { id } } });
  t.same(one.data?.balance, { total: 1160, paid: 0, pending: 1160, state: 'unpaid' }, '1,000.00 + IVA 160.00, nothing paid');
  const set = await api.PUT('/api/received-category-rules', { body: { rules: [{ code: '151015', category: 'other' }] } });
  t.same(set.data?.rules, [{ code: '151015', category: 'other' }]);
  const rules = await api.GET('/api/received-category-rules');
  t.same(rules.data?.rules, [{ code: '151015', category: 'other' }]);
  t.equal((await api.GET('/api/received-docs/{id}', { params: { path: { id } } })).data?.category, 'other');
  called.add('listReceivedDocs').add('getReceivedDoc').add('setReceivedCategoryRules').add('getReceivedCategoryRules');
  // Its cost assigned to one of the tenant's vehicles, by one operation and by CSV-like rows, then unassigned.
  const put = await api.PUT('/api/received-docs/{id}/assignment', { params: { path: { id } }, body: { vehicle } });
  t.match(put.data, { id, uuid, vehicle, tripId: null });
  const many = await api.POST('/api/received-assignments', {
    body: {
      rows: [
        { uuid, vehicle },
        { uuid: '00000000-0000-4000-8000-000000000000', vehicle },
      ],
    },
  });
  t.same(many.data?.summary, { rows: 2, assigned: 1, unassigned: 0, rejected: 1 }, 'a UUID the tenant never received is rejected');
  const fromCsv = await api.POST('/api/received-assignments/csv', {
    body: `uuid,vehicle,tripId\n${uuid},${vehicle},\n`,
    bodySerializer: (b: string) => b,
    headers: { 'content-type': 'text/csv' },
  });
  t.same(fromCsv.data?.summary, { rows: 1, assigned: 1, unassigned: 0, rejected: 0 }, 'the CSV to its own operation');
  const del = await api.DELETE('/api/received-docs/{id}/assignment', { params: { path: { id } } });
  t.match(del.data, { id, vehicle: null, tripId: null, assignedAt: null });
  called.add('assignReceivedDoc').add('assignReceivedDocs').add('assignReceivedDocsCsv').add('unassignReceivedDoc');
});

t.test("originals: the received CFDI's XML byte for byte, with the key and through a signed link without one", async (t) => {
  const uuid = '9D1C0E55-0001-4000-8000-000000000101';
  const { xml } = invoiceXml({
    issuer: 'PGA010101AB1',
    receiver: DEMO_TENANTS[0]!.rfc,
    uuid,
    fecha: '2026-10-03T09:00:00',
    method: 'PPD',
    lines: [{ code: '15101505', desc: 'Diesel', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  // The file the test before imported (the same bytes: the import's JSON `content` is the UTF-8 text).
  const original = await api.GET('/api/cfdi-originals/{uuid}', { params: { path: { uuid } }, parseAs: 'text' });
  t.equal(original.response.status, 200);
  t.equal(original.response.headers.get('content-disposition'), `attachment; filename="${uuid}.xml"`);
  t.equal(original.data, xml);
  const link = await api.POST('/api/cfdi-originals/{uuid}/links', { params: { path: { uuid }, query: { expiresIn: 120 } } });
  t.equal(link.response.status, 201);
  const token = new URL(link.data!.url).pathname.split('/').pop()!;
  const keyless = createFreightClient({ baseUrl: service.base, apiKey: 'none' });
  const shared = await keyless.GET('/api/shared-originals/{token}', { params: { path: { token } }, parseAs: 'text' });
  t.equal(shared.response.status, 200);
  t.equal(shared.data, xml);
  called.add('getCfdiOriginal').add('createCfdiOriginalLink').add('getSharedCfdiOriginal');

  // Its printed form (test/originals/printed-originals.ts reads what it shows): a PDF, with the key and through a signed link.
  const pdf = await api.GET('/api/cfdi-originals/{uuid}/pdf', { params: { path: { uuid } }, parseAs: 'arrayBuffer' });
  t.equal(pdf.response.status, 200);
  t.equal(pdf.response.headers.get('content-type'), 'application/pdf');
  t.equal(pdf.response.headers.get('content-disposition'), `attachment; filename="${uuid}.pdf"`);
  t.equal(Buffer.from(pdf.data!).subarray(0, 5).toString('latin1'), '%PDF-');
  const pdfLink = await api.POST('/api/cfdi-originals/{uuid}/pdf/links', { params: { path: { uuid }, query: { expiresIn: 120 } } });
  t.equal(pdfLink.response.status, 201);
  const pdfToken = new URL(pdfLink.data!.url).pathname.split('/').at(-2)!;
  const sharedPdf = await keyless.GET('/api/shared-originals/{token}/pdf', { params: { path: { token: pdfToken } }, parseAs: 'arrayBuffer' });
  t.equal(sharedPdf.response.status, 200);
  t.equal(Buffer.from(sharedPdf.data!).subarray(0, 5).toString('latin1'), '%PDF-');
  called.add('getCfdiPrintedForm').add('createCfdiPrintedFormLink').add('getSharedCfdiPrintedForm');
});

t.test("the month's tax position, its lines and the DIOT (cash basis)", async (t) => {
  const summary = await api.GET('/api/tax-summary', { params: { query: { targetMonth: '2026-10', basis: 'payment' } } });
  const position = await api.GET('/api/tax/position', { params: { query: { month: '2026-10', limit: 2 } } });
  t.equal(position.response.status, 200);
  t.equal(position.data?.basis, 'cash');
  // The same cash-basis rule as the tax summary's payment basis: the VAT and the 4% of the invoices collected in October.
  t.equal(position.data?.vat.collected, summary.data?.totals.vat.declared);
  t.equal(position.data?.vat.retainedByClients, summary.data?.totals.retention.declared);
  const collected = position.data!.figures.find((f) => f.figure === 'vatCollected')!;
  t.ok(collected.lineCount > 2 && collected.lines.length === 2, 'two lines listed of the many counted');
  const lines = await api.GET('/api/tax/position/lines', { params: { query: { month: '2026-10', figure: 'vatCollected', page: 2, limit: 2 } } });
  t.equal(lines.data?.meta.total, collected.lineCount);
  t.equal(lines.data?.amount, collected.amount);
  const diot = await api.GET('/api/tax/diot', { params: { query: { month: '2026-10' } } });
  t.equal(diot.response.status, 200);
  // The demo's suppliers (diesel, tolls, maintenance…, all national) paid in October: a row each, typed 04.
  const rows = diot.data?.rows ?? [];
  t.ok(rows.length > 0, `${rows.length} DIOT rows`);
  t.ok(
    rows.every((r) => r.thirdPartyType === '04' && /^[A-ZÑ&]{3,4}[0-9]{6}[A-Z0-9]{3}$/.test(r.rfc ?? '')),
    'national suppliers by RFC',
  );
  called.add('getTaxPosition').add('listTaxPositionLines').add('getDiot');
});

t.test("cancellations: the list by cancellation status, and the SAT status service's answer recorded", async (t) => {
  const cancelled = await api.GET('/api/financial-docs', { params: { query: { limit: 1, cancellationStatus: 'accepted' } } });
  t.equal(cancelled.response.status, 200);
  const doc = cancelled.data!.data[0]!;
  t.ok(doc, 'the demo data has cancelled invoices');
  const res = await api.PUT('/api/financial-docs/{id}/cancellation', {
    params: { path: { id: doc.id } },
    body: { estado: 'Cancelado', estatusCancelacion: 'Cancelado con aceptación' },
  });
  t.equal(res.response.status, 200, JSON.stringify(res.error ?? ''));
  t.match(res.data?.cancellations, { status: 'accepted', invoiceCancelled: true });
  const wrong = await api.PUT('/api/financial-docs/{id}/cancellation', {
    params: { path: { id: doc.id } },
    body: { estado: 'Vigente', estatusCancelacion: 'Plazo vencido' } as never,
  });
  t.equal(wrong.response.status, 400, 'a pair the SAT never answers');
  t.equal(wrong.error?.error.reason, 'invalid_body');
  called.add('recordCancellationStatus');
});

t.test('exports: an operation per dataset, then the export, its file and its signed link', async (t) => {
  const csv = { format: 'csv' } as const;
  const queued = [
    await api.POST('/api/exports/datasets/financial-docs', { params: { query: { ...csv, paymentStatus: 'unpaid', startDate: '2026-01-01' } } }),
    await api.POST('/api/exports/datasets/shipments', { params: { query: { format: 'xlsx', dateFilterBy: 'load' } } }),
    await api.POST('/api/exports/datasets/received-docs', { params: { query: { ...csv, cancelled: false } } }),
    await api.POST('/api/exports/datasets/tax-position-lines', { params: { query: { ...csv, month: '2026-10', figure: 'vatCollected' } } }),
    await api.POST('/api/exports/datasets/alert-jobs', { params: { query: { ...csv, state: 'scheduled' } } }),
    await api.POST('/api/exports/datasets/alerts', { params: { query: { ...csv, status: 'triggered' } } }),
    await api.POST('/api/exports/datasets/tax-summary', { params: { query: { ...csv, table: 'totals', targetMonth: '2026-10' } } }),
    await api.POST('/api/exports/datasets/tax-position', { params: { query: { format: 'xlsx', month: '2026-10' } } }),
    await api.POST('/api/exports/datasets/diot', { params: { query: { ...csv, table: 'rows', month: '2026-10' } } }),
    await api.POST('/api/exports/datasets/receivables-aging', { params: { query: { ...csv, asOf: '2026-10-31' } } }),
    await api.POST('/api/exports/datasets/cash-inflow-forecast', { params: { query: { ...csv, bucket: 'week' } } }),
    await api.POST('/api/exports/datasets/discounts-and-shrinkage', { params: { query: { ...csv, table: 'shrinkage.worstLegs.data' } } }),
    await api.POST('/api/exports/datasets/fleet-utilization', { params: { query: { ...csv, groupBy: 'driver' } } }),
    await api.POST('/api/exports/datasets/dispatch-to-bill', { params: { query: { ...csv, table: 'summary' } } }),
    await api.POST('/api/exports/datasets/unit-economics', { params: { query: { format: 'xlsx', litresBasis: 'loaded' } } }),
    await api.POST('/api/exports/datasets/originals', { params: { query: { startDate: '2026-10-01', endDate: '2026-10-31', direction: 'received' } } }),
  ];
  const datasets = [
    ['financial-docs', 'exportFinancialDocs'],
    ['shipments', 'exportShipments'],
    ['received-docs', 'exportReceivedDocs'],
    ['tax-position-lines', 'exportTaxPositionLines'],
    ['alert-jobs', 'exportAlertJobs'],
    ['alerts', 'exportAlerts'],
    ['tax-summary', 'exportTaxSummary'],
    ['tax-position', 'exportTaxPosition'],
    ['diot', 'exportDiot'],
    ['receivables-aging', 'exportReceivablesAging'],
    ['cash-inflow-forecast', 'exportCashInflowForecast'],
    ['discounts-and-shrinkage', 'exportDiscountsAndShrinkage'],
    ['fleet-utilization', 'exportFleetUtilization'],
    ['dispatch-to-bill', 'exportDispatchToBill'],
    ['unit-economics', 'exportUnitEconomics'],
    ['originals', 'exportOriginals'],
  ] as const;
  for (const [i, res] of queued.entries()) {
    const [dataset, operationId] = datasets[i]!;
    t.equal(res.response.status, 202, `${operationId}: ${JSON.stringify(res.error ?? '')}`);
    t.match(res.data, { dataset, status: 'queued' }, operationId);
    t.equal(res.response.headers.get('location'), `/api/exports/${res.data?.id ?? ''}`);
    called.add(operationId);
  }
  t.match(queued[6]!.data, { format: 'csv', table: 'totals', query: { targetMonth: '2026-10' } }, 'the table and the filters kept');
  t.equal(queued[7]!.data?.table, null, 'an XLSX holds every table');
  t.match(queued[15]!.data, { format: 'zip', query: { startDate: '2026-10-01', endDate: '2026-10-31', direction: 'received' } });

  const id = queued[0]!.data!.id;
  let view = (await api.GET('/api/exports/{id}', { params: { path: { id } } })).data;
  for (let i = 0; i < 600 && view?.status !== 'ready' && view?.status !== 'failed'; i++) {
    await new Promise((r) => setTimeout(r, 100));
    view = (await api.GET('/api/exports/{id}', { params: { path: { id } } })).data;
  }
  t.equal(view?.status, 'ready', view?.failure ?? '');
  const list = await api.GET('/api/exports', { params: { query: { limit: 100 } } });
  t.same(list.data?.data.map((e) => e.id).sort(), queued.map((q) => q.data!.id).sort(), 'the list holds the exports queued');
  const file = await api.GET('/api/exports/{id}/file', { params: { path: { id } }, parseAs: 'text' });
  t.equal(file.response.status, 200);
  t.ok(file.data?.split('\r\n')[0]?.split(',').includes('amounts.total'), "a CSV whose header row names the items' JSON paths");
  const token = new URL(view!.download!.url).pathname.split('/').pop()!;
  const shared = await createFreightClient({ baseUrl: service.base, apiKey: 'none' }).GET('/api/shared-exports/{token}', {
    params: { path: { token } },
    parseAs: 'text',
  });
  t.equal(shared.response.status, 200);
  t.equal(shared.data, file.data, 'the same file without a key');
  called.add('getExport').add('listExports').add('getExportFile').add('getSharedExport');
});

t.test('MCP (its own document, /docs/mcp.json): streamable HTTP session and the legacy SSE transport', async (t) => {
  // The transports are not in the REST document: a client of the MCP document's types calls them.
  const mcp = createClient<mcpPaths, 'application/json'>({ baseUrl: service.base, headers: { 'x-api-key': key } });
  const init = await mcp.POST('/mcp', { body: initialize, headers: { accept: MCP_ACCEPT }, parseAs: 'text' });
  t.equal(init.response.status, 200);
  const session = init.response.headers.get('mcp-session-id')!;
  t.ok(session, 'a session id');
  t.match(init.data, /"protocolVersion"/);
  const stream = await mcp.GET('/mcp', { params: { header: { 'mcp-session-id': session } }, headers: { accept: 'text/event-stream' }, parseAs: 'stream' });
  t.equal(stream.response.status, 200);
  await stream.data?.cancel();
  const ended = await mcp.DELETE('/mcp', { params: { header: { 'mcp-session-id': session } } });
  t.equal(ended.response.status, 200);
  called.add('mcpPost').add('mcpStream').add('mcpDeleteSession');

  const sse = await mcp.GET('/sse', { headers: { accept: 'text/event-stream' }, parseAs: 'stream' });
  t.equal(sse.response.status, 200);
  const reader = sse.data!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  while (!/sessionId=([^\s&]+)/.test(text)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  const sessionId = /sessionId=([^\s&]+)/.exec(text)?.[1];
  t.ok(sessionId, 'the endpoint event names the session');
  const message = await mcp.POST('/messages', { params: { query: { sessionId: sessionId! } }, body: initialize, parseAs: 'text' });
  t.equal(message.response.status, 202);
  await reader.cancel();
  called.add('mcpLegacySse').add('mcpLegacyMessage');
});

t.test('every operation of the REST and MCP documents was called through the SDK', async (t) => {
  const spec = JSON.parse(readFileSync(new URL('../generated/openapi.json', import.meta.url), 'utf8'));
  const transports = JSON.parse(readFileSync(new URL('../generated/openapi-mcp.json', import.meta.url), 'utf8'));
  const missing = [...listOperations(spec), ...listOperations(transports)].map((op) => op.operationId).filter((id) => !called.has(id));
  t.same(missing, [], 'operations not exercised through the SDK (add them to test/sdk.test.ts)');
});
