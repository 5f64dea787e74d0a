/**
 * How a cancellation's status moves (lib/finance/ledger/documents.ts): the request, the SAT's
 * acknowledgement (201/202, and whether the receiver must accept), the status service's answer;
 * and what the invoice then is (lib/finance: cancelled only when accepted or expired).
 */
import t from 'tap';
import { parseXmlTree } from '../../lib/imports/xml-tree.ts';
import { keepNamespace, readImportFile } from '../../lib/imports/cfdi.ts';
import { cancellationFacts, cancellationRequestFacts, invoiceFact } from '../../lib/imports/financial-mapping.ts';
import { buildFinancialDocument, cancellationRecordOf, needsReceiverAcceptance } from '../../lib/finance/ledger/documents.ts';
import type { CancellationFact, CancellationStatusFact } from '../../lib/finance/ledger/facts.ts';
import { invoiceCancellationStatus, isInvoiceCancelled } from '../../lib/finance/cancellation.ts';
import { documentBalance } from '../../lib/finance/balance.ts';
import { financialSummary } from '../../lib/finance/summary.ts';
import { invoiceXml, requestXml, satAcuseXml } from '../helpers/cfdi-builder.ts';
import type { Cfdi } from '../../lib/imports/cfdi.ts';

const TENANT = 'TGO850101AB1';
const UUID = '3C4D5E6F-0001-4000-8000-000000000001';
const at = (iso: string): number => Date.parse(iso);
const read = (xml: string) => readImportFile(parseXmlTree(xml, keepNamespace));
/** Freight 2,000 + IVA = 2,320 MXN, issued and certified Monday 5 Oct 2026 10:00 Mexico City. */
const invoice = (amount = 2_000, over: Partial<Parameters<typeof invoiceXml>[0]> = {}) =>
  invoiceFact(
    TENANT,
    read(
      invoiceXml({
        issuer: TENANT,
        receiver: 'GDI920315QR4',
        uuid: UUID,
        fecha: '2026-10-05T10:00:00',
        lines: [{ desc: 'Flete', amount, transfers: [{ tax: '002', rate: 0.16 }] }],
        ...over,
      }).xml,
    ) as Cfdi,
  );

t.test('who must accept: over 1,000 MXN, after the business day following certification, not the public', async (t) => {
  const base = invoice().base;
  t.ok(needsReceiverAcceptance(base, at('2026-10-07T15:00:00Z')), 'Wednesday: after Tuesday, the business day following');
  t.notOk(needsReceiverAcceptance(base, at('2026-10-06T23:00:00Z')), 'Tuesday 17:00: within the business day following certification');
  t.notOk(needsReceiverAcceptance({ ...base, iTot: 1_000 }, at('2026-10-20T15:00:00Z')), 'a total of 1,000.00 MXN');
  t.ok(needsReceiverAcceptance({ ...base, iTot: 1_000.01 }, at('2026-10-20T15:00:00Z')), '1,000.01 MXN');
  t.notOk(needsReceiverAcceptance({ ...base, iTot: 50, exchangeRate: 17 }, at('2026-10-20T15:00:00Z')), 'USD 50 at 17 = 850 MXN');
  t.ok(needsReceiverAcceptance({ ...base, iTot: 100, exchangeRate: 17 }, at('2026-10-20T15:00:00Z')), 'USD 100 at 17 = 1,700 MXN');
  t.notOk(needsReceiverAcceptance({ ...base, client: 'XAXX010101000' }, at('2026-10-20T15:00:00Z')), 'the general public');
});

t.test('the record from its facts', async (t) => {
  const base = invoice().base;
  const request = cancellationRequestFacts(
    [{ uuid: UUID, motive: '01', replacementUuid: 'AAAAAAAA-0000-4000-8000-000000000002' }],
    at('2026-10-13T15:00:00Z'),
  )[0]!;
  const ack = (code: '201' | '202', date = '2026-10-13T15:05:00Z'): CancellationFact =>
    cancellationFacts([{ uuid: UUID, code, motive: null, replacementUuid: null }], at(date))[0]!;
  const answer = (estatusCancelacion: CancellationStatusFact['estatusCancelacion'], date: string): CancellationStatusFact => ({
    kind: 'cancellationStatus',
    uuid: UUID,
    estado: estatusCancelacion === 'En proceso' || estatusCancelacion === 'Solicitud rechazada' ? 'Vigente' : 'Cancelado',
    estatusCancelacion,
    date: at(date),
  });
  const rec = (facts: Parameters<typeof cancellationRecordOf>[3], target: 'invoice' | 'payment' = 'invoice') =>
    cancellationRecordOf(TENANT, target, UUID, facts, target === 'invoice' ? base : null);

  t.equal(rec({}), null, 'no fact, no record');
  t.match(
    rec({ request }),
    {
      status: 'pending',
      date: at('2026-10-13T15:00:00Z'),
      requestedAt: at('2026-10-13T15:00:00Z'),
      motive: '01',
      replacementUuid: 'AAAAAAAA-0000-4000-8000-000000000002',
      statusSource: 'request',
      satStatus: null,
    },
    'a request alone: pending',
  );
  t.match(
    rec({ request, acknowledgement: ack('202') }),
    { status: 'accepted', motive: '01', statusSource: 'acknowledgement', satStatus: '202', requestedAt: at('2026-10-13T15:00:00Z') },
    '202: already cancelled; the motive from the request',
  );
  t.match(rec({ request, acknowledgement: ack('201') }), { status: 'pending', satStatus: '201' }, '201 on an invoice that needs acceptance: in process');
  t.match(
    rec({ acknowledgement: ack('201', '2026-10-06T16:00:00Z') }),
    { status: 'accepted', motive: null, requestedAt: at('2026-10-06T16:00:00Z') },
    '201 within the business day following: cancelled without acceptance',
  );
  t.match(rec({ acknowledgement: ack('201') }, 'payment'), { status: 'accepted' }, 'a payment record: no acceptance here');
  t.match(
    rec({ acknowledgement: { ...ack('201'), code: undefined } }),
    { status: 'accepted' },
    'an acknowledgement stored before codes were kept: in effect, as it was',
  );
  t.match(rec({ request, acknowledgement: ack('201'), answer: answer('Cancelado con aceptación', '2026-10-14T18:00:00Z') }), {
    status: 'accepted',
    date: at('2026-10-14T18:00:00Z'),
    statusSource: 'status-service',
    satStatus: 'Cancelado con aceptación',
  });
  t.match(rec({ request, acknowledgement: ack('201'), answer: answer('Solicitud rechazada', '2026-10-14T18:00:00Z') }), { status: 'rejected' });
  t.match(rec({ request, acknowledgement: ack('201'), answer: answer('Plazo vencido', '2026-10-19T18:00:00Z') }), { status: 'expired' });
  t.match(
    rec({ request, answer: answer('En proceso', '2026-10-14T18:00:00Z'), acknowledgement: ack('202', '2026-10-20T18:00:00Z') }),
    { status: 'accepted', statusSource: 'acknowledgement' },
    'a newer acknowledgement speaks after an older answer',
  );
  t.match(
    rec({ request, acknowledgement: ack('202'), answer: answer('En proceso', '2026-10-14T18:00:00Z') }),
    { status: 'accepted', statusSource: 'acknowledgement', satStatus: '202' },
    'a cancellation in effect is final: a later answer of Vigente does not undo it',
  );
  t.match(
    rec({ request, acknowledgement: ack('202'), answer: answer('Plazo vencido', '2026-10-19T18:00:00Z') }),
    { status: 'expired', statusSource: 'status-service' },
    'from one status in effect to another',
  );
});

t.test('what the document then is: only accepted and expired leave revenue, balance and taxes', async (t) => {
  const inv = invoice(5_000);
  const request = cancellationRequestFacts([{ uuid: UUID, motive: '02', replacementUuid: null }], at('2026-10-13T15:00:00Z'));
  const ack201 = cancellationFacts([{ uuid: UUID, code: '201', motive: null, replacementUuid: null }], at('2026-10-13T15:05:00Z'));
  const pending = buildFinancialDocument(inv, [], [], [...request, ...ack201]);
  t.equal(invoiceCancellationStatus(pending), 'pending');
  t.notOk(isInvoiceCancelled(pending));
  t.match(documentBalance(pending), { isCancelled: false, isFullyPaid: true }, 'a PUE invoice keeps its receipt while pending');
  t.equal(pending.status, 6);
  const summary = financialSummary(pending, { statusLabel: String, originalUrl: () => null, printedFormUrl: () => null, currency: 'MXN' });
  t.same(summary.cancellations, {
    hasCancellations: true,
    count: 1,
    invoiceCancelled: false,
    status: 'pending',
    requestedAt: '2026-10-13T15:00:00.000Z',
    receiverDeadline: '2026-10-17T06:00:00.000Z',
  });
  const rejected = buildFinancialDocument(
    inv,
    [],
    [],
    [
      ...request,
      ...ack201,
      { kind: 'cancellationStatus', uuid: UUID, estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada', date: at('2026-10-14T18:00:00Z') },
    ],
  );
  t.equal(invoiceCancellationStatus(rejected), 'rejected');
  t.equal(rejected.status, 6, 'still paid');
  const expired = buildFinancialDocument(
    inv,
    [],
    [],
    [
      ...request,
      ...ack201,
      { kind: 'cancellationStatus', uuid: UUID, estado: 'Cancelado', estatusCancelacion: 'Plazo vencido', date: at('2026-10-19T18:00:00Z') },
    ],
  );
  t.equal(invoiceCancellationStatus(expired), 'expired');
  t.ok(isInvoiceCancelled(expired));
  t.equal(expired.status, 9);
  t.same(expired.payments, [], 'a cancelled PUE invoice has no receipt');
  t.equal(expired.lastUpdate, '2026-10-19T18:00:00.000Z', 'changed when the SAT answered');
});

t.test('reading acknowledgements and requests: the SAT shape, ours, the request, and what is refused', async (t) => {
  const sat = read(
    satAcuseXml({
      issuer: TENANT,
      fecha: '2026-10-12T11:02:56.2475804',
      folios: [
        { uuid: UUID.toLowerCase(), code: '202' },
        { uuid: 'AAAAAAAA-0000-4000-8000-000000000002', code: '201' },
      ],
    }),
  );
  t.match(
    sat,
    { file: 'cancellation', issuerRfc: TENANT, date: at('2026-10-12T17:02:56.247Z'), folios: [{ uuid: UUID, code: '202', motive: null }, { code: '201' }] },
    'Fecha with 7 fractional digits, read to the millisecond; UUID upper-cased',
  );
  t.throws(
    () => read(satAcuseXml({ issuer: TENANT, fecha: '2026-10-12T11:02:56', folios: [{ uuid: UUID, code: '205' }] })),
    /the SAT did not accept the cancellation of .* \(EstatusUUID 205: the UUID is not known to the SAT\)/,
  );
  t.throws(
    () => read(satAcuseXml({ issuer: TENANT, fecha: '2026-10-12T11:02:56.12345678', folios: [{ uuid: UUID, code: '202' }] })),
    /up to 7 fractional digits/,
  );
  t.throws(() => read('<Acuse Fecha="2026-10-12T11:02:56" RfcEmisor="TGO850101AB1"/>'), /Acuse has no Folios with UUID and EstatusUUID/);
  const request = read(
    requestXml({ issuer: TENANT, fecha: '2026-10-12T11:00:00', folios: [{ uuid: UUID, motive: '01', replacement: 'AAAAAAAA-0000-4000-8000-000000000002' }] }),
  );
  t.match(request, { file: 'cancellationRequest', folios: [{ uuid: UUID, motive: '01', replacementUuid: 'AAAAAAAA-0000-4000-8000-000000000002' }] });
  t.throws(
    () => read(requestXml({ issuer: TENANT, fecha: '2026-10-12T11:00:00', folios: [{ uuid: UUID, motive: '05' }] })),
    /Motivo "05" is not 01, 02, 03 or 04/,
  );
  t.throws(
    () =>
      read(
        '<Cancelacion xmlns="http://cancelacfd.sat.gob.mx" Fecha="2018-09-24T13:23:58" RfcEmisor="TGO850101AB1"><Folios><UUID>3C4D5E6F-0001-4000-8000-000000000001</UUID></Folios></Cancelacion>',
      ),
    /without Motivo .* before 2022/,
  );
});
