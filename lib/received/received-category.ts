/**
 * The category of a received CFDI, from the SAT product code (c_ClaveProdServ) of its concepts:
 * the default rules below (sources in docs/domain.md, "Received CFDIs"), overridden by the
 * tenant's own (setting `receivedCategoryRules`). A rule names a whole code (8 digits) or a
 * prefix of one (a family or class of the catalogue); the longest rule that a code starts with
 * wins, the tenant's over the default at the same length. Pure.
 */
import { RECEIVED_CATEGORIES, type ReceivedCategory, type ReceivedCategoryRule } from '../model/tenant-settings.ts';

export { RECEIVED_CATEGORIES, type ReceivedCategory, type ReceivedCategoryRule };

/** The default rules (docs/domain.md, "Received CFDIs": which catalogue entries and where they come from). */
export const DEFAULT_CATEGORY_RULES: readonly ReceivedCategoryRule[] = [
  // Petroleum and distillates: 15101505 diesel, 15101514 and 15101515 gasoline (< 91 and ≥ 91 octane).
  { code: '151015', category: 'fuel' },
  // Toll roads (casetas): intrastate and interstate highways, the codes toll operators bill under; not the
  // rest of class 951116 (railway, subway and tram lines, bike paths…).
  { code: '95111602', category: 'tolls' },
  { code: '95111603', category: 'tolls' },
  // Vehicle maintenance and repair (781815, e.g. 78181508 heavy truck maintenance and repair) and panel
  // and paint (781816); not the rest of family 7818 (781817 fueling, storage and parking; aircraft).
  { code: '781815', category: 'maintenance' },
  { code: '781816', category: 'maintenance' },
  // Tyres and tyre tubes (e.g. 25172504).
  { code: '251725', category: 'tyres' },
  // Insurance of property (841315: 84131503 car or truck, 84131504 cargo) and of people and liability
  // (841316: 84131607 liability); not pension and retirement funds (841317, 841318).
  { code: '841315', category: 'insurance' },
  { code: '841316', category: 'insurance' },
  // Road cargo transport (class 781018, e.g. 78101802): the carrier as receiver subcontracts it…
  { code: '781018', category: 'subcontractedFreight' },
  // …except 78101805, tanker truck and trailer rental: equipment hired, not freight hauled.
  { code: '78101805', category: 'other' },
];

/** Whether a rule's code is well formed: 2 to 8 digits. */
export const isRuleCode = (code: string): boolean => /^[0-9]{2,8}$/.test(code);

/** The category of one product code under the tenant's rules and the defaults. */
export function categoryOf(code: string, tenantRules: readonly ReceivedCategoryRule[]): ReceivedCategory {
  let best: { length: number; tenant: boolean; category: ReceivedCategory } | null = null;
  const consider = (rules: readonly ReceivedCategoryRule[], tenant: boolean) => {
    for (const r of rules) {
      if (!code.startsWith(r.code)) continue;
      if (!best || r.code.length > best.length || (r.code.length === best.length && tenant && !best.tenant)) {
        best = { length: r.code.length, tenant, category: r.category };
      }
    }
  };
  consider(DEFAULT_CATEGORY_RULES, false);
  consider(tenantRules, true);
  return (best as { category: ReceivedCategory } | null)?.category ?? 'other';
}

/**
 * The document's category: that of its largest concept (amount − discount), the first one on a
 * tie, so an invoice for diesel with a small service line is fuel.
 */
export function mainConceptIndex(concepts: readonly { amount: number; discount: number }[]): number {
  let best = 0;
  for (let i = 1; i < concepts.length; i++) {
    if (concepts[i]!.amount - concepts[i]!.discount > concepts[best]!.amount - concepts[best]!.discount) best = i;
  }
  return best;
}
