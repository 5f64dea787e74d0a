/**
 * importDeliveriesCsv (POST /api/deliveries/csv): the reception tickets as the CSV template,
 * recorded exactly as importDeliveries records its rows (its own operation so that each request
 * body has one media type).
 */
import type { ServiceContext } from '../context.ts';
import { importDeliveries, type DeliveriesReport } from './import-deliveries.ts';

export function importDeliveriesCsv(ctx: ServiceContext, tenant: string, csv: Buffer, signal?: AbortSignal): Promise<DeliveriesReport> {
  return importDeliveries(ctx, tenant, { csv }, signal);
}
