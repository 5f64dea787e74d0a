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

/** Runs one tenant's settle; its failure is recorded in `failures`, not thrown (a tenant already there is skipped). */
export async function settleTenant(tenant: string, settle: () => Promise<unknown>, failures: Map<string, unknown>): Promise<void> {
  if (failures.has(tenant)) return;
  try {
    await settle();
  } catch (err) {
    failures.set(tenant, err);
  }
}

/** Settles each tenant's marks with `settle`; answers the tenants that failed (their errors), the others settled. */
export async function settleByTenant(
  marks: readonly RollupMark[],
  settle: (tenant: string, list: RollupMark[]) => Promise<unknown>,
  failures: Map<string, unknown> = new Map(),
): Promise<Map<string, unknown>> {
  for (const [tenant, list] of marksByTenant(marks)) await settleTenant(tenant, () => settle(tenant, list), failures);
  return failures;
}

/** Raises the failures a drain collected, after it settled everything else. */
export function throwIfTenantsFailed(failures: ReadonlyMap<string, unknown>): void {
  if (failures.size) throw new TenantsFailedError(failures);
}
