/**
 * The cash inflow forecast (GET /api/analytics/cash-inflow-forecast) as tables: the expected inflow per
 * week or month, the receivables with DSO and concentration (one row), one row per client, the open
 * invoices listed (the first `limit`), the clients' revenue shares.
 */
import { getCashInflowForecast } from '../../analytics/get-cash-inflow-forecast.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';

export const CASH_INFLOW_FORECAST_DATASET = reportDataset({
  name: 'cash-inflow-forecast',
  operationId: 'getCashInflowForecast',
  run: (ctx, tenant, query) => getCashInflowForecast(ctx, tenant, query, { everyClient: true }),
  tables: [
    {
      name: 'forecast.buckets',
      columns: [
        col('key', 'YYYY-MM for months, the first day for weeks'),
        col('start', 'First day of the bucket'),
        col('end', 'Last day of the bucket'),
        col('expected', 'Amount expected in the bucket (MXN)'),
        col('invoices', 'Invoices expected in the bucket'),
      ],
    },
    {
      name: 'receivables',
      columns: [
        col('period.startDate', 'First day of the period'),
        col('period.endDate', 'Last day of the period'),
        col('period.requestedEndDate', "The endDate asked for when the range was longer than the report's 366 days (it covers the first 366); empty otherwise"),
        col('asOf.date', 'The day balances are judged at (Mexico City)'),
        col('openInvoices', 'Open invoices'),
        col('outstanding', 'Σ outstanding balances as of asOf (accounts receivable)'),
        col('pastDue.invoices', 'Open invoices past due'),
        col('pastDue.amount', 'Outstanding past due'),
        col('notYetDue.invoices', 'Open invoices not yet due'),
        col('notYetDue.amount', 'Outstanding not yet due'),
        col('forecast.totalExpected', 'Σ expected'),
        col('forecast.overdue.expected', 'Expected before the as-of day (overdue)'),
        col('forecast.overdue.invoices', 'Invoices expected before the as-of day'),
        col('forecast.overdue.oldestExpectedDate', 'Oldest expected date of those'),
        col('dso.value', 'Days sales outstanding'),
        col('dso.reason', 'Why DSO is empty'),
        col('dso.accountsReceivable', 'Accounts receivable'),
        col('dso.creditSales', 'Σ Total of the invoices emitted in the period not cancelled by the as-of day'),
        col('concentration.hhi', 'Herfindahl–Hirschman index of client revenue shares (0–10,000)'),
        col('concentration.band', 'unconcentrated, moderate or high'),
        col('concentration.totalRevenue', 'Revenue of the period'),
        col('concentration.clients', 'Clients with revenue'),
        col('concentration.flaggedClients', 'Clients at or above the single-client share flag'),
      ],
    },
    {
      name: 'clients.data',
      columns: [
        col('client', 'Client RFC'),
        col('clientName', "The client's name"),
        col('openInvoices', 'Open invoices'),
        col('outstanding', 'Outstanding (MXN)'),
        col('pastDue', 'Outstanding on invoices due before the as-of day'),
        col('creditDays', "The client's credit days"),
        col('creditDaysSource', 'Where the credit days come from'),
        col('delayDays', 'Median payment delay applied (days after the due date)'),
        col('delayBasis', 'client, portfolio or none: whose median'),
        col('paymentsInHistory', 'Payments in the history'),
        col('nextExpectedDate', 'Earliest expected date among its not-yet-due invoices'),
      ],
    },
    {
      name: 'items.data',
      columns: [
        col('id', 'Id of the financial document'),
        col('uuid', 'Fiscal UUID of the invoice'),
        col('client', 'Client RFC'),
        col('invoiceDate', 'Invoice emission instant'),
        col('outstanding', 'Outstanding (MXN)'),
        col('dueDate', 'Invoice day + credit days'),
        col('expectedDate', "Due date + the client's median delay"),
        col('delayDays', 'Delay applied (days)'),
        col('delayBasis', 'client, portfolio or none: whose median'),
        col('pastDue', 'Due date before the as-of day'),
        col('overdue', 'Expected date before the as-of day'),
      ],
    },
    {
      name: 'concentration.shares',
      columns: [
        col('client', 'Client RFC'),
        col('revenue', 'Revenue of the period'),
        col('sharePct', 'Percent of total revenue (4 decimals)'),
        col('flagged', 'Share at or above the single-client flag'),
      ],
    },
  ],
});
