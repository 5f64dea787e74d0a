/**
 * POST /api/deliveries: many legs' reception tickets at once, as a CSV
 * (lib/trips/deliveries-csv.ts) or the same rows as JSON. The rows of one leg
 * together are its delivery, recorded as PUT …/delivery records one
 * (lib/trips/leg-delivery.ts, written by record-deliveries.ts). Legs are
 * independent: a rejected row leaves its own leg unrecorded and nothing else.
 * The report says, per row, applied / unchanged / rejected with the reason.
 */
import type { ServiceContext } from '../context.ts';
import { badRequest } from '../http/api-error.ts';
import { addTo } from '../shared/add-to.ts';
import { someOf } from '../shared/some-of.ts';
import { CsvError, deliveryRow, parseDeliveriesCsv, type DeliveryRowInput } from './deliveries-csv.ts';
import { recordDeliveries, type DeliveryRequest } from './record-deliveries.ts';

/** Most rows in one request (the JSON schema says the same): a month of a large carrier's tickets. */
export const MAX_DELIVERY_ROWS = 20_000;

/** A row as the JSON body gives it (spec: DeliveryRow). */
export interface DeliveryRowJson {
  tripId: string;
  shipmentId: string;
  productCode: string;
  offloaded: number;
  offloadDate: string;
  ticket?: string | null;
}

export type ImportDeliveriesInput = { csv: Buffer } | { rows: readonly DeliveryRowJson[] };

export type RowStatus = 'applied' | 'unchanged' | 'rejected';

export interface DeliveryRowResult {
  line: number;
  tripId: string;
  shipmentId: string;
  productCode: string;
  status: RowStatus;
  reason?: string;
}

export interface DeliveriesReport {
  tenant: string;
  summary: { rows: number; legs: number; applied: number; unchanged: number; rejected: number };
  rows: DeliveryRowResult[];
}

function readRows(input: ImportDeliveriesInput): DeliveryRowInput[] {
  if ('rows' in input) {
    return input.rows.map((r, i) =>
      deliveryRow(
        i + 1,
        {
          tripId: r.tripId,
          shipmentId: r.shipmentId,
          productCode: r.productCode,
          offloaded: String(r.offloaded),
          offloadDate: r.offloadDate,
          ticket: r.ticket ?? '',
        },
        r.offloaded,
      ),
    );
  }
  // Not UTF-8 (a spreadsheet's own encoding): the bytes that are not become U+FFFD and only the values holding them fail.
  const text = new TextDecoder('utf-8').decode(input.csv);
  try {
    return parseDeliveriesCsv(text, MAX_DELIVERY_ROWS);
  } catch (err) {
    if (err instanceof CsvError)
      throw badRequest('Invalid CSV', err.details, { reason: 'invalid_body', fields: err.details.map((detail) => ({ in: 'body', name: '', detail })) });
    throw err;
  }
}

const legKey = (r: DeliveryRowInput): string => `${r.tripId}\u0000${r.shipmentId}`;
const describe = (values: string[]): string => someOf(values.map((v) => v || '(empty)'));
const linesOf = (rs: readonly DeliveryRowInput[]): string => someOf(rs.map((r) => r.line));
const sameLegRejected = (rs: readonly DeliveryRowInput[]): string =>
  `leg not recorded: line ${linesOf(rs)} of the same leg ${rs.length === 1 ? 'is' : 'are'} rejected`;

/**
 * `signal` stops between rounds of trips (DeliveriesAborted from record-deliveries.ts).
 * Work and answer grow linearly with the rows: a reason names at most a few other lines (someOf).
 */
export async function importDeliveries(ctx: ServiceContext, tenant: string, input: ImportDeliveriesInput, signal?: AbortSignal): Promise<DeliveriesReport> {
  const rows = readRows(input);
  const reasons = new Map<DeliveryRowInput, string>();
  const reject = (row: DeliveryRowInput, reason: string) => reasons.set(row, reason);

  // One delivery per leg: its rows, in the order of the file.
  const legs = new Map<string, DeliveryRowInput[]>();
  for (const row of rows) {
    if (row.tripId === '' || row.shipmentId === '') reject(row, row.problems.join('; '));
    else addTo(legs, legKey(row), row);
  }
  const requests: DeliveryRequest[] = [];
  const requestRows: DeliveryRowInput[][] = [];
  for (const legRows of legs.values()) {
    const bad = legRows.filter((r) => r.problems.length > 0);
    const dates = [...new Set(legRows.map((r) => r.offloadDate))];
    const tickets = [...new Set(legRows.map((r) => r.ticket ?? ''))];
    if (bad.length > 0) {
      const others = sameLegRejected(bad);
      for (const r of legRows) reject(r, r.problems.length > 0 ? r.problems.join('; ') : others);
    } else if (dates.length > 1 || tickets.length > 1) {
      const what = [
        ...(dates.length > 1 ? [`offloadDate (${describe(dates.map((d) => new Date(d).toISOString()))})`] : []),
        ...(tickets.length > 1 ? [`ticket (${describe(tickets)})`] : []),
      ].join(' and ');
      const reason = `the rows of this leg (lines ${linesOf(legRows)}) disagree on ${what}: one ticket has one date and reference`;
      for (const r of legRows) reject(r, reason);
    } else {
      const first = legRows[0]!;
      requests.push({
        tripId: first.tripId,
        shipmentId: first.shipmentId,
        input: { offloadDate: first.offloadDate, ticket: first.ticket, products: legRows.map((r) => ({ code: r.productCode, offloaded: r.offloaded })) },
      });
      requestRows.push(legRows);
    }
  }

  const status = new Map<DeliveryRowInput, RowStatus>();
  const results = await recordDeliveries(ctx, tenant, requests, signal);
  results.forEach((result, k) => {
    const legRows = requestRows[k]!;
    const { tripId, shipmentId } = requests[k]!;
    switch (result.status) {
      case 'applied':
      case 'unchanged':
        for (const r of legRows) status.set(r, result.status);
        break;
      case 'no-trip':
        for (const r of legRows) reject(r, `no shipment ${tripId} for this tenant`);
        break;
      case 'no-leg':
        for (const r of legRows) reject(r, `shipment ${tripId} has no leg ${shipmentId}`);
        break;
      case 'busy':
        for (const r of legRows) reject(r, 'the trip changed during every attempt to record it; send these rows again');
        break;
      case 'invalid': {
        // A product's problem goes to its row; the leg's own (date, missing products) to every row.
        const ofLeg: string[] = [];
        const own = new Map<number, string[]>();
        for (const p of result.problems) {
          if (p.product === undefined) ofLeg.push(p.message);
          else addTo(own, p.product, p.message);
        }
        // Only a row with no problem of its own names the others, and then it is none of them.
        const others = sameLegRejected(legRows.filter((_, j) => own.has(j)));
        legRows.forEach((r, i) => {
          const parts = [...(own.get(i) ?? []), ...ofLeg];
          reject(r, parts.length > 0 ? parts.join('; ') : others);
        });
        break;
      }
    }
  });

  const out: DeliveryRowResult[] = rows.map((r) => {
    const reason = reasons.get(r);
    const base = { line: r.line, tripId: r.tripId, shipmentId: r.shipmentId, productCode: r.productCode };
    const done = status.get(r);
    return done !== undefined && reason === undefined ? { ...base, status: done } : { ...base, status: 'rejected', reason: reason ?? 'not recorded' };
  });
  const count = (s: RowStatus) => out.reduce((n, r) => (r.status === s ? n + 1 : n), 0);
  return {
    tenant,
    summary: {
      rows: out.length,
      legs: new Set(rows.filter((r) => r.tripId !== '' && r.shipmentId !== '').map(legKey)).size,
      applied: count('applied'),
      unchanged: count('unchanged'),
      rejected: count('rejected'),
    },
    rows: out,
  };
}
