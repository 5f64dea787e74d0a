/**
 * Writes the trips an import mapped from Carta Porte (lib/imports/trip-mapping.ts):
 * each merged with its stored version (keepRecordedDeliveries), written only
 * when its content changed (importing the same files again writes nothing),
 * and only over the version read: a delivery recorded while the import runs is
 * merged on the next attempt, never overwritten (lib/trips/trips-repo.ts
 * replaceTripsIfUnchanged, insertTripsIfAbsent).
 */
import type { ServiceContext } from '../context.ts';
import { sameContent } from '../shared/same-content.ts';
import { findTripsByIds, insertTripsIfAbsent, replaceTripsIfUnchanged, type TripReplacement } from './trips-repo.ts';
import { ApiError } from '../http/api-error.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { nextLastUpdate } from './leg-delivery.ts';
import { keepRecordedDeliveries } from './recorded-deliveries.ts';
import { WRITE_ATTEMPTS } from './record-deliveries.ts';
import { writeMarkingTripDays } from './trip-days.ts';

/** Writes the imported trips; returns the ids written (created or changed). */
export async function putImportedTrips(ctx: ServiceContext, tenant: string, docs: readonly TripDocument[], now: Date): Promise<Set<string>> {
  const done = new Set<string>();
  let pending = [...docs];
  for (let attempt = 0; attempt < WRITE_ATTEMPTS && pending.length > 0; attempt++) {
    const stored = new Map(
      (
        await findTripsByIds(
          ctx.db,
          tenant,
          pending.map((d) => d._id),
          ctx.config.queryTimeoutMs,
        )
      ).map((t) => [t._id, t]),
    );
    const inserts: TripDocument[] = [];
    const replacements: TripReplacement[] = [];
    for (const doc of pending) {
      const current = stored.get(doc._id);
      const next = keepRecordedDeliveries(doc, current);
      if (!current) inserts.push({ ...next, lastUpdate: now.toISOString() });
      else if (!sameContent(current, next))
        replacements.push({ trip: { ...next, lastUpdate: nextLastUpdate(current.lastUpdate, now) }, readLastUpdate: current.lastUpdate });
    }
    // The days of the versions read and of the new ones are marked around the write (docs/rollups.md).
    const touched = [...inserts, ...replacements.flatMap((r) => [r.trip, stored.get(r.trip._id)!])];
    const written = await writeMarkingTripDays(
      ctx.db,
      tenant,
      touched,
      async () =>
        new Set([
          ...(await insertTripsIfAbsent(ctx.db, tenant, inserts)),
          ...(await replaceTripsIfUnchanged(ctx.db, tenant, replacements, ctx.config.queryTimeoutMs)),
        ]),
    );
    for (const id of written) done.add(id);
    const attempted = new Set([...inserts.map((d) => d._id), ...replacements.map((r) => r.trip._id)]);
    pending = pending.filter((d) => attempted.has(d._id) && !written.has(d._id));
  }
  if (pending.length > 0)
    throw new ApiError(
      503,
      'Service Unavailable',
      [`trips changed during every attempt to import them (${pending.map((d) => d._id).join(', ')}); import the files again`],
      { reason: 'conflict' },
    );
  return done;
}
