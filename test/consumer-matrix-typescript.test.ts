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
 * allow), then run with node: the first page of financial documents, one document by id in its
 * summary and full forms, the tax summary and the XML import; what it parsed must be what the
 * service answered (test/helpers/consumer-calls.ts). The four run side by side on one service
 * and one served document; each prints its wall time (`# … s`).
 */
import t from 'tap';
import { mkdir, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './helpers/service.ts';
import { run, startDemoService, PERIOD } from './helpers/generator-service.ts';
import { checkOutcome, importXml, readTruth, started, type Outcome } from './helpers/consumer-calls.ts';

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

/** Compiles `dir` (the generated code and consumer.ts) with tsc --strict, runs the consumer; what it printed. */
async function compileAndRun(dir: string): Promise<string> {
  await writeFile(
    path.join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        outDir: 'dist',
        noEmitOnError: true,
        skipLibCheck: true,
        types: ['node'],
      },
      include: ['**/*.ts'],
      exclude: ['dist', 'node_modules'],
    }),
  );
  await run(bin('tsc'), ['-p', path.join(dir, 'tsconfig.json')], { timeout: 400_000 });
  return run(process.execPath, [path.join(dir, 'dist', 'consumer.js'), base, key, docId]);
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
    return compileAndRun(dir);
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
    return compileAndRun(dir);
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
    return compileAndRun(dir);
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
    return compileAndRun(dir);
  }
}

// The four side by side, started at once; each subtest reads its own outcome.
const consumers: [string, Promise<Outcome>, number][] = [
  ['orval (axios client)', started(orvalAxios), 4],
  ['orval (fetch client)', started(orvalFetch), 5],
  ['openapi-typescript + openapi-fetch', started(openapiFetch), 6],
  ['@hey-api/openapi-ts + zod (the zod schemas parse every answer)', started(heyApi), 7],
];
for (const [name, outcome, n] of consumers) {
  t.test(`${name}: generated, compiled with tsc --strict, calls the service`, async (t) => checkOutcome(t, name, await outcome, truth, n));
}
