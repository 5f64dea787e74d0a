/**
 * Production check: every query the service sends is index-backed on real MongoDB.
 *
 * The embedded engine ignores non-unique indexes, so no timing here could show a collection
 * scan. Instead the driver's command monitoring records every command while each operation of
 * the spec runs through HTTP (with its filters), plus the alert rules the worker evaluates; each
 * find/aggregate/count/distinct (and each `$lookup`'s foreign side) must be served by an index of
 * lib/service-indexes.ts (each area's specs): equality fields, then the sort, as a prefix of the index, tenant first
 * (test/helpers/index-coverage.ts). A new query without an index fails with its shape and the
 * index it needs.
 */
import t from 'tap';
import type { CommandStartedEvent, Document } from 'mongodb';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes, INDEXES } from '../lib/service-indexes.ts';
import { prepareDatabase } from '../lib/prepare-database.ts';
import { COLLECTIONS } from '../lib/db/collections.ts';
import { ROLLUP_MARKS } from '../lib/db/rollup-marks.ts';
import { SYNC_WRITES_IN_FLIGHT } from '../lib/db/writes-in-flight.ts';
import { buildApp } from '../handlers/app.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { evaluateAlertRule } from '../lib/alerts/evaluate.ts';
import { ALERT_RULE_IDS } from '../lib/alerts/rules.ts';
import { enqueueAlertEvent } from '../lib/alerts/alert-events.ts';
import { alertRecords } from '../lib/alerts/alert-jobs-repo.ts';
import { ObjectId } from 'mongodb';
import { runExport } from '../lib/exports/run-export.ts';
import spec from '../generated/openapi.json' with { type: 'json' };
import { testConfig } from './helpers/harness.ts';
import { checkShape, shapesOf, type Verdict } from './helpers/index-coverage.ts';
import { fixture, zipOf } from './helpers/cfdi-fixtures.ts';
import { invoiceXml, paymentXml } from './helpers/cfdi-builder.ts';

// Several engine starts and loads: allow for a loaded CI machine.
t.setTimeout(300_000);

/** The field that scopes each collection to a tenant (an `_id` lookup is served by the `_id` index). */
const TENANT_FIELD: Record<string, string | null> = {
  [COLLECTIONS.financialDocs]: 'company',
  [COLLECTIONS.trips]: 'company',
  [COLLECTIONS.alertJobs]: 'data.tenant',
  [COLLECTIONS.alerts]: 'tenant',
  [COLLECTIONS.apiKeys]: 'tenant',
  [COLLECTIONS.tenantSettings]: '_id',
  [COLLECTIONS.idempotency]: '_id',
  [COLLECTIONS.importFacts]: 'tenant',
  [COLLECTIONS.importLinks]: 'tenant',
  [COLLECTIONS.receivedFacts]: 'tenant',
  [COLLECTIONS.receivedDocs]: 'tenant',
  [COLLECTIONS.receivedAssignments]: 'tenant',
  [COLLECTIONS.cfdiOriginals]: 'tenant',
  // Service-wide (the cursor signing secret), read by _id once per process.
  [COLLECTIONS.serviceSecrets]: '_id',
  [COLLECTIONS.webhooks]: 'tenant',
  [COLLECTIONS.webhookDeliveries]: 'tenant',
  [COLLECTIONS.webhookJobs]: 'data.webhookId',
  [COLLECTIONS.taxRollups]: 'tenant',
  [COLLECTIONS.taxFindings]: 'tenant',
  [COLLECTIONS.openItems]: 'tenant',
  [COLLECTIONS.openSpans]: 'tenant',
  [COLLECTIONS.receivablesDays]: 'tenant',
  [COLLECTIONS.openNowDays]: 'tenant',
  [COLLECTIONS.openItemMonths]: 'tenant',
  [COLLECTIONS.taxPositionDays]: 'tenant',
  [COLLECTIONS.taxPositionMonths]: 'tenant',
  [COLLECTIONS.taxPositionLines]: 'tenant',
  [COLLECTIONS.fleetRollups]: 'tenant',
  [COLLECTIONS.dispatchToBillDays]: 'tenant',
  [COLLECTIONS.dispatchToBillUnbilled]: 'tenant',
  [COLLECTIONS.unitEconomicsRollups]: 'tenant',
  [COLLECTIONS.discountDays]: 'tenant',
  [COLLECTIONS.shrinkageDays]: 'tenant',
  [COLLECTIONS.shrinkageFindings]: 'tenant',
  [COLLECTIONS.exports]: 'tenant',
  [COLLECTIONS.exportChunks]: 'tenant',
  [COLLECTIONS.exportJobs]: 'data.tenant',
  [COLLECTIONS.exportSlots]: 'tenant',
  [ROLLUP_MARKS]: 'tenant',
  // The writes of `lastUpdate` in flight, read by the sync lists for `meta.syncFrom` (lib/db/writes-in-flight.ts).
  [SYNC_WRITES_IN_FLIGHT]: 'tenant',
  // Service-wide: which version of the kept totals the store holds, read by _id.
  [COLLECTIONS.rollupState]: '_id',
  // Service-wide: the OAuth server's clients, grants, codes and tokens, each read by _id (kind and hashed id).
  [COLLECTIONS.oauthRecords]: '_id',
};

/**
 * Queries that are not scoped by tenant on purpose, each with its reason. A key is resolved to
 * its tenant by its hash (unique index `hash_unique`).
 */
const UNSCOPED: Array<{ collection: string; equality: string[]; range?: string[]; why: string }> = [
  { collection: COLLECTIONS.apiKeys, equality: ['hash'], why: 'authentication finds the tenant from the key hash' },
  {
    collection: COLLECTIONS.oauthRecords,
    equality: ['grantId', 'kind'],
    why: "revoking an OAuth grant removes its tokens (index grant_kind); a grant is the service's, not a tenant's",
  },
  { collection: COLLECTIONS.oauthRecords, equality: ['kind', 'uid'], why: "an OAuth browser session found by its interaction's uid (index uid_kind)" },
  // Served by the sort: it is tenant_payment_status_date's own order (checked below like any sort).
  {
    collection: COLLECTIONS.financialDocs,
    equality: [],
    range: ['company'],
    why: 'the start-up backfill steps from one tenant to the next (company > previous), one probe each',
  },
  {
    collection: COLLECTIONS.tenantSettings,
    equality: [],
    range: ['receivedCategoryRulesPending'],
    why: 'the start-up finds the tenants whose category rules change was cut short (index pending_category_rules, sparse: only those)',
  },
  // Served by the sort: tenant_created's own order (checked below like any sort).
  {
    collection: COLLECTIONS.trips,
    equality: [],
    range: ['company'],
    why: "the start-up backfill of trips' offload months steps from one tenant to the next (company > previous), one probe each",
  },
];

const engine = await startEmbeddedMongo({ shortLived: true });
const { client, db } = await connectMongo(engine.uri, 'indexcov', { serverSelectionTimeoutMS: 5000, driver: { monitorCommands: true } });
t.teardown(async () => {
  await client.close(true);
  await engine.stop();
});
await ensureIndexes(db);
// Small, but with every kind of record (payments, cancellations, multi-leg trips), for the one tenant every request
// below is made as: a second tenant's records add no query shape (the backfill's step to the next tenant is probed
// after the last one too), only the CPU of its load.
await loadDemoData(db, { invoices: 300, trips: 300, tenants: [DEMO_TENANTS[0]!.rfc] });

const now = new Date('2026-11-16T18:00:00Z');
// EXPORT_MAX_ACTIVE: every dataset's export is queued below before any is built.
const config = testConfig({ EXPORT_MAX_ACTIVE: '50' });
const app = await buildApp({ config, db, logger: false, now: () => now });
t.teardown(() => app.close());

const recorded: Array<{ name: string; command: Document; during: string }> = [];
let during = 'setup';
client.on('commandStarted', (e: CommandStartedEvent) => {
  if (['find', 'aggregate', 'count', 'distinct'].includes(e.commandName)) recorded.push({ name: e.commandName, command: e.command, during });
});

const [tenant] = DEMO_TENANTS;
const key = tenant!.apiKey;
const anyDoc = (await db.collection(COLLECTIONS.financialDocs).findOne({ company: tenant!.rfc, 'invoice.uuid': { $exists: true } })) as Document;
const cancelledDoc = (await db.collection(COLLECTIONS.financialDocs).findOne({ company: tenant!.rfc, derivedCancellationStatus: 'accepted' })) as Document;
const anyTrip = (await db.collection(COLLECTIONS.trips).findOne({ company: tenant!.rfc, 'shipments.0': { $exists: true } })) as Document;
const client0 = String(anyDoc.client);
const uuid = String(anyDoc.invoice.uuid);
const folio = String(anyDoc.invoice.num);
const shipmentId = String(anyTrip.shipments[0].shipment);
// A correction of a delivered leg's ticket: every product at its loaded litres (a write).
const roadLeg = anyTrip.shipments[0] as Document;
const delivery = {
  offloadDate: new Date(Number(roadLeg.unloadDate)).toISOString(),
  products: (roadLeg.products as Document[]).map((p) => ({ code: p.code, offloaded: p.loaded })),
};
const vehicle = String(anyTrip.vehicle?.id ?? '');
const driver = String(anyTrip.driver?.id ?? '');

/** A supplier's diesel invoice (PPD) to the tenant and its payment complement. */
const RECEIVED_FILES = [
  {
    name: 'r1.xml',
    content: invoiceXml({
      issuer: 'PGA010101AB1',
      receiver: tenant!.rfc,
      uuid: '9D1C0E55-0001-4000-8000-000000000101',
      fecha: '2026-10-03T09:00:00',
      method: 'PPD',
      lines: [{ code: '15101505', desc: 'Diesel', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }] }],
    }).xml,
  },
  {
    name: 'p1.xml',
    content: paymentXml({
      issuer: 'PGA010101AB1',
      receiver: tenant!.rfc,
      uuid: '9D1C0E55-0002-4000-8000-000000000102',
      fecha: '2026-10-12T10:00:00',
      invoiceUuid: '9D1C0E55-0001-4000-8000-000000000101',
      currency: 'MXN',
      exchangeRate: 1,
      before: 1160,
      paid: 500,
    }),
  },
  {
    name: 'r3.xml',
    content: invoiceXml({
      issuer: 'TRA920101XY3',
      receiver: tenant!.rfc,
      uuid: '9D1C0E55-0003-4000-8000-000000000103',
      fecha: '2026-10-10T12:00:00',
      lines: [{ code: '78101802', desc: 'Flete', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] }],
    }).xml,
  },
];

/** Each operation with the parameter combinations that change the query. */
/** A body that is not JSON: the raw bytes of the operations that take XML, zip or CSV. */
class Raw {
  constructor(
    readonly contentType: string,
    readonly data: string | Buffer,
  ) {}
}
const REQUESTS: Array<[operationId: string, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown]> = [
  ['getHealth', 'GET', '/health'],
  ['getReady', 'GET', '/ready'],
  ['listFinancialDocs', 'GET', '/api/financial-docs'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?detail=full&page=3&limit=10'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?startDate=2026-08-01&endDate=2026-10-31'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?openAsOf=2026-10-31'],
  ['listFinancialDocs', 'GET', `/api/financial-docs?openAsOf=2026-10-31&client=${client0}`],
  ['listFinancialDocs', 'GET', `/api/financial-docs?client=${client0}`],
  ['listFinancialDocs', 'GET', `/api/financial-docs?client=${client0}&startDate=2026-08-01`],
  ['listFinancialDocs', 'GET', `/api/financial-docs?client=${client0}&paymentStatus=unpaid`],
  ['listFinancialDocs', 'GET', `/api/financial-docs?client=${client0}&cancelled=true`],
  ['listFinancialDocs', 'GET', '/api/financial-docs?status=1'],
  ['listFinancialDocs', 'GET', `/api/financial-docs?uuid=${uuid}`],
  ['listFinancialDocs', 'GET', `/api/financial-docs?folio=${encodeURIComponent(folio)}`],
  ['listFinancialDocs', 'GET', '/api/financial-docs?paymentStatus=partial'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?cancelled=true&startDate=2026-01-01'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?cancelled=false'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?paymentStatus=unpaid&cancelled=false&startDate=2026-06-01'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?updatedSince=2026-06-01T00:00:00Z'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?cancellationStatus=pending'],
  ['listFinancialDocs', 'GET', '/api/financial-docs?cancellationStatus=accepted&cancelled=true&startDate=2026-01-01'],
  ['getFinancialDoc', 'GET', `/api/financial-docs/${encodeURIComponent(String(anyDoc._id))}`],
  ['listShipments', 'GET', '/api/shipments'],
  ['listShipments', 'GET', '/api/shipments?detail=full&page=2&limit=10'],
  ['listShipments', 'GET', `/api/shipments?client=${client0}`],
  ['listShipments', 'GET', `/api/shipments?shipmentId=${encodeURIComponent(shipmentId)}`],
  ['listShipments', 'GET', '/api/shipments?startDate=2026-09-01&endDate=2026-10-31'],
  ['listShipments', 'GET', '/api/shipments?startDate=2026-09-01&dateFilterBy=offload'],
  ['listShipments', 'GET', '/api/shipments?loadStartDate=2026-09-01&offloadEndDate=2026-10-31'],
  ['listShipments', 'GET', '/api/shipments?status=2'],
  ['listShipments', 'GET', '/api/shipments?updatedSince=2026-06-01T00:00:00Z'],
  ['getShipment', 'GET', `/api/shipments/${encodeURIComponent(String(anyTrip._id))}`],
  [
    'importDeliveries',
    'POST',
    '/api/deliveries',
    {
      rows: delivery.products.map((p) => ({
        tripId: String(anyTrip._id),
        shipmentId: String(roadLeg.shipment),
        productCode: p.code,
        offloaded: p.offloaded,
        offloadDate: delivery.offloadDate,
      })),
    },
  ],
  [
    'importDeliveriesCsv',
    'POST',
    '/api/deliveries/csv',
    new Raw(
      'text/csv',
      `tripId,shipmentId,productCode,offloaded,offloadDate\n${delivery.products
        .map((p) => [String(anyTrip._id), String(roadLeg.shipment), p.code, p.offloaded, delivery.offloadDate].join(','))
        .join('\n')}\n`,
    ),
  ],
  [
    'recordLegDelivery',
    'PUT',
    `/api/shipments/${encodeURIComponent(String(anyTrip._id))}/legs/${encodeURIComponent(String(roadLeg.shipment))}/delivery`,
    delivery,
  ],
  ['getTaxSummary', 'GET', '/api/tax-summary?targetMonth=2026-10'],
  ['getTaxSummary', 'GET', '/api/tax-summary?targetMonth=2026-10&basis=payment'],
  ['getTaxSummary', 'GET', `/api/tax-summary?targetMonth=2026-10&client=${client0}`],
  ['getCashInflowForecast', 'GET', '/api/analytics/cash-inflow-forecast'],
  ['getCashInflowForecast', 'GET', `/api/analytics/cash-inflow-forecast?client=${client0}&bucket=month`],
  ['getCashInflowForecast', 'GET', '/api/analytics/cash-inflow-forecast?asOf=2026-10-31'],
  ['getReceivablesAging', 'GET', '/api/receivables/aging'],
  ['getReceivablesAging', 'GET', `/api/receivables/aging?client=${client0}`],
  ['getReceivablesAging', 'GET', `/api/receivables/aging?asOf=2026-10-31&client=${client0}`],
  ['auditDiscountsAndShrinkage', 'GET', '/api/analytics/discounts-and-shrinkage'],
  ['auditDiscountsAndShrinkage', 'GET', `/api/analytics/discounts-and-shrinkage?client=${client0}`],
  ['auditFleetUtilization', 'GET', '/api/analytics/fleet-utilization'],
  ['auditFleetUtilization', 'GET', `/api/analytics/fleet-utilization?groupBy=driver&client=${client0}`],
  ['auditFleetUtilization', 'GET', `/api/analytics/fleet-utilization?vehicle=${encodeURIComponent(vehicle)}`],
  ['auditFleetUtilization', 'GET', `/api/analytics/fleet-utilization?driver=${encodeURIComponent(driver)}`],
  ['auditDispatchToBill', 'GET', '/api/analytics/dispatch-to-bill'],
  ['auditDispatchToBill', 'GET', `/api/analytics/dispatch-to-bill?client=${client0}`],
  ['getFreightUnitEconomics', 'GET', '/api/analytics/unit-economics'],
  ['getFreightUnitEconomics', 'GET', `/api/analytics/unit-economics?client=${client0}&vehicle=${encodeURIComponent(vehicle)}&litresBasis=offloaded`],
  // Invoice, payment before... after it, cancellation and a Carta Porte trip: every import query.
  [
    'importDocuments',
    'POST',
    '/api/imports',
    {
      files: [
        '05-payment-complement-1.xml',
        '04-ppd-invoice.xml',
        '08-invoice-cancelled.xml',
        '10-cancellation-acuse-motive-01.xml',
        '11-carta-porte-two-products.xml',
      ].map((name) => ({ name, content: fixture(name).toString('utf8') })),
    },
  ],
  // The same files again, as the body of the XML and zip operations.
  ['importDocumentsXml', 'POST', '/api/imports/xml', new Raw('application/xml', fixture('04-ppd-invoice.xml'))],
  [
    'importDocumentsZip',
    'POST',
    '/api/imports/zip',
    new Raw('application/zip', await zipOf([{ name: 'f/05.xml', data: fixture('05-payment-complement-1.xml') }])),
  ],
  // The SAT's answer on the imported cancellation (fact path), then on a demo document's (in place).
  [
    'recordCancellationStatus',
    'PUT',
    `/api/financial-docs/${tenant!.rfc}-CFDI-1A2B3C4D-0008-4000-8000-000000000008/cancellation`,
    { estado: 'Cancelado', estatusCancelacion: 'Cancelado sin aceptación', consultedAt: '2026-10-09T12:00:00Z' },
  ],
  [
    'recordCancellationStatus',
    'PUT',
    `/api/financial-docs/${encodeURIComponent(String(cancelledDoc._id))}/cancellation`,
    { estado: 'Cancelado', estatusCancelacion: 'Cancelado con aceptación' },
  ],
  // Received CFDIs (lib/received): suppliers' invoices and a payment, then every filter of the list.
  ['importDocuments', 'POST', '/api/imports', { files: RECEIVED_FILES }],
  ['listReceivedDocs', 'GET', '/api/received-docs'],
  ['listReceivedDocs', 'GET', '/api/received-docs?supplier=PGA010101AB1'],
  ['listReceivedDocs', 'GET', '/api/received-docs?category=fuel&startDate=2026-10-01'],
  ['listReceivedDocs', 'GET', '/api/received-docs?paymentStatus=partial'],
  ['listReceivedDocs', 'GET', '/api/received-docs?cancelled=true'],
  ['listReceivedDocs', 'GET', '/api/received-docs?cancelled=false&endDate=2026-10-31'],
  ['getReceivedDoc', 'GET', `/api/received-docs/${tenant!.rfc}-RCFDI-9D1C0E55-0001-4000-8000-000000000101`],
  ['getReceivedCategoryRules', 'GET', '/api/received-category-rules'],
  // The original XML of an imported CFDI, and a signed link to it (GET through it below).
  ['getCfdiOriginal', 'GET', '/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101'],
  ['createCfdiOriginalLink', 'POST', '/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/links?expiresIn=600'],
  // Its printed form, and a signed link to it (GET through it below).
  ['getCfdiPrintedForm', 'GET', '/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/pdf'],
  ['createCfdiPrintedFormLink', 'POST', '/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/pdf/links?expiresIn=600'],
  // The month's tax position and DIOT: issued invoices collected and received CFDIs settled in the month and the one before.
  ['getTaxPosition', 'GET', '/api/tax/position?month=2026-10'],
  ['listTaxPositionLines', 'GET', '/api/tax/position/lines?month=2026-10&figure=creditableVat'],
  ['getDiot', 'GET', '/api/tax/diot?month=2026-10'],
  ['getDiot', 'GET', '/api/tax/diot?month=2026-10&format=csv'],
  ['setReceivedCategoryRules', 'PUT', '/api/received-category-rules', { rules: [{ code: '15101505', category: 'maintenance' }] }],
  // Assignments of received CFDIs (one, many, none), then the costs that read them.
  ['assignReceivedDoc', 'PUT', `/api/received-docs/${tenant!.rfc}-RCFDI-9D1C0E55-0001-4000-8000-000000000101/assignment`, { vehicle }],
  ['assignReceivedDoc', 'PUT', `/api/received-docs/${tenant!.rfc}-RCFDI-9D1C0E55-0001-4000-8000-000000000101/assignment`, { tripId: String(anyTrip._id) }],
  [
    'assignReceivedDocs',
    'POST',
    '/api/received-assignments',
    {
      rows: [
        { uuid: '9D1C0E55-0001-4000-8000-000000000101', vehicle },
        { uuid: '9D1C0E55-0003-4000-8000-000000000103', tripId: String(anyTrip._id) },
      ],
    },
  ],
  [
    'assignReceivedDocsCsv',
    'POST',
    '/api/received-assignments/csv',
    new Raw('text/csv', `uuid,vehicle,tripId\n9D1C0E55-0001-4000-8000-000000000101,${vehicle},\n`),
  ],
  ['getFreightUnitEconomics', 'GET', '/api/analytics/unit-economics?startDate=2026-09-01&endDate=2026-11-15'],
  ['unassignReceivedDoc', 'DELETE', `/api/received-docs/${tenant!.rfc}-RCFDI-9D1C0E55-0001-4000-8000-000000000101/assignment`],
  ['scheduleAlerts', 'POST', '/api/alerts/schedule', { userIds: ['u-1', 'u-2'], ruleId: 'overdue-invoices', cycleKey: '2026-10', nameAlert: 'Vencidas' }],
  ['listAlertJobs', 'GET', '/api/alerts/jobs'],
  ['listAlertJobs', 'GET', '/api/alerts/jobs?userId=u-1'],
  ['listAlertJobs', 'GET', '/api/alerts/jobs?ruleId=overdue-invoices&cycleKey=2026-10'],
  ['listAlertJobs', 'GET', '/api/alerts/jobs?state=scheduled'],
  ['listAlerts', 'GET', '/api/alerts'],
  ['listAlerts', 'GET', '/api/alerts?userId=u-1'],
  ['listAlerts', 'GET', '/api/alerts?ruleId=overdue-invoices&cycleKey=2026-10'],
  ['listAlerts', 'GET', '/api/alerts?status=triggered'],
  ['createWebhook', 'POST', '/api/webhooks', { url: 'https://hooks.example.com/indexes', events: ['alert.triggered', 'alert.cleared'] }],
  ['listWebhooks', 'GET', '/api/webhooks'],
  // Each export is queued here and built below (what the export worker runs), its list's queries with its filters.
  ['exportFinancialDocs', 'POST', '/api/exports/datasets/financial-docs?format=csv&paymentStatus=unpaid&cancelled=false&startDate=2026-06-01'],
  ['exportFinancialDocs', 'POST', `/api/exports/datasets/financial-docs?format=csv&client=${client0}&startDate=2026-08-01`],
  ['exportFinancialDocs', 'POST', `/api/exports/datasets/financial-docs?format=csv&client=${client0}&paymentStatus=paid`],
  ['exportFinancialDocs', 'POST', '/api/exports/datasets/financial-docs?format=xlsx&updatedSince=2026-01-01T00:00:00Z'],
  ['exportShipments', 'POST', '/api/exports/datasets/shipments?format=csv&startDate=2026-08-01&endDate=2026-10-31'],
  ['exportReceivedDocs', 'POST', '/api/exports/datasets/received-docs?format=csv&paymentStatus=partial'],
  ['exportTaxPositionLines', 'POST', '/api/exports/datasets/tax-position-lines?format=csv&month=2026-10&figure=creditableVat'],
  ['exportAlertJobs', 'POST', '/api/exports/datasets/alert-jobs?format=csv&ruleId=overdue-invoices&cycleKey=2026-10'],
  ['exportAlerts', 'POST', '/api/exports/datasets/alerts?format=csv&userId=u-1'],
  ['exportTaxSummary', 'POST', '/api/exports/datasets/tax-summary?format=xlsx&targetMonth=2026-10'],
  ['exportTaxPosition', 'POST', '/api/exports/datasets/tax-position?format=csv&month=2026-10'],
  ['exportDiot', 'POST', '/api/exports/datasets/diot?format=csv&month=2026-10'],
  ['exportReceivablesAging', 'POST', `/api/exports/datasets/receivables-aging?format=csv&asOf=2026-10-31&client=${client0}`],
  ['exportCashInflowForecast', 'POST', '/api/exports/datasets/cash-inflow-forecast?format=xlsx'],
  ['exportDiscountsAndShrinkage', 'POST', '/api/exports/datasets/discounts-and-shrinkage?format=xlsx&startDate=2026-08-01&endDate=2026-10-31'],
  ['exportFleetUtilization', 'POST', `/api/exports/datasets/fleet-utilization?format=csv&vehicle=${encodeURIComponent(vehicle)}`],
  ['exportDispatchToBill', 'POST', '/api/exports/datasets/dispatch-to-bill?format=xlsx'],
  ['exportUnitEconomics', 'POST', '/api/exports/datasets/unit-economics?format=xlsx&startDate=2026-09-01&endDate=2026-11-15'],
  ['exportOriginals', 'POST', '/api/exports/datasets/originals?startDate=2026-10-01&endDate=2026-10-31'],
  ['listExports', 'GET', '/api/exports'],
];
/** Webhook operations on the endpoint created above (`{id}`). */
const WEBHOOK_REQUESTS: Array<[operationId: string, method: 'GET' | 'POST' | 'DELETE', url: string]> = [
  ['getWebhook', 'GET', '/api/webhooks/{id}'],
  ['rotateWebhookSecret', 'POST', '/api/webhooks/{id}/rotate-secret'],
  ['sendWebhookTest', 'POST', '/api/webhooks/{id}/test'],
  ['listWebhookDeliveries', 'GET', '/api/webhooks/{id}/deliveries'],
  ['listWebhookDeliveries', 'GET', '/api/webhooks/{id}/deliveries?status=pending'],
  ['deleteWebhook', 'DELETE', '/api/webhooks/{id}'],
];

/** MCP operations dispatch to the REST operations above: they send no query of their own. */
const MCP_OPERATIONS = new Set(['mcpPost', 'mcpStream', 'mcpDeleteSession', 'mcpLegacySse', 'mcpLegacyMessage']);

t.test('every REST operation of the spec is exercised', async (t) => {
  const specOps = Object.values(spec.paths as Record<string, Record<string, { operationId?: string }>>)
    .flatMap((methods) => Object.values(methods).map((op) => op.operationId))
    .filter((id): id is string => !!id && !MCP_OPERATIONS.has(id));
  const exercised = new Set([
    ...REQUESTS.map((r) => r[0]),
    ...WEBHOOK_REQUESTS.map((r) => r[0]),
    'cancelAlertJob',
    'getExport',
    'getExportFile',
    'getSharedExport',
    'getSharedCfdiOriginal',
    'getSharedCfdiPrintedForm',
  ]);
  t.same(
    specOps.filter((id) => !exercised.has(id)),
    [],
    'operations without a request here',
  );
});

t.test('run the operations', async (t) => {
  for (const [op, method, url, body] of REQUESTS) {
    during = `${op} ${method} ${url}`;
    const res = await app.inject({
      method,
      url,
      headers: { 'x-api-key': key, ...(body ? { 'content-type': body instanceof Raw ? body.contentType : 'application/json' } : {}) },
      ...(body ? { payload: body instanceof Raw ? body.data : JSON.stringify(body) } : {}),
    });
    t.ok(res.statusCode < 300, `${during} → ${res.statusCode}`, { body: res.body.slice(0, 300) });
  }
  // Keyset continuations (cursor): the page after a cursor must be index-backed too, in both orders of both lists.
  for (const first of [
    '/api/financial-docs?limit=10',
    '/api/financial-docs?limit=10&updatedSince=2026-01-01T00:00:00Z',
    `/api/financial-docs?limit=10&client=${client0}`,
    '/api/shipments?limit=10',
    '/api/shipments?limit=10&updatedSince=2026-01-01T00:00:00Z',
    '/api/received-docs?limit=1',
  ]) {
    const page = await app.inject({ method: 'GET', url: first, headers: { 'x-api-key': key } });
    const cursor = page.json<{ meta: { nextCursor?: string } }>().meta.nextCursor;
    t.ok(cursor, `${first}: a next cursor`);
    during = `cursor continuation of GET ${first}`;
    const next = await app.inject({ method: 'GET', url: `${first}&cursor=${encodeURIComponent(cursor ?? '')}`, headers: { 'x-api-key': key } });
    t.equal(next.statusCode, 200, during, { body: next.body.slice(0, 300) });
  }
  // A signed link, followed without a key: the tenant comes from the token.
  const link = await app.inject({ method: 'POST', url: '/api/cfdi-originals/9D1C0E55-0001-4000-8000-000000000101/links', headers: { 'x-api-key': key } });
  during = 'getSharedCfdiOriginal GET /api/shared-originals/:token';
  const shared = await app.inject({ method: 'GET', url: new URL(link.json<{ url: string }>().url).pathname });
  t.equal(shared.statusCode, 200, during);
  during = 'getSharedCfdiPrintedForm GET /api/shared-originals/:token/pdf';
  const sharedPdf = await app.inject({ method: 'GET', url: `${new URL(link.json<{ url: string }>().url).pathname}/pdf` });
  t.equal(sharedPdf.statusCode, 200, during);
  const jobs = await app.inject({ method: 'GET', url: '/api/alerts/jobs', headers: { 'x-api-key': key } });
  const jobId = jobs.json<{ data: Array<{ id: string }> }>().data[0]?.id;
  t.ok(jobId, 'a scheduled job to cancel');
  during = 'cancelAlertJob DELETE /api/alerts/jobs/:id';
  const cancelled = await app.inject({ method: 'DELETE', url: `/api/alerts/jobs/${jobId}`, headers: { 'x-api-key': key } });
  t.ok(cancelled.statusCode < 300, `${during} → ${cancelled.statusCode}`);
  // What the export worker does with each export queued above: build it (its dataset's queries), then serve it.
  const exportsQueued = await app.inject({ method: 'GET', url: '/api/exports?limit=100', headers: { 'x-api-key': key } });
  const exportIds = exportsQueued.json<{ data: Array<{ id: string; dataset: string }> }>().data;
  t.equal(exportIds.length, REQUESTS.filter((r) => r[0].startsWith('export')).length, 'every export queued');
  for (const { id, dataset } of exportIds) {
    during = `export worker: ${dataset}`;
    await runExport({ db, config, now: () => now, exports: config.exports }, tenant!.rfc, new ObjectId(id));
    during = `getExport GET /api/exports/${id} (${dataset})`;
    const built = await app.inject({ method: 'GET', url: `/api/exports/${id}`, headers: { 'x-api-key': key } });
    t.equal(built.json<{ status: string }>().status, 'ready', during, { body: built.body.slice(0, 300) });
  }
  const oneExport = exportIds[0]!.id;
  during = 'getExportFile GET /api/exports/:id/file';
  t.equal((await app.inject({ method: 'GET', url: `/api/exports/${oneExport}/file`, headers: { 'x-api-key': key } })).statusCode, 200, during);
  const exportLink = (await app.inject({ method: 'GET', url: `/api/exports/${oneExport}`, headers: { 'x-api-key': key } })).json<{
    download: { url: string };
  }>().download.url;
  during = 'getSharedExport GET /api/shared-exports/:token';
  t.equal((await app.inject({ method: 'GET', url: new URL(exportLink).pathname })).statusCode, 200, during);
  // What the alert worker does with a record: queue its event for the subscribed endpoints.
  const webhooks = await app.inject({ method: 'GET', url: '/api/webhooks', headers: { 'x-api-key': key } });
  const webhookId = webhooks.json<{ data: Array<{ id: string }> }>().data[0]?.id;
  t.ok(webhookId, 'a webhook endpoint');
  during = 'alert worker: queue webhook deliveries';
  const record = { _id: 'cccccccccccccccccccccccc', tenant: tenant!.rfc, status: 'triggered', evaluatedAt: now, dueDate: now, summary: {}, findings: [] };
  await alertRecords(db).insertOne(record as never);
  await enqueueAlertEvent(db, record as never);
  for (const [op, method, url] of WEBHOOK_REQUESTS) {
    during = `${op} ${method} ${url}`;
    const res = await app.inject({ method, url: url.replace('{id}', webhookId!), headers: { 'x-api-key': key } });
    t.ok(res.statusCode < 300, `${during} → ${res.statusCode}`, { body: res.body.slice(0, 300) });
  }
  for (const ruleId of ALERT_RULE_IDS) {
    during = `alert worker: ${ruleId}`;
    await evaluateAlertRule(db, { tenant: tenant!.rfc, ruleId, cycleKey: '2026-10', asOf: now }, 10_000);
  }
  // What `npm start` does before listening: indexes, then the backfill of documents stored without
  // their derived fields (one such document, so its repair queries run too).
  during = 'start-up: prepareDatabase';
  const { derivedPaymentStatus: _stored, derivedCancellationStatus: _storedCx, ...legacy } = anyDoc;
  await db.collection<{ _id: string } & Document>(COLLECTIONS.financialDocs).insertOne({ ...legacy, _id: 'INDEXCOV-LEGACY', id: 'INDEXCOV-LEGACY' });
  const { backfilled } = await prepareDatabase(db);
  t.same(
    backfilled.map((r) => [r.tenant, r.repaired]),
    [[tenant!.rfc, 1]],
    'the backfill repaired the legacy document',
  );
});

t.test('every query is served by an index, tenant first', async (t) => {
  t.ok(recorded.length > 50, `${recorded.length} commands recorded`);
  const failures: Array<Verdict & { during: string }> = [];
  const seen = new Set<string>();
  for (const { name, command, during: when } of recorded) {
    for (const shape of shapesOf(name, command)) {
      const tenantField = TENANT_FIELD[shape.collection];
      if (tenantField === undefined) {
        failures.push({ ok: false, shape, problem: `collection ${shape.collection} is not in TENANT_FIELD (add it, and its indexes)`, during: when });
        continue;
      }
      const unscoped = UNSCOPED.find(
        (u) => u.collection === shape.collection && u.equality.join() === shape.equality.join() && (u.range ?? []).join() === shape.range.join(),
      );
      const verdict = checkShape(shape, INDEXES[shape.collection] ?? [], unscoped ? null : tenantField);
      const id = JSON.stringify(shape);
      if (!verdict.ok && !seen.has(id)) failures.push({ ...verdict, during: when });
      seen.add(id);
    }
  }
  t.ok(seen.size > 20, `${seen.size} distinct query shapes checked`);
  for (const f of failures) {
    t.fail(
      `${f.shape.collection} ${f.shape.command} equality=[${f.shape.equality.join(',')}] sort=${JSON.stringify(f.shape.sort)} range=[${f.shape.range.join(',')}]: ${f.problem} (from ${f.during})`,
    );
  }
});
