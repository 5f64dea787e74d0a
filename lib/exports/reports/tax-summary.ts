/** The tax summary (GET /api/tax-summary) as tables: one row per month, per client and month, the period's totals, the findings listed. */
import { getTaxSummary } from '../../tax/get-tax-summary.ts';
import { reportDataset } from './report-dataset.ts';
import { col, under } from './tabulate.ts';

/** The sums of a month, of a client in a month, and of the period (MXN). */
const TAX_TOTALS = [
  col('documents', 'Non-cancelled documents summed'),
  col('cancelledDocuments', 'Cancelled documents in scope (excluded from every amount)'),
  col('cancelledTotal', 'Σ Total of the cancelled documents (information only)'),
  col('pendingCancellations', 'Documents summed whose cancellation is pending'),
  col('subtotal', 'Σ SubTotal'),
  col('discount', 'Σ Descuento'),
  col('taxableBase', 'Σ base of the concepts subject to VAT'),
  col('freightBase', 'Σ (amount − discount) of the freight concepts'),
  col('exempt.total', 'Σ concepts not subject to VAT (in SubTotal, in no tax base)'),
  col('exempt.shortage', 'Shortage (faltante/merma) deductions'),
  col('exempt.indemnity', 'Indemnities'),
  col('exempt.other', 'Any other concept not subject to VAT'),
  col('vatBases.rate16', 'IVA base at 16%'),
  col('vatBases.rate8', 'IVA base at the 8% border rate'),
  col('vatBases.rate0', 'IVA base at 0%'),
  col('vatBases.exempt', 'IVA base exempt'),
  col('vatBases.otherRates', 'IVA base at a rate the law does not set'),
  col('vat.declared', 'VAT as written on the CFDIs'),
  col('vat.expected', 'VAT recomputed per concept (round2(base × rate))'),
  col('vat.difference', 'VAT declared − expected'),
  col('retention.declared', 'VAT retention as written on the CFDIs'),
  col('retention.expected', 'VAT retention recomputed per concept'),
  col('retention.difference', 'VAT retention declared − expected'),
  col('isrRetained', 'Σ ISR retained as declared'),
  col('ieps.transferred', 'Σ IEPS transferred'),
  col('ieps.retained', 'Σ IEPS retained'),
  col('transferredTaxes', 'Σ every transferred tax as declared'),
  col('retainedTaxes', 'Σ every retained tax as declared'),
  col('total', 'Σ Total (payment basis: Σ amounts paid that count)'),
  col('collected', 'Payment basis: Σ payments that count; empty on the invoice basis'),
  col('findings.discrepancies', 'Discrepancies found'),
  col('findings.warnings', 'Warnings found'),
  col('findings.infos', 'Infos found'),
  col('documentsWithDiscrepancies', 'Documents with at least one discrepancy'),
];

export const TAX_SUMMARY_DATASET = reportDataset({
  name: 'tax-summary',
  operationId: 'getTaxSummary',
  run: (ctx, tenant, query) => getTaxSummary(ctx, tenant, query, { everyClient: true }),
  tables: [
    { name: 'months', columns: [col('month', 'The month (YYYY-MM, Mexico City)'), ...under('totals', TAX_TOTALS)] },
    {
      name: 'totals',
      columns: [
        col('period.startDate', 'First day included (Mexico City)'),
        col('period.endDate', 'Last day included (Mexico City)'),
        col('period.requestedEndDate', "The endDate asked for when the range was longer than the report's 366 days (it covers the first 366); empty otherwise"),
        col('basis', 'Which date places a document in a month: invoice or payment'),
        ...TAX_TOTALS,
      ],
    },
    {
      name: 'months.clients.data',
      columns: [
        col('month', 'The month (YYYY-MM, Mexico City)'),
        col('client', 'Client RFC'),
        col('clientName', "The client's name"),
        col('clientKind', 'Taxpayer type by RFC: company, person or public'),
        ...under('totals', TAX_TOTALS),
      ],
    },
    {
      name: 'findings.items',
      columns: [
        col('kind', 'discrepancy, warning or info'),
        col('code', 'Stable reason code'),
        col('docId', 'Id of the financial document'),
        col('uuid', 'Fiscal UUID of the invoice'),
        col('client', 'Client RFC'),
        col('date', 'Invoice emission instant'),
        col('month', 'Month the document is reported in'),
        col('conceptIndex', 'Index into the invoice concepts; empty for a document-level finding'),
        col('currency', "Currency of declared, expected and difference (the document's own)"),
        col('declared', 'Amount as declared'),
        col('expected', 'Amount as recomputed'),
        col('difference', 'declared − expected'),
        col('message', 'The finding in words'),
      ],
    },
  ],
});
