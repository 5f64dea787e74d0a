/**
 * Many distinct CFDI files from the hand-written fixtures (test/fixtures/cfdi),
 * for `npm run bench:import` and the import crash test: copy k of the 11
 * fixtures has every UUID rewritten to a distinct one (cross references —
 * payments, credit notes, cancellations — rewritten alike), so each copy
 * imports as its own invoices, payments and trips.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';

export const FIXTURE_DIR = path.join(import.meta.dirname, '..', 'test', 'fixtures', 'cfdi');
const FIXTURE_UUID = /1A2B3C4D-00(\d\d)-4000-8000-0000000000(\d\d)/gi;

const fixtures = (): { name: string; text: string }[] =>
  readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.xml'))
    .sort()
    .map((name) => ({ name, text: readFileSync(path.join(FIXTURE_DIR, name), 'utf8') }));

/** The first `count` files of copies 0, 1, 2… of the fixtures (copy 0 keeps the fixtures' own UUIDs). */
export function* corpusFiles(count: number): Generator<{ name: string; data: Buffer }> {
  const base = fixtures();
  for (let i = 0; i < count; i++) {
    const copy = Math.floor(i / base.length);
    const f = base[i % base.length]!;
    const tag = copy.toString(16).toUpperCase().padStart(10, '0');
    const text =
      copy === 0
        ? f.text
        : f.text.replace(FIXTURE_UUID, (m, a: string, b: string) => {
            const u = `1A2B3C4D-00${a}-4000-8000-${tag}${b}`;
            return m === m.toLowerCase() ? u.toLowerCase() : u;
          });
    yield { name: `${String(copy).padStart(5, '0')}/${f.name}`, data: Buffer.from(text, 'utf8') };
  }
}

/** A zip of the first `count` corpus files. */
export function corpusZip(count: number): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of corpusFiles(count)) zip.addBuffer(f.data, f.name, { mtime: new Date('2026-11-01T00:00:00Z') });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
