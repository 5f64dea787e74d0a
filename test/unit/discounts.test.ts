import t from 'tap';
import { discountsAndDemurrage, EMPTY_CONCEPT_TOTALS } from '../../lib/analytics/discounts.ts';

const row = (client: string, month: string, sums: Partial<typeof EMPTY_CONCEPT_TOTALS>) => ({ ...EMPTY_CONCEPT_TOTALS, client, month, ...sums });

t.test('discount rate and accessorials per client and client-month', async (t) => {
  const r = discountsAndDemurrage([
    row('A', '2026-02', {
      documents: 2,
      documentsWithDiscount: 1,
      documentsWithDemurrage: 1,
      discountC: 100_00,
      grossFreightC: 10_000_00,
      freightDiscountC: 100_00,
      demurrageC: 500_00,
      demurrageLines: 1,
    }),
    row('B', '2026-01', { documents: 1, documentsWithDiscount: 1, discountC: 30_00 }),
    row('A', '2026-01', { documents: 1, grossFreightC: 5_000_00, handlingC: 250_00, handlingLines: 2 }),
  ]);
  // 130 MXN of discounts on 15,000 MXN of gross freight = 0.8667 %.
  t.same(r.discounts.totals, {
    documents: 4,
    documentsWithDiscount: 2,
    grossFreight: 15_000,
    discounts: 130,
    freightDiscounts: 100,
    discountRatePct: { value: 0.8667 },
  });
  t.same(
    r.discounts.byClient.map((c) => [c.client, c.documents, c.discounts, c.discountRatePct]),
    [
      ['A', 3, 100, { value: 0.6667 }], // 100 / 15,000
      ['B', 1, 30, { value: null, reason: 'no gross freight (division by zero)' }],
    ],
  );
  t.same(
    r.discounts.byClientMonth.map((c) => [c.client, c.month, c.discountRatePct.value]),
    [
      ['A', '2026-01', 0],
      ['A', '2026-02', 1], // 100 / 10,000
      ['B', '2026-01', null],
    ],
  );
  t.same(r.demurrage.totals, { documents: 4, documentsWithDemurrage: 1, demurrage: 500, demurrageLines: 1, handling: 250, handlingLines: 2 });
  t.same(
    r.demurrage.byClient.map((c) => [c.client, c.demurrage, c.handling]),
    [
      ['A', 500, 250],
      ['B', 0, 0],
    ],
  );
});

t.test('no invoices', async (t) => {
  const r = discountsAndDemurrage([]);
  t.same(r.discounts.totals.discountRatePct, { value: null, reason: 'no gross freight (division by zero)' });
  t.same(r.discounts.byClient, []);
  t.same(r.demurrage.totals.documents, 0);
});
