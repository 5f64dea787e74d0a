/**
 * Gives the tenant's stored received documents the category the current rules give their largest
 * concept's code (one update per category, over the codes the tenant's documents follow), so the
 * `category` filter, the tax position and the unit costs agree with the rules. The rules are read
 * again after each pass: a change saved meanwhile (another request, another instance) is applied
 * too, and the pending mark its change set is cleared only once the documents follow the rules it
 * names. A pass cut by a failure leaves the mark, and the next start finishes it
 * (`finishPendingCategoryRules`, lib/prepare-database.ts).
 */
import type { Db } from 'mongodb';
import { clearReceivedCategoryRulesPending, readReceivedCategoryRules, tenantsWithPendingCategoryRules } from '../settings/settings-repo.ts';
import type { ReceivedCategory } from '../model/tenant-settings.ts';
import { categoryOf, type ReceivedCategoryRule } from './received-category.ts';
import { receivedMainCodes, setCategoryOfCodes } from './received-repo.ts';

/** Passes before giving up on rules that keep changing while they are applied (each pass costs little when little changed). */
const MAX_PASSES = 5;

export async function applyCategoryRules(db: Db, tenant: string, maxTimeMS: number, now: () => Date = () => new Date()): Promise<void> {
  let { rules } = await readReceivedCategoryRules(db, tenant);
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    await categorize(db, tenant, rules, now, maxTimeMS);
    const current = await readReceivedCategoryRules(db, tenant);
    if (sameRules(current.rules, rules)) {
      if (current.pending !== null) await clearReceivedCategoryRulesPending(db, tenant, current.pending);
      return;
    }
    rules = current.rules;
  }
  // Still pending: the change saved last applies its own rules, or the next start does.
}

/** At start: finishes the rules changes a failure or a crash cut short. Answers the tenants finished. */
export async function finishPendingCategoryRules(db: Db, maxTimeMS: number): Promise<string[]> {
  const tenants = await tenantsWithPendingCategoryRules(db);
  for (const tenant of tenants) await applyCategoryRules(db, tenant, maxTimeMS);
  return tenants;
}

async function categorize(db: Db, tenant: string, rules: readonly ReceivedCategoryRule[], now: () => Date, maxTimeMS: number): Promise<void> {
  const byCategory = new Map<ReceivedCategory, string[]>();
  for (const code of await receivedMainCodes(db, tenant, maxTimeMS)) {
    const category = categoryOf(code, rules);
    byCategory.set(category, [...(byCategory.get(category) ?? []), code]);
  }
  for (const [category, codes] of byCategory) await setCategoryOfCodes(db, tenant, codes, category, now, maxTimeMS);
}

export const sameRules = (a: readonly ReceivedCategoryRule[], b: readonly ReceivedCategoryRule[]): boolean =>
  a.length === b.length && a.every((r, i) => r.code === b[i]!.code && r.category === b[i]!.category);
