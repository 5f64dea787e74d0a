import t from 'tap';
import { documentBalance, paymentStatus } from '../../lib/finance/balance.ts';
import { isInvoiceCancelled, isPaymentCancelled } from '../../lib/finance/cancellation.ts';
import { CLIENT_COMPANY, creditNote, freight, makeFinancialDoc, nextUuid, payment, paymentCancellation } from '../fixtures/documents.ts';

// Freight 10,000 to a company: VAT 1,600, retention 400, Total 11,200.
const base = { client: CLIENT_COMPANY, concepts: [freight(10_000)] };

t.test('fixture arithmetic', async (t) => {
  const doc = makeFinancialDoc(base);
  t.equal(doc.iSub, 10_000);
  t.equal(doc.iTax1, 1600);
  t.equal(doc.iTax2, 400);
  t.equal(doc.iTot, 11_200);
  t.equal(doc.invoice.iTot, 11_200);
  t.match(doc.invoice.uuid, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});

t.test('unpaid', async (t) => {
  const b = documentBalance(makeFinancialDoc(base));
  t.same(b, {
    total: 11_200,
    paid: 0,
    creditNotes: 0,
    pending: 11_200,
    overpaid: 0,
    isFullyPaid: false,
    paymentsCount: 0,
    creditNotesCount: 0,
    isCancelled: false,
  });
  t.equal(paymentStatus(b), 'unpaid');
});

t.test('partial: cancelled payments ignored, credit notes reduce but are not payments', async (t) => {
  const cancelledByRecord = nextUuid();
  const doc = makeFinancialDoc({
    ...base,
    payments: [
      payment(5000, '2026-04-01'),
      payment(1000, '2026-04-02', { canceled: true }),
      payment(2000, '2026-04-03', { uuid: cancelledByRecord }),
      creditNote(1200, '2026-04-04'),
    ],
    canceled: [paymentCancellation(cancelledByRecord)],
  });
  t.ok(isPaymentCancelled(doc, doc.payments[2]!), 'cancelled by a canceled[] record naming its uuid');
  const b = documentBalance(doc);
  t.equal(b.paid, 5000);
  t.equal(b.creditNotes, 1200);
  t.equal(b.pending, 5000, '11,200 − 5,000 − 1,200');
  t.equal(b.paymentsCount, 1, 'only valid payment complements');
  t.equal(b.creditNotesCount, 1);
  t.equal(b.isFullyPaid, false);
  t.equal(paymentStatus(b), 'partial');
  t.equal(doc.payments[3]!.balanceBefore, 6200, 'fixture balances skip cancelled records');
  t.equal(doc.payments[3]!.balanceAfter, 5000);
});

t.test('credit note alone makes it partial', async (t) => {
  const b = documentBalance(makeFinancialDoc({ ...base, payments: [creditNote(200)] }));
  t.equal(b.pending, 11_000);
  t.equal(b.paymentsCount, 0);
  t.equal(paymentStatus(b), 'partial');
});

t.test('fully paid and overpaid', async (t) => {
  const paid = documentBalance(makeFinancialDoc({ ...base, payments: [payment(5600), payment(5600)] }));
  t.equal(paid.pending, 0);
  t.equal(paid.isFullyPaid, true);
  t.equal(paid.paymentsCount, 2);
  t.equal(paymentStatus(paid), 'paid');
  const over = documentBalance(makeFinancialDoc({ ...base, payments: [payment(11_200), payment(100)] }));
  t.equal(over.pending, 0, 'never below 0');
  t.equal(over.overpaid, 100);
  t.equal(over.isFullyPaid, true);
});

t.test('cent-exact sums', async (t) => {
  const doc = makeFinancialDoc({ concepts: [freight(0.3, { vat: 0, retention: 0 })], payments: [payment(0.1), payment(0.2)] });
  t.equal(doc.iTot, 0.3);
  const b = documentBalance(doc);
  t.equal(b.pending, 0, '0.3 − 0.1 − 0.2 is 0, not 5.5e-17');
  t.equal(b.isFullyPaid, true);
});

t.test('cancelled invoice', async (t) => {
  const doc = makeFinancialDoc({ ...base, cancelled: { motive: '02' }, payments: [payment(1000)] });
  const b = documentBalance(doc);
  t.equal(b.isCancelled, true);
  t.equal(b.pending, 0, 'nothing collectable on a cancelled invoice');
  t.equal(b.isFullyPaid, false);
  t.equal(paymentStatus(b), 'cancelled');
});

t.test('a motive-01 record of the replaced predecessor does not cancel the current invoice', async (t) => {
  const doc = makeFinancialDoc(base);
  doc.canceled.push({ id: 'cx-old', target: 'invoice', uuid: nextUuid(), date: doc.date - 1000, motive: '01', replacementUuid: doc.invoice.uuid });
  t.equal(isInvoiceCancelled(doc), false);
  t.equal(documentBalance(doc).isCancelled, false);
  doc.canceled.push({ id: 'cx-now', target: 'invoice', uuid: doc.invoice.uuid.toUpperCase(), date: doc.date, motive: '02', replacementUuid: null });
  t.equal(isInvoiceCancelled(doc), true, 'uuid compared case-insensitively');
});
