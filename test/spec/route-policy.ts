/**
 * Per-operation route policy lives in the spec (x-request-deadline, x-body-limit, x-rate-limit,
 * x-compress, x-tenant-data), read by handlers/route-policy.ts for the composition root. The routes' behaviour
 * is tested through HTTP elsewhere (limits, health, imports); this pins which operations carry
 * a policy and that a misspelt value stops the start-up instead of dropping the policy.
 */
import type { Test } from 'tap';
import { loadSpec } from '../../handlers/app.ts';
import { routePolicy } from '../../handlers/route-policy.ts';
import { listOperations } from '../../lib/spec/operations.ts';

export default async function routePolicyTests(t: Test): Promise<void> {
const operations = listOperations(loadSpec());
const DEFAULT = { deadline: 'default', bodyLimit: 'default', rateLimited: true, compressed: true, tenantData: false };

t.test('the spec states the exceptions, every other operation has the defaults', async (t) => {
  const exceptions = Object.fromEntries(
    operations
      .map((op) => [op.operationId, routePolicy(op.operationId, op.extensions)] as const)
      .filter(([, p]) => JSON.stringify(p) !== JSON.stringify(DEFAULT)),
  );
  t.same(exceptions, {
    importDocuments: { ...DEFAULT, deadline: 'imports', bodyLimit: 'imports' },
    importDocumentsXml: { ...DEFAULT, deadline: 'imports', bodyLimit: 'imports' },
    importDocumentsZip: { ...DEFAULT, deadline: 'imports', bodyLimit: 'imports' },
    importDeliveries: { ...DEFAULT, deadline: 'imports', bodyLimit: 'deliveries' },
    importDeliveriesCsv: { ...DEFAULT, deadline: 'imports', bodyLimit: 'deliveries' },
    assignReceivedDocs: { ...DEFAULT, bodyLimit: 'deliveries' },
    assignReceivedDocsCsv: { ...DEFAULT, bodyLimit: 'deliveries' },
    getHealth: { ...DEFAULT, deadline: 'none', rateLimited: false, compressed: false },
    getSharedCfdiOriginal: { ...DEFAULT, tenantData: true },
    getSharedCfdiPrintedForm: { ...DEFAULT, tenantData: true },
    getSharedExport: { ...DEFAULT, tenantData: true },
  });
});

t.test('a value the policy does not know stops the start-up', async (t) => {
  t.throws(() => routePolicy('op', { 'x-request-deadline': 'import' }), /op: x-request-deadline must be one of imports, none/);
  t.throws(() => routePolicy('op', { 'x-body-limit': 'huge' }), /x-body-limit must be one of imports, deliveries/);
  t.throws(() => routePolicy('op', { 'x-rate-limit': 'no' }), /x-rate-limit must be true or false/);
  t.throws(() => routePolicy('op', { 'x-tenant-data': 'yes' }), /x-tenant-data must be true or false/);
});
}
