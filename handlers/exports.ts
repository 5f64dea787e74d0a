import type { FastifyReply } from 'fastify';
import type { ExportView } from '../lib/exports/export-view.ts';
import type { HandlerDeps, HandlerMap } from './types.ts';
import { tenantOf } from '../lib/http/auth.ts';
import { exportFinancialDocs } from '../lib/exports/export-financial-docs.ts';
import { exportShipments } from '../lib/exports/export-shipments.ts';
import { exportReceivedDocs } from '../lib/exports/export-received-docs.ts';
import { exportTaxPositionLines } from '../lib/exports/export-tax-position-lines.ts';
import { exportAlertJobs } from '../lib/exports/export-alert-jobs.ts';
import { exportAlerts } from '../lib/exports/export-alerts.ts';
import { exportTaxSummary } from '../lib/exports/export-tax-summary.ts';
import { exportTaxPosition } from '../lib/exports/export-tax-position.ts';
import { exportDiot } from '../lib/exports/export-diot.ts';
import { exportReceivablesAging } from '../lib/exports/export-receivables-aging.ts';
import { exportCashInflowForecast } from '../lib/exports/export-cash-inflow-forecast.ts';
import { exportDiscountsAndShrinkage } from '../lib/exports/export-discounts-and-shrinkage.ts';
import { exportFleetUtilization } from '../lib/exports/export-fleet-utilization.ts';
import { exportDispatchToBill } from '../lib/exports/export-dispatch-to-bill.ts';
import { exportUnitEconomics } from '../lib/exports/export-unit-economics.ts';
import { exportOriginals } from '../lib/exports/export-originals.ts';
import { getExport } from '../lib/exports/get-export.ts';
import { listExports } from '../lib/exports/list-exports.ts';
import { getExportFile, type ServedExportFile } from '../lib/exports/get-export-file.ts';
import { getSharedExport } from '../lib/exports/get-shared-export.ts';

/** The file streamed from its chunks, under its name. */
const sendFile = (reply: FastifyReply, file: ServedExportFile): FastifyReply =>
  reply
    .type(file.contentType)
    .header('content-length', String(file.size))
    .header('content-disposition', `attachment; filename="${file.fileName}"`)
    .send(file.stream);

/** 202 with the queued export and its address. */
function queued(reply: FastifyReply, view: ExportView): ExportView {
  reply.code(202).header('location', `/api/exports/${view.id}`);
  return view;
}

/** One export operation per dataset (docs/exports.md), each queuing its dataset with its JSON operation's query. */
type DatasetExportOperations =
  | 'exportFinancialDocs'
  | 'exportShipments'
  | 'exportReceivedDocs'
  | 'exportTaxPositionLines'
  | 'exportAlertJobs'
  | 'exportAlerts'
  | 'exportTaxSummary'
  | 'exportTaxPosition'
  | 'exportDiot'
  | 'exportReceivablesAging'
  | 'exportCashInflowForecast'
  | 'exportDiscountsAndShrinkage'
  | 'exportFleetUtilization'
  | 'exportDispatchToBill'
  | 'exportUnitEconomics'
  | 'exportOriginals';
type ExportsOperations = DatasetExportOperations | 'listExports' | 'getExport' | 'getExportFile' | 'getSharedExport';

export function exportsHandlers(deps: HandlerDeps): Pick<HandlerMap, ExportsOperations> {
  return {
    async exportFinancialDocs(request, reply) {
      return queued(reply, await exportFinancialDocs(deps, tenantOf(request), request.query));
    },
    async exportShipments(request, reply) {
      return queued(reply, await exportShipments(deps, tenantOf(request), request.query));
    },
    async exportReceivedDocs(request, reply) {
      return queued(reply, await exportReceivedDocs(deps, tenantOf(request), request.query));
    },
    async exportTaxPositionLines(request, reply) {
      return queued(reply, await exportTaxPositionLines(deps, tenantOf(request), request.query));
    },
    async exportAlertJobs(request, reply) {
      return queued(reply, await exportAlertJobs(deps, tenantOf(request), request.query));
    },
    async exportAlerts(request, reply) {
      return queued(reply, await exportAlerts(deps, tenantOf(request), request.query));
    },
    async exportTaxSummary(request, reply) {
      return queued(reply, await exportTaxSummary(deps, tenantOf(request), request.query));
    },
    async exportTaxPosition(request, reply) {
      return queued(reply, await exportTaxPosition(deps, tenantOf(request), request.query));
    },
    async exportDiot(request, reply) {
      return queued(reply, await exportDiot(deps, tenantOf(request), request.query));
    },
    async exportReceivablesAging(request, reply) {
      return queued(reply, await exportReceivablesAging(deps, tenantOf(request), request.query));
    },
    async exportCashInflowForecast(request, reply) {
      return queued(reply, await exportCashInflowForecast(deps, tenantOf(request), request.query));
    },
    async exportDiscountsAndShrinkage(request, reply) {
      return queued(reply, await exportDiscountsAndShrinkage(deps, tenantOf(request), request.query));
    },
    async exportFleetUtilization(request, reply) {
      return queued(reply, await exportFleetUtilization(deps, tenantOf(request), request.query));
    },
    async exportDispatchToBill(request, reply) {
      return queued(reply, await exportDispatchToBill(deps, tenantOf(request), request.query));
    },
    async exportUnitEconomics(request, reply) {
      return queued(reply, await exportUnitEconomics(deps, tenantOf(request), request.query));
    },
    async exportOriginals(request, reply) {
      return queued(reply, await exportOriginals(deps, tenantOf(request), request.query));
    },
    async listExports(request) {
      return listExports(deps, tenantOf(request), request.query);
    },
    async getExport(request) {
      return getExport(deps, tenantOf(request), { id: request.params.id });
    },
    async getExportFile(request, reply) {
      return sendFile(reply, await getExportFile(deps, tenantOf(request), { id: request.params.id }));
    },
    async getSharedExport(request, reply) {
      return sendFile(reply, await getSharedExport(deps, { token: request.params.token }));
    },
  };
}
