import type { ServiceContext } from '../context.ts';
import { getTenantSettings } from '../settings/settings-repo.ts';
import { categoryRulesView, type ReceivedCategoryRulesView } from './received-category-rules.ts';

/** The rules that give received CFDIs their category: the defaults and the tenant's own. */
export async function getReceivedCategoryRules(ctx: ServiceContext, tenant: string): Promise<ReceivedCategoryRulesView> {
  const { receivedCategoryRules } = await getTenantSettings(ctx.db, tenant);
  return categoryRulesView(tenant, receivedCategoryRules);
}
