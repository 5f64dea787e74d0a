/**
 * The month's tax position and DIOT (docs/domain.md, "The month's tax position", "DIOT") through
 * POST /api/imports, GET /api/tax/position, /api/tax/position/lines, /api/tax/diot and MCP, on
 * imported XML, against figures computed by hand. Tenant A (TGO850101AB1), October 2026.
 *
 * Issued (collected in October; the client CLI010101AB1 is a company: it retains 4% of the freight)
 *   I1 PUE 2026-10-05: 10,000.00 + IVA 1,600.00 − ret 400.00 = 11,200.00 → VAT 1,600.00, ret 400.00
 *   I2 PPD 2026-09-20: 20,000.00 + 3,200.00 − 800.00 = 22,400.00; complement 2026-10-10 pays 11,200.00
 *      → share 11,200 ÷ 22,400 = 0.5: VAT 1,600.00, ret 400.00
 *   I3 PPD 2026-10-15: 5,000.00 + 800.00 − 200.00, nothing paid → nothing
 *   VAT collected 3,200.00; retained by clients 800.00
 * Received (paid in October)
 *   RF diesel PUE 2026-10-03, FormaPago 01 (cash): 5,000.00 + 800.00 → FUEL_PAID_IN_CASH, 800.00 not creditable
 *   RM maintenance PPD 2026-10-02: 10,000.00 + 1,600.00 = 11,600.00, paid in two parts:
 *      2026-10-10 4,640.00 (4,640 ÷ 11,600 = 0.4: base 4,000.00, VAT 640.00)
 *      2026-10-25 6,960.00 (0.6: base 6,000.00, VAT 960.00); credit note 2026-10-28 of 1,000.00 + 160.00
 *      = 1,160.00 → returns 10,000 × 1,160 ÷ 11,600 = 1,000.00
 *   RT subcontracted freight PUE 2026-10-12: 12,500.00 + 2,000.00 − IVA retained 4% 500.00 = 14,000.00
 *   RX tyres PPD 2026-10-08: 1,000.00 + 160.00, paid 2026-10-09, cancelled (SAT 202) → DOCUMENT_CANCELLED 160.00
 *   RP alignment by a persona física PUE 2026-10-14: 2,000.00 + 320.00 − IVA ret 213.33 − ISR 200.00
 *   RS toll PUE 2026-10-20, UsoCFDI S01: 500.00 + 80.00 → USE_S01, 80.00 not creditable
 *   RV subcontracted freight PUE 2026-09-20 (September): 5,000.00 + 800.00 − 200.00 → October's retention credit 200.00
 *   Creditable: the VAT paid to the supplier (LIVA art. 5 fr. III), the part the carrier retained being credited
 *   next month once paid to the SAT (fr. IV): 1,600.00 + (2,000.00 − 500.00) + (320.00 − 213.33) = 3,206.67,
 *   less the VAT RM's credit note gives back (art. 7: RM was paid in full before it, so all 1,160.00 of it returns
 *   what was paid: 160.00) = 3,046.67; not creditable 800 + 160 + 80 = 1,040.00
 *   VAT payable 3,200.00 − 800.00 − 3,046.67 − 200.00 = −846.67 (in favour)
 *   Retained by the carrier: IVA 500.00 + 213.33 = 713.33, ISR 200.00, due 2026-11-17
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml, paymentXml, requestXml, satAcuseXml, type LineSpec } from '../helpers/cfdi-builder.ts';
import { asCreditNote } from '../helpers/differential-writes.ts';
import { getDiot } from '../../lib/tax/get-diot.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';

export default async function taxPositionTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const CLIENT = 'CLI010101AB1';
  const GAS = 'PGA010101AB1';
  const SHOP = 'MAN010101AB1';
  const CARRIER = 'TRA920101XY3';
  const TYRES = 'LLA010101AB1';
  const MECHANIC = 'MAPJ800101AB2';
  const TOLLS = 'CAP010101AB1';
  const U = (n: number): string => `7A2B0C55-00${String(n).padStart(2, '0')}-4000-8000-0000000003${String(n).padStart(2, '0')}`;
  const vat16 = [{ tax: '002' as const, rate: 0.16 }];
  const freight = (amount: number) => ({ code: '78101802', desc: 'Flete', amount, transfers: vat16, retentions: [{ tax: '002' as const, rate: 0.04 }] });

  const files: { name: string; content: string }[] = [
    // Issued
    {
      name: 'i1.xml',
      content: invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(1), fecha: '2026-10-05T09:00:00', method: 'PUE', lines: [freight(10_000)] }).xml,
    },
    {
      name: 'i2.xml',
      content: invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(2), fecha: '2026-09-20T09:00:00', method: 'PPD', lines: [freight(20_000)] }).xml,
    },
    {
      name: 'i2p.xml',
      content: paymentXml({
        issuer: TENANT_A,
        receiver: CLIENT,
        uuid: U(3),
        fecha: '2026-10-10T12:00:00',
        invoiceUuid: U(2),
        currency: 'MXN',
        exchangeRate: 1,
        before: 22_400,
        paid: 11_200,
      }),
    },
    {
      name: 'i3.xml',
      content: invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(4), fecha: '2026-10-15T09:00:00', method: 'PPD', lines: [freight(5_000)] }).xml,
    },
    // Received
    {
      name: 'rf.xml',
      content: invoiceXml({
        issuer: GAS,
        issuerName: 'GASOLINERA DEL GOLFO',
        receiver: TENANT_A,
        uuid: U(10),
        fecha: '2026-10-03T08:00:00',
        method: 'PUE',
        paymentForm: '01',
        lines: [{ code: '15101505', desc: 'Diesel', amount: 5_000, transfers: vat16 }],
      }).xml,
    },
    {
      name: 'rm.xml',
      content: invoiceXml({
        issuer: SHOP,
        issuerName: 'MANTENIMIENTO DEL NORTE',
        receiver: TENANT_A,
        uuid: U(11),
        fecha: '2026-10-02T08:00:00',
        method: 'PPD',
        lines: [{ code: '78181500', desc: 'Servicio de motor', amount: 10_000, transfers: vat16 }],
      }).xml,
    },
    {
      name: 'rm-p1.xml',
      content: paymentXml({
        issuer: SHOP,
        receiver: TENANT_A,
        uuid: U(12),
        fecha: '2026-10-10T10:00:00',
        invoiceUuid: U(11),
        currency: 'MXN',
        exchangeRate: 1,
        before: 11_600,
        paid: 4_640,
      }),
    },
    {
      name: 'rm-p2.xml',
      content: paymentXml({
        issuer: SHOP,
        receiver: TENANT_A,
        uuid: U(13),
        fecha: '2026-10-25T10:00:00',
        invoiceUuid: U(11),
        currency: 'MXN',
        exchangeRate: 1,
        before: 6_960,
        paid: 6_960,
      }),
    },
    {
      name: 'rm-nc.xml',
      content: invoiceXml({
        issuer: SHOP,
        receiver: TENANT_A,
        uuid: U(14),
        fecha: '2026-10-28T10:00:00',
        lines: [{ code: '84111506', desc: 'Bonificación', amount: 1_000, transfers: vat16 }],
      })
        .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
        .replace('<cfdi:Emisor', `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${U(11)}"/></cfdi:CfdiRelacionados><cfdi:Emisor`),
    },
    {
      name: 'rt.xml',
      content: invoiceXml({
        issuer: CARRIER,
        issuerName: 'TRANSPORTES DEL SURESTE',
        receiver: TENANT_A,
        uuid: U(15),
        fecha: '2026-10-12T12:00:00',
        method: 'PUE',
        lines: [freight(12_500)],
      }).xml,
    },
    {
      name: 'rx.xml',
      content: invoiceXml({
        issuer: TYRES,
        receiver: TENANT_A,
        uuid: U(16),
        fecha: '2026-10-08T12:00:00',
        method: 'PPD',
        lines: [{ code: '25172504', desc: 'Llanta', amount: 1_000, transfers: vat16 }],
      }).xml,
    },
    {
      name: 'rx-p.xml',
      content: paymentXml({
        issuer: TYRES,
        receiver: TENANT_A,
        uuid: U(17),
        fecha: '2026-10-09T12:00:00',
        invoiceUuid: U(16),
        currency: 'MXN',
        exchangeRate: 1,
        before: 1_160,
        paid: 1_160,
      }),
    },
    { name: 'rx-acuse.xml', content: satAcuseXml({ issuer: TYRES, fecha: '2026-10-20T12:00:00', folios: [{ uuid: U(16), code: '202' }] }) },
    {
      name: 'rp.xml',
      content: invoiceXml({
        issuer: MECHANIC,
        receiver: TENANT_A,
        uuid: U(18),
        fecha: '2026-10-14T12:00:00',
        method: 'PUE',
        lines: [
          {
            code: '78181506',
            desc: 'Alineación y balanceo',
            amount: 2_000,
            transfers: vat16,
            retentions: [
              { tax: '002', rate: 0.106667 },
              { tax: '001', rate: 0.1 },
            ],
          },
        ],
      }).xml,
    },
    {
      name: 'rs.xml',
      content: invoiceXml({
        issuer: TOLLS,
        receiver: TENANT_A,
        uuid: U(19),
        fecha: '2026-10-20T12:00:00',
        method: 'PUE',
        use: 'S01',
        lines: [{ code: '95111602', desc: 'Caseta', amount: 500, transfers: vat16 }],
      }).xml,
    },
    {
      name: 'rv.xml',
      content: invoiceXml({ issuer: CARRIER, receiver: TENANT_A, uuid: U(20), fecha: '2026-09-20T12:00:00', method: 'PUE', lines: [freight(5_000)] }).xml,
    },
  ];

  const get = async (url: string, key = KEY_A) => {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    return { status: res.statusCode, body: res.json(), res };
  };

  const importFiles = (list: { name: string; content: string }[]) =>
    h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' }, payload: { files: list } });

  t.before(async () => {
    const res = await importFiles(files);
    if (res.statusCode !== 200) throw new Error(`import answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    const report = res.json<{ summary: { rejected: number }; files: { name: string; status: string; reason?: string }[] }>();
    if (report.summary.rejected !== 0) throw new Error(`rejected: ${JSON.stringify(report.files.filter((f) => f.status === 'rejected'))}`);
  });

  t.test('October: the position computed by hand', async (t) => {
    const { status, body, res } = await get('/api/tax/position?month=2026-10&limit=10');
    t.equal(status, 200);
    assertConforms(t, res, 'GET', '/api/tax/position');
    t.equal(body.basis, 'cash');
    t.match(body.basisDescription, /Cash basis/);
    t.same(body.period, { startDate: '2026-10-01', endDate: '2026-10-31', timeZone: 'America/Mexico_City', previousMonth: '2026-09' });
    t.same(body.vat, { collected: 3_200, retainedByClients: 800, creditable: 3_046.67, retentionCredit: 200, payable: -846.67, result: 'inFavour' });
    t.same(body.retentions, { vatRetained: 713.33, isrRetained: 200, total: 913.33, dueDate: '2026-11-17' });
    t.equal(body.isrRetainedByClients, 0);
    t.equal(body.nonCreditableVat, 1_040);
    const fig = (name: string) =>
      (body.figures as { figure: string; amount: number; lineCount: number; lines: Record<string, unknown>[] }[]).find((f) => f.figure === name)!;
    // I1 PUE in full; I2 half of it by its complement; I3 unpaid is not listed.
    t.match(fig('vatCollected'), { amount: 3_200, lineCount: 2 });
    t.match(fig('vatCollected').lines, [
      { side: 'issued', uuid: U(1), settlement: 'pue', paid: 11_200, share: 1, amount: 1_600 },
      { side: 'issued', uuid: U(2), settlement: 'payment', payments: 1, paid: 11_200, share: 0.5, amount: 1_600 },
    ]);
    t.match(fig('vatRetainedByClients'), { amount: 800, lineCount: 2 });
    // By date: RM's first part, RT, RP, RM's second part, RM's credit note (what it gives back, negative).
    t.match(
      fig('creditableVat').lines.map((l) => [l.uuid, l.settlement, l.paymentUuid, l.paid, l.share, l.amount]),
      [
        [U(11), 'payment', U(12), 4_640, 0.4, 640],
        [U(15), 'pue', null, 14_000, 1, 1_500],
        [U(18), 'pue', null, 1_906.67, 1, 106.67],
        [U(11), 'payment', U(13), 6_960, 0.6, 960],
        [U(11), 'creditNote', U(14), 1_160, 0.1, -160],
      ],
    );
    t.same(
      fig('nonCreditableVat').lines.map((l) => [l.uuid, l.reason, l.amount]),
      [
        [U(10), 'FUEL_PAID_IN_CASH', 800],
        [U(16), 'DOCUMENT_CANCELLED', 160],
        [U(19), 'USE_S01', 80],
      ],
    );
    t.same(
      fig('vatRetainedByCarrier').lines.map((l) => [l.party, l.amount]),
      [
        [CARRIER, 500],
        [MECHANIC, 213.33],
      ],
    );
    t.same(
      fig('isrRetainedByCarrier').lines.map((l) => [l.party, l.amount]),
      [[MECHANIC, 200]],
    );
    t.same(
      fig('retentionCredit').lines.map((l) => [l.uuid, l.amount]),
      [[U(20), 200]],
    );
    t.match(body.warnings, { total: 3, byCode: { FUEL_PAID_IN_CASH: 1, DOCUMENT_CANCELLED: 1, USE_S01: 1 } });
    t.match(body.warnings.items[0], { code: 'FUEL_PAID_IN_CASH', supplier: GAS, vat: 800 });
  });

  t.test('lines are bounded: limit per figure, then pages', async (t) => {
    const none = await get('/api/tax/position?month=2026-10&limit=0');
    t.ok((none.body.figures as { lines: unknown[]; lineCount: number }[]).every((f) => f.lines.length === 0));
    t.equal(none.body.vat.payable, -846.67, 'the figures count every line whatever the limit');
    const page2 = await get('/api/tax/position/lines?month=2026-10&figure=creditableVat&limit=3&page=2');
    t.equal(page2.status, 200);
    assertConforms(t, page2.res, 'GET', '/api/tax/position/lines');
    t.match(page2.body, { basis: 'cash', figure: 'creditableVat', amount: 3_046.67, meta: { total: 5, page: 2, limit: 3, pages: 2, hasMore: false } });
    t.same(
      page2.body.data.map((l: { paymentUuid: string; amount: number }) => [l.paymentUuid, l.amount]),
      [
        [U(13), 960],
        [U(14), -160],
      ],
    );
    const bad = await get('/api/tax/position/lines?month=2026-10&figure=vatOwed');
    t.equal(bad.status, 400);
    t.equal((await get('/api/tax/position?month=2026-13')).status, 400, 'no month 13');
    t.equal((await get('/api/tax/position?month=0000-01')).status, 400, 'years 1970–2999');
    t.equal((await get('/api/tax/diot?month=2026-10&format=txt')).status, 400, 'json or csv only');
  });

  t.test('September: its own collections and payments; another tenant sees nothing of A', async (t) => {
    const sep = await get('/api/tax/position?month=2026-09');
    // RV paid in September: creditable 800 − 200 retained = 600, IVA retained 200; I2 was issued but not collected in September.
    t.match(sep.body.vat, { collected: 0, retainedByClients: 0, creditable: 600, retentionCredit: 0, payable: -600, result: 'inFavour' });
    // Due the 17th, a Saturday in October 2026: the next business day (CFF art. 12).
    t.match(sep.body.retentions, { vatRetained: 200, isrRetained: 0, dueDate: '2026-10-19' });
    const b = await get('/api/tax/position?month=2026-10', KEY_B);
    t.match(b.body.vat, { collected: 0, creditable: 0, payable: 0, result: 'zero' });
  });

  t.test('DIOT of October: one row per supplier and operation, by hand', async (t) => {
    const { status, body, res } = await get('/api/tax/diot?month=2026-10');
    t.equal(status, 200);
    assertConforms(t, res, 'GET', '/api/tax/diot');
    t.equal(body.basis, 'cash');
    t.match(body.layout, /CSV/);
    const row = (rfc: string, op: string, paid16: number, vat: [number, number], retained: number, returns: number, documents: number, payments: number) => ({
      thirdPartyType: '04',
      operationType: op,
      rfc,
      foreignTaxId: null,
      paid: { rate16: paid16, rate8: 0, rate0: 0, exempt: 0, imports: 0 },
      vat: { rate16: vat[0] + vat[1], rate8: 0, creditable: vat[0], nonCreditable: vat[1] },
      vatRetained: retained,
      returnsAndDiscounts: returns,
      documents,
      payments,
    });
    // The cancelled tyres (LLA010101AB1) report nothing; RV was paid in September.
    t.match(body.rows, [
      row(TOLLS, '85', 500, [0, 80], 0, 0, 1, 1),
      row(SHOP, '85', 4_000 + 6_000, [640 + 960, 0], 0, 1_000, 1, 2),
      row(MECHANIC, '03', 2_000, [320, 0], 213.33, 0, 1, 1),
      // Diesel is goods: 02 in the 2025 catalogue (SAT, Instructivo de carga masiva DIOT, enero 2025, §3.1).
      row(GAS, '02', 5_000, [0, 800], 0, 0, 1, 1),
      row(CARRIER, '85', 12_500, [2_000, 0], 500, 0, 1, 1),
    ]);
    t.equal(body.rows.length, 5);
    t.same(body.totals, { suppliers: 5, paid: 30_000, vatCreditable: 3_920, vatNonCreditable: 880, vatRetained: 713.33, returnsAndDiscounts: 1_000 });

    const csv = await h.app.inject({ method: 'GET', url: '/api/tax/diot?month=2026-10&format=csv', headers: { 'x-api-key': KEY_A } });
    t.equal(csv.statusCode, 200);
    t.match(csv.headers['content-type'], /^text\/csv/);
    const lines = csv.body.trimEnd().split('\r\n');
    t.equal(
      lines[0],
      'thirdPartyType,operationType,rfc,foreignTaxId,name,paidRate16,paidRate8,paidRate0,paidExempt,paidImports,vatRate16,vatRate8,vatCreditable,vatNonCreditable,vatRetained,returnsAndDiscounts',
    );
    t.equal(lines[3], `04,03,${MECHANIC},,EMISOR,2000.00,0.00,0.00,0.00,0.00,320.00,0.00,320.00,0.00,213.33,0.00`);
    t.equal(lines.length, 6);
  });

  t.test('DIOT of January: each foreign supplier (the one generic RFC) its own row under its own name, by hand', async (t) => {
    // Foreign suppliers all carry XEXX010101000: told apart by their names (case and spacing aside), each a row 05.
    //   F1 ACME LLC PUE 01-08, software: 100.00 + 16.00 → 05/07
    //   F2 GLOBEX GMBH PUE 01-09, hosting: 200.00 + 32.00 → 05/07
    //   F3 "Globex GmbH" PUE 01-11, tyres (goods): 300.00 + 48.00 → 05/02, the same supplier as F2 (one of `suppliers`)
    //   F4 "  initech   LTD " PUE 01-10, 50.00 + 8.00, and F5 "Initech Ltd" PUE 01-12, 70.00 + 11.20: one supplier →
    //      one row 05/07 named as on the latest, 120.00 + 19.20, 2 documents
    // Domestic, by RFC whatever the name (the latest shown): tyres LLANTAS SA 01-05, 1,000.00 + 160.00, and LLANTAS DEL
    // NORTE SA 01-20, 500.00 + 80.00 → 04/02 1,500.00 + 240.00, 2 documents; maintenance 01-15, 1,000.00 + 160.00 → 04/85.
    // Order: by RFC (LLA…, MAN…, XEXX…), the foreign rows by name (ACME, GLOBEX, INITECH), then by type of operation.
    const FOREIGN = 'XEXX010101000';
    const doc = (n: number, issuer: string, issuerName: string, day: string, code: string, amount: number) => ({
      name: `f${n}.xml`,
      content: invoiceXml({
        issuer,
        issuerName,
        receiver: TENANT_A,
        uuid: U(n),
        fecha: `2026-01-${day}T12:00:00`,
        method: 'PUE',
        lines: [{ code, desc: 'Servicio', amount, transfers: vat16 }],
      }).xml,
    });
    const res = await importFiles([
      doc(40, FOREIGN, 'ACME LLC', '08', '81112100', 100),
      doc(41, FOREIGN, 'GLOBEX GMBH', '09', '81112100', 200),
      doc(42, FOREIGN, 'Globex GmbH', '11', '25172504', 300),
      doc(43, FOREIGN, '  initech   LTD ', '10', '81112100', 50),
      doc(44, FOREIGN, 'Initech Ltd', '12', '81112100', 70),
      doc(45, TYRES, 'LLANTAS SA', '05', '25172504', 1_000),
      doc(46, TYRES, 'LLANTAS DEL NORTE SA', '20', '25172504', 500),
      doc(47, SHOP, 'TALLER', '15', '78181500', 1_000),
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const row = (third: string, op: string, rfc: string | null, name: string, paid16: number, vat: number, documents: number) => ({
      thirdPartyType: third,
      operationType: op,
      rfc,
      foreignTaxId: null,
      name,
      paid: { rate16: paid16, rate8: 0, rate0: 0, exempt: 0, imports: 0 },
      vat: { rate16: vat, rate8: 0, creditable: vat, nonCreditable: 0 },
      vatRetained: 0,
      returnsAndDiscounts: 0,
      documents,
      payments: documents,
    });
    const rows = [
      row('04', '02', TYRES, 'LLANTAS DEL NORTE SA', 1_500, 240, 2),
      row('04', '85', SHOP, 'TALLER', 1_000, 160, 1),
      row('05', '07', null, 'ACME LLC', 100, 16, 1),
      row('05', '02', null, 'Globex GmbH', 300, 48, 1),
      row('05', '07', null, 'GLOBEX GMBH', 200, 32, 1),
      row('05', '07', null, 'Initech Ltd', 120, 19.2, 2),
    ];
    const totals = { suppliers: 5, paid: 3_220, vatCreditable: 515.2, vatNonCreditable: 0, vatRetained: 0, returnsAndDiscounts: 0 };
    const { status, body, res: diot } = await get('/api/tax/diot?month=2026-01');
    t.equal(status, 200);
    assertConforms(t, diot, 'GET', '/api/tax/diot');
    t.same(body.rows, rows);
    t.same(body.totals, totals);

    const csv = await h.app.inject({ method: 'GET', url: '/api/tax/diot?month=2026-01&format=csv', headers: { 'x-api-key': KEY_A } });
    t.equal(csv.statusCode, 200);
    const lines = csv.body.trimEnd().split('\r\n');
    t.equal(lines.length, 7, 'a header and a line per row');
    t.same(lines.slice(3), [
      '05,07,,,ACME LLC,100.00,0.00,0.00,0.00,0.00,16.00,0.00,16.00,0.00,0.00,0.00',
      '05,02,,,Globex GmbH,300.00,0.00,0.00,0.00,0.00,48.00,0.00,48.00,0.00,0.00,0.00',
      '05,07,,,GLOBEX GMBH,200.00,0.00,0.00,0.00,0.00,32.00,0.00,32.00,0.00,0.00,0.00',
      '05,07,,,Initech Ltd,120.00,0.00,0.00,0.00,0.00,19.20,0.00,19.20,0.00,0.00,0.00',
    ]);

    // The DIOT computed from the documents, not read from the months kept on write, agrees.
    t.same(
      (await getDiot({ db: h.db, config: h.config, now: () => new Date() }, TENANT_A, { month: '2026-01' }, { fromDocuments: true })).rows,
      rows,
      'from the documents',
    );

    // A key of its own: this file's earlier tests hold KEY_A's MCP sessions (10 per key).
    const key = (await createApiKey(h.db, TENANT_A, 'diot over MCP')).key;
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key }, '?toolsets=filing');
    const r = (await client.callTool({ name: 'getDiot', arguments: { month: '2026-01' } })) as { structuredContent?: { rows: unknown[]; totals: unknown } };
    t.same(r.structuredContent?.rows, rows, 'MCP');
    t.same(r.structuredContent?.totals, totals, 'MCP');
  });

  t.test('March: a collection line is dated at its last valid complement, not at a cancelled one', async (t) => {
    // I9 PPD 2026-03-01: 1,000.00 + 160.00 − 40.00 = 1,120.00; 560.00 collected on 03-05 09:00; 280.00 on 03-20, whose
    // complement the SAT cancelled on 03-25 → share 560 ÷ 1,120 = 0.5: VAT 80.00, one payment, dated 03-05 09:00 (15:00Z).
    const x = invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(30), fecha: '2026-03-01T09:00:00', method: 'PPD', lines: [freight(1_000)] });
    const pay = (n: number, fecha: string, before: number, paid: number) =>
      paymentXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(n), fecha, invoiceUuid: U(30), currency: 'MXN', exchangeRate: 1, before, paid });
    const res = await importFiles([
      { name: 'i9.xml', content: x.xml },
      { name: 'p31.xml', content: pay(31, '2026-03-05T09:00:00', 1_120, 560) },
      { name: 'p32.xml', content: pay(32, '2026-03-20T09:00:00', 560, 280) },
      { name: 'solicitud.xml', content: requestXml({ issuer: TENANT_A, fecha: '2026-03-25T09:00:00', folios: [{ uuid: U(32), motive: '02' }] }) },
      { name: 'acuse.xml', content: satAcuseXml({ issuer: TENANT_A, fecha: '2026-03-25T10:00:00', folios: [{ uuid: U(32), code: '201' }] }) },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const line = { uuid: U(30), settlement: 'payment', payments: 1, paid: 560, share: 0.5, amount: 80, date: '2026-03-05T15:00:00.000Z' };
    const { body } = await get('/api/tax/position?month=2026-03&limit=10');
    t.match(
      body.figures.find((f: { figure: string }) => f.figure === 'vatCollected'),
      { amount: 80, lineCount: 1, lines: [line] },
    );
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-03', limit: 10 } })) as unknown as {
      structuredContent: { figures: { figure: string }[] };
    };
    t.match(
      r.structuredContent.figures.find((f) => f.figure === 'vatCollected'),
      { lines: [line] },
      'MCP',
    );
  });

  t.test("June: the carrier's credit notes give back VAT collected (LIVA art. 7) only of what was collected", async (t) => {
    // I50 PUE 2026-06-05: 10,000.00 + 1,600.00 − 400.00 = 11,200.00, collected at its date. Its credit note N51 of
    // 2026-06-20: 1,000.00 + 160.00 − 40.00 = 1,120.00, all of it given back of what was collected: VAT −160.00,
    // the client's retention −40.00.
    // I52 PPD 2026-06-01: 20,000.00 + 3,200.00 − 800.00 = 22,400.00; 5,600.00 collected 06-03; credit note N54 of
    // 06-10, 2,000.00 + 320.00 − 80.00 = 2,240.00, closes part of the 16,800.00 still open (nothing collected given
    // back); 14,560.00 collected 06-15 is the rest: (5,600 + 14,560) ÷ 22,400 = 0.9 → VAT 2,880.00, retention 720.00.
    // Collected 1,600 − 160 + 2,880 = 4,320.00; retained by clients 400 − 40 + 720 = 1,080.00; payable 3,240.00.
    const note = (n: number, fecha: string, invoice: number, amount: number) =>
      asCreditNote(invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(n), fecha, method: 'PUE', lines: [freight(amount)] }).xml, U(invoice), 'emisor');
    const pay = (n: number, fecha: string, before: number, paid: number) =>
      paymentXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(n), fecha, invoiceUuid: U(52), currency: 'MXN', exchangeRate: 1, before, paid });
    const res = await importFiles([
      {
        name: 'i50.xml',
        content: invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(50), fecha: '2026-06-05T10:00:00', method: 'PUE', lines: [freight(10_000)] }).xml,
      },
      { name: 'n51.xml', content: note(51, '2026-06-20T10:00:00', 50, 1_000) },
      {
        name: 'i52.xml',
        content: invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(52), fecha: '2026-06-01T10:00:00', method: 'PPD', lines: [freight(20_000)] }).xml,
      },
      { name: 'p53.xml', content: pay(53, '2026-06-03T10:00:00', 22_400, 5_600) },
      { name: 'n54.xml', content: note(54, '2026-06-10T10:00:00', 52, 2_000) },
      { name: 'p55.xml', content: pay(55, '2026-06-15T10:00:00', 14_560, 14_560) },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const vat = { collected: 4_320, retainedByClients: 1_080, creditable: 0, retentionCredit: 0, payable: 3_240, result: 'payable' };
    const { body } = await get('/api/tax/position?month=2026-06&limit=10');
    t.same(body.vat, vat);
    const fig = (figures: { figure: string; lines: Record<string, unknown>[] }[], name: string) =>
      figures.find((f) => f.figure === name)!.lines.map((l) => [l.uuid, l.settlement, l.paymentUuid, l.payments, l.paid, l.share, l.amount]);
    const collected = [
      [U(50), 'pue', null, 1, 11_200, 1, 1_600],
      [U(52), 'payment', null, 2, 20_160, 0.9, 2_880],
      [U(50), 'creditNote', U(51), 0, 1_120, 0.1, -160],
    ];
    t.same(fig(body.figures, 'vatCollected'), collected);
    t.same(
      fig(body.figures, 'vatRetainedByClients').map((l) => l[6]),
      [400, 720, -40],
    );
    const page = await get('/api/tax/position/lines?month=2026-06&figure=vatCollected&limit=2&page=2');
    t.match(page.body, { amount: 4_320, meta: { total: 3, page: 2 } });
    t.same(
      page.body.data.map((l: { paymentUuid: string; amount: number }) => [l.paymentUuid, l.amount]),
      [[U(51), -160]],
    );
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-06', limit: 10 } })) as unknown as {
      structuredContent: { vat: unknown; figures: { figure: string; lines: Record<string, unknown>[] }[] };
    };
    t.same(r.structuredContent.vat, vat, 'MCP');
    t.same(fig(r.structuredContent.figures, 'vatCollected'), collected, 'MCP lines');
  });

  t.test('February: a credit note gives back the taxes it states itself, not a share of its invoice’s (LIVA art. 7)', async (t) => {
    // I80 PUE 2026-02-05: freight 10,000.00 (VAT 1,600.00, the client retains 400.00) and demurrage 1,000.00 (VAT
    // 160.00, no retention): 12,360.00. Its credit note N81 of 02-27 discounts the demurrage: 1,000.00 + 160.00 =
    // 1,160.00, no retention. Art. 7 deducts the discount and the tax corresponding to it: VAT −160.00 and nothing of
    // the retention (a share of the invoice's taxes, 1,160 ÷ 12,360, gave back 165.18 and 37.54).
    // Collected 1,760 − 160 = 1,600.00; retained by clients 400.00; payable 1,200.00.
    const demurrage = (amount: number) => ({ code: '78141500', desc: 'Estadías', amount, transfers: vat16 });
    const res = await importFiles([
      {
        name: 'i80.xml',
        content: invoiceXml({
          issuer: TENANT_A,
          receiver: CLIENT,
          uuid: U(80),
          fecha: '2026-02-05T10:00:00',
          method: 'PUE',
          lines: [freight(10_000), demurrage(1_000)],
        }).xml,
      },
      {
        name: 'n81.xml',
        content: asCreditNote(
          invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: U(81), fecha: '2026-02-27T10:00:00', method: 'PUE', lines: [demurrage(1_000)] }).xml,
          U(80),
          'emisor',
        ),
      },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const vat = { collected: 1_600, retainedByClients: 400, creditable: 0, retentionCredit: 0, payable: 1_200, result: 'payable' };
    const fig = (figures: { figure: string; lines: Record<string, unknown>[] }[], name: string) =>
      figures.find((f) => f.figure === name)!.lines.map((l) => [l.uuid, l.settlement, l.paymentUuid, l.amount]);
    const { body } = await get('/api/tax/position?month=2026-02&limit=10');
    t.same(body.vat, vat);
    t.same(fig(body.figures, 'vatCollected'), [
      [U(80), 'pue', null, 1_760],
      [U(80), 'creditNote', U(81), -160],
    ]);
    t.same(fig(body.figures, 'vatRetainedByClients'), [[U(80), 'pue', null, 400]], 'the note gives back no retention: no line');
    const stored = await h.app.inject({ method: 'GET', url: `/api/financial-docs/${TENANT_A}-CFDI-${U(80)}?detail=full`, headers: { 'x-api-key': KEY_A } });
    t.match(stored.json().payments, [{}, { kind: 'creditNote', uuid: U(81), amount: 1_160, taxes: { vat: 160, vatRetained: 0, isrRetained: 0 } }]);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-02', limit: 10 } })) as unknown as {
      structuredContent: { vat: unknown };
    };
    t.same(r.structuredContent.vat, vat, 'MCP');
  });

  t.test("July: a supplier's credit note gives back credited VAT only in proportion to how what it returns was paid", async (t) => {
    // RT2 tyres PPD 2026-07-01 from LLA010101AB1: 10,000.00 + 1,600.00 = 11,600.00; 10,600.00 paid in cash on 07-05 (over
    // $2,000: CASH_OVER_LIMIT, 1,600 × 10,600 ÷ 11,600 = 1,462.07 not creditable), 1,000.00 by transfer on 07-06
    // (137.93 creditable); a credit note of 5,000.00 + 800.00 = 5,800.00 on 07-08: nothing is open, all of it returns
    // what was paid, 1,000 ÷ 11,600 of it by transfer: 500.00, whose VAT 68.97 was credited. Creditable 137.93 − 68.97
    // = 68.96; payable −68.96.
    const supplier = 'LLA010101AB1';
    const pay = (n: number, fecha: string, before: number, paid: number, form: string) =>
      paymentXml({ issuer: supplier, receiver: TENANT_A, uuid: U(n), fecha, invoiceUuid: U(60), currency: 'MXN', exchangeRate: 1, before, paid, form });
    const tyres = (uuid: string, fecha: string, amount: number, method: 'PUE' | 'PPD') =>
      invoiceXml({ issuer: supplier, receiver: TENANT_A, uuid, fecha, method, lines: [{ code: '25172504', desc: 'Llantas', amount, transfers: vat16 }] }).xml;
    const res = await importFiles([
      { name: 'rt2.xml', content: tyres(U(60), '2026-07-01T10:00:00', 10_000, 'PPD') },
      { name: 'p61.xml', content: pay(61, '2026-07-05T10:00:00', 11_600, 10_600, '01') },
      { name: 'p62.xml', content: pay(62, '2026-07-06T10:00:00', 1_000, 1_000, '03') },
      { name: 'n63.xml', content: asCreditNote(tyres(U(63), '2026-07-08T10:00:00', 5_000, 'PUE'), U(60), 'emisor') },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const vat = { collected: 0, retainedByClients: 0, creditable: 68.96, retentionCredit: 0, payable: -68.96, result: 'inFavour' };
    const { body } = await get('/api/tax/position?month=2026-07&limit=10');
    t.same(body.vat, vat);
    t.same(
      body.figures.find((f: { figure: string }) => f.figure === 'creditableVat').lines.map((l: Record<string, unknown>) => [l.paymentUuid, l.paid, l.amount]),
      [
        [U(62), 1_000, 137.93],
        [U(63), 500, -68.97],
      ],
    );
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-07', limit: 0 } })) as unknown as {
      structuredContent: { vat: unknown };
    };
    t.same(r.structuredContent.vat, vat, 'MCP');
  });

  t.test("December: a supplier's credit note gives back the VAT it states itself, not a share of its invoice's (LIVA art. 7)", async (t) => {
    // Three received invoices of 1,000.00 + VAT 160.00, each with a credit note; the rest of the note's VAT is its own
    // VAT (less the VAT retained it states itself) × the part of its Total that gives back credited VAT ÷ its Total.
    // RA tyres PUE 12-01: 1,160.00 paid at its date, VAT 160.00 creditable. Its note NA of 12-20 states 100.00 at 16%
    //    (VAT 16.00) and 116.00 at 0%: 232.00, all of it gives back what was paid: −16.00 × 232 ÷ 232 = −16.00 (the
    //    invoice's taxes in proportion gave back 160 × 232 ÷ 1,160 = 32.00).
    // RB maintenance PPD 12-02: 1,160.00; 1,044.00 paid by transfer 12-10: VAT 160 × 1,044 ÷ 1,160 = 144.00. Its note NB
    //    of 12-21, 232.00 as NA's, first closes the 116.00 still open; the other 116.00 gives back what was paid:
    //    −16.00 × 116 ÷ 232 = −8.00 (in proportion to the invoice: 160 × 116 ÷ 1,160 = 16.00).
    // RC subcontracted freight PUE 12-03: 1,000.00 + 160.00 − IVA retained 40.00 = 1,120.00: creditable 160 − 40 =
    //    120.00, the carrier owes the 40.00. Its note NC of 12-22 discounts 100.00 + 16.00 = 116.00 with no retention:
    //    −(16.00 − 0) × 116 ÷ 116 = −16.00 (in proportion to the invoice: 160 × 116 ÷ 1,120 − 40 × 116 ÷ 1,120 = 16.57
    //    − 4.14 = 12.43).
    // Creditable 160 + 144 + 120 − 16 − 8 − 16 = 384.00 (the invoices' taxes in proportion: 363.57); payable −384.00.
    const vat0 = [{ tax: '002' as const, rate: 0 }];
    const received = (issuer: string, n: number, fecha: string, method: 'PUE' | 'PPD', lines: LineSpec[]) =>
      invoiceXml({ issuer, receiver: TENANT_A, uuid: U(n), fecha, method, lines }).xml;
    const note = (issuer: string, n: number, fecha: string, invoice: number, lines: LineSpec[]) =>
      asCreditNote(received(issuer, n, fecha, 'PUE', lines), U(invoice), 'emisor');
    const mixed = [
      { code: '84111506', desc: 'Bonificación', amount: 100, transfers: vat16 },
      { code: '84111506', desc: 'Bonificación tasa 0', amount: 116, transfers: vat0 },
    ];
    const res = await importFiles([
      { name: 'ra.xml', content: received(TYRES, 90, '2026-12-01T10:00:00', 'PUE', [{ code: '25172504', desc: 'Llantas', amount: 1_000, transfers: vat16 }]) },
      { name: 'rb.xml', content: received(SHOP, 91, '2026-12-02T10:00:00', 'PPD', [{ code: '78181500', desc: 'Servicio', amount: 1_000, transfers: vat16 }]) },
      { name: 'rc.xml', content: received(CARRIER, 92, '2026-12-03T10:00:00', 'PUE', [freight(1_000)]) },
      {
        name: 'rb-p.xml',
        content: paymentXml({
          issuer: SHOP,
          receiver: TENANT_A,
          uuid: U(93),
          fecha: '2026-12-10T10:00:00',
          invoiceUuid: U(91),
          currency: 'MXN',
          exchangeRate: 1,
          before: 1_160,
          paid: 1_044,
        }),
      },
      { name: 'na.xml', content: note(TYRES, 94, '2026-12-20T10:00:00', 90, mixed) },
      { name: 'nb.xml', content: note(SHOP, 95, '2026-12-21T10:00:00', 91, mixed) },
      { name: 'nc.xml', content: note(CARRIER, 96, '2026-12-22T10:00:00', 92, [{ code: '78141500', desc: 'Estadías', amount: 100, transfers: vat16 }]) },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const vat = { collected: 0, retainedByClients: 0, creditable: 384, retentionCredit: 0, payable: -384, result: 'inFavour' };
    const { body } = await get('/api/tax/position?month=2026-12&limit=10');
    t.same(body.vat, vat);
    t.match(body.retentions, { vatRetained: 40, isrRetained: 0 });
    t.same(
      body.figures
        .find((f: { figure: string }) => f.figure === 'creditableVat')
        .lines.map((l: Record<string, unknown>) => [l.uuid, l.settlement, l.paymentUuid, l.paid, l.amount]),
      [
        [U(90), 'pue', null, 1_160, 160],
        [U(92), 'pue', null, 1_120, 120],
        [U(91), 'payment', U(93), 1_044, 144],
        [U(90), 'creditNote', U(94), 232, -16],
        [U(91), 'creditNote', U(95), 116, -8],
        [U(92), 'creditNote', U(96), 116, -16],
      ],
    );
    // The DIOT's returns and discounts: each note's own value before its taxes. NA and NB: 100.00 + 116.00 = 216.00;
    // NC: 100.00 (in proportion to their invoices' SubTotal they were 1,000 × 232 ÷ 1,160 = 200.00 and 1,000 × 116 ÷
    // 1,120 = 103.57, though NA and NB hold 116.00 at 0 %).
    const diot = await get('/api/tax/diot?month=2026-12');
    t.same(
      [TYRES, SHOP, CARRIER].map((rfc) => diot.body.rows.find((r: { rfc: string | null }) => r.rfc === rfc)?.returnsAndDiscounts),
      [216, 216, 100],
      'returns and discounts: the notes’ own values',
    );
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-12', limit: 0 } })) as unknown as {
      structuredContent: { vat: unknown };
    };
    t.same(r.structuredContent.vat, vat, 'MCP');
  });

  t.test("May: a credit note in the invoice's foreign currency gives back at its own TipoCambio", async (t) => {
    // I70 USD PPD 2026-04-01 at 17.00: 1,000.00 + 160.00 − 40.00 = 1,120.00 USD; collected in full on 2026-04-20 at
    // TipoCambioP 20.00 (April: VAT 160 × 20 = 3,200.00, retention 800.00). A USD note of the whole 1,120.00 on
    // 2026-05-05 at TipoCambio 20.00 gives back VAT 3,200.00 and retention 800.00 (at the invoice's 17.00 it gave back
    // 2,720.00 and 680.00, leaving 480.00 of VAT declared on an invoice credited in full).
    const usd = (uuid: string, fecha: string, rate: number, method: 'PUE' | 'PPD') =>
      invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid, fecha, method, currency: 'USD', exchangeRate: rate, lines: [freight(1_000)] }).xml;
    const res = await importFiles([
      { name: 'i70.xml', content: usd(U(70), '2026-04-01T10:00:00', 17, 'PPD') },
      {
        name: 'p71.xml',
        content: paymentXml({
          issuer: TENANT_A,
          receiver: CLIENT,
          uuid: U(71),
          fecha: '2026-04-20T10:00:00',
          invoiceUuid: U(70),
          currency: 'USD',
          exchangeRate: 20,
          before: 1_120,
          paid: 1_120,
        }),
      },
      { name: 'n72.xml', content: asCreditNote(usd(U(72), '2026-05-05T10:00:00', 20, 'PUE'), U(70), 'emisor') },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const april = await get('/api/tax/position?month=2026-04&limit=0');
    t.match(april.body.vat, { collected: 3_200, retainedByClients: 800 });
    const may = { collected: -3_200, retainedByClients: -800, creditable: 0, retentionCredit: 0, payable: -2_400, result: 'inFavour' };
    t.same((await get('/api/tax/position?month=2026-05&limit=0')).body.vat, may);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-05', limit: 0 } })) as unknown as {
      structuredContent: { vat: unknown };
    };
    t.same(r.structuredContent.vat, may, 'MCP');
  });

  t.test('March 2025: a USD invoice paid twice in the month at two rates: only what counts is converted, at its own rate', async (t) => {
    // I97 USD PPD 2025-03-02 at 17.00: 1,000.00 + 160.00 − 40.00 = 1,120.00 USD. P98 pays all 1,120.00 on 2025-03-10 at
    // TipoCambioP 17.00; P99 (a duplicate) pays 1,120.00 again on 2025-03-20 at 20.00, all of it beyond the Total: no tax, no
    // weight in the rate. VAT collected 160 × 17 = 2,720.00, retained by the client 40 × 17 = 680.00 (the average rate,
    // 18.50, gave 2,960.00 and 740.00). The tax summary's payment basis: collected 1,120 × 17 = 19,040.00.
    const pay = (n: number, fecha: string, rate: number) =>
      paymentXml({
        issuer: TENANT_A,
        receiver: CLIENT,
        uuid: U(n),
        fecha,
        invoiceUuid: U(97),
        currency: 'USD',
        exchangeRate: rate,
        before: 1_120,
        paid: 1_120,
      });
    const res = await importFiles([
      {
        name: 'i97.xml',
        content: invoiceXml({
          issuer: TENANT_A,
          receiver: CLIENT,
          uuid: U(97),
          fecha: '2025-03-02T10:00:00',
          method: 'PPD',
          currency: 'USD',
          exchangeRate: 17,
          lines: [freight(1_000)],
        }).xml,
      },
      { name: 'p98.xml', content: pay(98, '2025-03-10T10:00:00', 17) },
      { name: 'p99.xml', content: pay(99, '2025-03-20T10:00:00', 20) },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    const march = await get('/api/tax/position?month=2025-03&limit=0');
    assertConforms(t, march.res, 'GET', '/api/tax/position');
    t.match(march.body.vat, { collected: 2_720, retainedByClients: 680 });
    const summary = await get('/api/tax-summary?targetMonth=2025-03&basis=payment');
    t.match(summary.body.totals, { collected: 19_040, subtotal: 17_000, vat: { declared: 2_720 }, retention: { declared: 680 } });
  });

  t.test("April 2025 DIOT: a persona física's ISR retention decides fees only at a fee's rate, not RESICO's 1.25 %", async (t) => {
    // Three PUE CFDIs of personas físicas (13-character RFCs), each 1,000.00 + IVA 160.00 (2025 catalogue, §3.1):
    // tyres with ISR 1.25 % retained (RESICO, LISR art. 113-J: on any activity): transfer of goods, 02; freight
    // subcontracted with ISR 1.25 %: a service that is no fee, 85; an accountant's fees with ISR 10 % (LISR art. 106): 03.
    const uid = (n: number): string => `7A2B0C55-0100-4000-8000-0000000004${String(n).padStart(2, '0')}`;
    const rec = (n: number, issuer: string, code: string, desc: string, isr: number) => ({
      name: `r${n}.xml`,
      content: invoiceXml({
        issuer,
        receiver: TENANT_A,
        uuid: uid(n),
        fecha: '2025-04-10T10:00:00',
        method: 'PUE',
        lines: [{ code, desc, amount: 1_000, transfers: vat16, retentions: [{ tax: '001', rate: isr }] }],
      }).xml,
    });
    const res = await importFiles([
      rec(1, 'RETY800101AB1', '25172504', 'Llanta', 0.0125),
      rec(2, 'REFL800101AB2', '78101802', 'Flete subcontratado', 0.0125),
      rec(3, 'CONT800101AB3', '84111500', 'Honorarios contables', 0.1),
    ]);
    t.match(res.json(), { summary: { rejected: 0 } }, res.body.slice(0, 300));
    const diot = await get('/api/tax/diot?month=2025-04');
    assertConforms(t, diot.res, 'GET', '/api/tax/diot');
    const typeOf = (rfc: string) => diot.body.rows.find((r: { rfc: string | null }) => r.rfc === rfc)?.operationType;
    t.same(['RETY800101AB1', 'REFL800101AB2', 'CONT800101AB3'].map(typeOf), ['02', '85', '03'], 'tyres 02, freight 85, fees 03');
  });

  t.test('September 2025 DIOT: a supplier’s credit note on a cancelled CFDI reports nothing, as the CFDI (HTTP and MCP)', async (t) => {
    // Tyres PUE 2025-09-02: 1,000.00 + VAT 160.00, with a credit note of 100.00 + 16.00 on 09-20; the supplier cancels
    // the invoice (EstatusUUID 202) on 09-25. Cancelled CFDIs report nothing, so the month's DIOT has no row for it:
    // neither the 1,000.00 paid nor the note's 100.00 as returns and discounts. A second supplier's valid PUE of
    // 500.00 + 80.00 is the month's one row.
    const uid = (n: number): string => `7A2B0C55-0200-4000-8000-0000000005${String(n).padStart(2, '0')}`;
    const TYRES2 = 'LLB010101AB1';
    const invoice = invoiceXml({
      issuer: TYRES2,
      receiver: TENANT_A,
      uuid: uid(1),
      fecha: '2025-09-02T10:00:00',
      method: 'PUE',
      lines: [{ code: '25172504', desc: 'Llantas', amount: 1_000, transfers: vat16 }],
    }).xml;
    const note = asCreditNote(
      invoiceXml({
        issuer: TYRES2,
        receiver: TENANT_A,
        uuid: uid(2),
        fecha: '2025-09-20T10:00:00',
        method: 'PUE',
        lines: [{ code: '84111506', desc: 'Bonificación', amount: 100, transfers: vat16 }],
      }).xml,
      uid(1),
      'emisor',
    );
    const other = invoiceXml({
      issuer: SHOP,
      receiver: TENANT_A,
      uuid: uid(3),
      fecha: '2025-09-05T10:00:00',
      method: 'PUE',
      lines: [{ code: '78181500', desc: 'Servicio', amount: 500, transfers: vat16 }],
    }).xml;
    const res = await importFiles([
      { name: 'c-inv.xml', content: invoice },
      { name: 'c-note.xml', content: note },
      { name: 'c-other.xml', content: other },
      { name: 'c-acuse.xml', content: satAcuseXml({ issuer: TYRES2, fecha: '2025-09-25T10:00:00', folios: [{ uuid: uid(1), code: '202' }] }) },
    ]);
    t.match(res.json(), { summary: { rejected: 0 } }, res.body.slice(0, 300));
    const expected = [{ rfc: SHOP, paid: { rate16: 500 }, vat: { rate16: 80, creditable: 80, nonCreditable: 0 }, returnsAndDiscounts: 0 }];
    const diot = await get('/api/tax/diot?month=2025-09');
    assertConforms(t, diot.res, 'GET', '/api/tax/diot');
    t.match(diot.body.rows, expected);
    t.equal(diot.body.rows.length, 1, 'no row for the cancelled CFDI nor its note');
    // A key of its own: this file's earlier tests hold KEY_A's MCP sessions (10 per key).
    const key = (await createApiKey(h.db, TENANT_A, 'diot over MCP')).key;
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': key }, '?toolsets=filing');
    const r = (await client.callTool({ name: 'getDiot', arguments: { month: '2025-09' } })) as unknown as { structuredContent: { rows: unknown[] } };
    t.match(r.structuredContent.rows, expected, 'MCP');
    t.equal(r.structuredContent.rows.length, 1);
  });

  t.test('MCP: "VAT payable for October" in one call, the basis said', async (t) => {
    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const tools = await client.listTools();
    const tool = tools.tools.find((x) => x.name === 'getTaxPosition');
    t.ok(tool, 'the default catalogue has the tax position');
    t.match(tool!.description, /VAT payable/);
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-10', limit: 0 } })) as {
      structuredContent?: { basis: string; vat: { payable: number; result: string } };
      isError?: boolean;
    };
    t.notOk(r.isError);
    t.equal(r.structuredContent?.basis, 'cash');
    t.same(r.structuredContent?.vat, {
      collected: 3_200,
      retainedByClients: 800,
      creditable: 3_046.67,
      retentionCredit: 200,
      payable: -846.67,
      result: 'inFavour',
    });
  });

  t.test('August: tyres paid in cash over $2,000 and S01 freight are not deductible: no VAT of theirs is credited, the retained part neither', async (t) => {
    // RL tyres PUE 2026-08-10, FormaPago 01: 5,000.00 + 800.00 = 5,800.00 in cash → CASH_OVER_LIMIT, 800.00 not creditable.
    // RC a tyre PUE 2026-08-12, FormaPago 01: 1,000.00 + 160.00 = 1,160.00 in cash, within the limit → 160.00 creditable.
    const tyres = (n: number, day: string, amount: number) =>
      invoiceXml({
        issuer: TYRES,
        receiver: TENANT_A,
        uuid: U(n),
        fecha: `2026-08-${day}T12:00:00`,
        method: 'PUE',
        paymentForm: '01',
        lines: [{ code: '25172504', desc: 'Llantas', amount, transfers: vat16 }],
      }).xml;
    const res = await importFiles([
      { name: 'rl.xml', content: tyres(30, '10', 5_000) },
      { name: 'rc.xml', content: tyres(31, '12', 1_000) },
    ]);
    t.equal(res.statusCode, 200);
    // RS S01 subcontracted freight PUE 2026-08-20 by transfer: 2,500.00 + 400.00 − 100.00 retained: the 100.00 is owed
    // by 2026-09-17, but the expense is not deductible, so September credits none of it (LIVA art. 5).
    const s01 = await importFiles([
      {
        name: 'rs01.xml',
        content: invoiceXml({
          issuer: CARRIER,
          receiver: TENANT_A,
          uuid: U(32),
          fecha: '2026-08-20T12:00:00',
          method: 'PUE',
          paymentForm: '03',
          use: 'S01',
          lines: [freight(2_500)],
        }).xml,
      },
    ]);
    t.equal(s01.statusCode, 200);
    const sep = await get('/api/tax/position?month=2026-09');
    t.equal(sep.body.vat.retentionCredit, 0, "September credits none of August's retention on an S01 expense");
    const expected = { creditable: 160, payable: -160 };
    const aug = await get('/api/tax/position?month=2026-08');
    t.match(aug.body.vat, expected);
    t.equal(aug.body.nonCreditableVat, 1_200, 'the tyres 800.00 and the S01 freight 400.00');
    t.match(aug.body.retentions, { vatRetained: 100, dueDate: '2026-09-17' }, 'the retention is owed all the same');
    t.match(aug.body.warnings, { total: 2, byCode: { CASH_OVER_LIMIT: 1, USE_S01: 1 } });
    t.match(aug.body.warnings.items, [
      { code: 'CASH_OVER_LIMIT', supplier: TYRES, vat: 800 },
      { code: 'USE_S01', supplier: CARRIER, vat: 400 },
    ]);
    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2026-08' } })) as {
      structuredContent?: { vat: unknown; warnings: { byCode: Record<string, number> } };
    };
    t.match(r.structuredContent?.vat, expected, 'MCP');
    t.same(r.structuredContent?.warnings.byCode, { CASH_OVER_LIMIT: 1, USE_S01: 1 }, 'MCP');
  });

  t.test('2025: the payments of an invoice paid in thirds add up to its taxes to the cent (each part from the running total)', async (t) => {
    // Each payment's part of a tax or base is prop(x, before + paid) − prop(x, before), prop(x, c) = round(x × c ÷ Total)
    // in cents, half away from zero, `before` what earlier payments counted (date, UUID): the parts add up to x.
    // Each third rounded by itself gave 533.33 three times (1,599.99) and bases 3,333.34 twice + 3,333.33 (10,000.01).
    //
    // RA (received, PPD 2025-08-01): 10,000.00 + 1,600.00 = 11,600.00, paid 3,866.67, 3,866.67, 3,866.66 in August.
    //   Running totals 386,667 / 773,334 / 1,160,000 cents of 1,160,000:
    //   VAT  prop(160,000, 386,667) = round(53,333.379) = 53,333; prop(160,000, 773,334) = round(106,666.759) = 106,667;
    //        prop(160,000, 1,160,000) = 160,000 → parts 533.33, 533.34, 533.33 = 1,600.00 creditable
    //   base prop(1,000,000, 386,667) = round(333,333.621) = 333,334; prop(1,000,000, 773,334) = round(666,667.241) =
    //        666,667; 1,000,000 → parts 3,333.34, 3,333.33, 3,333.33 = 10,000.00 paid at 16% (DIOT)
    // RB (received, PPD 2025-10-01): the same invoice paid the same way on 10-10, 11-10, 12-10: each month its part,
    //   Oct 533.33 (base 3,333.34), Nov 533.34 (3,333.33), Dec 533.33 (3,333.33): 1,600.00 and 10,000.00 in all.
    // IA (issued, PPD 2025-10-01): 10,000.00 + 1,600.00 − 400.00 retained by the client = 11,200.00, collected
    //   3,733.33 on 10-10, 3,733.33 on 11-10, 3,733.34 on 12-10. Running totals 373,333 / 746,666 / 1,120,000 cents:
    //   VAT  Oct round(160,000 × 373,333 ÷ 1,120,000 = 53,333.286) = 53,333 → 533.33;
    //        Nov round(160,000 × 746,666 ÷ 1,120,000 = 106,666.571) = 106,667, − 53,333 → 533.34;
    //        Dec 160,000 − 106,667 → 533.33; 1,600.00 in all
    //   ret. Oct round(40,000 × 373,333 ÷ 1,120,000 = 13,333.321) = 13,333 → 133.33;
    //        Nov round(26,666.643) = 26,667, − 13,333 → 133.34; Dec 40,000 − 26,667 → 133.33; 400.00 in all
    const R = (n: number): string => `7A2B0C55-00${String(n).padStart(2, '0')}-4000-8000-0000000007${String(n).padStart(2, '0')}`;
    const thirds = (issuer: string, receiver: string, invoice: number, first: number, total: number, parts: [string, number][]) => {
      let before = total;
      return parts.map(([fecha, paid], i) => {
        const xml = paymentXml({ issuer, receiver, uuid: R(first + i), fecha, invoiceUuid: R(invoice), currency: 'MXN', exchangeRate: 1, before, paid });
        before = Math.round((before - paid) * 100) / 100;
        return { name: `r${first + i}.xml`, content: xml };
      });
    };
    const service = (n: number, fecha: string) =>
      invoiceXml({
        issuer: SHOP,
        receiver: TENANT_A,
        uuid: R(n),
        fecha,
        method: 'PPD',
        lines: [{ code: '78181500', desc: 'Servicio', amount: 10_000, transfers: vat16 }],
      }).xml;
    const res = await importFiles([
      { name: 'ra.xml', content: service(1, '2025-08-01T08:00:00') },
      ...thirds(SHOP, TENANT_A, 1, 2, 11_600, [
        ['2025-08-10T10:00:00', 3_866.67],
        ['2025-08-11T10:00:00', 3_866.67],
        ['2025-08-12T10:00:00', 3_866.66],
      ]),
      { name: 'rb.xml', content: service(10, '2025-10-01T08:00:00') },
      ...thirds(SHOP, TENANT_A, 10, 11, 11_600, [
        ['2025-10-10T10:00:00', 3_866.67],
        ['2025-11-10T10:00:00', 3_866.67],
        ['2025-12-10T10:00:00', 3_866.66],
      ]),
      {
        name: 'ia.xml',
        content: invoiceXml({ issuer: TENANT_A, receiver: CLIENT, uuid: R(20), fecha: '2025-10-01T09:00:00', method: 'PPD', lines: [freight(10_000)] }).xml,
      },
      ...thirds(TENANT_A, CLIENT, 20, 21, 11_200, [
        ['2025-10-10T10:00:00', 3_733.33],
        ['2025-11-10T10:00:00', 3_733.33],
        ['2025-12-10T10:00:00', 3_733.34],
      ]),
    ]);
    t.match(res.json(), { summary: { rejected: 0 } });
    type Figures = { figure: string; amount: number; lines: { paymentUuid: string | null; amount: number }[] }[];
    const amounts = (figures: Figures, name: string) => figures.find((f) => f.figure === name)!.lines.map((l) => [l.paymentUuid, l.amount]);

    const aug = await get('/api/tax/position?month=2025-08&limit=10');
    t.same(aug.body.vat, { collected: 0, retainedByClients: 0, creditable: 1_600, retentionCredit: 0, payable: -1_600, result: 'inFavour' });
    t.same(amounts(aug.body.figures, 'creditableVat'), [
      [R(2), 533.33],
      [R(3), 533.34],
      [R(4), 533.33],
    ]);
    const diot = await get('/api/tax/diot?month=2025-08');
    t.equal(diot.status, 200);
    t.match(diot.body.rows, [{ rfc: SHOP, paid: { rate16: 10_000 }, vat: { rate16: 1_600, creditable: 1_600, nonCreditable: 0 }, payments: 3 }]);
    t.equal(diot.body.rows.length, 1);

    const months = [
      ['2025-10', 533.33, 133.33, 533.33, 3_333.34],
      ['2025-11', 533.34, 133.34, 533.34, 3_333.33],
      ['2025-12', 533.33, 133.33, 533.33, 3_333.33],
    ] as const;
    for (const [month, collected, retained, creditable, paid16] of months) {
      const { body } = await get(`/api/tax/position?month=${month}&limit=10`);
      t.match(body.vat, { collected, retainedByClients: retained, creditable }, month);
      const d = (await get(`/api/tax/diot?month=${month}`)).body;
      t.match(d.rows, [{ rfc: SHOP, paid: { rate16: paid16 }, vat: { rate16: creditable } }], `${month} DIOT`);
    }
    const sum = (i: 1 | 2 | 3 | 4) => Math.round(months.reduce((s, m) => s + m[i] * 100, 0)) / 100;
    t.same([sum(1), sum(2), sum(3), sum(4)], [1_600, 400, 1_600, 10_000], 'the months add up to the invoices');

    const client = await connect(t, await listen(h.app), 'streamable', { 'x-api-key': KEY_A });
    const r = (await client.callTool({ name: 'getTaxPosition', arguments: { month: '2025-11', limit: 10 } })) as unknown as {
      structuredContent: { vat: { collected: number; retainedByClients: number; creditable: number }; figures: Figures };
    };
    t.match(r.structuredContent.vat, { collected: 533.34, retainedByClients: 133.34, creditable: 533.34 }, 'MCP');
    t.same(amounts(r.structuredContent.figures, 'vatCollected'), [[null, 533.34]], 'MCP lines');
  });
}
