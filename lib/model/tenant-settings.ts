/**
 * Per-tenant settings (collection `tenantSettings`, _id = tenant RFC). Every
 * contractual or uncertain rule of docs/domain.md lives here with its default.
 */
export interface HhiBands {
  /** HHI below this is unconcentrated (2010 US Horizontal Merger Guidelines: 1500). */
  unconcentratedBelow: number;
  /** HHI above this is highly concentrated (2010 guidelines: 2500). */
  highlyConcentratedAbove: number;
  /** Flag any client whose revenue share (percent) reaches this. */
  singleClientFlagPct: number;
}

export interface ToleranceRule {
  client?: string;
  productCode?: string;
  /** Shrinkage tolerance, percent of loaded volume. */
  pct: number;
}

/** What a received CFDI is spent on (docs/domain.md, "Received CFDIs"). */
export const RECEIVED_CATEGORIES = ['fuel', 'tolls', 'maintenance', 'tyres', 'insurance', 'subcontractedFreight', 'other'] as const;
export type ReceivedCategory = (typeof RECEIVED_CATEGORIES)[number];

/** One entry of a tenant's category mapping: a c_ClaveProdServ code (8 digits) or a prefix of one (its family, 2 to 7 digits). */
export interface ReceivedCategoryRule {
  code: string;
  category: ReceivedCategory;
}

export interface TenantSettings {
  _id: string;
  name: string;
  statusLabels: Record<string, string>;
  /** Default shrinkage tolerance in percent; "anything above 0.00%" by default. */
  shrinkageTolerancePct: number;
  /** More specific tolerances; the most specific match wins (client+product, client, product). */
  toleranceRules: ToleranceRule[];
  /** `excess`: charge only litres beyond tolerance; `all`: charge all shrinkage once tolerance is exceeded. */
  shrinkageRecoveryMode: 'excess' | 'all';
  /** MXN per litre per SAT product code, to value shrinkage. */
  pricePerLitre: Record<string, number>;
  defaultCreditDays: number;
  creditDaysByClient: Record<string, number>;
  vatRate: number;
  retentionRate: number;
  /** Per-concept tolerance before a declared/expected difference is a discrepancy. */
  discrepancyTolerance: number;
  hhiBands: HhiBands;
  idleVehicleDays: number;
  /** ISO 4217 currency of the tenant's amounts when a document does not state its own (CFDI Moneda). */
  currency: string;
  /** The tenant's own category rules for received CFDIs, over the defaults of lib/received/received-category.ts (longest code wins). */
  receivedCategoryRules: ReceivedCategoryRule[];
  /** Set with a rules change until the stored received documents follow it (lib/received/apply-category-rules.ts). */
  receivedCategoryRulesPending?: string;
}

export const DEFAULT_SETTINGS: Omit<TenantSettings, '_id' | 'name'> = {
  statusLabels: { '4': 'Facturado', '6': 'Pagado' },
  shrinkageTolerancePct: 0,
  toleranceRules: [],
  shrinkageRecoveryMode: 'excess',
  pricePerLitre: { '15101505': 24.5, '15101514': 23.9, '15101515': 25.8 },
  defaultCreditDays: 30,
  creditDaysByClient: {},
  vatRate: 0.16,
  retentionRate: 0.04,
  discrepancyTolerance: 0.01,
  hhiBands: { unconcentratedBelow: 1500, highlyConcentratedAbove: 2500, singleClientFlagPct: 10 },
  idleVehicleDays: 14,
  currency: 'MXN',
  receivedCategoryRules: [],
};
