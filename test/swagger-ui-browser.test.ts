/**
 * Swagger UI in a real browser, as a reader of the published docs uses it:
 * headless Chromium (Debian's `chromium`, installed by scripts/setup-chromium.mjs in `npm test`'s set-up;
 * the test fails with install instructions when it is not there) driven by
 * playwright-core opens /docs of the service started as `npm start` starts it,
 * on the demo dataset (400 invoices and 400 trips of the tenant it calls as: the pre-filled values are
 * the document's examples, which test/spec-examples-demo shows answer with data at that size; the
 * 3,000 an empty database gets prove nothing more here and were most of the file's time; the other
 * demo tenant, whose rollups were half of the load's CPU, nothing either),
 * authorizes with a demo key as `x-api-key` and runs "Try it out" → Execute with the pre-filled
 * values on both lists, the tax summary and one audit; then, in the same page as a reader would,
 * logs out in the Authorize dialog, authorizes with the same key as Bearer and executes the four
 * again. Each must show a 200 whose body has data, sent with that scheme only; no console errors.
 * Screenshots: .cache/artifacts/swagger-ui-*.png. One page load, not one per scheme: each has
 * Swagger UI read and render the 660 KB document, ~5 CPU-s of the renderer's (issue 39).
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
  const loaded = await loadDemoData(db, { invoices: 400, trips: 400, tenants: [DEMO_TENANTS[0]!.rfc] });
  // Thrown, not asserted: a top-level assertion here ended tap's root test (its teardowns stopped the engine) before the subtests ran.
  if (loaded.map((r) => r.tenant).join() !== DEMO_TENANTS[0]!.rfc) throw new Error(`loaded ${loaded.map((r) => r.tenant).join()}`);
  await client.close();
}
const service = await startService({
  mongodbUri: engine.uri,
  mongodbDb: 'swagger-ui',
  // API-only (ALERT_WORKER=false, the documented topology with `npm run worker` elsewhere): no check here waits
  // on a job, and the workers' polls cost the service and the engine ~2.3 CPU-s a minute (issue 39).
  env: { RATE_LIMIT_MAX: '100000', RATE_LIMIT_IP_MAX: '100000', REPORT_RATE_LIMIT_MAX: '100000', ALERT_WORKER: 'false' },
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

type Scheme = 'apiKey' | 'bearerKey';

/** The Authorize dialog's part for one scheme. */
const schemeContainer = (page: Page, scheme: Scheme) => page.locator('.modal-ux .auth-container').filter({ hasText: scheme }).first();

/** In the Authorize dialog: logs `previous` out (its Logout button), then authorizes `scheme` with the key. */
async function authorize(page: Page, scheme: Scheme, key: string, previous?: Scheme): Promise<void> {
  await page.click('.scheme-container button.authorize');
  if (previous) {
    const logout = schemeContainer(page, previous).getByRole('button', { name: 'Remove authorization' });
    await logout.click();
    await logout.waitFor({ state: 'detached' });
  }
  const container = schemeContainer(page, scheme);
  await container.locator('input').first().fill(key);
  await container.locator('button.authorize').click();
  await container.getByRole('button', { name: 'Remove authorization' }).waitFor();
  await page.click('.modal-ux button.btn-done');
}

/**
 * Opens the operation and executes it with its pre-filled values: the first time after "Try it out";
 * again (Swagger UI keeps it in that mode, with its last response), after Clear.
 */
async function tryOut(
  t: Test,
  page: Page,
  scheme: Scheme,
  tag: string,
  operationId: string,
  dataOf: (b: Record<string, unknown>) => number,
  again: boolean,
): Promise<void> {
  const block = page.locator(`#operations-${tag}-${operationId}`);
  const status = block.locator('.live-responses-table .response .response-col_status').first();
  await block.locator('.opblock-summary').first().click();
  if (again) {
    await block.locator('button.btn-clear').click();
    await status.waitFor({ state: 'detached' });
  } else {
    await block.locator('button.try-out__btn').click();
  }
  await block.locator('button.execute').click();
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
  // Collapse it again: the next operation's selectors stay unambiguous, and Swagger UI renders every open
  // operation again on each change of its state (the four left open across the switch: the renderer 48 CPU-s, not 33).
  await block.locator('.opblock-summary').first().click();
}

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

const SCHEMES: Scheme[] = ['apiKey', 'bearerKey'];
for (const [i, scheme] of SCHEMES.entries()) {
  const previous = SCHEMES[i - 1];
  t.test(`Swagger UI: ${previous ? `log out, ` : ''}authorize with ${scheme}, Try it out on both lists, the tax summary and an audit`, async (t) => {
    await authorize(page, scheme, DEMO_TENANTS[0]!.apiKey, previous);
    for (const [tag, operationId, dataOf] of OPERATIONS) {
      // Open the operation's tag section when Swagger UI shows it collapsed.
      if ((await page.locator(`#operations-${tag}-${operationId}`).count()) === 0) await page.click(`#operations-tag-${tag}`);
      await tryOut(t, page, scheme, tag, operationId, dataOf, previous !== undefined);
    }
    await page.screenshot({ path: path.join(artifacts, `swagger-ui-${scheme}.png`), fullPage: false });
    t.same(consoleErrors, [], 'no console errors');
  });
}
