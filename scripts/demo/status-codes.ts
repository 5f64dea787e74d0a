/**
 * Workflow status codes the demo data uses: the labels a tenant's
 * settings.statusLabels gives them are per profile (scripts/demo/tenant-profiles.ts).
 */

/** Financial document status codes. */
export const DOC_STATUS = { invoiced: 4, partial: 5, paid: 6, cancelled: 9 } as const;
export const DOC_STATUS_LABELS: Readonly<Record<string, string>> = {
  '4': 'Facturado',
  '5': 'Parcial',
  '6': 'Pagado',
  '9': 'Cancelado',
};

/** Leg status codes (the service's own: lib/model/trip-document.ts). */
export { LEG_STATUS } from '../../lib/model/trip-document.ts';
export const LEG_STATUS_LABELS: Readonly<Record<string, string>> = { '2': 'En tránsito', '4': 'Entregado' };
