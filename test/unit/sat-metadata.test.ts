/**
 * The SAT metadata reader (lib/imports/sat-metadata.ts) over the fixture
 * test/fixtures/sat/metadata-2026-10.txt (its README lists each line): the same rows whatever
 * the chunking (CRLF cut between chunks, a UTF-8 character cut in two), and bounded lines.
 */
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { SatMetadataReader, type MetadataRow } from '../../lib/imports/sat-metadata.ts';

const text = readFileSync(path.join(import.meta.dirname, '..', 'fixtures', 'sat', 'metadata-2026-10.txt'));
const read = (bytes: Buffer, chunk: number): MetadataRow[] => {
  const r = new SatMetadataReader();
  const rows: MetadataRow[] = [];
  for (let i = 0; i < bytes.length; i += chunk) rows.push(...r.write(bytes.subarray(i, i + chunk)));
  rows.push(...r.end());
  return rows;
};

t.test('the fixture: lines 2–8 as its README says, whatever the chunking', async (t) => {
  const whole = read(text, text.length);
  t.same(
    whole.map((r) => r.line),
    [2, 3, 4, 5, 6, 7, 8],
    'a bare LF inside a name does not split line 5',
  );
  t.match(whole[0], { uuid: '1A2B3C4D-0001-4000-8000-000000000001', issuerRfc: 'TGO850101AB1', receiverRfc: 'GDI920315QR4', cancelled: true });
  t.equal((whole[0] as { cancelledAt: number }).cancelledAt, Date.parse('2026-10-20T11:30:00-06:00'));
  t.match(whole[2], { uuid: '1A2B3C4D-0003-4000-8000-000000000003', receiverRfc: 'LOMJ800101AB2', cancelled: true }, 'a "~" inside NombreReceptor');
  t.match(whole[3], { uuid: '1A2B3C4D-0009-4000-8000-000000000009', cancelled: false, cancelledAt: null });
  t.same(whole[5], { line: 7, rejection: 'Estatus "2" is not 0 (cancelado) or 1 (vigente)' });
  t.match(whole[6], { issuerRfc: 'EKU9003173C9', receiverRfc: 'TGO850101AB1', cancelled: false });
  for (const size of [1, 2, 7, 64]) t.same(read(text, size), whole, `chunks of ${size} bytes`);
  const lf = Buffer.from(text.toString('utf8').replace(/\r\n/g, '\n').replace('GASOLINERAS\nDEL', 'GASOLINERAS DEL'));
  t.same(read(lf, 5), whole, 'LF line ends read the same');
});

t.test('not the metadata, and lines too long to be one', async (t) => {
  t.throws(() => read(Buffer.from('facturas de octubre\nUuid~RfcEmisor~\n'), 4), { name: 'NotMetadata', message: 'not a metadata header' });
  t.throws(() => read(Buffer.alloc(0), 1), { name: 'NotMetadata', message: 'empty file' });
  t.throws(() => read(Buffer.from('Uuid~RfcEmisor~RfcReceptor~Estatus\n'), 100), /the header has no FechaCancelacion column/);
  const header = text.toString('utf8').split('\r\n')[0]!;
  const long = Buffer.from(`${header}\r\n${'x'.repeat(20_000)}\r\n${text.toString('utf8').split('\r\n')[1]}\r\n`);
  const rows = read(long, 1000);
  t.same(rows[0], { line: 2, rejection: 'line longer than 8192 characters' });
  t.match(rows[1], { line: 3, uuid: '1A2B3C4D-0001-4000-8000-000000000001', cancelled: true }, 'the next line is read');
  t.equal(rows.length, 2);
});
