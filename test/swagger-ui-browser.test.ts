/**
 * Swagger UI in a real browser, as a reader of the published docs uses it:
 * headless Chromium (Debian's `chromium`, installed by scripts/setup-chromium.mjs in `npm test`'s set-up;
 * the test fails with install instructions when it is not there) driven by
 * playwright-core opens /docs of the service started as `npm start` starts it,
 * on the demo dataset (400 invoices and 400 trips per tenant: the pre-filled values are the
 * document's examples, which test/spec-examples-demo shows answer with data at that size; the
 * 3,000 an empty database gets prove nothing more here and were most of the file's time),
 * authorizes with a demo key — once as `x-api-key`, once as Bearer — and runs "Try it out" →
 * Execute with the pre-filled values on both lists, the tax summary and one audit. Each must show
 * a 200 whose body has data; no console errors. Screenshots: .cache/artifacts/swagger-ui-*.png.
 */
import t, { type Test } from 'tap';
import { execFile } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Page } from 'playwright-core';
import { startEmbeddedMongo } from '../scripts/embedded-mongo/launcher.ts';
import { connectMongo } from '../lib/db/client.ts';
import { ensureIndexes } from '../lib/service-indexes.ts';
import { loadDemoData, DEMO_TENANTS } from '../scripts/demo/load.ts';
import { startService, ROOT } from './helpers/service.ts';

t.setTimeout(240_000);

// Installed by `npm test`'s set-up (scripts/setup-test.mjs), never here: checked only.
const executablePath = await promisify(execFile)(process.execPath, [path.join(ROOT, 'scripts', 'setup-chromium.mjs'), '--check', '--print-path'], {
  timeout: 60_000,
}).then(
  (r) => r.stdout.trim().split('\n').pop()!,
  (err: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(
      `headless Chromium is required for the Swagger UI test: run \`node scripts/setup-chromium.mjs\` (npm run setup:chromium).\n${err.stderr ?? ''}${err.stdout ?? ''}`,
    );
  },
);

// A test file's engine lives a minute: C1 only costs less CPU than it saves (launcher.ts).
const engine = await startEmbeddedMongo({ shortLived: true });
t.teardown(() => engine.stop());
{
  const { client, db } = await connectMongo(engine.uri, 'swagger-ui');
  await ensureIndexes(db);
  await loadDemoData(db, { invoices: 400, trips: 400 });
  await client.close();
}
const service = await startService({
  mongodbUri: engine.uri,
  mongodbDb: 'swagger-ui',
  env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', REPORT_RATE_LIMIT_MAX: '100000' },
});
t.teardown(() => service.stop());

const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
t.teardown(() => browser.close());
const artifacts = path.join(ROOT, '.cache', 'artifacts');
await mkdir(artifacts, { recursive: true });

/** Operation (tag, operationId) and what "data" means in its 200 body. */
const OPERATIONS: [string, string, (body: Record<string, unknown>) => number][] = [
  ['financial', 'listFinancialDocs', (b) => (b.data as unknown[]).length],
  ['shipments', 'listShipments', (b) => (b.data as unknown[]).length],
  ['tax', 'getTaxSummary', (b) => (b.totals as { documents: number }).documents],
  ['analytics', 'auditDiscountsAndShrinkage', (b) => (b.discounts as { totals: { documents: number } }).totals.documents],
];

async function authorize(page: Page, scheme: 'apiKey' | 'bearerKey', key: string): Promise<void> {
  await page.click('.scheme-container button.authorize');
  const container = page
    .locator('.modal-ux .auth-container')
    .filter({ hasText: scheme === 'apiKey' ? 'apiKey' : 'bearerKey' })
    .first();
  await container.locator('input').first().fill(key);
  await container.locator('button.authorize').click();
  await page.click('.modal-ux button.btn-done');
}

async function tryOut(
  t: Test,
  page: Page,
  scheme: 'apiKey' | 'bearerKey',
  tag: string,
  operationId: string,
  dataOf: (b: Record<string, unknown>) => number,
): Promise<void> {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  await block.locator('.opblock-summary').first().click();
  await block.locator('button.try-out__btn').click();
  await block.locator('button.execute').click();
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await status.waitFor({ timeout: 30_000 });
  const code = (await status.textContent())?.trim();
  const text = (await block.locator('.live-responses-table .response-col_description .microlight').first().textContent()) ?? '';
  t.equal(code, '200', `${operationId}: Execute with the pre-filled values answers 200${code === '200' ? '' : `: ${text.slice(0, 300)}`}`);
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    t.fail(`${operationId}: the rendered body is not JSON: ${text.slice(0, 200)}`);
  }
  const n = code === '200' ? dataOf(body) : 0;
  const url = (await block.locator('.request-url pre').first().textContent())?.trim() ?? '';
  const curl = (await block.locator('.curl-command').first().textContent()) ?? '';
  t.match(curl, scheme === 'apiKey' ? /x-api-key: demo_/ : /Authorization: Bearer demo_/, `${operationId}: sent with ${scheme} only`);
  t.notMatch(curl, scheme === 'apiKey' ? /Authorization: Bearer/ : /x-api-key:/);
  t.ok(n > 0, `${operationId}: data rendered in the page (${n})${n > 0 ? '' : ` for ${url}`}`);
  // Collapse it again so the next operation's selectors stay unambiguous.
  await block.locator('.opblock-summary').first().click();
}

for (const scheme of ['apiKey', 'bearerKey'] as const) {
  t.test(`Swagger UI: authorize with ${scheme}, Try it out on both lists, the tax summary and an audit`, async (t) => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 2000 } });
    t.teardown(() => context.close());
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    await page.goto(`${service.base}/docs`, { waitUntil: 'networkidle' });
    await page.waitForSelector('.opblock-tag-section', { timeout: 30_000 });
    await authorize(page, scheme, DEMO_TENANTS[0]!.apiKey);
    for (const [tag, operationId, dataOf] of OPERATIONS) {
      // Open the operation's tag section when Swagger UI shows it collapsed.
      if ((await page.locator(`#operations-${tag}-${operationId}`).count()) === 0) await page.click(`#operations-tag-${tag}`);
      await tryOut(t, page, scheme, tag, operationId, dataOf);
    }
    await page.screenshot({ path: path.join(artifacts, `swagger-ui-${scheme}.png`), fullPage: false });
    t.same(consoleErrors, [], 'no console errors');
  });
}
