/**
 * Cancellation acknowledgements in every shape PACs return them (issue 35): elements without
 * a namespace (as Timbox returns it) and the web service's CancelaCFDResult, imported through
 * POST /api/imports (test/fixtures/sat/README.md gives their sources). Expected values come
 * from the fixtures' text.
 */
import t from 'tap';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { startHarness, KEY_A, TENANT_A } from './helpers/harness.ts';
import { fixture, fixtureNames, zipOf } from './helpers/cfdi-fixtures.ts';
import { financialDocs, trips } from '../lib/db/collections.ts';
import { importFacts, importLinks } from '../lib/finance/ledger/facts-repo.ts';

const h = await startHarness(t);
const sat = (name: string): Promise<Buffer> => readFile(path.join(import.meta.dirname, 'fixtures', 'sat', name));
const UUID = (n: number): string => `1A2B3C4D-00${String(n).padStart(2, '0')}-4000-8000-0000000000${String(n).padStart(2, '0')}`;
const docId = (n: number): string => `${TENANT_A}-CFDI-${UUID(n)}`;
const wipe = () =>
  Promise.all([financialDocs(h.db).deleteMany({}), trips(h.db).deleteMany({}), importFacts(h.db).deleteMany({}), importLinks(h.db).deleteMany({})]);
type Report = { files: { name: string; status: string; kind?: string; uuid?: string; reason?: string }[] };
const post = async (payload: Buffer | string, contentType: string) => {
  const res = await h.app.inject({ method: 'POST', url: '/api/imports', headers: { 'x-api-key': KEY_A, 'content-type': contentType }, payload });
  t.equal(res.statusCode, 200, res.body.slice(0, 300));
  return res.json<Report>();
};
const get = async (url: string) => (await h.app.inject({ method: 'GET', url, headers: { 'x-api-key': KEY_A } })).json();
const summaryOf = async (n: number) => get(`/api/financial-docs/${docId(n)}`);
const storedOf = async (n: number) => get(`/api/financial-docs/${docId(n)}?detail=full`);
/** Mexico City wall time (UTC−6 all year since October 2022) as the instant. */
const mx = (wall: string): number => Date.parse(`${wall.replace(' ', 'T')}-06:00`);
const fixtureZipEntries = () => fixtureNames().map((n) => ({ name: `2026-10/${n}`, data: fixture(n) }));

t.test('acknowledgements without namespace (Timbox) and the CancelaCFDResult form are read', async (t) => {
  await wipe();
  await post(await zipOf(fixtureZipEntries().filter((e) => !e.name.includes('/10-'))), 'application/zip');
  t.match(await summaryOf(8), { cancellations: { status: 'none' } });
  const r = await post(await sat('acuse-sin-namespace.xml'), 'application/xml');
  t.match(r.files[0], { status: 'created', kind: 'cancellation', uuid: UUID(8) });
  // EstatusUUID 202 (already cancelled): accepted at the acknowledgement's Fecha.
  t.match(await summaryOf(8), { cancellations: { status: 'accepted', invoiceCancelled: true }, status: { code: 9 } });
  t.match((await storedOf(8)).canceled, [{ uuid: UUID(8), statusSource: 'acknowledgement', satStatus: '202', date: mx('2026-10-09 18:00:00.123') }]);

  const c = await post(await sat('acuse-cancelacfdresult.xml'), 'application/xml');
  t.match(c.files[0], { status: 'created', kind: 'cancellation', uuid: UUID(4) });
  t.match(await summaryOf(4), { cancellations: { status: 'accepted', invoiceCancelled: true } });
  // A Folios with a UUID and no EstatusUUID says so.
  const half = await post(
    '<Acuse Fecha="2026-10-09T18:00:00" RfcEmisor="TGO850101AB1"><Folios><UUID>' + UUID(3) + '</UUID></Folios></Acuse>',
    'application/xml',
  );
  t.match(half.files[0], { status: 'rejected', reason: 'Acuse: Folios needs the elements UUID and EstatusUUID' });
});
