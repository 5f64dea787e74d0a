/**
 * The originals of a period (docs/exports.md, "The documents of a period"): a zip of the XML, byte
 * for byte as kept (lib/originals), and the printed form (PDF) of each CFDI the tenant issued or
 * received with a fiscal date in the period — what PACs and the SAT hand an accountant. Entries
 * `issued/<UUID>.xml`, `issued/<UUID>.pdf`, `received/…`; a CFDI whose printed form is not rendered
 * (over the printed form's limits) gets `<UUID>.pdf.txt` saying why. The documents come from the
 * lists' own domain functions (the dates are theirs); one file is in memory at a time.
 */
import { once } from 'node:events';
import { Readable, type Writable } from 'node:stream';
import type yazl from 'yazl';
import { onFirstUse } from '../shared/on-first-use.ts';
import { ApiError, invalidBody } from '../http/api-error.ts';
import { listFinancialDocs } from '../finance/list-financial-docs.ts';
import { listReceivedDocs } from '../received/list-received-docs.ts';
import { findCfdiOriginal } from '../originals/find-cfdi-original.ts';
import { printedFormOf } from '../originals/printed-form.ts';
import { servedOriginal } from '../originals/served-original.ts';
import type { ExportContext } from './export-dataset.ts';
import { walkList, type PageFetch } from './list-datasets.ts';
import type { RowCounter } from './table-writers.ts';

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

const issuedPage: PageFetch = (ctx, tenant, q) => listFinancialDocs(ctx, tenant, { ...(q as { page: number; limit: number }), detail: 'summary' });
const receivedPage: PageFetch = (ctx, tenant, q) => listReceivedDocs(ctx, tenant, q as { page: number; limit: number });

/** The UUIDs of the period's documents whose original is kept (the lists' `xml` link is set), one direction. */
async function* keptUuids(ctx: ExportContext, query: OriginalsQuery, side: 'issued' | 'received'): AsyncGenerator<string> {
  const filters = { startDate: query.startDate, endDate: query.endDate };
  const items = walkList(side === 'issued' ? issuedPage : receivedPage, ctx, filters, 100, () => {});
  for await (const item of items) {
    const view = item as { uuid?: string | null; xml?: string | null; invoice?: { uuid?: string | null; xml?: string | null } | null };
    const [uuid, xml] = side === 'issued' ? [view.invoice?.uuid, view.invoice?.xml] : [view.uuid, view.xml];
    if (uuid && xml) yield uuid.toUpperCase();
  }
}

async function addEntry(zip: yazl.ZipFile, bytes: Buffer, name: string, mtime: Date): Promise<void> {
  const input = Readable.from([bytes]);
  const ended = once(input, 'end');
  zip.addReadStream(input, name, { mtime });
  // yazl reads one entry at a time through to its output: the next file waits until this one has gone.
  await ended;
}

export async function writeOriginalsZip(ctx: ExportContext, query: OriginalsQuery, sink: Writable, counted: RowCounter): Promise<void> {
  const zip = new (await zipWriter()).ZipFile();
  const finished = once(sink, 'finish');
  zip.outputStream.pipe(sink);
  const sides = query.direction === 'all' ? (['issued', 'received'] as const) : ([query.direction] as const);
  for (const side of sides) {
    for await (const uuid of keptUuids(ctx, query, side)) {
      const record = await findCfdiOriginal(ctx.db, ctx.tenant, uuid, ctx.config.queryTimeoutMs);
      if (!record) continue;
      await addEntry(zip, servedOriginal(record, uuid).bytes, `${side}/${uuid}.xml`, ctx.now);
      try {
        await addEntry(zip, (await printedFormOf(record, uuid)).bytes, `${side}/${uuid}.pdf`, ctx.now);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        await addEntry(zip, Buffer.from(`${err.details.join('\n') || err.message}\n`, 'utf8'), `${side}/${uuid}.pdf.txt`, ctx.now);
      }
      await counted(ORIGINALS_TABLE);
    }
  }
  zip.end();
  await finished;
}
