/**
 * The originals of a period (docs/exports.md, "The documents of a period"): a zip of the XML, byte
 * for byte as kept (lib/originals), and the printed form (PDF) of each CFDI the tenant issued or
 * received with a fiscal date in the period — what PACs and the SAT hand an accountant. Entries
 * `issued/<UUID>.xml`, `issued/<UUID>.pdf`, `received/…`; a CFDI whose printed form is not rendered
 * (over the printed form's limits) gets `<UUID>.pdf.txt` saying why. Every kind of CFDI whose
 * original is kept: invoices (I), credit notes (E), payment complements (P), transfers (T). The
 * fiscal date is the CFDI's Fecha (its Mexico City day); the CFDIs come from each side's facts, one
 * record per CFDI, through their repositories (streamed by cursor); one file is in memory at a time.
 */
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import type yazl from 'yazl';
import { onFirstUse } from '../shared/on-first-use.ts';
import { ApiError, invalidBody } from '../http/api-error.ts';
import { issuedCfdisDated, issuedUndatedCfdisSince } from '../finance/ledger/imported-file.ts';
import { receivedCfdisDated, receivedUndatedCfdisSince } from '../received/received-repo.ts';
import { parseXmlTree } from '../imports/xml-tree.ts';
import { MS_PER_DAY, mxDayEnd, mxDayStart } from '../time/mexico-city.ts';
import { findCfdiOriginal } from '../originals/find-cfdi-original.ts';
import { printedFormOf } from '../originals/printed-form.ts';
import { servedOriginal } from '../originals/served-original.ts';
import type { ExportContext } from './export-dataset.ts';
import { watchSink, type RowCounter, type SinkWatch } from './table-writers.ts';

/** The zip writer, loaded by the first originals export rather than by every process that builds the app. */
const zipWriter = onFirstUse(async () => (await import('yazl')).default);

export const ORIGINALS_DATASET = 'originals';
export const ORIGINALS_TABLE = 'documents';
const DIRECTIONS = ['issued', 'received', 'all'] as const;
export type OriginalsDirection = (typeof DIRECTIONS)[number];

export interface OriginalsQuery {
  startDate: string;
  endDate: string;
  direction: OriginalsDirection;
}

const DAY = /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/;
const realDay = (s: string): boolean => DAY.test(s) && new Date(`${s}T00:00:00Z`).toISOString().slice(0, 10) === s;

/**
 * The zip's query as stored (the route validated it: this guards a record written otherwise): a period of
 * fiscal dates, both days included (an end before the start is an empty period, as the lists answer it),
 * and which documents.
 */
export function originalsQuery(raw: Readonly<Record<string, unknown>>): OriginalsQuery {
  const problems: string[] = [];
  for (const name of Object.keys(raw))
    if (!['startDate', 'endDate', 'direction'].includes(name))
      problems.push(`query.${name} is not a parameter of the originals zip (startDate, endDate, direction)`);
  for (const name of ['startDate', 'endDate'] as const) {
    const v = raw[name];
    if (v === undefined) problems.push(`query.${name} is required (YYYY-MM-DD)`);
    else if (typeof v !== 'string' || !realDay(v)) problems.push(`query.${name} must be a calendar date YYYY-MM-DD`);
  }
  const direction = raw.direction ?? 'all';
  if (typeof direction !== 'string' || !(DIRECTIONS as readonly string[]).includes(direction))
    problems.push(`query.direction must be one of ${DIRECTIONS.join(', ')}`);
  if (problems.length) throw invalidBody(problems);
  return { startDate: raw.startDate as string, endDate: raw.endDate as string, direction: direction as OriginalsDirection };
}

/**
 * How far a CFDI's Fecha (the issuer's wall time, read as Mexico City's) may be ahead of the instant it was imported:
 * an issuer an hour east of Mexico City, imported at once. A day of margin: the CFDIs imported from a day before the
 * period's start hold every one whose facts keep no Fecha and that is dated in the period.
 */
const IMPORTED_BEFORE_FECHA_MS = MS_PER_DAY;

interface PeriodCfdi {
  uuid: string;
  /** Whether the facts placed its Fecha in the period; if not, the Fecha is read from its kept XML. */
  dated: boolean;
}

/**
 * The CFDIs of one side that may be dated in the period, each once (one fact per UUID): first those whose facts keep
 * their Fecha (invoices, credit notes), by it, oldest first; then those whose facts do not (payment complements,
 * transfers), imported since the period's start, in order of import. The order depends only on what is stored.
 */
async function* periodCfdis(ctx: ExportContext, query: OriginalsQuery, side: 'issued' | 'received'): AsyncGenerator<PeriodCfdi> {
  // An end before the start is an empty period.
  if (query.endDate < query.startDate) return;
  const [from, to] = [mxDayStart(query.startDate), mxDayEnd(query.endDate)];
  const since = new Date(from - IMPORTED_BEFORE_FECHA_MS);
  const { db, tenant } = ctx;
  const ms = ctx.config.queryTimeoutMs;
  const dated = side === 'issued' ? issuedCfdisDated(db, tenant, from, to, ms) : receivedCfdisDated(db, tenant, from, to, ms);
  for await (const r of dated) yield { uuid: r.uuid.toUpperCase(), dated: true };
  const undated = side === 'issued' ? issuedUndatedCfdisSince(db, tenant, since, ms) : receivedUndatedCfdisSince(db, tenant, since, ms);
  for await (const r of undated) yield { uuid: r.uuid.toUpperCase(), dated: false };
}

const FECHA = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}:\d{2}/;

/** The Mexico City day of a kept CFDI's Fecha (its wall time's date), or null when the file states none. Only the root is kept. */
function fiscalDayOf(xml: Buffer): string | null {
  return FECHA.exec(parseXmlTree(xml, () => false).attrs.Fecha ?? '')?.[1] ?? null;
}

async function addEntry(zip: yazl.ZipFile, bytes: Buffer, name: string, mtime: Date, watch: SinkWatch): Promise<void> {
  watch.check();
  const input = Readable.from([bytes]);
  const ended = once(input, 'end');
  zip.addReadStream(input, name, { mtime });
  // yazl reads one entry at a time through to its output: the next file waits until this one has gone (never, once
  // the sink has failed: its error ends the wait).
  await watch.until(ended);
}

export async function writeOriginalsZip(ctx: ExportContext, query: OriginalsQuery, sink: Writable, counted: RowCounter): Promise<void> {
  const zip = new (await zipWriter()).ZipFile();
  const watch = watchSink(sink);
  const finished = once(sink, 'finish');
  // Awaited at the end, through `watch`: its rejection meanwhile (the sink failed) is the watch's to report.
  finished.catch(() => undefined);
  zip.outputStream.pipe(sink);
  const sides = query.direction === 'all' ? (['issued', 'received'] as const) : ([query.direction] as const);
  for (const side of sides) {
    for await (const { uuid, dated } of periodCfdis(ctx, query, side)) {
      // Imported before originals were kept: nothing to hand over.
      const record = await findCfdiOriginal(ctx.db, ctx.tenant, uuid, ctx.config.queryTimeoutMs);
      if (!record) continue;
      const { bytes } = servedOriginal(record, uuid);
      if (!dated) {
        const day = fiscalDayOf(bytes);
        if (day === null || day < query.startDate || day > query.endDate) continue;
      }
      await addEntry(zip, bytes, `${side}/${uuid}.xml`, ctx.now, watch);
      try {
        await addEntry(zip, (await printedFormOf(record, uuid)).bytes, `${side}/${uuid}.pdf`, ctx.now, watch);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        await addEntry(zip, Buffer.from(`${err.details.join('\n') || err.message}\n`, 'utf8'), `${side}/${uuid}.pdf.txt`, ctx.now, watch);
      }
      await counted(ORIGINALS_TABLE);
    }
  }
  watch.check();
  zip.end();
  await watch.until(finished);
}
