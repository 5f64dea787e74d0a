/** The receivables aging (GET /api/receivables/aging) as tables: one row per client with its buckets, the totals, the open invoices listed. */
import { getReceivablesAging } from '../../analytics/get-receivables-aging.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';

const BUCKETS = [
  col('buckets.current.invoices', 'Open invoices not yet due (0 days past due or less)'),
  col('buckets.current.amount', 'Outstanding not yet due (MXN)'),
  col('buckets.days1to30.invoices', 'Open invoices 1–30 days past due'),
  col('buckets.days1to30.amount', 'Outstanding 1–30 days past due (MXN)'),
  col('buckets.days31to60.invoices', 'Open invoices 31–60 days past due'),
  col('buckets.days31to60.amount', 'Outstanding 31–60 days past due (MXN)'),
  col('buckets.days61to90.invoices', 'Open invoices 61–90 days past due'),
  col('buckets.days61to90.amount', 'Outstanding 61–90 days past due (MXN)'),
  col('buckets.over90.invoices', 'Open invoices over 90 days past due'),
  col('buckets.over90.amount', 'Outstanding over 90 days past due (MXN)'),
];

export const RECEIVABLES_AGING_DATASET = reportDataset({
  name: 'receivables-aging',
  operationId: 'getReceivablesAging',
  run: (ctx, tenant, query) => getReceivablesAging(ctx, tenant, query, { everyClient: true }),
  tables: [
    {
      name: 'clients.data',
      columns: [
        col('client', 'Client RFC'),
        col('clientName', "The name on the client's latest open invoice"),
        col('creditDays', "The client's credit days (its own or the default)"),
        col('openInvoices', 'Open invoices'),
        col('outstanding', 'Outstanding (MXN)'),
        ...BUCKETS,
      ],
    },
    {
      name: 'totals',
      columns: [
        col('asOf.date', 'The day balances and ages are judged at (Mexico City)'),
        col('openInvoices', 'Open invoices'),
        col('outstanding', 'Σ outstanding (MXN)'),
        ...BUCKETS,
      ],
    },
    {
      name: 'items.data',
      columns: [
        col('id', 'Id of the financial document'),
        col('uuid', 'Fiscal UUID of the invoice'),
        col('client', 'Client RFC'),
        col('invoiceDate', 'Invoice emission instant'),
        col('dueDate', 'Invoice day + credit days'),
        col('daysPastDue', 'As-of day − due day (0 or less: not yet due)'),
        col('bucket', 'Bucket of days past due'),
        col('outstanding', "Outstanding (MXN at the invoice's own rate)"),
        col('currency', "The invoice's currency (ISO 4217)"),
        col('exchangeRate', 'MXN per unit of currency (1 for MXN)'),
      ],
    },
  ],
});
