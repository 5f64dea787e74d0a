import { randomUUID } from 'node:crypto';
import type { ServiceContext } from '../context.ts';
import { invalidBody } from '../http/api-error.ts';
import { saveReceivedCategoryRules } from '../settings/settings-repo.ts';
import { isRuleCode, type ReceivedCategoryRule } from './received-category.ts';
import { applyCategoryRules } from './apply-category-rules.ts';
import { categoryRulesView, type ReceivedCategoryRulesView } from './received-category-rules.ts';
import type { ReceivedCategory } from '../model/tenant-settings.ts';

/**
 * Replaces the tenant's category rules (a code given twice keeps its last rule: the list reads as
 * assignments in order, and the answer shows the rules kept), then gives the tenant's stored received documents the
 * category the new rules give (apply-category-rules.ts), so the `category` filter agrees with the rules at once.
 */
export async function setReceivedCategoryRules(
  ctx: ServiceContext,
  tenant: string,
  input: { rules: ReceivedCategoryRule[] },
): Promise<ReceivedCategoryRulesView> {
  const problems: string[] = [];
  const byCode = new Map<string, ReceivedCategory>();
  for (const [i, r] of input.rules.entries()) {
    if (!isRuleCode(r.code)) problems.push(`rules[${i}].code "${r.code.slice(0, 20)}" is not 2 to 8 digits of a c_ClaveProdServ code`);
    byCode.delete(r.code); // the last rule of a code, in the position it was last given
    byCode.set(r.code, r.category);
  }
  if (problems.length) throw invalidBody(problems);
  const rules = [...byCode].map(([code, category]) => ({ code, category }));
  await saveReceivedCategoryRules(ctx.db, tenant, rules, randomUUID());
  await applyCategoryRules(ctx.db, tenant, ctx.config.queryTimeoutMs, ctx.now);
  return categoryRulesView(tenant, rules);
}
