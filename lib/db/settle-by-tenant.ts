/**
 * A drain settles the marks it took tenant by tenant. One tenant's recompute failing (a document
 * it cannot read) must not stop the others': their marks are settled, its own stay for a retry,
 * and the failure is raised once the others are done. The marks are taken in tenant order, so
 * before this a failing tenant left every tenant after it undrained, pass after pass.
 */
import { marksByTenant, type RollupMark } from './rollup-marks.ts';

export class TenantsFailedError extends Error {
  constructor(readonly failures: ReadonlyMap<string, unknown>) {
    const [tenant, err] = [...failures][0] ?? ['', null];
    super(`recompute failed for ${failures.size} tenant(s), ${tenant} first: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    this.name = 'TenantsFailedError';
  }
}

/** Settles each tenant's marks with `settle`; answers the tenants that failed (their errors), the others settled. */
export async function settleByTenant(
  marks: readonly RollupMark[],
  settle: (tenant: string, list: RollupMark[]) => Promise<unknown>,
  failures: Map<string, unknown> = new Map(),
): Promise<Map<string, unknown>> {
  for (const [tenant, list] of marksByTenant(marks)) {
    if (failures.has(tenant)) continue;
    try {
      await settle(tenant, list);
    } catch (err) {
      failures.set(tenant, err);
    }
  }
  return failures;
}

/** Raises the failures a drain collected, after it settled everything else. */
export function throwIfTenantsFailed(failures: ReadonlyMap<string, unknown>): void {
  if (failures.size) throw new TenantsFailedError(failures);
}
