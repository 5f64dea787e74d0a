/**
 * Many distinct CFDI files from the hand-written fixtures (test/fixtures/cfdi),
 * for `npm run bench:import` and the import crash test: copy k of the 11
 * fixtures has every UUID rewritten to a distinct one (cross references —
 * payments, credit notes, cancellations — rewritten alike), so each copy
 * imports as its own invoices, payments and trips.
 *
 * With `mix`, copies take turns being one of four variants of the fixtures, so
 * that an archive holds both sides of the books in both CFDI versions:
 * - issued 4.0: the fixtures as written (the tenant TGO850101AB1 is Emisor);
 * - issued 3.3: the same turned into CFDI 3.3 (namespace cfd/3, no Exportacion,
 *   ObjetoImp or receiver's fiscal address and regime) and Pagos 2.0 into
 *   Pagos 1.0 (namespace Pagos, no Totales, EquivalenciaDR, ObjetoImpDR, nor
 *   TipoCambioP of a payment in MXN); the
 *   Carta Porte 3.1 invoice stays 4.0 (Carta Porte 3.x needs CFDI 4.0);
 * - received 4.0 and received 3.3: the same with Emisor and Receptor swapped
 *   (the tenant is Receptor, the fixture's customer the supplier), and the
 *   acknowledgement signed by the supplier of the invoice it cancels.
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

export type CorpusVariant = 'issued-4.0' | 'issued-3.3' | 'received-4.0' | 'received-3.3';
const MIX: readonly CorpusVariant[] = ['issued-4.0', 'issued-3.3', 'received-4.0', 'received-3.3'];

/** Only these attribute values differ between the fixtures' CFDI 4.0 and Pagos 2.0 and CFDI 3.3 and Pagos 1.0. */
function toCfdi33(text: string): string {
  if (text.includes('CartaPorte3')) return text;
  return text
    .replaceAll('http://www.sat.gob.mx/cfd/4', 'http://www.sat.gob.mx/cfd/3')
    .replace(/ Version="4\.0"/, ' Version="3.3"')
    .replaceAll(/ (Exportacion|ObjetoImp|DomicilioFiscalReceptor|RegimenFiscalReceptor|EquivalenciaDR|ObjetoImpDR)="[^"]*"/g, '')
    .replaceAll('http://www.sat.gob.mx/Pagos20', 'http://www.sat.gob.mx/Pagos')
    .replaceAll('pago20', 'pago10')
    .replaceAll(' TipoCambioP="1"', '')
    .replace(/(<\w+:Pagos) Version="2\.0"/, '$1 Version="1.0"')
    .replaceAll(/\s*<\w+:Totales [^>]*\/>/g, '');
}

const TENANT_RFC = 'TGO850101AB1';
const attr = (el: string, name: string): string => new RegExp(` ${name}="([^"]*)"`).exec(el)?.[1] ?? '';

/** Emisor and Receptor swap their Rfc and Nombre; an acknowledgement is signed by `supplierOf` its first UUID. */
function toReceived(text: string, supplierOf: ReadonlyMap<string, string>): string {
  const emisor = /<cfdi:Emisor [^>]*>/.exec(text)?.[0];
  const receptor = /<cfdi:Receptor [^>]*>/.exec(text)?.[0];
  if (!emisor || !receptor) {
    const uuid = / UUID="([^"]*)"/.exec(text)?.[1]?.toUpperCase() ?? '';
    return text.replace(`RfcEmisor="${TENANT_RFC}"`, `RfcEmisor="${supplierOf.get(uuid) ?? ''}"`);
  }
  const swap = (el: string, from: string) =>
    el.replace(/ Rfc="[^"]*"/, ` Rfc="${attr(from, 'Rfc')}"`).replace(/ Nombre="[^"]*"/, ` Nombre="${attr(from, 'Nombre')}"`);
  return text.replace(emisor, swap(emisor, receptor)).replace(receptor, swap(receptor, emisor));
}

function variantOf(text: string, variant: CorpusVariant, supplierOf: ReadonlyMap<string, string>): string {
  const received = variant.startsWith('received') ? toReceived(text, supplierOf) : text;
  return variant.endsWith('3.3') ? toCfdi33(received) : received;
}

/**
 * `count` files of copies 0, 1, 2… of the fixtures (copy 0 keeps the fixtures' own UUIDs), from
 * file `from` on (default 0: distinct files for another import); with `mix`, copy k is variant
 * k mod 4 of the fixtures (issued 4.0, issued 3.3, received 4.0, received 3.3), its folder named for it.
 */
export function* corpusFiles(count: number, opts: { mix?: boolean; from?: number } = {}): Generator<{ name: string; data: Buffer; variant: CorpusVariant }> {
  const base = fixtures();
  // The customer of each fixture CFDI: the supplier of its received variant.
  const supplierOf = new Map<string, string>();
  for (const f of base) {
    const uuid = /<tfd:TimbreFiscalDigital [^>]* UUID="([^"]*)"/.exec(f.text)?.[1];
    const receptor = /<cfdi:Receptor [^>]*>/.exec(f.text)?.[0];
    if (uuid && receptor) supplierOf.set(uuid.toUpperCase(), attr(receptor, 'Rfc'));
  }
  const from = opts.from ?? 0;
  for (let i = from; i < from + count; i++) {
    const copy = Math.floor(i / base.length);
    const f = base[i % base.length]!;
    const variant = opts.mix ? MIX[copy % MIX.length]! : 'issued-4.0';
    const tag = copy.toString(16).toUpperCase().padStart(10, '0');
    const text = variantOf(f.text, variant, supplierOf);
    const renamed =
      copy === 0
        ? text
        : text.replace(FIXTURE_UUID, (m, a: string, b: string) => {
            const u = `1A2B3C4D-00${a}-4000-8000-${tag}${b}`;
            return m === m.toLowerCase() ? u.toLowerCase() : u;
          });
    const folder = opts.mix ? `${String(copy).padStart(5, '0')}-${variant}` : String(copy).padStart(5, '0');
    yield { name: `${folder}/${f.name}`, data: Buffer.from(renamed, 'utf8'), variant };
  }
}

/** A zip of `count` corpus files (from file `from`, default 0). */
export function corpusZip(count: number, opts: { mix?: boolean; from?: number } = {}): Promise<Buffer> {
  const zip = new yazl.ZipFile();
  for (const f of corpusFiles(count, opts)) zip.addBuffer(f.data, f.name, { mtime: new Date('2026-11-01T00:00:00Z') });
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on('data', (c: Buffer) => chunks.push(c));
    zip.outputStream.on('end', () => resolve(Buffer.concat(chunks)));
    zip.outputStream.on('error', reject);
  });
}
