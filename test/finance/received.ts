/**
 * Received CFDIs (docs/domain.md, "Received CFDIs") through POST /api/imports, GET
 * /api/received-docs and MCP, against figures computed by hand:
 *
 *   R1 diesel from PGA010101AB1 (Gasolinera), 2026-10-03, PPD, 15101505: 43,100.00
 *      + IVA 16% 6,896.00 = 49,996.00; paid by the supplier's complements
 *   P1 2026-10-12: 20,000.00 (49,996.00 → 29,996.00): partial
 *   P2 2026-10-20: 29,996.00 (29,996.00 → 0): paid
 *   R3 road freight subcontracted from TRA920101XY3, 2026-10-10, PUE, 78101802: 12,500.00
 *      + IVA 16% 2,000.00 − IVA retained 4% 500.00 (LIVA art. 1-A fr. II c; RLIVA art. 3 fr. II)
 *      = 14,000.00; paid when issued (PUE)
 *   R5 alignment by a persona física (MAPJ800101AB2), 2026-10-14, PPD, 78181508: 2,000.00 + IVA
 *      320.00 − IVA retained 2/3 (10.6667%) 213.33 − ISR 10% 200.00 = 1,906.67; its credit note
 *      of 100.00 leaves 1,806.67
 *   Tenant A (TGO850101AB1) is the receiver of all of them; tenant B's key is refused.
 */
import type { Test } from 'tap';
import { startHarness, assertConforms, KEY_A, KEY_B, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { connect, listen } from '../helpers/mcp.ts';
import { invoiceXml, paymentXml, satAcuseXml } from '../helpers/cfdi-builder.ts';
import { fixture } from '../helpers/cfdi-fixtures.ts';

export default async function receivedTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  const GAS = 'PGA010101AB1';
  const CARRIER = 'TRA920101XY3';
  const MECHANIC = 'MAPJ800101AB2';
  const U = (n: number): string => `9D1C0E55-00${String(n).padStart(2, '0')}-4000-8000-0000000001${String(n).padStart(2, '0')}`;
  const rid = (n: number): string => `${TENANT_A}-RCFDI-${U(n)}`;

  const R1 = invoiceXml({
    issuer: GAS,
    issuerName: 'GASOLINERA DEL GOLFO',
    receiver: TENANT_A,
    uuid: U(1),
    fecha: '2026-10-03T09:00:00',
    method: 'PPD',
    lines: [{ code: '15101505', desc: 'Diesel', amount: 43_100, transfers: [{ tax: '002', rate: 0.16 }] }],
  });
  const P1 = paymentXml({
    issuer: GAS,
    receiver: TENANT_A,
    uuid: U(2),
    fecha: '2026-10-12T10:00:00',
    invoiceUuid: U(1),
    currency: 'MXN',
    exchangeRate: 1,
    before: 49_996,
    paid: 20_000,
  });
  const P2 = paymentXml({
    issuer: GAS,
    receiver: TENANT_A,
    uuid: U(4),
    fecha: '2026-10-20T10:00:00',
    invoiceUuid: U(1),
    currency: 'MXN',
    exchangeRate: 1,
    before: 29_996,
    paid: 29_996,
  });
  const R3 = invoiceXml({
    issuer: CARRIER,
    issuerName: 'TRANSPORTES DEL SURESTE',
    receiver: TENANT_A,
    uuid: U(3),
    fecha: '2026-10-10T12:00:00',
    method: 'PUE',
    lines: [
      { code: '78101802', desc: 'Flete Veracruz-Puebla', amount: 12_500, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] },
    ],
  });

  type File = { name: string; status: string; kind?: string; direction?: string; reason?: string; receivedDocIds?: string[]; pendingInvoices?: string[] };
  const post = async (files: { name: string; content: string }[], key = KEY_A) => {
    const res = await h.app.inject({
      method: 'POST',
      url: '/api/imports',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: { files },
    });
    if (res.statusCode !== 200) throw new Error(`POST /api/imports answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.json<{ tenant: string; summary: Record<string, number>; files: File[] }>();
  };
  const get = async (url: string, key = KEY_A) => {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    return { status: res.statusCode, body: res.json(), res };
  };
  const ids = async (query: string) => ((await get(`/api/received-docs?${query}`)).body.data as { id: string }[]).map((d) => d.id).sort();

  /** What the revenue side says before anything is received. */
  const before: { docs: { meta: { total: number } }; tax: unknown } = { docs: { meta: { total: 0 } }, tax: null };

  t.test('the issued side first: one invoice of the tenant', async (t) => {
    const issued = await post([{ name: '01.xml', content: fixture('01-freight-invoice-retention.xml').toString('utf8') }]);
    t.match(issued.files[0], { status: 'created', kind: 'invoice', direction: 'issued' });
    before.docs = (await get('/api/financial-docs?limit=100&detail=full')).body;
    before.tax = (await get('/api/tax-summary?targetMonth=2026-10')).body;
  });

  t.test('a payment complement before its invoice waits; the invoice takes it', async (t) => {
    const first = await post([{ name: 'p1.xml', content: P1 }]);
    t.match(first.files[0], { status: 'created', kind: 'payment', direction: 'received', pendingInvoices: [U(1)] });
    const r = await post([
      { name: 'r1.xml', content: R1.xml },
      { name: 'r3.xml', content: R3.xml },
    ]);
    t.same(r.summary, { files: 2, created: 2, updated: 0, skipped: 0, rejected: 0, ignored: 0, rejectedLines: 0 });
    t.same(r.files[0]!.receivedDocIds, [rid(1)]);
    t.equal(r.files[1]!.direction, 'received');

    const one = await get(`/api/received-docs/${rid(1)}`);
    t.equal(one.status, 200);
    assertConforms(t, one.res, 'GET', '/api/received-docs/:id');
    t.match(one.body, {
      supplier: { rfc: GAS, name: 'GASOLINERA DEL GOLFO' },
      category: 'fuel',
      paymentMethod: 'PPD',
      cfdiVersion: '4.0',
      currency: 'MXN',
      exchangeRate: 1,
      amounts: { subTotal: 43_100, discount: 0, total: 49_996, totalMxn: 49_996 },
      taxes: { vatTransferred: [{ rate: 0.16, base: 43_100, amount: 6_896 }], vatRetained: 0, isrRetained: 0, transferred: 6_896, retained: 0 },
      balance: { total: 49_996, paid: 20_000, pending: 29_996, state: 'partial' },
      cancellation: { status: 'none' },
    });
    t.same(
      one.body.payments.map((p: { kind: string; uuid: string; amount: number; balanceBefore: number; balanceAfter: number; pagosVersion?: string }) => [
        p.kind,
        p.uuid,
        p.amount,
        p.balanceBefore,
        p.balanceAfter,
        p.pagosVersion,
      ]),
      [['payment', U(2), 20_000, 49_996, 29_996, '2.0']],
      'the Pagos 2.0 complement (the builder writes Version="2.0")',
    );
    t.equal(/ Version="([^"]+)"/.exec(R1.xml)![1], '4.0', 'the built invoice is a CFDI 4.0');
  });

  t.test('the second complement brings the balance to zero', async (t) => {
    const r = await post([{ name: 'p2.xml', content: P2 }]);
    t.match(r.files[0], { status: 'created', kind: 'payment', direction: 'received', receivedDocIds: [rid(1)] });
    const doc = (await get(`/api/received-docs/${rid(1)}`)).body;
    t.same(doc.balance, { total: 49_996, paid: 49_996, pending: 0, state: 'paid' });
    t.same(
      doc.payments.map((p: { uuid: string; date: string; amount: number; balanceAfter: number }) => [p.uuid, p.date, p.amount, p.balanceAfter]),
      [
        [U(2), '2026-10-12T16:00:00.000Z', 20_000, 29_996],
        [U(4), '2026-10-20T16:00:00.000Z', 29_996, 0],
      ],
      'both payments, at their Mexico City dates (UTC−6)',
    );
    const again = await post([
      { name: 'r1.xml', content: R1.xml },
      { name: 'p2.xml', content: P2 },
    ]);
    t.same(again.summary, { files: 2, created: 0, updated: 0, skipped: 2, rejected: 0, ignored: 0, rejectedLines: 0 }, 'importing again changes nothing');
  });

  t.test('subcontracted freight: the 4% VAT retention, paid when issued (PUE)', async (t) => {
    const doc = (await get(`/api/received-docs/${rid(3)}`)).body;
    t.match(doc, {
      supplier: { rfc: CARRIER },
      category: 'subcontractedFreight',
      paymentMethod: 'PUE',
      amounts: { subTotal: 12_500, total: 14_000 },
      taxes: { vatTransferred: [{ rate: 0.16, base: 12_500, amount: 2_000 }], vatRetained: 500, isrRetained: 0, transferred: 2_000, retained: 500 },
      balance: { total: 14_000, paid: 14_000, pending: 0, state: 'paid' },
    });
    t.same(
      doc.payments.map((p: { kind: string; amount: number }) => [p.kind, p.amount]),
      [['pue', 14_000]],
    );
    t.same(doc.concepts, [
      {
        code: '78101802',
        category: 'subcontractedFreight',
        description: 'Flete Veracruz-Puebla',
        quantity: 1,
        unit: 'E48',
        unitPrice: 12_500,
        amount: 12_500,
        discount: 0,
      },
    ]);
  });

  t.test('a persona física mechanic: IVA retained at two thirds and ISR at 10%, and a credit note that lowers the balance', async (t) => {
    // 2,000.00 + IVA 320.00 − IVA retained round2(2,000 × 0.106667) = 213.33 − ISR 10% 200.00 = 1,906.67;
    // the credit note of 100.00 (no tax) leaves 1,806.67 pending.
    const R5 = invoiceXml({
      issuer: MECHANIC,
      receiver: TENANT_A,
      uuid: U(5),
      fecha: '2026-10-14T11:00:00',
      method: 'PPD',
      lines: [
        {
          code: '78181508',
          desc: 'Alineación y balanceo',
          amount: 2_000,
          transfers: [{ tax: '002', rate: 0.16 }],
          retentions: [
            { tax: '002', rate: 0.106667 },
            { tax: '001', rate: 0.1 },
          ],
        },
      ],
    });
    const note = invoiceXml({
      issuer: MECHANIC,
      receiver: TENANT_A,
      uuid: U(6),
      fecha: '2026-10-15T11:00:00',
      lines: [{ code: '84111506', desc: 'Bonificación', amount: 100 }],
    })
      .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
      .replace('<cfdi:Emisor', `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${U(5)}"/></cfdi:CfdiRelacionados><cfdi:Emisor`);
    const r = await post([
      { name: 'r5.xml', content: R5.xml },
      { name: 'nc.xml', content: note },
    ]);
    t.match(r.files, [
      { status: 'created', kind: 'invoice', direction: 'received' },
      { status: 'created', kind: 'creditNote', direction: 'received', receivedDocIds: [rid(5)] },
    ]);
    const doc = (await get(`/api/received-docs/${rid(5)}`)).body;
    t.match(doc, {
      category: 'maintenance',
      amounts: { subTotal: 2_000, total: 1_906.67 },
      taxes: { vatTransferred: [{ rate: 0.16, base: 2_000, amount: 320 }], vatRetained: 213.33, isrRetained: 200, retained: 413.33 },
      balance: { total: 1_906.67, paid: 100, pending: 1_806.67, state: 'partial' },
    });
    t.same(
      doc.payments.map((p: { kind: string; amount: number; balanceBefore: number; balanceAfter: number }) => [
        p.kind,
        p.amount,
        p.balanceBefore,
        p.balanceAfter,
      ]),
      [['creditNote', 100, 1_906.67, 1_806.67]],
    );
  });

  t.test("another tenant's key: the received CFDI is another taxpayer's document, refused", async (t) => {
    for (const [name, content] of [
      ['r1.xml', R1.xml],
      ['p1.xml', P1],
    ] as const) {
      const r = await post([{ name, content }], KEY_B);
      t.equal(r.tenant, TENANT_B);
      t.match(r.files[0], {
        status: 'rejected',
        reason: new RegExp(`Emisor Rfc ${GAS} is not the tenant's RFC \\(${TENANT_B}\\), nor is Receptor Rfc ${TENANT_A}`),
      });
    }
    t.equal((await get('/api/received-docs', KEY_B)).body.meta.total, 0, 'tenant B has no received document');
    t.equal((await get(`/api/received-docs/${rid(1)}`, KEY_B)).status, 404, "tenant A's id is not found for tenant B");
  });

  t.test('filters: supplier, category, period, payment state, cancelled', async (t) => {
    const list = await get('/api/received-docs');
    assertConforms(t, list.res, 'GET', '/api/received-docs');
    t.equal(list.body.meta.total, 3);
    t.same(
      list.body.data.map((d: { id: string }) => d.id),
      [rid(5), rid(3), rid(1)],
      'newest issue date first',
    );
    t.same(await ids(`supplier=${GAS}`), [rid(1)]);
    t.same(await ids('category=fuel'), [rid(1)]);
    t.same(await ids('category=subcontractedFreight'), [rid(3)]);
    t.same(await ids('category=tolls'), []);
    t.same(await ids('startDate=2026-10-05&endDate=2026-10-13'), [rid(3)]);
    t.same(await ids('endDate=2026-10-04'), [rid(1)]);
    t.same(await ids('paymentStatus=paid'), [rid(1), rid(3)]);
    t.same(await ids('paymentStatus=partial'), [rid(5)]);
    t.same(await ids('paymentStatus=unpaid'), []);
    t.same(await ids('category=maintenance'), [rid(5)]);
    t.same(await ids('cancelled=false'), [rid(1), rid(3), rid(5)]);
    t.same(await ids('cancelled=true'), []);
    const page = await get('/api/received-docs?limit=2');
    t.equal(page.body.meta.hasMore, true);
    const next = await get(`/api/received-docs?limit=2&cursor=${page.body.meta.nextCursor}`);
    t.same(
      next.body.data.map((d: { id: string }) => d.id),
      [rid(1)],
      'the cursor continues the walk',
    );
    t.equal((await get('/api/received-docs?category=diesel')).status, 400, 'an unknown category is a 400');
    t.equal((await get('/api/received-docs?supplier=nope')).status, 400, 'a malformed RFC is a 400');
  });

  t.test("the supplier's cancellation: acknowledged by the SAT, the CFDI is cancelled; a stranger's is refused", async (t) => {
    const ack = satAcuseXml({ issuer: CARRIER, fecha: '2026-10-11T09:00:00', folios: [{ uuid: U(3), code: '202' }] });
    const r = await post([{ name: 'acuse.xml', content: ack }]);
    t.match(r.files[0], { status: 'created', kind: 'cancellation', direction: 'received', receivedDocIds: [rid(3)] });
    const doc = (await get(`/api/received-docs/${rid(3)}`)).body;
    t.match(doc.cancellation, { status: 'accepted', source: 'acknowledgement', satStatus: '202' });
    t.same(doc.balance, { total: 14_000, paid: 0, pending: 0, state: 'cancelled' });
    t.same(await ids('cancelled=true'), [rid(3)]);
    t.same(await ids('paymentStatus=paid'), [rid(1)]);
    const stranger = satAcuseXml({ issuer: GAS, fecha: '2026-10-11T09:00:00', folios: [{ uuid: U(3), code: '202' }] });
    const s = await post([{ name: 'acuse-ajeno.xml', content: stranger }]);
    t.match(s.files[0], { status: 'rejected', reason: new RegExp(`no CFDI of ${GAS} received by the tenant has UUID ${U(3)}`) });
  });

  t.test('category rules: the defaults, a tenant override, and back', async (t) => {
    const rules = await get('/api/received-category-rules');
    assertConforms(t, rules.res, 'GET', '/api/received-category-rules');
    t.same(rules.body.rules, []);
    t.ok(
      rules.body.defaults.some((r: { code: string; category: string }) => r.code === '781018' && r.category === 'subcontractedFreight'),
      'road freight family by default',
    );
    const put = async (body: unknown) =>
      h.app.inject({
        method: 'PUT',
        url: '/api/received-category-rules',
        headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });
    const before = (await get(`/api/received-docs/${rid(1)}`)).body.lastUpdate as string;
    await new Promise((resolve) => setTimeout(resolve, 5)); // a later millisecond than the import's stamp
    const set = await put({ rules: [{ code: '15101505', category: 'maintenance' }] });
    t.equal(set.statusCode, 200);
    t.ok((await get(`/api/received-docs/${rid(1)}`)).body.lastUpdate > before, 'its category changed: so did its lastUpdate');
    assertConforms(t, set, 'PUT', '/api/received-category-rules');
    t.same(await ids('category=fuel'), [], 'no fuel left under the override');
    t.same(await ids('category=maintenance'), [rid(1), rid(5)]);
    t.equal((await get(`/api/received-docs/${rid(1)}`)).body.concepts[0].category, 'maintenance');
    t.equal((await get('/api/received-category-rules', KEY_B)).body.rules.length, 0, "tenant B's rules are its own");
    t.equal((await put({ rules: [{ code: '15x', category: 'fuel' }] })).statusCode, 400, 'a code that is not digits is a 400');
    const twice = await put({
      rules: [
        { code: '1510', category: 'fuel' },
        { code: '2517', category: 'tyres' },
        { code: '1510', category: 'other' },
      ],
    });
    t.equal(twice.statusCode, 200);
    t.same(
      twice.json().rules,
      [
        { code: '2517', category: 'tyres' },
        { code: '1510', category: 'other' },
      ],
      'a code given twice keeps its last rule, and the answer says so',
    );
    t.equal((await put({ rules: [] })).statusCode, 200);
    t.same(await ids('category=fuel'), [rid(1)], 'back to the default');
  });

  t.test("the SAT's bulk-download metadata cancels a received CFDI of its supplier; other lines are counted", async (t) => {
    const header =
      'Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion';
    const line = (uuid: string, issuer: string, estatus: string, cancelled: string) =>
      `${uuid}~${issuer}~PROVEEDOR~${TENANT_A}~TRANSPORTISTA~SAT970701NN3~2026-10-14 11:00:00~2026-10-14 11:02:00~1906.67~I~${estatus}~${cancelled}`;
    const text = [
      header,
      line(U(5), MECHANIC, '0', '2026-10-20 12:00:00'), // the mechanic's invoice: cancelled
      line(U(1), GAS, '1', ''), // the diesel invoice: vigente
      line(U(5), GAS, '0', '2026-10-20 12:00:00'), // the same UUID from another supplier: not this CFDI
      line(U(40), MECHANIC, '0', '2026-10-20 12:00:00'), // never imported
    ].join('\r\n');
    const r = await post([{ name: 'metadata.txt', content: text }]);
    t.match(r.files[0], {
      status: 'updated',
      kind: 'satMetadata',
      metadata: { lines: 4, cancelled: 1, alreadyCancelled: 0, vigente: 1, notImported: 2, otherTaxpayers: 0, rejectedLines: [] },
    });
    const doc = (await get(`/api/received-docs/${rid(5)}`)).body;
    // 12:00 in Mexico City (UTC−6 all year since 2022) is 18:00Z.
    t.match(doc.cancellation, { status: 'accepted', source: 'bulk-metadata', date: '2026-10-20T18:00:00.000Z' });
    t.same(doc.balance, { total: 1_906.67, paid: 100, pending: 0, state: 'cancelled' }, 'a cancelled received invoice owes nothing');
    t.match((await get(`/api/received-docs/${rid(1)}`)).body, { cancellation: { status: 'none' } }, 'the vigente line changes nothing');
    const again = await post([{ name: 'metadata.txt', content: text }]);
    t.match(again.files[0], { metadata: { cancelled: 0, alreadyCancelled: 1, vigente: 1, notImported: 2 } }, 'importing it again changes nothing');
    t.same(await ids('cancelled=true'), [rid(3), rid(5)].sort());
  });

  t.test('never revenue: the financial documents and the tax summary are as before', async (t) => {
    t.equal(before.docs.meta.total, 1, 'the issued invoice');
    t.match(
      before.tax,
      { totals: { documents: 1, vat: { declared: 3200 }, retention: { declared: 800 } } },
      "the tax summary counts the issued invoice's taxes, and only them",
    );
    t.same((await get('/api/financial-docs?limit=100&detail=full')).body, before.docs);
    const tax = (await get('/api/tax-summary?targetMonth=2026-10')).body;
    t.same({ ...tax, computedAt: undefined }, { ...(before.tax as object), computedAt: undefined });
  });

  t.test('MCP: the tools answer what REST answers', async (t) => {
    const base = await listen(h.app);
    const client = await connect(t, base, 'streamable', { 'x-api-key': KEY_A });
    const list = (await client.callTool({ name: 'listReceivedDocs', arguments: { supplier: CARRIER } })) as { structuredContent: unknown; isError?: boolean };
    t.notOk(list.isError);
    t.same(list.structuredContent, (await get(`/api/received-docs?supplier=${CARRIER}`)).body);
    const one = (await client.callTool({ name: 'getReceivedDoc', arguments: { id: rid(1) } })) as { structuredContent: unknown };
    t.same(one.structuredContent, (await get(`/api/received-docs/${rid(1)}`)).body);
    const other = await connect(t, base, 'streamable', { 'x-api-key': KEY_B });
    const denied = (await other.callTool({ name: 'getReceivedDoc', arguments: { id: rid(1) } })) as { isError?: boolean };
    t.equal(denied.isError, true, "tenant B's tool call does not see tenant A's document");
  });

  /**
   * The default categories against the SAT catalogue c_ClaveProdServ (built on UNSPSC; the entries
   * as Odoo's product_unspsc data lists them, docs/domain.md "Received CFDIs"): one received invoice
   * with a concept per code, each concept's category shown by GET /api/received-docs/{id}. Expected
   * values are the catalogue's descriptions, not the rules: 78181508 "Heavy truck maintenance and
   * repair", 78181601 "Panelbeating service", 78181701 "Vehicle fueling service", 78181703 "Vehicle
   * parking service", 84131503 "Car or truck insurance", 84131504 "Cargo insurance", 84131607
   * "Liability insurance", 84131701 "Employer administered pension funds", 78101802 "Regional or
   * national trucking services", 78101805 "Tanker truck and trailer rental service", 95111602 and
   * 95111603 "Intrastate/Interstate highway or freeway or turnpike", 95111604 "Railway line",
   * 78111807 "Parking fees", 25172504 (class 251725 "Tires and tire tubes"), 15101514 gasoline.
   */
  t.test('default categories follow the catalogue: maintenance, insurance, tolls, freight and what is none of them', async (t) => {
    const expected: [string, string][] = [
      ['78181508', 'maintenance'],
      ['78181601', 'maintenance'],
      ['78181701', 'other'],
      ['78181703', 'other'],
      ['84131503', 'insurance'],
      ['84131504', 'insurance'],
      ['84131607', 'insurance'],
      ['84131701', 'other'],
      ['78101802', 'subcontractedFreight'],
      ['78101805', 'other'],
      ['95111602', 'tolls'],
      ['95111603', 'tolls'],
      ['95111604', 'other'],
      ['78111807', 'other'],
      ['25172504', 'tyres'],
      ['15101514', 'fuel'],
    ];
    const uuid = '9D1C0E55-0099-4000-8000-000000000199';
    const inv = invoiceXml({
      issuer: CARRIER,
      receiver: TENANT_B,
      uuid,
      fecha: '2026-10-20T09:00:00',
      method: 'PUE',
      lines: expected.map(([code], i) => ({ code, desc: `Concepto ${i + 1}`, amount: 100 + i, transfers: [{ tax: '002', rate: 0.16 }] })),
    });
    const r = await post([{ name: 'categories.xml', content: inv.xml }], KEY_B);
    t.match(r.files[0], { status: 'created', direction: 'received' });
    const doc = (await get(`/api/received-docs/${TENANT_B}-RCFDI-${uuid}`, KEY_B)).body;
    t.same(
      (doc.concepts as { code: string; category: string }[]).map((c) => [c.code, c.category]),
      expected,
    );
    t.equal(doc.category, 'fuel', 'the largest concept (the last, 115.00) gives the document its category');
  });

  t.test('a rule over many codes moves every document that follows one of them, and back', async (t) => {
    // 160 documents of tenant B, each with its own code under 601 (no default rule: "other"), more codes than one
    // query of the re-categorizing takes; plus the fuel document of the test before.
    const files = Array.from({ length: 160 }, (_, i) => ({
      name: `code-${i}.xml`,
      content: invoiceXml({
        issuer: CARRIER,
        receiver: TENANT_B,
        uuid: `9D1C0E55-0100-4000-8000-${String(i).padStart(12, '0')}`,
        fecha: '2026-10-21T09:00:00',
        method: 'PUE',
        lines: [{ code: `601${String(i).padStart(5, '0')}`, desc: `Llanta ${i}`, amount: 1_000, transfers: [{ tax: '002', rate: 0.16 }] }],
      }).xml,
    }));
    const imported = await post(files, KEY_B);
    t.equal(imported.files.filter((f) => f.status === 'created').length, 160);
    const put = (rules: unknown) =>
      h.app.inject({
        method: 'PUT',
        url: '/api/received-category-rules',
        headers: { 'x-api-key': KEY_B, 'content-type': 'application/json' },
        payload: JSON.stringify({ rules }),
      });
    const total = async (category: string) => (await get(`/api/received-docs?category=${category}&limit=1`, KEY_B)).body.meta.total;
    t.equal(await total('other'), 160);
    t.equal((await put([{ code: '601', category: 'tyres' }])).statusCode, 200);
    t.same([await total('tyres'), await total('other'), await total('fuel')], [160, 0, 1], 'all 160 are tyres; the fuel one stays');
    t.equal((await put([{ code: '601', category: 'tyres' }])).statusCode, 200, 'the same rules again');
    t.equal(await total('tyres'), 160);
    t.equal((await put([])).statusCode, 200);
    t.same([await total('tyres'), await total('other'), await total('fuel')], [0, 160, 1], 'back to the defaults');
  });

  t.test('concept taxes with 6 decimals: the totals are the rounded sums the XML states, not sums of rounded lines', async (t) => {
    // Anexo 20 (4.0) lets a concept's amounts carry 6 decimals; the document's Impuestos node is "el redondeo de la
    // suma" of its concepts' lines per tax and rate. Three concepts of 10.333333 + IVA 16% 1.653333:
    // Σ bases 30.999999 → 31.00, Σ IVA 4.959999 → 4.96 (per-line rounding would give 30.99 and 4.95), Total 35.96.
    const uuid = '9D1C0E55-0098-4000-8000-000000000198';
    const concept =
      '<cfdi:Concepto ClaveProdServ="15101505" Cantidad="1" ClaveUnidad="LTR" Descripcion="Diesel" ValorUnitario="10.333333" Importe="10.333333" ObjetoImp="02">' +
      '<cfdi:Impuestos><cfdi:Traslados><cfdi:Traslado Base="10.333333" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="1.653333"/></cfdi:Traslados></cfdi:Impuestos></cfdi:Concepto>';
    const xml =
      `<?xml version="1.0" encoding="UTF-8"?>\n<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0" Serie="G" Folio="1" Fecha="2026-10-05T10:00:00" SubTotal="31.00" Moneda="MXN" Total="35.96" TipoDeComprobante="I" Exportacion="01" FormaPago="01" MetodoPago="PUE" LugarExpedicion="91700">` +
      `<cfdi:Emisor Rfc="${GAS}" Nombre="GAS" RegimenFiscal="601"/><cfdi:Receptor Rfc="${TENANT_B}" Nombre="R" DomicilioFiscalReceptor="96400" RegimenFiscalReceptor="601" UsoCFDI="G03"/>` +
      `<cfdi:Conceptos>${concept}${concept}${concept}</cfdi:Conceptos>` +
      `<cfdi:Impuestos TotalImpuestosTrasladados="4.96"><cfdi:Traslados><cfdi:Traslado Base="31.00" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="4.96"/></cfdi:Traslados></cfdi:Impuestos>` +
      `<cfdi:Complemento><tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${uuid}" FechaTimbrado="2026-10-05T10:00:00" RfcProvCertif="SAT970701NN3" SelloCFD="A" NoCertificadoSAT="00001000000509846663" SelloSAT="B"/></cfdi:Complemento></cfdi:Comprobante>`;
    const r = await post([{ name: 'six-decimals.xml', content: xml }], KEY_B);
    t.match(r.files[0], { status: 'created', direction: 'received' });
    const doc = (await get(`/api/received-docs/${TENANT_B}-RCFDI-${uuid}`, KEY_B)).body;
    t.same(doc.taxes.vatTransferred, [{ rate: 0.16, base: 31, amount: 4.96 }]);
    t.match(doc.taxes, { transferred: 4.96, retained: 0 });
    t.match(doc.amounts, { subTotal: 31, total: 35.96 });
  });
  t.test("a supplier's credit note that names its one invoice twice credits it", async (t) => {
    // Invoice 1,000.00 (no tax) received by tenant B; a note of 100.00 whose CfdiRelacionados 01 lists that UUID twice
    // (once in lower case): one invoice, so the note is imported and the balance is 900.00, not refused as relating two.
    const inv = '9D1C0E55-0097-4000-8000-000000000197';
    const note = '9D1C0E55-0096-4000-8000-000000000196';
    const invoice = invoiceXml({
      issuer: GAS,
      receiver: TENANT_B,
      uuid: inv,
      fecha: '2026-10-01T10:00:00',
      method: 'PPD',
      lines: [{ desc: 'Diesel', amount: 1_000 }],
    }).xml;
    const credit = invoiceXml({ issuer: GAS, receiver: TENANT_B, uuid: note, fecha: '2026-10-03T10:00:00', lines: [{ desc: 'Bonificacion', amount: 100 }] })
      .xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"')
      .replace(
        '<cfdi:Emisor',
        `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${inv}"/><cfdi:CfdiRelacionado UUID="${inv.toLowerCase()}"/></cfdi:CfdiRelacionados><cfdi:Emisor`,
      );
    const r = await post(
      [
        { name: 'dup-inv.xml', content: invoice },
        { name: 'dup-note.xml', content: credit },
      ],
      KEY_B,
    );
    t.match(r.files, [{ status: 'created' }, { status: 'created' }], JSON.stringify(r.files));
    const doc = (await get(`/api/received-docs/${TENANT_B}-RCFDI-${inv}`, KEY_B)).body;
    t.match(doc.balance, { total: 1_000, pending: 900 });
  });
  t.test('two imports of the same received files at once: one creates each, the other skips it (both said created)', async (t) => {
    // Tenant B receives an invoice and its complement in two requests sent together. Each fact is stored once, so of the
    // two reports per file exactly one says created and the other skipped; the document is the one a single import builds.
    const inv = '9D1C0E55-0095-4000-8000-000000000195';
    const pay = '9D1C0E55-0094-4000-8000-000000000194';
    const files = [
      {
        name: 'race-inv.xml',
        content: invoiceXml({
          issuer: GAS,
          receiver: TENANT_B,
          uuid: inv,
          fecha: '2026-10-06T10:00:00',
          method: 'PPD',
          lines: [{ desc: 'Diesel', amount: 3_000 }],
        }).xml,
      },
      {
        name: 'race-pay.xml',
        content: paymentXml({
          issuer: GAS,
          receiver: TENANT_B,
          uuid: pay,
          fecha: '2026-10-08T10:00:00',
          invoiceUuid: inv,
          currency: 'MXN',
          exchangeRate: 1,
          before: 3_000,
          paid: 1_000,
        }),
      },
    ];
    const [a, b] = await Promise.all([post(files, KEY_B), post(files, KEY_B)]);
    for (const name of ['race-inv.xml', 'race-pay.xml']) {
      const statuses = [a, b].map((r) => r.files.find((f) => f.name === name)!.status).sort();
      t.same(statuses, ['created', 'skipped'], `${name}: created by one import, skipped by the other`);
    }
    t.equal(a.summary.created! + b.summary.created!, 2, 'two files created in all');
    const again = await post(files, KEY_B);
    t.match(again.files, [{ status: 'skipped' }, { status: 'skipped' }], 'a third import finds both stored');
    const doc = (await get(`/api/received-docs/${TENANT_B}-RCFDI-${inv}`, KEY_B)).body;
    t.match(doc.balance, { total: 3_000, pending: 2_000 }, '3,000.00 less the 1,000.00 paid');
  });
}
