/**
 * Which invoice lines are freight: the tax reconciliation (lib/tax) and the billing
 * audits' pipelines (lib/analytics/billing-concepts-repo.ts) apply the same rule.
 */
import type { InvoiceConcept } from './financial-document.ts';

/** SAT product keys 78101800–78101899: road freight and its variants. */
export const FREIGHT_CODE_PREFIX = '781018';

/**
 * Freight = kind 'freight', or kind 'other' under a 78101800-family key. An
 * explicit non-freight kind (shortage, demurrage, toll…) wins over the SAT key
 * because carriers commonly bill every line under 78101802; the key is the
 * fallback for lines the back office did not classify.
 */
export function isFreightConcept(c: Pick<InvoiceConcept, 'code' | 'kind'>): boolean {
  if (c.kind === 'freight') return true;
  return c.kind === 'other' && c.code.trim().startsWith(FREIGHT_CODE_PREFIX);
}
