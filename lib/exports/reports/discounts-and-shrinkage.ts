/**
 * The discounts and shrinkage audit (GET /api/analytics/discounts-and-shrinkage) as tables: discounts
 * per client, per client and month and in total; demurrage and handling per client and in total;
 * shrinkage per client and in total; the worst legs listed (the first `limit`).
 */
import { auditDiscountsAndShrinkage } from '../../analytics/audit-discounts-and-shrinkage.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';
import { quotient } from './quotient.ts';

const PERIOD = [
  col('period.startDate', 'First day of the period'),
  col('period.endDate', 'Last day of the period'),
  col('period.requestedEndDate', "The endDate asked for when the range was longer than the report's 366 days (it covers the first 366); empty otherwise"),
];

const DISCOUNTS = [
  col('documents', 'Non-cancelled invoices'),
  col('documentsWithDiscount', 'Invoices with a discount'),
  col('grossFreight', 'Σ freight concept amounts before discount'),
  col('discounts', 'Σ Descuento of the invoices'),
  col('freightDiscounts', 'The part of the discounts on freight concepts'),
  ...quotient('discountRatePct', 'Discounts ÷ gross freight (%)'),
];

const DEMURRAGE = [
  col('documents', 'Non-cancelled invoices'),
  col('documentsWithDemurrage', 'Invoices with demurrage'),
  col('demurrage', 'Σ demurrage (estadías) concept amounts'),
  col('demurrageLines', 'Demurrage concepts'),
  col('handling', 'Σ handling (maniobras) concept amounts'),
  col('handlingLines', 'Handling concepts'),
];

const SHRINKAGE = [
  col('trips', 'Trips'),
  col('legs', 'Legs'),
  col('loadedLitres', 'Litres loaded'),
  col('offloadedLitres', 'Litres offloaded'),
  col('shrinkageLitres', 'Σ (loaded − offloaded); gains negative'),
  col('legsOutOfTolerance', 'Legs beyond their tolerance'),
  col('legsWithGain', 'Legs that gained volume'),
  col('excessLitres', "Σ litres beyond each leg's tolerance"),
  col('recoverableLitres', 'Litres recoverable from the carrier'),
  col('recoverableValue', 'Recoverable litres × price per litre'),
  col('recovered.invoices', 'Invoices with shortage deductions'),
  col('recovered.lines', 'Shortage deduction concepts'),
  col('recovered.litres', 'Litres deducted'),
  col('recovered.value', 'Value deducted'),
  ...quotient('recoveryRatePct', 'Recovered ÷ recoverable value (%)'),
];

export const DISCOUNTS_AND_SHRINKAGE_DATASET = reportDataset({
  name: 'discounts-and-shrinkage',
  operationId: 'auditDiscountsAndShrinkage',
  run: (ctx, tenant, query) => auditDiscountsAndShrinkage(ctx, tenant, query, { everyClient: true }),
  tables: [
    { name: 'discounts.byClient.data', columns: [col('client', 'Client RFC'), ...DISCOUNTS] },
    { name: 'discounts.byClientMonth.data', columns: [col('client', 'Client RFC'), col('month', 'The month (YYYY-MM)'), ...DISCOUNTS] },
    { name: 'discounts.totals', columns: [...PERIOD, ...DISCOUNTS] },
    { name: 'demurrage.byClient.data', columns: [col('client', 'Client RFC'), ...DEMURRAGE] },
    { name: 'demurrage.totals', columns: [...PERIOD, ...DEMURRAGE] },
    { name: 'shrinkage.byClient.data', columns: [col('client', 'Client RFC'), ...SHRINKAGE] },
    { name: 'shrinkage.totals', columns: [...PERIOD, ...SHRINKAGE] },
    {
      name: 'shrinkage.worstLegs.data',
      columns: [
        col('tripId', 'Trip id'),
        col('legId', 'Leg id'),
        col('shipmentId', 'Shipment id'),
        col('client', 'Client RFC'),
        col('offloadDate', 'Offload instant'),
        col('loaded', 'Litres loaded'),
        col('offloaded', 'Litres offloaded'),
        col('shrinkageVolume', 'Litres lost (loaded − offloaded)'),
        col('shrinkagePercent', 'Shrinkage ÷ loaded (%)'),
        col('tolerancePct', "The leg's tolerance (%)"),
        col('recoverableLitres', 'Litres recoverable'),
        col('recoverableValue', 'Value recoverable'),
        col('invoiceId', 'Linked non-cancelled invoice, if any'),
      ],
    },
  ],
});
