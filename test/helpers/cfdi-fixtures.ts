/** The hand-written CFDI fixtures (test/fixtures/cfdi) and zips of them, built with yazl. */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import yazl from 'yazl';

export const FIXTURE_DIR = path.join(import.meta.dirname, '..', 'fixtures', 'cfdi');
export const fixtureNames = (): string[] =>
  readdirSync(FIXTURE_DIR)
    .filter((f) => f.endsWith('.xml'))
    .sort();
export const fixture = (name: string): Buffer => readFileSync(path.join(FIXTURE_DIR, name));

/** A zip of the given entries (compressed unless `store`). */
export function zipOf(entries: { name: string; data: Buffer; store?: boolean }[]): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const e of entries) zip.addBuffer(e.data, e.name, { compress: !e.store, mtime: new Date('2026-11-01T00:00:00Z') });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
