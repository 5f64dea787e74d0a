/**
 * The reports that can be exported (docs/exports-report-tables.md): each runs the domain service of
 * its JSON operation and writes the answer as tables whose columns are JSON paths into its items.
 */
import type { ExportDataset } from './export-dataset.ts';
import type { ReportDataset } from './reports/report-dataset.ts';
import type { ReportTableSpec } from './reports/tabulate.ts';
import { TAX_SUMMARY_DATASET } from './reports/tax-summary.ts';
import { TAX_POSITION_DATASET } from './reports/tax-position.ts';
import { DIOT_DATASET } from './reports/diot.ts';
import { RECEIVABLES_AGING_DATASET } from './reports/receivables-aging.ts';
import { CASH_INFLOW_FORECAST_DATASET } from './reports/cash-inflow-forecast.ts';
import { DISCOUNTS_AND_SHRINKAGE_DATASET } from './reports/discounts-and-shrinkage.ts';
import { FLEET_UTILIZATION_DATASET } from './reports/fleet-utilization.ts';
import { DISPATCH_TO_BILL_DATASET } from './reports/dispatch-to-bill.ts';
import { UNIT_ECONOMICS_DATASET } from './reports/unit-economics.ts';

const REPORTS: readonly ReportDataset[] = [
  TAX_SUMMARY_DATASET,
  TAX_POSITION_DATASET,
  DIOT_DATASET,
  RECEIVABLES_AGING_DATASET,
  CASH_INFLOW_FORECAST_DATASET,
  DISCOUNTS_AND_SHRINKAGE_DATASET,
  FLEET_UTILIZATION_DATASET,
  DISPATCH_TO_BILL_DATASET,
  UNIT_ECONOMICS_DATASET,
];

export const REPORT_DATASETS: readonly ExportDataset[] = REPORTS;

/** Each report's tables and their columns by dataset name, known without running it (docs/exports-report-tables.md). */
export const REPORT_TABLES: ReadonlyMap<string, readonly ReportTableSpec[]> = new Map(REPORTS.map((d) => [d.name, d.tableSpecs]));
