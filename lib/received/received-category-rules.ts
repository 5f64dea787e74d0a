/**
 * The category rules of a tenant as the API shows them: the defaults with their source, the
 * tenant's own, and the categories. Shared by the read and the write operations.
 */
import { DEFAULT_CATEGORY_RULES, RECEIVED_CATEGORIES, type ReceivedCategory, type ReceivedCategoryRule } from './received-category.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

export interface ReceivedCategoryRulesView {
  tenant: string;
  categories: ReceivedCategory[];
  defaults: ReceivedCategoryRule[];
  rules: ReceivedCategoryRule[];
}

export const categoryRulesView = (tenant: string, rules: readonly ReceivedCategoryRule[]): ReceivedCategoryRulesView => ({
  tenant,
  categories: [...RECEIVED_CATEGORIES],
  defaults: DEFAULT_CATEGORY_RULES.map((r) => ({ ...r })),
  rules: rules.map((r) => ({ code: r.code, category: r.category })),
});

export type ReceivedCategoryRulesCheck = Conforms<ReceivedCategoryRulesView, components['schemas']['ReceivedCategoryRules']>;
