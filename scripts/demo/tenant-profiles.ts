/**
 * Per-tenant profiles: how each demo carrier bills (serie, folios, freight SAT
 * key, partial-payment status), how concentrated its clients are, and the
 * settings its back office uses. Unknown tenants (tests, benchmarks) get a
 * generic profile derived from their RFC.
 */
import type { TenantSettings } from '../../lib/model/tenant-settings.ts';
import { CONCEPT_CODES, PRODUCTS, type ServiceArea } from './catalog.ts';
import type { ClientProfile } from './clients.ts';
import { hashString } from './random.ts';
import { DOC_STATUS } from './status-codes.ts';

export interface TenantProfile {
  area: ServiceArea;
  serie: string;
  folioStart: number;
  /** Freight SAT key most clients are billed with. */
  freightCode: string;
  /** Status code of a partly paid invoice (4 = stays Facturado). */
  partialStatus: number;
  /** Zipf exponent of client revenue weights (higher = more concentrated). */
  concentration: number;
  users: readonly string[];
  settings(clientsByWeight: readonly ClientProfile[]): Partial<TenantSettings>;
}

const DEMO_PROFILES: Readonly<Record<string, TenantProfile>> = {
  TGO850101AB1: {
    area: 'golfo',
    serie: 'A',
    folioStart: 18_001,
    freightCode: CONCEPT_CODES.fuelFreight,
    partialStatus: DOC_STATUS.invoiced,
    concentration: 0.8,
    users: ['facturacion.ana', 'facturacion.luis', 'tms.integracion'],
    settings: (clients) => {
      const companies = clients.filter((c) => c.isCompany);
      const top = companies[0]?.def.rfc;
      const credit: Record<string, number> = {};
      if (companies[1]) credit[companies[1].def.rfc] = 60;
      if (companies[3]) credit[companies[3].def.rfc] = 15;
      if (companies[5]) credit[companies[5].def.rfc] = 45;
      return {
        statusLabels: { '4': 'Facturado', '6': 'Pagado', '9': 'Cancelado' },
        shrinkageTolerancePct: 0,
        toleranceRules: [
          ...(top
            ? [
                { client: top, productCode: PRODUCTS.diesel.code, pct: 0.3 },
                { client: top, pct: 0.2 },
              ]
            : []),
          { productCode: PRODUCTS.premium.code, pct: 0.25 },
        ],
        shrinkageRecoveryMode: 'excess',
        creditDaysByClient: credit,
      };
    },
  },
  FNO900202CD2: {
    area: 'norte',
    serie: 'FN',
    folioStart: 5_001,
    freightCode: CONCEPT_CODES.roadFreight,
    partialStatus: DOC_STATUS.partial,
    concentration: 0.95,
    users: ['cxc.mariana', 'facturacion.jorge', 'tms.integracion'],
    settings: (clients) => {
      const companies = clients.filter((c) => c.isCompany);
      const credit: Record<string, number> = {};
      for (const i of [0, 2, 4, 7]) if (companies[i]) credit[companies[i].def.rfc] = 45;
      if (companies[9]) credit[companies[9].def.rfc] = 60;
      const lenient = companies[1]?.def.rfc;
      return {
        statusLabels: { '4': 'Facturado', '5': 'Parcial', '6': 'Pagado', '9': 'Cancelado' },
        shrinkageTolerancePct: 0.3,
        toleranceRules: [{ productCode: PRODUCTS.regular.code, pct: 0.25 }, ...(lenient ? [{ client: lenient, pct: 0.5 }] : [])],
        shrinkageRecoveryMode: 'all',
        defaultCreditDays: 30,
        creditDaysByClient: credit,
        idleVehicleDays: 21,
      };
    },
  },
};

function genericProfile(tenant: string, area: ServiceArea): TenantProfile {
  const h = hashString(tenant);
  return {
    area,
    serie: 'F',
    folioStart: 1_001 + (h % 9_000),
    freightCode: area === 'golfo' ? CONCEPT_CODES.fuelFreight : CONCEPT_CODES.roadFreight,
    partialStatus: DOC_STATUS.invoiced,
    concentration: 0.9,
    users: ['facturacion', 'tms.integracion'],
    settings: () => ({ statusLabels: { '4': 'Facturado', '6': 'Pagado', '9': 'Cancelado' } }),
  };
}

/** The tenant's profile, in the service area asked for (default: the demo tenant's, else one derived from the RFC). */
export function profileFor(tenant: string, area?: ServiceArea): TenantProfile {
  const demo = DEMO_PROFILES[tenant];
  const chosen: ServiceArea = area ?? demo?.area ?? (hashString(tenant) % 2 === 0 ? 'golfo' : 'norte');
  return { ...(demo ?? genericProfile(tenant, chosen)), area: chosen };
}
