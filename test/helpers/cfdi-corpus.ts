/**
 * The public CFDI corpus (`../shared/cfdi-corpus` beside the repository: files other projects
 * publish, with MANIFEST.tsv saying what a correct import gives) and a reader of its XML that
 * owes nothing to the service: the corpus test compares the service's answers with what this
 * reader finds in the files themselves.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root: this file is test/helpers/cfdi-corpus.ts. */
const REPO_ROOT = path.resolve(import.meta.dirname, '..', '..');

/**
 * Where the corpus is: CFDI_CORPUS_DIR when set, else `../shared/cfdi-corpus` from the repository
 * root (the layout of the project's machines), else /work/shared/cfdi-corpus. Throws, naming every
 * place looked at, when none holds a MANIFEST.tsv: the corpus test must never pass without it.
 */
export function corpusDir(): string {
  const candidates = [process.env.CFDI_CORPUS_DIR, path.join(REPO_ROOT, '..', 'shared', 'cfdi-corpus'), '/work/shared/cfdi-corpus'].filter(
    (d): d is string => !!d,
  );
  const found = candidates.find((d) => existsSync(path.join(d, 'MANIFEST.tsv')));
  if (!found) {
    throw new Error(
      `the public CFDI corpus is missing: no MANIFEST.tsv in ${candidates.join(', ')}. Put it at ../shared/cfdi-corpus beside the repository (or set CFDI_CORPUS_DIR).`,
    );
  }
  return found;
}

export interface ManifestRow {
  file: string;
  type: string;
  issuer: string;
  uuid: string;
  expect: 'accept' | 'reject' | 'request';
  reasonRe: string;
  note: string;
}

export function readManifest(dir: string): ManifestRow[] {
  const [header, ...lines] = readFileSync(path.join(dir, 'MANIFEST.tsv'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '');
  const cols = header!.split('\t');
  const at = (name: string): number => {
    const i = cols.indexOf(name);
    if (i < 0) throw new Error(`MANIFEST.tsv has no column ${name}`);
    return i;
  };
  return lines.map((l) => {
    const f = l.split('\t');
    const expect = f[at('expect')] as ManifestRow['expect'];
    if (!['accept', 'reject', 'request'].includes(expect)) throw new Error(`MANIFEST.tsv: unknown outcome "${expect}" for ${f[at('file')]}`);
    return {
      file: f[at('file')]!,
      type: f[at('type')]!,
      issuer: f[at('issuer')]!,
      uuid: f[at('uuid')]!,
      expect,
      reasonRe: f[at('reason_re')] ?? '',
      note: f[at('note')] ?? '',
    };
  });
}

// --------------------------------------------------------------------------- a minimal XML reader

export interface El {
  name: string;
  attrs: Record<string, string>;
  children: El[];
}

const decode = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#[0-9]+|amp|lt|gt|quot|apos);/gi, (_, e: string) => {
    if (e[0] === '#') return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[e.toLowerCase()]!;
  });

/** Elements by local name (prefixes dropped), their attributes by local name; text, comments and declarations skipped. */
export function parseElements(xml: string): El {
  const root: El = { name: '#document', attrs: {}, children: [] };
  const stack: El[] = [root];
  const tag =
    /<(\/?)([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)((?:\s+[^\s=>/]+\s*=\s*(?:"[^"]*"|'[^']*'))*)\s*(\/?)>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<!\[CDATA\[[\s\S]*?\]\]>/g;
  for (let m = tag.exec(xml); m; m = tag.exec(xml)) {
    if (m[3] === undefined) continue;
    if (m[1]) {
      stack.pop();
      continue;
    }
    const attrs: Record<string, string> = {};
    for (const a of m[4]!.matchAll(/([^\s=]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g)) attrs[a[1]!.replace(/^.*:/, '')] = decode(a[2] ?? a[3] ?? '');
    const el: El = { name: m[3], attrs, children: [] };
    stack[stack.length - 1]!.children.push(el);
    if (!m[5]) stack.push(el);
  }
  return root.children[0]!;
}

export const kids = (el: El | undefined, name: string): El[] => el?.children.filter((c) => c.name === name) ?? [];
export const kid = (el: El | undefined, name: string): El | undefined => kids(el, name)[0];

const cents = (v: string | undefined): number => Math.round(Number(v ?? '0') * 100);

export interface TaxLineOfFile {
  tax: string;
  factor: string;
  rate: number | null;
  baseC: number;
  amountC: number;
}

/** An invoice's amounts as its XML states them, in cents of its own currency. */
export interface InvoiceOfFile {
  uuid: string;
  fecha: string;
  receiver: string;
  receiverName: string;
  currency: string;
  exchangeRate: number;
  subTotalC: number;
  discountC: number;
  totalC: number;
  transfers: TaxLineOfFile[];
  retentions: TaxLineOfFile[];
  conceptAmountsC: number[];
  conceptDiscountsC: number[];
  headerTotals: { transferredC: number; retainedC: number } | null;
  /** Local (state) taxes, the implocal complement: Σ TrasladosLocales − Σ RetencionesLocales, each line's Importe. */
  localC: number;
}

const lineOf = (el: El): TaxLineOfFile => ({
  tax: el.attrs.Impuesto!,
  factor: el.attrs.TipoFactor!,
  rate: el.attrs.TasaOCuota === undefined ? null : Number(el.attrs.TasaOCuota),
  baseC: cents(el.attrs.Base),
  amountC: cents(el.attrs.Importe),
});

export function readInvoice(xml: string): InvoiceOfFile {
  const c = parseElements(xml);
  const concepts = kids(kid(c, 'Conceptos'), 'Concepto');
  const taxesOf = (kind: 'Traslados' | 'Retenciones', one: 'Traslado' | 'Retencion') =>
    concepts.flatMap((x) => kids(kid(kid(x, 'Impuestos'), kind), one).map(lineOf));
  const header = kid(c, 'Impuestos');
  const tfd = kids(kid(c, 'Complemento'), 'TimbreFiscalDigital')[0];
  const local = kid(kid(c, 'Complemento'), 'ImpuestosLocales');
  const localSum = (name: string) => kids(local, name).reduce((s, l) => s + cents(l.attrs.Importe), 0);
  return {
    uuid: (tfd?.attrs.UUID ?? '').toUpperCase(),
    fecha: c.attrs.Fecha!,
    receiver: kid(c, 'Receptor')!.attrs.Rfc!.toUpperCase(),
    receiverName: kid(c, 'Receptor')!.attrs.Nombre ?? '',
    currency: c.attrs.Moneda!,
    exchangeRate: c.attrs.Moneda === 'MXN' ? 1 : Number(c.attrs.TipoCambio ?? '1'),
    subTotalC: cents(c.attrs.SubTotal),
    discountC: cents(c.attrs.Descuento),
    totalC: cents(c.attrs.Total),
    transfers: taxesOf('Traslados', 'Traslado'),
    retentions: taxesOf('Retenciones', 'Retencion'),
    conceptAmountsC: concepts.map((x) => cents(x.attrs.Importe)),
    conceptDiscountsC: concepts.map((x) => cents(x.attrs.Descuento)),
    headerTotals: header ? { transferredC: cents(header.attrs.TotalImpuestosTrasladados), retainedC: cents(header.attrs.TotalImpuestosRetenidos) } : null,
    localC: localSum('TrasladosLocales') - localSum('RetencionesLocales'),
  };
}

export const sumC = (lines: readonly TaxLineOfFile[], tax?: string): number =>
  lines.filter((l) => tax === undefined || l.tax === tax).reduce((s, l) => s + l.amountC, 0);

/**
 * Whether the file's own arithmetic holds (to a cent): SubTotal and Descuento are the sums of
 * the concepts, every Tasa/Cuota line's Importe is round2(Base × rate), the header totals are the
 * sums of the lines, and Total = SubTotal − Descuento + transfers − retentions + local taxes.
 */
export function internallyConsistent(inv: InvoiceOfFile): { ok: boolean; why: string[] } {
  const why: string[] = [];
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  if (sum(inv.conceptAmountsC) !== inv.subTotalC) why.push('SubTotal ≠ Σ Importe');
  if (sum(inv.conceptDiscountsC) !== inv.discountC) why.push('Descuento ≠ Σ concept Descuento');
  for (const l of [...inv.transfers, ...inv.retentions]) {
    if (l.factor === 'Exento' || l.rate === null) continue;
    if (Math.abs(Math.round(l.baseC * l.rate) - l.amountC) > 1) why.push(`${l.tax} ${l.rate}: Importe ${l.amountC / 100} ≠ Base ${l.baseC / 100} × rate`);
  }
  const t = sumC(inv.transfers);
  const r = sumC(inv.retentions);
  if (inv.headerTotals && (inv.headerTotals.transferredC !== t || inv.headerTotals.retainedC !== r)) why.push('document tax totals ≠ Σ lines');
  if (Math.abs(inv.subTotalC - inv.discountC + t - r + inv.localC - inv.totalC) > 1)
    why.push('Total ≠ SubTotal − Descuento + transfers − retentions + local taxes');
  return { ok: why.length === 0, why };
}
