/**
 * One schema per answer and one media type per request body in the document the service serves
 * (issue 39): generated clients (orval, openapi-fetch with its defaults) union every media type of
 * a status, and cannot choose the Content-Type of a body offered in several. The deprecated
 * version 1 lists are a document of their own (/docs/v1.json); the XML, zip and CSV bodies have
 * operations of their own, while the JSON operations of the same paths still take them
 * (`x-also-accepts`, outside what generators read).
 */
import type { Test } from 'tap';
import { startHarness, KEY_A } from '../helpers/harness.ts';

export default async function mediaTypesTests(t: Test): Promise<void> {
const h = await startHarness(t);
type Operation = {
  operationId: string;
  requestBody?: { content: Record<string, unknown> };
  responses: Record<string, { content?: Record<string, unknown> }>;
} & Record<string, unknown>;
const served = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json<{ paths: Record<string, Record<string, Operation>> }>();
const operations = Object.entries(served.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));

t.test('every request body of the served document has one media type', async (t) => {
  const bodies = operations.filter(({ op }) => op.requestBody);
  t.ok(bodies.length >= 10, `${bodies.length} operations take a body`);
  for (const { path, method, op } of bodies)
    t.equal(Object.keys(op.requestBody!.content).length, 1, `${method.toUpperCase()} ${path}: ${Object.keys(op.requestBody!.content).join(', ')}`);
  const byType = (type: string) => bodies.filter(({ op }) => type in op.requestBody!.content).map(({ op }) => op.operationId);
  t.same(byType('application/xml'), ['importDocumentsXml']);
  t.same(byType('application/zip'), ['importDocumentsZip']);
  t.same(byType('text/csv').sort(), ['assignReceivedDocsCsv', 'importDeliveriesCsv']);
});

t.test('the 200 of every list is one schema: application/json only', async (t) => {
  for (const path of ['/api/financial-docs', '/api/shipments', '/api/received-docs', '/api/alerts', '/api/alerts/jobs', '/api/webhooks']) {
    t.same(Object.keys(served.paths[path]!.get!.responses['200']!.content ?? {}), ['application/json'], path);
  }
});

t.test('earlier clients: the JSON operations still take the bodies their siblings document', async (t) => {
  const acuse =
    '<Acuse xmlns="http://cancelacfd.sat.gob.mx" Fecha="2026-10-09T18:00:00" RfcEmisor="TGO850101AB1"><Folios><Folio UUID="1A2B3C4D-0008-4000-8000-000000000008" Motivo="02"/></Folios></Acuse>';
  const csv = 'tripId,shipmentId,productCode,offloaded,offloadDate\nNO-SUCH-TRIP,S-1,15101505,100,2026-03-06 10:00\n';
  for (const [url, type, body] of [
    ['/api/imports', 'application/xml', acuse],
    ['/api/imports/xml', 'application/xml', acuse],
    ['/api/deliveries', 'text/csv', csv],
    ['/api/deliveries/csv', 'text/csv', csv],
  ] as const) {
    const res = await h.app.inject({ method: 'POST', url, headers: { 'x-api-key': KEY_A, 'content-type': type }, payload: body });
    t.equal(res.statusCode, 200, `${url} takes ${type}`);
  }
  // Each new operation takes its own media type only.
  const json = await h.app.inject({
    method: 'POST',
    url: '/api/imports/xml',
    headers: { 'x-api-key': KEY_A },
    payload: { files: [{ name: 'a.xml', content: acuse }] },
  });
  t.equal(json.statusCode, 415, 'JSON to /api/imports/xml is a 415');
  const zipAsXml = await h.app.inject({
    method: 'POST',
    url: '/api/deliveries/csv',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/xml' },
    payload: acuse,
  });
  t.equal(zipAsXml.statusCode, 415, 'XML to /api/deliveries/csv is a 415');
});
}
