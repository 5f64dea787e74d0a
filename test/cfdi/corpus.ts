/**
 * Every file of the public CFDI corpus (`../shared/cfdi-corpus`, issue 20) imported through
 * HTTP, one by one, with an API key of its own issuer, in the manifest's order, and checked
 * against the manifest's outcome:
 *
 * - `accept`: imported (created, updated or skipped); for an invoice, the amounts the API answers
 *   are the XML's own as this test reads them (SubTotal, Descuento, Total, the sums of its
 *   transfers and retentions, per tax, its Moneda and TipoCambio), and when the file's own
 *   arithmetic holds, the tax summary of its month and client lists no discrepancy for it;
 * - `reject`: refused with a reason matching the manifest's `reason_re`;
 * - `request` (a taxpayer's cancellation request): refused with a reason matching `reason_re`, or
 *   recorded as a request (kind `cancellationRequest`) — never as a cancellation: no invoice of
 *   the tenant becomes cancelled.
 *
 * The XML is read by test/helpers/cfdi-corpus.ts, not by the service's parser. The test fails
 * when the corpus is missing (it is not skipped).
 */
import type { Test } from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { startHarness, assertConforms } from '../helpers/harness.ts';
import { createApiKey } from '../../lib/auth/api-keys.ts';
import { corpusDir, internallyConsistent, readInvoice, readManifest, sumC, type ManifestRow } from '../helpers/cfdi-corpus.ts';

export default async function corpusTests(t: Test): Promise<void> {
  const dir = corpusDir();
  /**
   * The manifest's `reject` is a floor (its README): a file refused only because its kind was not
   * read yet is expected to be read once it is. CFDI 3.3 and Pagos 1.0 are read since issue 35
   * (docs/domain.md, "A carrier's archive"): the stamped 3.3 invoice is accepted, and the Pagos 1.0
   * sample, which is not stamped, is now refused for that reason instead of its version.
   */
  const RAISED: Readonly<Record<string, Pick<ManifestRow, 'expect' | 'reasonRe'>>> = {
    'files/cfdiutils-cfdi33-real.xml': { expect: 'accept', reasonRe: '' },
    'files/cfdiutils-pagos10-facturador01.xml': { expect: 'reject', reasonRe: 'stamp|Timbre' },
  };
  const manifest = readManifest(dir).map((row) => ({ ...row, ...RAISED[row.file] }));
  const h = await startHarness(t);

  /** A key per issuer RFC; files without one in the manifest (refused anyway) use a placeholder tenant. */
  const keys = new Map<string, string>();
  async function keyOf(issuer: string): Promise<string> {
    const tenant = issuer || 'AAA010101AAA';
    let key = keys.get(tenant);
    if (!key) {
      key = (await createApiKey(h.db, tenant, `corpus ${tenant}`)).key;
      keys.set(tenant, key);
    }
    return key;
  }

  type FileResult = { name: string; status: string; kind?: string; uuid?: string; reason?: string; financialDocIds?: string[]; tripId?: string };
  const cents = (pesos: number): number => Math.round(pesos * 100);

  async function api(key: string, url: string) {
    const res = await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });
    return { status: res.statusCode, body: res.json() };
  }

  async function cancelledCount(key: string): Promise<number> {
    return (await api(key, '/api/financial-docs?cancelled=true&limit=1')).body.meta.total as number;
  }

  /** An accepted invoice: the API's amounts are the XML's own; a consistent file has no discrepancy in its month and client. */
  async function checkInvoice(t: Test, row: ManifestRow, xml: string, key: string, result: FileResult): Promise<void> {
    const inv = readInvoice(xml);
    const tenant = row.issuer;
    const id = `${tenant}-CFDI-${inv.uuid}`;
    t.same(result.financialDocIds, [id], 'the report names the document');
    const res = await h.app.inject({ method: 'GET', url: `/api/financial-docs/${encodeURIComponent(id)}`, headers: { 'x-api-key': key } });
    t.equal(res.statusCode, 200, 'the document is listed');
    assertConforms(t, res, 'GET', '/api/financial-docs/:id');
    const doc = res.json();
    const a = doc.amounts;
    t.same(
      {
        currency: doc.currency,
        exchangeRate: doc.exchangeRate,
        subtotal: cents(a.subtotal),
        discount: cents(a.discount),
        total: cents(a.total),
        transferred: cents(a.transferredTaxes),
        retained: cents(a.retainedTaxes),
        ivaTransferred: cents(a.vat16),
        ivaRetained: cents(a.vatRetention4),
        isrRetained: cents(a.isrRetained),
        iepsTransferred: cents(a.iepsTransferred),
        iepsRetained: cents(a.iepsRetained),
        balanceTotal: cents(doc.balance.total),
      },
      {
        currency: inv.currency,
        exchangeRate: inv.exchangeRate,
        subtotal: inv.subTotalC,
        discount: inv.discountC,
        total: inv.totalC,
        transferred: sumC(inv.transfers),
        retained: sumC(inv.retentions),
        ivaTransferred: sumC(inv.transfers, '002'),
        ivaRetained: sumC(inv.retentions, '002'),
        isrRetained: sumC(inv.retentions, '001'),
        iepsTransferred: sumC(inv.transfers, '003'),
        iepsRetained: sumC(inv.retentions, '003'),
        balanceTotal: inv.totalC,
      },
      'amounts as the XML states them',
    );
    // IVA bases by rate, as the file's lines state them.
    const base = (pred: (l: { factor: string; rate: number | null }) => boolean) =>
      inv.transfers.filter((l) => l.tax === '002' && pred(l)).reduce((s, l) => s + l.baseC, 0);
    t.same(
      { rate16: cents(a.vatBases.rate16), rate8: cents(a.vatBases.rate8), rate0: cents(a.vatBases.rate0), exempt: cents(a.vatBases.exempt) },
      {
        rate16: base((l) => l.rate === 0.16),
        rate8: base((l) => l.rate === 0.08),
        rate0: base((l) => l.factor === 'Tasa' && l.rate === 0),
        exempt: base((l) => l.factor === 'Exento'),
      },
      'IVA bases at 16%, 8%, 0% and exempt apart',
    );
    t.equal(doc.cancellations.invoiceCancelled, false, 'a valid invoice');

    const month = inv.fecha.slice(0, 7);
    const summary = await api(key, `/api/tax-summary?targetMonth=${month}&client=${encodeURIComponent(inv.receiver)}&findingKind=discrepancy&limit=100`);
    t.equal(summary.status, 200, `tax summary of ${month} for ${inv.receiver}`);
    const own = (summary.body.findings.items as { docId: string; code: string; message: string }[]).filter((f) => f.docId === id);
    const consistent = internallyConsistent(inv);
    if (consistent.ok) {
      t.same(
        own.map((f) => `${f.code}: ${f.message}`),
        [],
        'an internally consistent file: no discrepancy in its month and client',
      );
      const clientTotals = summary.body.months[0].clients.data.find((c: { client: string }) => c.client === inv.receiver);
      t.ok(clientTotals && clientTotals.totals.documents >= 1, 'the invoice is in its month and client');
      // Reported in MXN: its Total at its exchange rate.
      if (clientTotals.totals.documents === 1) {
        t.equal(clientTotals.totals.documentsWithDiscrepancies, 0, 'its month and client: no document with a discrepancy');
        t.equal(cents(clientTotals.totals.total), Math.round(inv.totalC * inv.exchangeRate), 'the month and client total, in MXN');
      }
    } else {
      t.ok(own.length > 0, `a file whose own arithmetic does not hold (${consistent.why.join('; ')}) is a discrepancy`);
    }
  }

  t.test(`every file of the corpus (${manifest.length}) gives the manifest's outcome`, async (t) => {
    t.equal(manifest.length, 78, 'the 78 files of the manifest');
    for (const file of Object.keys(RAISED))
      t.ok(
        manifest.some((r) => r.file === file),
        `${file}, whose outcome is raised, is in the manifest`,
      );
    for (const row of manifest) {
      await t.test(`${row.file} (${row.expect}${row.reasonRe ? ` /${row.reasonRe}/` : ''})`, async (t) => {
        const xml = readFileSync(path.join(dir, row.file));
        const key = await keyOf(row.issuer);
        const cancelledBefore = await cancelledCount(key);
        const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': key, 'content-type': 'application/xml' }, payload: xml });
        t.equal(res.statusCode, 200, res.body.slice(0, 300));
        assertConforms(t, res, 'POST', '/api/imports');
        const result = res.json<{ files: FileResult[] }>().files[0]!;
        if (row.expect === 'reject') {
          t.equal(result.status, 'rejected', `refused (${result.reason ?? result.status})`);
          t.match(result.reason ?? '', new RegExp(row.reasonRe), `the reason says why: ${result.reason}`);
          return;
        }
        if (row.expect === 'request') {
          if (result.status === 'rejected') t.match(result.reason ?? '', new RegExp(row.reasonRe), `refused with a reason: ${result.reason}`);
          else t.equal(result.kind, 'cancellationRequest', `recorded as a request (${result.status})`);
          t.equal(await cancelledCount(key), cancelledBefore, 'a request cancels nothing');
          return;
        }
        t.not(result.status, 'rejected', `accepted (${result.reason ?? result.status})`);
        if (row.uuid) t.equal(result.uuid, row.uuid.toUpperCase(), 'the UUID of the file');
        if (row.type === 'I') await checkInvoice(t, row, xml.toString('utf8'), key, result);
        if (row.type === 'T') t.ok(result.tripId, 'a transfer with Carta Porte makes a trip');
        if (row.type === 'cancel') t.equal(result.kind, 'cancellation', 'the SAT acknowledgement');
      });
    }
  });
}
