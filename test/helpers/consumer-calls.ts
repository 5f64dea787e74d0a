/**
 * The calls every consumer of the matrix makes (issue 39), what it must print and how it is
 * checked (test/consumer-matrix*.test.ts): the first page of financial documents, one document
 * by id in both forms (`detail=summary`, the default, and `detail=full`), the tax summary, and
 * the import of one CFDI XML as the body of `POST /api/imports/xml`.
 *
 * The expected figures are read from the same service without a generated client (`truth`),
 * the import's from an XML built here: each consumer imports an invoice of its own (a fresh
 * UUID, dated before the period the other calls ask for, so no consumer changes what another
 * reads); the service's report on the truth's own import gives the answer's shape.
 */
import type { Test } from 'tap';
import { invoiceXml } from './cfdi-builder.ts';
import { DEMO_TENANTS } from '../../scripts/demo/load.ts';
import { PERIOD } from './generator-service.ts';

/** What each consumer prints, as its last line of output (JSON). */
export interface Seen {
  list: { detail: string; total: number; count: number; firstId: string };
  summary: { id: string; client: string; status: { code: number; label: string } };
  full: { id: string; client: string; iTot: number };
  tax: { documents: number; months: number };
  import: { files: number; created: number; name: string; status: string; kind: string; uuid: string };
}

/** The invoice consumer `n` imports (n from 1; 0 is the truth's own): issued by the first demo tenant, dated 2025-06. */
export function importXml(n: number): { xml: string; uuid: string } {
  const uuid = `C0A5E11E-${String(n).padStart(4, '0')}-4000-8000-000000000039`;
  const { xml } = invoiceXml({
    issuer: DEMO_TENANTS[0]!.rfc,
    receiver: 'CIN010203KL5',
    uuid,
    fecha: '2025-06-02T10:00:00',
    certified: '2025-06-02T10:01:00',
    method: 'PUE',
    lines: [{ desc: 'Flete Veracruz-Puebla', amount: 1000, transfers: [{ tax: '002', rate: 0.16 }], retentions: [{ tax: '002', rate: 0.04 }] }],
  });
  return { xml, uuid };
}

/** The same calls as the service answers them, read with fetch (the truth's import is consumer 0's invoice). */
export async function readTruth(base: string, key: string, docId: string): Promise<Seen> {
  const headers = { 'x-api-key': key };
  const get = async <T>(url: string): Promise<T> => {
    const res = await fetch(`${base}${url}`, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const query = new URLSearchParams(PERIOD).toString();
  const id = encodeURIComponent(docId);
  const list = await get<{ detail: string; meta: { total: number }; data: { id: string }[] }>(`/api/financial-docs?limit=5&${query}`);
  const summary = await get<Seen['summary']>(`/api/financial-docs/${id}`);
  const full = await get<Seen['full']>(`/api/financial-docs/${id}?detail=full`);
  const tax = await get<{ totals: { documents: number }; months: unknown[] }>(`/api/tax-summary?${query}`);
  const { xml, uuid } = importXml(0);
  const res = await fetch(`${base}/api/imports/xml`, { method: 'POST', headers: { ...headers, 'content-type': 'application/xml' }, body: xml });
  if (res.status !== 200) throw new Error(`/api/imports/xml: ${res.status} ${await res.text()}`);
  const report = (await res.json()) as { summary: { files: number; created: number }; files: { name: string; status: string; kind: string; uuid: string }[] };
  const file = report.files[0]!;
  if (file.uuid !== uuid) throw new Error(`the import report names ${file.uuid}, not the XML's ${uuid}`);
  return {
    list: { detail: list.detail, total: list.meta.total, count: list.data.length, firstId: list.data[0]?.id ?? '' },
    summary: { id: summary.id, client: summary.client, status: summary.status },
    full: { id: full.id, client: full.client, iTot: full.iTot },
    tax: { documents: tax.totals.documents, months: tax.months.length },
    import: { files: report.summary.files, created: report.summary.created, name: file.name, status: file.status, kind: file.kind, uuid: file.uuid },
  };
}

/** A known failure of a generated client, by call: recorded as a todo of that assertion, not hidden. */
export interface Todo {
  import?: string;
}

/** The consumer parsed what the service answered (amounts: some clients read `number` as float32). */
export function checkSeen(t: Test, output: string, truth: Seen, n: number, todo: Todo = {}): void {
  const seen = JSON.parse(output.trim().split('\n').pop()!) as Seen;
  t.same(seen.list, truth.list, `list of financial documents parsed (${seen.list.count} of ${seen.list.total}, detail ${seen.list.detail})`);
  t.same(seen.summary, truth.summary, `one financial document by id, summary form (${seen.summary.id})`);
  const { iTot, ...full } = seen.full;
  const { iTot: expected, ...truthFull } = truth.full;
  t.same(full, truthFull, `the same document, full form (${seen.full.id})`);
  t.ok(Math.abs(iTot - expected) <= 1e-6 * Math.max(1, Math.abs(expected)), `its total ${iTot} ≈ ${expected}`);
  t.same(seen.tax, truth.tax, `tax summary parsed (${seen.tax.documents} documents, ${seen.tax.months} months)`);
  t.same(seen.import, { ...truth.import, uuid: importXml(n).uuid }, `an XML invoice imported (${seen.import.status} ${seen.import.kind})`, {
    todo: todo.import ?? false,
  });
}

/** A consumer's outcome: what it printed, or why it failed, and its wall time. */
export interface Outcome {
  output?: string;
  error?: Error;
  seconds: number;
}

/**
 * Starts a consumer (generate, build, run) at once, so the file's consumers run side by side
 * while its subtests read their outcomes one after the other; never rejects (a rejection
 * nobody awaits yet would end the process).
 */
export async function started(steps: () => Promise<string>): Promise<Outcome> {
  const start = Date.now();
  try {
    const output = await steps();
    return { output, seconds: (Date.now() - start) / 1000 };
  } catch (err) {
    return { error: err as Error, seconds: (Date.now() - start) / 1000 };
  }
}

/** Checks a consumer's outcome: it built and ran, and parsed what the service answered; prints its wall time. */
export function checkOutcome(t: Test, name: string, outcome: Outcome, truth: Seen, n: number, todo: Todo = {}): void {
  t.comment(`${name}: ${outcome.seconds.toFixed(1)} s (generate, build, five calls and an import)`);
  if (outcome.error) throw outcome.error;
  t.pass(`${name}: the generated client and its consumer build and run`);
  checkSeen(t, outcome.output!, truth, n, todo);
}
