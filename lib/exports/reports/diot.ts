/** The month's DIOT (GET /api/tax/diot, its JSON form) as tables: one row per supplier and type of operation in the DIOT layout's order, and the totals. */
import { getDiot } from '../../tax/get-diot.ts';
import { reportDataset } from './report-dataset.ts';
import { col } from './tabulate.ts';

export const DIOT_DATASET = reportDataset({
  name: 'diot',
  operationId: 'getDiot',
  run: getDiot,
  tables: [
    {
      name: 'rows',
      columns: [
        col('thirdPartyType', 'Type of third party: 04 national, 05 foreign, 15 global'),
        col('operationType', 'Type of operation: 03 professional services, 06 leasing, 85 others'),
        col('rfc', "The supplier's RFC; empty for a foreign one"),
        col('foreignTaxId', 'Foreign tax id (not on a received CFDI: empty)'),
        col('name', "The supplier's name"),
        col('paid.rate16', 'Value of the acts paid at 16%'),
        col('paid.rate8', 'Value of the acts paid at the 8% border rate'),
        col('paid.rate0', 'Value of the acts paid at 0%'),
        col('paid.exempt', 'Value of the exempt acts paid'),
        col('paid.imports', 'Value of imports paid (not received as CFDI: 0)'),
        col('vat.rate16', 'VAT paid at 16%'),
        col('vat.rate8', 'VAT paid at 8%'),
        col('vat.creditable', 'VAT paid that is creditable'),
        col('vat.nonCreditable', 'VAT paid that is not creditable'),
        col('vatRetained', 'IVA the carrier retained on those payments'),
        col('returnsAndDiscounts', "Value before VAT of the supplier's credit notes dated in the month"),
        col('documents', 'Received CFDIs counted'),
        col('payments', 'Payments counted'),
      ],
    },
    {
      name: 'totals',
      columns: [
        col('month', 'The month (YYYY-MM, Mexico City)'),
        col('suppliers', 'Suppliers'),
        col('paid', 'Σ value of the acts paid'),
        col('vatCreditable', 'Σ VAT paid that is creditable'),
        col('vatNonCreditable', 'Σ VAT paid that is not creditable'),
        col('vatRetained', 'Σ IVA retained'),
        col('returnsAndDiscounts', 'Σ returns and discounts'),
      ],
    },
  ],
});
