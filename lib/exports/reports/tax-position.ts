/**
 * The month's tax position (GET /api/tax/position) as tables: the VAT and retentions of the month
 * (one row), each figure with its amount, the lines listed for each figure (the first `limit` of each;
 * every line of a figure is the list GET /api/tax/position/lines), the warnings listed.
 */
import { getTaxPosition } from '../../tax/get-tax-position.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';

export const TAX_POSITION_DATASET = reportDataset({
  name: 'tax-position',
  operationId: 'getTaxPosition',
  run: getTaxPosition,
  tables: [
    {
      name: 'vat',
      columns: [
        col('month', 'The month (YYYY-MM, Mexico City)'),
        col('collected', "VAT of the carrier's invoices collected in the month"),
        col('retainedByClients', 'The 4% clients retained on those collections'),
        col('creditable', 'Creditable VAT of received CFDIs paid in the month'),
        col('retentionCredit', 'IVA retained on the previous month’s payments, creditable now'),
        col('payable', 'collected − retainedByClients − creditable − retentionCredit'),
        col('result', 'payable, inFavour or zero'),
        col('retentions.vatRetained', 'IVA the carrier retained on what it paid in the month'),
        col('retentions.isrRetained', 'ISR the carrier retained on what it paid in the month'),
        col('retentions.total', 'Retentions due'),
        col('retentions.dueDate', 'When the retentions are due (the 17th of the next month)'),
        col('isrRetainedByClients', "ISR the carrier's clients retained on what they paid in the month"),
        col('nonCreditableVat', 'VAT of received CFDIs paid in the month that is not creditable'),
      ],
    },
    {
      name: 'figures',
      columns: [
        col('figure', 'The figure'),
        col('description', 'The figure and its legal source'),
        col('amount', 'The whole figure (MXN)'),
        col('lineCount', 'Lines behind the figure'),
      ],
    },
    {
      name: 'figures.lines',
      columns: [
        col('figure', 'The figure the line is behind'),
        col('side', 'issued (an invoice collected) or received (a supplier CFDI paid)'),
        col('docId', 'Id of the financial document or received document'),
        col('uuid', 'Fiscal UUID of the invoice'),
        col('party', 'RFC of the client or supplier'),
        col('partyName', 'Name of the client or supplier'),
        col('paymentMethod', 'PUE or PPD'),
        col('settlement', 'pue (paid at its date) or payment (by payment complements)'),
        col('paymentUuid', "UUID of the supplier's payment complement; empty otherwise"),
        col('payments', 'Payment complements counted'),
        col('date', 'When it was collected or paid'),
        col('paid', 'Amount collected or paid that counts (MXN)'),
        col('share', 'paid ÷ Total (6 decimals)'),
        col('amount', 'Its part of the figure (MXN)'),
        col('reason', 'Why its VAT is not creditable; empty otherwise'),
      ],
    },
    {
      name: 'warnings.items',
      columns: [
        col('code', 'Reason code'),
        col('message', 'The warning in words'),
        col('docId', 'Id of the received document'),
        col('uuid', 'Fiscal UUID of the CFDI'),
        col('supplier', 'Supplier RFC'),
        col('date', 'When it was paid'),
        col('vat', 'The VAT paid that is not credited'),
      ],
    },
  ],
});
