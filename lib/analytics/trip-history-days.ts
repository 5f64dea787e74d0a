/**
 * The days a tenant's trips touch, as each kind of kept totals over trips marks them in a rebuild
 * (docs/rollups.md): one read of the trips' legs for all four, shared by the kinds of one rebuild of
 * them all (lib/db/shared-reads.ts). Read-only.
 */
import type { Db } from 'mongodb';
import { trips } from '../db/collections.ts';
import { sharedRead } from '../db/shared-reads.ts';
import type { TripDocument } from '../model/trip-document.ts';
import { mxDateString } from '../time/mexico-city.ts';
import { tripDays } from '../trips/trip-days.ts';
import { tripOffloadDate } from './dispatch-to-bill.ts';

export interface TripHistoryDays {
  /** Every day a trip touches (tripDays): fleet utilization. */
  touched: ReadonlySet<string>;
  /** The days a leg was unloaded on (a finite unload instant): dispatch-to-bill. */
  unloaded: ReadonlySet<string>;
  /** The same, any number as an unload instant: unit economics' rule. */
  unloadedAny: ReadonlySet<string>;
  /** The day a trip's last leg was delivered (every leg delivered): discounts and shrinkage. */
  delivered: ReadonlySet<string>;
}

export function tripHistoryDays(db: Db, tenant: string): Promise<TripHistoryDays> {
  return sharedRead(`tripHistoryDays|${db.databaseName}|${tenant}`, async () => {
    const out = { touched: new Set<string>(), unloaded: new Set<string>(), unloadedAny: new Set<string>(), delivered: new Set<string>() };
    const cursor = trips(db).find<Pick<TripDocument, 'shipments'>>({ company: tenant }, { projection: { _id: 0, shipments: 1 }, batchSize: 2000 });
    for await (const t of cursor) {
      for (const day of tripDays(t)) out.touched.add(day);
      const legs = Array.isArray(t.shipments) ? t.shipments : [];
      for (const leg of legs) {
        const u: unknown = leg?.unloadDate;
        if (typeof u !== 'number') continue;
        out.unloadedAny.add(mxDateString(u));
        if (Number.isFinite(u)) out.unloaded.add(mxDateString(u));
      }
      const off = tripOffloadDate(t);
      if (off !== null) out.delivered.add(mxDateString(off));
    }
    return out;
  });
}
