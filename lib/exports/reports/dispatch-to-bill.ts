/** The dispatch-to-bill audit (GET /api/analytics/dispatch-to-bill) as tables: one row per client, the summary, the unbilled and pre-billed trips listed (the first `limit`). */
import { auditDispatchToBill } from '../../analytics/audit-dispatch-to-bill.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';

const LAGS = [
  col('deliveredTrips', 'Trips delivered'),
  col('billedTrips', 'Delivered trips with a valid invoice'),
  col('medianLagDays', 'Median days from delivery to invoice'),
  col('p90LagDays', '90th percentile of those days'),
  col('within1DayPct', 'Billed within 1 day (%)'),
  col('within3DaysPct', 'Billed within 3 days (%)'),
  col('within7DaysPct', 'Billed within 7 days (%)'),
  col('preBilledCount', 'Invoiced at or before delivery (lag ≤ 0)'),
  col('unbilledCount', 'Delivered, no valid invoice (revenue leakage)'),
  col('unbilledValue', 'Value of the unbilled trips'),
  col('notDeliveredCount', 'Trips not delivered'),
  col('reason', 'Why the lag statistics are empty'),
];

export const DISPATCH_TO_BILL_DATASET = reportDataset({
  name: 'dispatch-to-bill',
  operationId: 'auditDispatchToBill',
  run: (ctx, tenant, query) => auditDispatchToBill(ctx, tenant, query, { everyClient: true }),
  tables: [
    { name: 'byClient.data', columns: [col('client', 'Client RFC'), ...LAGS] },
    {
      name: 'summary',
      columns: [
        col('period.startDate', 'First day of the period'),
        col('period.endDate', 'Last day of the period'),
        col('period.requestedEndDate', "The endDate asked for when the range was longer than the report's 366 days (it covers the first 366); empty otherwise"),
        ...LAGS,
        col('unbilledNoLink', 'Unbilled trips that name no invoice'),
        col('unbilledCancelledLink', 'Unbilled trips whose invoice is cancelled'),
        col('unresolvedLinks.count', 'Trips naming no document of this tenant'),
        col('unresolvedLinks.value', 'Their value'),
      ],
    },
    {
      name: 'unbilledTrips.data',
      columns: [
        col('tripId', 'Trip id'),
        col('client', 'Client RFC'),
        col('offloadDate', 'Delivery instant'),
        col('daysSinceOffload', 'Days since delivery'),
        col('value', 'Value of the trip'),
        col('reason', 'Why it counts as unbilled'),
        col('idFinan', 'The financial document the trip names'),
      ],
    },
    {
      name: 'preBilledTrips.data',
      columns: [col('tripId', 'Trip id'), col('client', 'Client RFC'), col('lagDays', 'Days from delivery to invoice (≤ 0)')],
    },
  ],
});
