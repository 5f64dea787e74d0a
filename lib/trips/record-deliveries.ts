/**
 * Writes deliveries (lib/trips/leg-delivery.ts) to the tenant's trips: what
 * the delivery operation and the deliveries CSV share. Per trip: read it, apply
 * its deliveries in the order given, and write it back only if something
 * changed, conditionally on the version read (lib/trips/trips-repo.ts
 * replaceTripsIfUnchanged). A trip another writer changed meanwhile (an
 * import, another delivery) is read again and its deliveries applied again, up
 * to WRITE_ATTEMPTS times. A trip is written whole or not at all, and each
 * delivery of a leg is judged on its own: one refused delivery leaves the
 * other legs' deliveries to be written.
 */
import type { ServiceContext } from '../context.ts';
import { findTripsByIds, replaceTripsIfUnchanged, type TripReplacement } from './trips-repo.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { addTo } from '../shared/add-to.ts';
import { writeMarkingTripDays } from './trip-days.ts';
import { applyLegDelivery, nextLastUpdate, type DeliveryInput, type DeliveryProblem } from './leg-delivery.ts';
import { withSyncStamp } from '../db/writes-in-flight.ts';

export interface DeliveryRequest {
  tripId: string;
  shipmentId: string;
  input: DeliveryInput;
}

export type DeliveryResult =
  | { status: 'no-trip' }
  | { status: 'no-leg' }
  | { status: 'invalid'; problems: DeliveryProblem[] }
  /** The trip as stored after the write (or as it was, when unchanged). */
  | { status: 'applied' | 'unchanged'; trip: TripDocument }
  /** The trip kept changing under every attempt. */
  | { status: 'busy' };

/** Reads of one round, and writes of one bulk operation. */
const CHUNK = 500;
export const WRITE_ATTEMPTS = 5;

/** The caller stopped waiting (its deadline answered 503, or the client left): what was written is whole. */
export class DeliveriesAborted extends Error {
  constructor() {
    super('recording deliveries aborted');
    this.name = 'DeliveriesAborted';
  }
}

/** `signal` stops between rounds of CHUNK trips (DeliveriesAborted); each trip is written whole or not at all. */
export async function recordDeliveries(
  ctx: ServiceContext,
  tenant: string,
  requests: readonly DeliveryRequest[],
  signal?: AbortSignal,
): Promise<DeliveryResult[]> {
  const results: (DeliveryResult | undefined)[] = requests.map(() => undefined);
  const byTrip = new Map<string, number[]>();
  requests.forEach((r, i) => addTo(byTrip, r.tripId, i));
  let pending = [...byTrip.keys()];
  const timeout = ctx.config.queryTimeoutMs;
  /** Applies the chunk's deliveries to the trips read and writes those that changed; answers the trips another writer changed meanwhile. */
  const writeChunk = async (ids: readonly string[], found: ReadonlyMap<string, TripDocument>, now: Date): Promise<Set<string>> => {
    const writes: TripReplacement[] = [];
    const finals = new Map<string, TripDocument>();
    for (const id of ids) {
      const stored = found.get(id);
      const mine = byTrip.get(id)!;
      if (!stored) {
        for (const i of mine) results[i] = { status: 'no-trip' };
        continue;
      }
      let trip = stored;
      const changed: number[] = [];
      for (const i of mine) {
        const out = applyLegDelivery(trip, requests[i]!.shipmentId, requests[i]!.input, now.getTime());
        if (out.status === 'no-leg') results[i] = { status: 'no-leg' };
        else if (out.status === 'invalid') results[i] = { status: 'invalid', problems: out.problems };
        else {
          if (out.status === 'applied') changed.push(i);
          trip = out.trip;
          results[i] = { status: out.status, trip };
        }
      }
      if (changed.length > 0) {
        trip = { ...trip, lastUpdate: nextLastUpdate(stored.lastUpdate, now) };
        writes.push({ trip, readLastUpdate: stored.lastUpdate });
      }
      finals.set(id, trip);
    }
    // The days of the versions read and of the new ones are marked around the write (docs/rollups.md).
    const touched = writes.flatMap((w) => [w.trip, found.get(w.trip._id)!]);
    const written = await writeMarkingTripDays(ctx.db, tenant, touched, () => replaceTripsIfUnchanged(ctx.db, tenant, writes, timeout));
    const lost = new Set(writes.filter((w) => !written.has(w.trip._id)).map((w) => w.trip._id));
    // Every delivery of a trip answers with the trip as it is now stored.
    for (const [id, trip] of finals) {
      if (lost.has(id)) continue;
      for (const i of byTrip.get(id)!) {
        const r = results[i];
        if (r && (r.status === 'applied' || r.status === 'unchanged')) results[i] = { status: r.status, trip };
      }
    }
    return lost;
  };
  for (let attempt = 0; attempt < WRITE_ATTEMPTS && pending.length > 0; attempt++) {
    const retry: string[] = [];
    for (let c = 0; c < pending.length; c += CHUNK) {
      if (signal?.aborted) throw new DeliveriesAborted();
      const ids = pending.slice(c, c + CHUNK);
      const found = new Map((await findTripsByIds(ctx.db, tenant, ids, timeout)).map((t) => [t._id, t]));
      // Stamped once registered as a write in flight, until written: a sync meanwhile resumes before it (lib/db/writes-in-flight.ts).
      const lost = await withSyncStamp(
        ctx.db,
        tenant,
        () => ctx.now().getTime(),
        (stamp) => writeChunk(ids, found, new Date(stamp)),
      );
      retry.push(...lost);
    }
    pending = retry;
  }
  for (const id of pending) for (const i of byTrip.get(id)!) results[i] = { status: 'busy' };
  return results.map((r) => r!);
}
