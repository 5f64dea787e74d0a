/**
 * The consumer matrix (issue 39), the TypeScript generators, each on its newest release (npm
 * devDependencies) with default options, generating from the document the running service
 * serves at /docs/json:
 *
 * - orval with its `axios` client and with its `fetch` client;
 * - openapi-typescript (types) with openapi-fetch (the client);
 * - @hey-api/openapi-ts with its `zod` plugin: the zod schemas parse every live answer.
 *
 * Each consumer is a small program of typed calls compiled with `tsc --strict` together with
 * the generated code (no type assertion on an answer: the unions are narrowed as their types
 * allow; the four in one tsc program, each judged by the errors in its own directory), then run
 * with node: the first page of financial documents, one document by id in its
 * summary and full forms, the tax summary and the XML import; what it parsed must be what the
 * service answered (test/helpers/consumer-calls.ts). The four are generated side by side on one
 * service and one served document; each prints its wall time (`# … s`).
 */
import t from 'tap';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './helpers/service.ts';
import { compileConsumer, run, startDemoService, writeConsumerTsconfig, INCREMENTAL, PERIOD } from './helpers/generator-service.ts';
import { checkOutcome, importXml, readTruth, started } from './helpers/consumer-calls.ts';

t.setTimeout(600_000);

const bin = (name: string): string => path.join(ROOT, 'node_modules', '.bin', name);
const { base, key, docId, work, specFile } = await startDemoService(t, 'consumers-ts', async () => null);
// The generated code imports its runtime packages (axios, zod, openapi-fetch) as a consumer's project would find them.
await symlink(path.join(ROOT, 'node_modules'), path.join(work, 'node_modules'));
await writeFile(path.join(work, 'package.json'), JSON.stringify({ type: 'module' }));
const truth = await readTruth(base, key, docId);
t.ok(truth.list.count > 0 && truth.tax.documents > 0, `the demo data answers with data (${truth.list.total} documents, ${truth.tax.documents} taxed)`);

/** What every consumer program starts with: its arguments and the calls' parameters. */
const prelude = (n: number): string => `const [base, key, docId] = process.argv.slice(2) as [string, string, string];
const period = ${JSON.stringify(PERIOD)};
const xml = ${JSON.stringify(importXml(n).xml)};
function fail(what: string, detail: unknown): never {
  throw new Error(\`\${what}: \${JSON.stringify(detail)}\`);
}
`;

/** The line each consumer prints, from what it parsed (the same shape for all). */
const printed = `console.log(JSON.stringify({
  list: { detail: page.detail, total: page.meta.total, count: page.data.length, firstId: page.data[0]?.id ?? '' },
  summary: { id: summary.id, client: summary.client, status: summary.status },
  full: { id: full.id, client: full.client, iTot: full.iTot },
  tax: { documents: tax.totals.documents, months: tax.months.length },
  import: { files: report.summary.files, created: report.summary.created, name: report.files[0]?.name, status: report.files[0]?.status, kind: report.files[0]?.kind, uuid: report.files[0]?.uuid },
}));
`;

/**
 * One `tsc --strict` program over every consumer's directory (the generated code and its consumer.ts): one compiler
 * process reads the libraries' types (DOM, node, axios, zod) once instead of once per consumer; incremental across
 * runs (compileConsumer: what did not change since the last run is not checked again). Each consumer is
 * judged by the errors in its own directory (an error elsewhere fails them all); what compiled is emitted to
 * dist/<dir>/ even when another consumer's code did not compile. What tsc printed, '' when nothing failed.
 */
async function compileAll(dirs: string[]): Promise<string> {
  const tsconfig = path.join(work, 'tsconfig.json');
  await writeConsumerTsconfig(tsconfig, {
    compilerOptions: { lib: ['ES2022', 'DOM', 'DOM.Iterable'], rootDir: '.', ...INCREMENTAL },
    include: dirs.map((dir) => `${path.basename(dir)}/**/*.ts`),
    exclude: ['dist', 'node_modules'],
  });
  return compileConsumer(work, 'consumer-matrix-typescript', { timeout: 400_000 }).then(
    () => '',
    (err: Error) => err.message,
  );
}

/** The compiler's errors about `dir` (tsc names files relative to the work directory), or all when none names a consumer. */
function errorsOf(log: string, dir: string, dirs: string[]): string {
  const lines = log.split('\n').filter((line) => /error TS\d+/.test(line));
  const named = lines.filter((line) => dirs.some((d) => line.startsWith(`${path.basename(d)}/`)));
  if (named.length === 0) return log;
  return lines.filter((line) => line.startsWith(`${path.basename(dir)}/`)).join('\n');
}

/** Runs a generator; a warning or error in its log fails the consumer. */
async function generate(cmd: string, args: string[]): Promise<void> {
  const log = await run(bin(cmd), args);
  if (/error|warn/i.test(log)) throw new Error(`${cmd} reported an error or a warning:\n${log}`);
}

async function orvalAxios(): Promise<string> {
  {
    const dir = path.join(work, 'orval-axios');
    await generate('orval', ['--input', specFile, '--output', path.join(dir, 'api.ts'), '--client', 'axios']);
    await writeFile(
      path.join(dir, 'consumer.ts'),
      `import axios from 'axios';
import { getFreightBackOfficeAPI } from './api.js';
${prelude(4)}
const api = getFreightBackOfficeAPI(axios.create({ baseURL: base, headers: { 'x-api-key': key } }));
const list = (await api.listFinancialDocs({ limit: 5, ...period })).data;
const page = list.detail === 'summary' ? list : fail('listFinancialDocs: not a summary page', list.detail);
const one = (await api.getFinancialDoc(docId)).data;
const summary = 'amounts' in one ? one : fail('getFinancialDoc: not a summary', one);
const stored = (await api.getFinancialDoc(docId, { detail: 'full' })).data;
const full = 'iTot' in stored ? stored : fail('getFinancialDoc detail=full: not a stored document', stored);
const tax = (await api.getTaxSummary(period)).data;
const report = (await api.importDocumentsXml(new Blob([xml], { type: 'application/xml' }))).data;
${printed}`,
    );
    return dir;
  }
}

async function orvalFetch(): Promise<string> {
  {
    const dir = path.join(work, 'orval-fetch');
    await generate('orval', ['--input', specFile, '--output', path.join(dir, 'api.ts'), '--client', 'fetch']);
    await writeFile(
      path.join(dir, 'consumer.ts'),
      `import { getFinancialDoc, getTaxSummary, importDocumentsXml, listFinancialDocs } from './api.js';
${prelude(5)}
// The generated functions fetch the document's paths (\`/api/…\`); on Node a consumer points them at its server.
const fetchOf = globalThis.fetch;
globalThis.fetch = (input, init) => fetchOf(typeof input === 'string' && input.startsWith('/') ? base + input : input, init);
const options = { headers: { 'x-api-key': key } };
const listAnswer = await listFinancialDocs({ limit: 5, ...period }, options);
const list = listAnswer.status === 200 ? listAnswer.data : fail('listFinancialDocs', listAnswer);
const page = list.detail === 'summary' ? list : fail('listFinancialDocs: not a summary page', list.detail);
const oneAnswer = await getFinancialDoc(docId, undefined, options);
const one = oneAnswer.status === 200 ? oneAnswer.data : fail('getFinancialDoc', oneAnswer);
const summary = 'amounts' in one ? one : fail('getFinancialDoc: not a summary', one);
const storedAnswer = await getFinancialDoc(docId, { detail: 'full' }, options);
const stored = storedAnswer.status === 200 ? storedAnswer.data : fail('getFinancialDoc detail=full', storedAnswer);
const full = 'iTot' in stored ? stored : fail('getFinancialDoc detail=full: not a stored document', stored);
const taxAnswer = await getTaxSummary(period, options);
const tax = taxAnswer.status === 200 ? taxAnswer.data : fail('getTaxSummary', taxAnswer);
const importAnswer = await importDocumentsXml(new Blob([xml], { type: 'application/xml' }), options);
const report = importAnswer.status === 200 ? importAnswer.data : fail('importDocumentsXml', importAnswer);
${printed}`,
    );
    return dir;
  }
}

async function openapiFetch(): Promise<string> {
  {
    const dir = path.join(work, 'openapi-fetch');
    await mkdir(dir, { recursive: true });
    await generate('openapi-typescript', [specFile, '--output', path.join(dir, 'api.ts')]);
    await writeFile(
      path.join(dir, 'consumer.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './api.js';
${prelude(6)}
const client = createClient<paths>({ baseUrl: base, headers: { 'x-api-key': key } });
const listAnswer = await client.GET('/api/financial-docs', { params: { query: { limit: 5, ...period } } });
const list = listAnswer.data ?? fail('listFinancialDocs', listAnswer.error);
const page = list.detail === 'summary' ? list : fail('listFinancialDocs: not a summary page', list.detail);
const oneAnswer = await client.GET('/api/financial-docs/{id}', { params: { path: { id: docId } } });
const one = oneAnswer.data ?? fail('getFinancialDoc', oneAnswer.error);
const summary = 'amounts' in one ? one : fail('getFinancialDoc: not a summary', one);
const storedAnswer = await client.GET('/api/financial-docs/{id}', { params: { path: { id: docId }, query: { detail: 'full' } } });
const stored = storedAnswer.data ?? fail('getFinancialDoc detail=full', storedAnswer.error);
const full = 'iTot' in stored ? stored : fail('getFinancialDoc detail=full: not a stored document', stored);
const taxAnswer = await client.GET('/api/tax-summary', { params: { query: period } });
const tax = taxAnswer.data ?? fail('getTaxSummary', taxAnswer.error);
// The body is the XML as it is (format: binary is typed string); its Content-Type is the operation's one media type.
const importAnswer = await client.POST('/api/imports/xml', { body: xml, bodySerializer: (body) => body, headers: { 'content-type': 'application/xml' } });
const report = importAnswer.data ?? fail('importDocumentsXml', importAnswer.error);
${printed}`,
    );
    return dir;
  }
}

async function heyApi(): Promise<string> {
  {
    const dir = path.join(work, 'hey-api');
    await generate('openapi-ts', ['-i', specFile, '-o', dir, '-p', '@hey-api/client-fetch', '@hey-api/sdk', '@hey-api/typescript', 'zod', '--no-log-file']);
    await writeFile(
      path.join(dir, 'consumer.ts'),
      `import { client } from './client.gen.js';
import { getFinancialDoc, getTaxSummary, importDocumentsXml, listFinancialDocs } from './sdk.gen.js';
import { zGetFinancialDocResponse, zGetTaxSummaryResponse, zImportDocumentsXmlResponse, zListFinancialDocsResponse } from './zod.gen.js';
${prelude(7)}
client.setConfig({ baseUrl: base, headers: { 'x-api-key': key } });
/** The answer's body as the zod schema parses it (a throw names the fields it refused). */
function parsed<T>(answer: { data?: unknown; error?: unknown; response?: Response }, schema: { parse(v: unknown): T }, what: string): T {
  if (answer.data === undefined) fail(\`\${what}: \${answer.response?.status}\`, answer.error);
  return schema.parse(answer.data);
}
const list = parsed(await listFinancialDocs({ query: { limit: 5, ...period } }), zListFinancialDocsResponse, 'listFinancialDocs');
const page = list.detail === 'summary' ? list : fail('listFinancialDocs: not a summary page', list.detail);
const one = parsed(await getFinancialDoc({ path: { id: docId } }), zGetFinancialDocResponse, 'getFinancialDoc');
const summary = 'amounts' in one ? one : fail('getFinancialDoc: not a summary', one);
const stored = parsed(await getFinancialDoc({ path: { id: docId }, query: { detail: 'full' } }), zGetFinancialDocResponse, 'getFinancialDoc detail=full');
const full = 'iTot' in stored ? stored : fail('getFinancialDoc detail=full: not a stored document', stored);
const tax = parsed(await getTaxSummary({ query: period }), zGetTaxSummaryResponse, 'getTaxSummary');
const report = parsed(await importDocumentsXml({ body: new Blob([xml], { type: 'application/xml' }) }), zImportDocumentsXmlResponse, 'importDocumentsXml');
${printed}`,
    );
    return dir;
  }
}

// The four generated side by side, compiled together (one tsc), then each run; each subtest reads its own outcome.
const consumers: [string, () => Promise<string>, number][] = [
  ['orval (axios client)', orvalAxios, 4],
  ['orval (fetch client)', orvalFetch, 5],
  ['openapi-typescript + openapi-fetch', openapiFetch, 6],
  ['@hey-api/openapi-ts + zod (the zod schemas parse every answer)', heyApi, 7],
];
/** Each consumer's directory once generated, or why not (never rejects: nobody awaits them all at once). */
const generated = consumers.map(([, generateOne]) => generateOne().catch((err: Error) => err));
const compiled = (async () => {
  const dirs = (await Promise.all(generated)).filter((d): d is string => typeof d === 'string');
  return { dirs, log: dirs.length > 0 ? await compileAll(dirs) : '' };
})();
const outcomes = consumers.map((_, i) =>
  started(async () => {
    const dir = await generated[i]!;
    if (dir instanceof Error) throw dir;
    const { dirs, log } = await compiled;
    const errors = log && errorsOf(log, dir, dirs);
    if (errors) throw new Error(`tsc --strict -p ${path.join(work, 'tsconfig.json')} failed:\n${errors}`);
    return run(process.execPath, [path.join(work, 'dist', path.basename(dir), 'consumer.js'), base, key, docId]);
  }),
);
for (const [i, [name, , n]] of consumers.entries()) {
  t.test(`${name}: generated, compiled with tsc --strict, calls the service`, async (t) => checkOutcome(t, name, await outcomes[i]!, truth, n));
}
