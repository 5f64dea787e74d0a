/**
 * Guessed keys and keyless floods (issue 24 §1), through HTTP, with the default budgets:
 * requests without a valid API key (none, unknown, revoked) count per client address
 * (RATE_LIMIT_IP_MAX, 120 per minute by default) before authentication answers, so the
 * (RATE_LIMIT_IP_MAX + 1)th is a 429 with `retry-after`; once an address has spent its budget a
 * key it presents is not even looked up; the same unknown key sent again is not looked up
 * either (negative cache). A valid key this instance already knows keeps its own budget.
 */
import type { Test } from 'tap';
import type { CommandStartedEvent } from 'mongodb';
import { startHarness, KEY_A, TENANT_A } from '../helpers/harness.ts';
import { connectMongo } from '../../lib/db/client.ts';
import { buildApp } from '../../handlers/app.ts';
import { loadConfig } from '../../lib/config.ts';
import { storeApiKey } from '../../lib/auth/api-keys.ts';
import { errorProblem } from '../helpers/error-reason.ts';

export default async function authBudgetTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  // The app under test has its own connection, with command monitoring: every key lookup is seen.
  const { client, db } = await connectMongo(h.engine.uri, h.db.databaseName, { serverSelectionTimeoutMS: 2000, driver: { monitorCommands: true } });
  t.teardown(() => client.close(true));
  const lookups: string[] = [];
  client.on('commandStarted', (e: CommandStartedEvent) => {
    if (e.commandName === 'find' && e.command.find === 'apiKeys') lookups.push(JSON.stringify(e.command.filter));
  });
  // Documented defaults (docs/configuration.md): only what the test needs besides them.
  const config = loadConfig({ LOG_LEVEL: 'silent', WEBHOOK_ENCRYPTION_KEY: '00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff' });
  const IP_BUDGET = config.rateLimit.ipMax;
  const app = await buildApp({ config, db, logger: false });
  t.teardown(() => app.close());

  const ROUTE = '/api/financial-docs?limit=1';
  const get = (remoteAddress: string, key?: string) => app.inject({ method: 'GET', url: ROUTE, remoteAddress, headers: key ? { 'x-api-key': key } : {} });
  const bogus = (i: number) => `fbo_guessed_key_${String(i).padStart(6, '0')}_xxxxxxxx`;

  t.test('the documented default budget', async (t) => {
    t.equal(IP_BUDGET, 120, 'RATE_LIMIT_IP_MAX defaults to 120 per window');
    t.equal(config.rateLimit.windowMs, 60_000, 'RATE_LIMIT_WINDOW_MS defaults to a minute');
  });

  t.test('distinct guessed keys: 429 once the address has spent its budget, then no more lookups', async (t) => {
    const address = '203.0.113.7';
    t.equal((await get(address, KEY_A)).statusCode, 200, 'a valid key, verified before the flood');
    lookups.length = 0;
    const statuses: number[] = [];
    for (let i = 0; i < IP_BUDGET; i++) statuses.push((await get(address, bogus(i))).statusCode);
    t.same([...new Set(statuses)], [401], `the first ${IP_BUDGET} guesses are 401`);
    t.equal(lookups.length, IP_BUDGET, 'each distinct guess was looked up once');

    const limited = await get(address, bogus(IP_BUDGET));
    t.equal(limited.statusCode, 429, `guess ${IP_BUDGET + 1} is 429`);
    t.ok(Number(limited.headers['retry-after']) > 0, 'with retry-after');
    t.equal(limited.headers['x-ratelimit-limit'], String(IP_BUDGET), 'the address budget in x-ratelimit-limit');
    t.equal(errorProblem(429, limited.json()), null, 'in the error shape');
    t.equal(limited.json().error.reason, 'rate_limited');
    t.match(
      limited.json().error.details[0],
      /rate limit of 120 requests per minute without a valid API key \(per client address\) exceeded; retry in \d+ seconds/,
      'the message states the window and the time left',
    );

    lookups.length = 0;
    const more: number[] = [];
    for (let i = 0; i < 300; i++) more.push((await get(address, bogus(1000 + i))).statusCode);
    t.same([...new Set(more)], [429], '300 more distinct guesses: all 429');
    t.same(lookups, [], 'and none of them was looked up in the database');
    t.equal((await get(address)).statusCode, 429, 'a keyless request from the address: 429 as well');

    t.equal((await get(address, KEY_A)).statusCode, 200, 'the valid key this instance already knows keeps its own budget');
    t.equal((await get('198.51.100.9', bogus(5000))).statusCode, 401, 'another address is not affected');
  });

  t.test('keyless requests: 429 within the budget', async (t) => {
    const address = '203.0.113.8';
    const statuses: number[] = [];
    for (let i = 0; i < 605; i++) statuses.push((await get(address)).statusCode);
    t.same(statuses.slice(0, IP_BUDGET), Array(IP_BUDGET).fill(401), `the first ${IP_BUDGET} are 401`);
    t.same([...new Set(statuses.slice(IP_BUDGET))], [429], 'every later one is 429 (the probe of the issue: 605 requests, all 401)');
    t.equal((await app.inject({ method: 'GET', url: '/ready', remoteAddress: address })).statusCode, 429, 'the budget covers the public routes too');
    t.equal((await app.inject({ method: 'GET', url: '/health', remoteAddress: address })).statusCode, 200, 'except liveness, never limited');
  });

  t.test('a path the router cannot match (over-long segment, bad percent-encoding) meets the budget and authentication first', async (t) => {
    const address = '203.0.113.50';
    const long = `/api/financial-docs/${'A'.repeat(101)}`;
    const paths = [long, '/api/financial-docs/%E0%A4%A', '/api/alerts/jobs/%ZZ'];
    for (const url of paths) {
      const keyless = await app.inject({ method: 'GET', url, remoteAddress: address });
      t.equal(keyless.statusCode, 401, `${url.slice(0, 40)}: no key, 401 before any validation`);
      t.ok(keyless.headers['x-ratelimit-limit'] !== undefined && keyless.headers['x-ratelimit-remaining'] !== undefined, 'with the rate-limit headers');
      const keyed = await app.inject({ method: 'DELETE', url, remoteAddress: address, headers: { 'x-api-key': KEY_A } });
      t.equal(keyed.statusCode, 400, `${url.slice(0, 40)}: with a key, the 400`);
      t.match(keyed.json(), { error: { code: 400, message: 'Invalid path parameter', reason: 'invalid_request' } });
      t.ok(keyed.headers['x-ratelimit-remaining'] !== undefined, 'counted on the key');
    }
    const outside = await app.inject({ method: 'GET', url: `/docs/${'A'.repeat(101)}`, remoteAddress: address });
    t.equal(outside.statusCode, 400, 'outside /api/ no key is asked: the 400');
    const statuses: number[] = [];
    for (let i = 0; i < IP_BUDGET; i++) statuses.push((await app.inject({ method: 'GET', url: long, remoteAddress: address })).statusCode);
    t.equal(statuses.at(-1), 429, `keyless, the address's budget of ${IP_BUDGET} is spent: 429`);
  });

  t.test("a shared link's path the router cannot match is a 400 without a key, and a key presented is not looked up", async (t) => {
    // The operations under these paths need no key (security: []), so neither does their 400.
    const paths = [
      `/api/shared-originals/${'A'.repeat(57)}.${'B'.repeat(43)}`,
      `/api/shared-exports/${'C'.repeat(101)}`,
      '/api/shared-originals/%E0%A4%A',
      '/api/shared-originals/%E0%A4%A/pdf',
    ];
    for (const url of paths) {
      const keyless = await app.inject({ method: 'GET', url, remoteAddress: '203.0.113.51' });
      t.equal(keyless.statusCode, 400, `${url.slice(0, 40)}: no key, the 400`);
      t.match(keyless.json(), { error: { code: 400, message: 'Invalid path parameter', reason: 'invalid_request' } });
      lookups.length = 0;
      const keyed = await app.inject({ method: 'GET', url, remoteAddress: '203.0.113.51', headers: { 'x-api-key': 'fbo_a_key_this_instance_never_saw_0001' } });
      t.equal(keyed.statusCode, 400, `${url.slice(0, 40)}: with a key, the same 400`);
      t.equal(lookups.length, 0, 'the key is not looked up');
    }
  });

  t.test('the same unknown key again: one lookup per API_KEY_NEGATIVE_CACHE_TTL_MS', async (t) => {
    const address = '203.0.113.9';
    const key = 'fbo_the_same_wrong_key_every_time_000';
    lookups.length = 0;
    for (let i = 0; i < 20; i++) t.equal((await get(address, key)).statusCode, 401);
    t.equal(lookups.length, 1, '20 requests, 1 database read');
    await storeApiKey(db, { key, tenant: TENANT_A, label: 'created after being tried' });
    t.equal((await get(address, key)).statusCode, 200, 'a key stored through this process works at once, though it was cached as unknown');
  });

  t.test('the first request of a valid key is not counted on its address', async (t) => {
    const address = '203.0.113.10';
    for (let i = 0; i < IP_BUDGET - 1; i++) await get(address);
    const { key } = { key: 'fbo_fresh_valid_key_for_budget_test_0001' };
    await storeApiKey(h.db, { key, tenant: TENANT_A, label: 'fresh' });
    t.equal((await get(address, key)).statusCode, 200, 'looked up and counted on the key');
    t.equal((await get(address)).statusCode, 401, `the address still had its ${IP_BUDGET}th request`);
    t.equal((await get(address)).statusCode, 429, 'then 429');
  });

  t.test('a route that needs no key does not look one up: /ready never waits on the database for it', async (t) => {
    const address = '203.0.113.11';
    const key = 'fbo_valid_key_first_shown_to_ready_0001';
    await storeApiKey(h.db, { key, tenant: TENANT_A, label: 'shown to /ready first' });
    lookups.length = 0;
    const ready = () => app.inject({ method: 'GET', url: '/ready', remoteAddress: address, headers: { 'x-api-key': key } });
    const first = await ready();
    t.equal(first.statusCode, 200, '/ready with a key this instance has not seen');
    // A lookup waits on the database: while it was down, it held /ready for the driver's server selection (5 s), past its 1 s budget.
    t.same(lookups, [], 'answered without looking the key up');
    t.equal(first.headers['x-ratelimit-limit'], String(IP_BUDGET), 'counted on the address');
    t.equal((await get(address, key)).statusCode, 200, 'a data operation looks it up');
    t.equal(lookups.length, 1, 'once');
    t.equal((await ready()).headers['x-ratelimit-limit'], String(config.rateLimit.max), 'a key this instance knows keeps its own budget on /ready');
  });
}
