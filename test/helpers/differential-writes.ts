/**
 * Writes the differential tests of the totals kept on write share (test/*-rollups-differential.test.ts,
 * docs/rollups.md): each through the public interface (or, for a write that fails halfway, through
 * the repository's marking wrapper), drawing from the test's seeded generator in a fixed order so a
 * seed replays the same writes.
 */
import type { Db } from 'mongodb';
import { KEY_A, TENANT_A, type Harness } from './harness.ts';
import { requestXml, satAcuseXml } from './cfdi-builder.ts';
import type { Seeded } from './differential.ts';
import type { ImportFile } from './differential-service.ts';
import { getTenantSettings, saveTenantSettings } from '../../lib/settings/settings-repo.ts';
import type { TenantSettings } from '../../lib/model/tenant-settings.ts';
import { settingsCache } from '../../lib/settings/settings-cache.ts';
import { trips } from '../../lib/db/collections.ts';
import { financialDocId } from '../../lib/finance/ledger/facts.ts';

/** 1, 2, 3…: the numbers a test's UUIDs and delivery tickets take, never twice. */
export function sequence(): () => number {
  let next = 1;
  return () => next++;
}

/** UUIDs of one test: its prefix (8 hex digits), then the number. */
export const uuids =
  (prefix: string) =>
  (n: number): string =>
    `${prefix}-${String(n).padStart(4, '0')}-4000-8000-${String(n).padStart(12, '0')}`;

/**
 * An invoice's XML turned into a credit note (type E) related to `invoiceUuid` (TipoRelacion 01):
 * the relation first in the Comprobante (`start`) or right before the Emisor (`emisor`).
 */
export function asCreditNote(xml: string, invoiceUuid: string, at: 'start' | 'emisor'): string {
  const related = `<cfdi:CfdiRelacionados TipoRelacion="01"><cfdi:CfdiRelacionado UUID="${invoiceUuid}"/></cfdi:CfdiRelacionados>`;
  const typed = xml.replace('TipoDeComprobante="I"', 'TipoDeComprobante="E"');
  return at === 'start' ? typed.replace(/(<cfdi:Comprobante[^>]*>)/, `$1${related}`) : typed.replace('<cfdi:Emisor', `${related}<cfdi:Emisor`);
}

/** A cancellation request (motive 02) of `uuid` by `issuer`, and the SAT's acknowledgement (201: cancelled) when `acknowledgedAt` is given. */
export function cancellationFiles(issuer: string, uuid: string, requestedAt: string, acknowledgedAt?: string): ImportFile[] {
  const files = [{ name: 'solicitud.xml', content: requestXml({ issuer, fecha: requestedAt, folios: [{ uuid, motive: '02' }] }) }];
  if (acknowledgedAt) files.push({ name: 'acuse.xml', content: satAcuseXml({ issuer, fecha: acknowledgedAt, folios: [{ uuid, code: '201' }] }) });
  return files;
}

export interface StatusAnswer {
  estado: string;
  estatusCancelacion: string;
}
/** The SAT's answers on a requested cancellation: rejected, accepted, still in process. */
export const STATUS_ANSWERS: readonly StatusAnswer[] = [
  { estado: 'Vigente', estatusCancelacion: 'Solicitud rechazada' },
  { estado: 'Cancelado', estatusCancelacion: 'Cancelado con aceptación' },
  { estado: 'Vigente', estatusCancelacion: 'En proceso' },
];

/**
 * The SAT's answer on one of the `requested` invoices (else `fallback`), through PUT
 * /api/financial-docs/{id}/cancellation; the id found by listing the UUID, or (`byId`) the one the
 * ledger gives it.
 */
export async function answerCancellation(
  h: Harness,
  s: Pick<Seeded, 'pick'>,
  requested: readonly { uuid: string }[],
  fallback: () => Promise<string>,
  o: { answers?: readonly StatusAnswer[]; byId?: boolean } = {},
): Promise<string> {
  if (!requested.length) return fallback();
  const inv = s.pick(requested);
  let id: string | undefined = financialDocId(TENANT_A, inv.uuid);
  if (!o.byId) {
    const list = await h.app.inject({ method: 'GET', url: `/api/financial-docs?uuid=${inv.uuid}`, headers: { 'x-api-key': KEY_A } });
    id = list.json<{ data: { id: string }[] }>().data[0]?.id;
  }
  if (!id) return 'no document';
  const answer = s.pick(o.answers ?? STATUS_ANSWERS);
  const res = await h.app.inject({
    method: 'PUT',
    url: `/api/financial-docs/${encodeURIComponent(id)}/cancellation`,
    headers: { 'x-api-key': KEY_A },
    payload: { ...answer, consultedAt: new Date().toISOString() },
  });
  return `status ${answer.estatusCancelacion} on ${inv.uuid}: ${res.statusCode}`;
}

export interface DeliveryOptions {
  /** The latest offload, in hours after the loading. */
  hours: number;
  /** A product's offloaded litres (default: up to 10 litres short). */
  offloaded?: (loaded: number) => number;
  /** The operation (default: either, drawn after the litres). */
  via?: 'put' | 'csv';
  /** Where the loading is unknown. */
  base: number;
  /** When no leg is in transit. */
  fallback: () => Promise<string>;
}

/** A delivery of a leg in transit recorded later, through PUT …/delivery or POST /api/deliveries/csv. */
export async function recordDelivery(h: Harness, s: Seeded, ticket: () => number, o: DeliveryOptions): Promise<string> {
  const stored = await trips(h.db).find({ company: TENANT_A, 'shipments.unloadDate': null }).toArray();
  if (!stored.length) return o.fallback();
  const trip = s.pick(stored);
  const leg = trip.shipments.find((l) => l.unloadDate === null)!;
  const offloadDate = new Date((leg.loadDate ?? o.base) + s.int(1, o.hours) * 3_600_000).toISOString();
  const offloaded = o.offloaded ?? ((loaded: number): number => Math.round((loaded - s.int(0, 40) / 4) * 1000) / 1000);
  const products = leg.products.map((x) => ({ code: x.code, offloaded: offloaded(x.loaded) }));
  const via = o.via ?? (s.rnd() < 0.5 ? 'put' : 'csv');
  if (via === 'put') {
    const res = await h.app.inject({
      method: 'PUT',
      url: `/api/shipments/${encodeURIComponent(trip._id)}/legs/${encodeURIComponent(leg.shipment)}/delivery`,
      headers: { 'x-api-key': KEY_A },
      payload: { offloadDate, ticket: `REC-${ticket()}`, products },
    });
    if (res.statusCode !== 200) throw new Error(`delivery ${res.statusCode}: ${res.body}`);
    return `delivery of ${leg.shipment}`;
  }
  const n = ticket();
  const csv = [
    'tripId,shipmentId,productCode,offloaded,offloadDate,ticket',
    ...products.map((x) => `${trip._id},${leg.shipment},${x.code},${x.offloaded},${offloadDate},REC-${n}`),
  ].join('\n');
  const res = await h.app.inject({ method: 'POST', url: '/api/deliveries/csv', headers: { 'x-api-key': KEY_A, 'content-type': 'text/csv' }, payload: csv });
  if (res.statusCode >= 300) throw new Error(`deliveries ${res.statusCode}: ${res.body}`);
  return `deliveries of ${leg.shipment}`;
}

/** A repository's marking wrapper: marks the documents' days before and after `write` (lib/*\/…-days.ts). */
export type MarkingWrite<D> = (db: Db, tenant: string, docs: Iterable<D>, write: () => Promise<void>) => Promise<void>;

/** A write through the marking wrapper that changes the store and then crashes before it is acknowledged. */
export async function crashAfterWrite<D>(db: Db, mark: MarkingWrite<D>, docs: readonly D[], write: () => Promise<unknown>): Promise<void> {
  await mark(db, TENANT_A, docs, async () => {
    await write();
    throw new Error('crashed after the write');
  }).catch(() => undefined);
}

/** Tenant A's settings changed (and the cached copy forgotten, as the settings operation does). */
export async function changeSettings(db: Db, change: (s: TenantSettings) => TenantSettings): Promise<void> {
  const s = await getTenantSettings(db, TENANT_A);
  await saveTenantSettings(db, change(s));
  settingsCache(db).forget(TENANT_A);
}

/** Tenant A's category rules of received CFDIs replaced through PUT /api/received-category-rules. */
export async function putCategoryRules(h: Harness, rules: readonly { code: string; category: string }[]): Promise<void> {
  const res = await h.app.inject({
    method: 'PUT',
    url: '/api/received-category-rules',
    headers: { 'x-api-key': KEY_A, 'content-type': 'application/json' },
    payload: JSON.stringify({ rules }),
  });
  if (res.statusCode !== 200) throw new Error(`rules ${res.statusCode}: ${res.body}`);
}
