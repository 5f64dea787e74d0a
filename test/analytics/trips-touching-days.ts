/**
 * The trips fleet utilization reads for a run of days (streamTripsTouchingDays): a leg dated in
 * the days, loaded in them, loaded up to 31 days before the first and offloaded on or after it,
 * or offloaded in them. The legs still on the road when the days begin are read by their loading
 * or, when the days began less than 31 days before `now`, by their offloading: both plans must
 * return exactly the trips that rule names, each once. The expected sets are listed by hand below.
 */
import type { Test } from 'tap';
import { startHarness, TENANT_A, TENANT_B } from '../helpers/harness.ts';
import { makeTrip, leg } from '../fixtures/documents.ts';
import { insertTrips } from '../fixtures/stored-trips.ts';
import { streamTripsTouchingDays } from '../../lib/analytics/trip-audits-repo.ts';
import { parseMxDateTime } from '../../lib/time/mexico-city.ts';

export default async function tripsTouchingDaysTests(t: Test): Promise<void> {
  const h = await startHarness(t);
  // The days read: 2026-06-10 and 06-11 (Mexico City). Each trip is named for why it is read, or why not.
  const trip = (id: string, legs: Parameters<typeof leg>[0][], tenant = TENANT_A) => makeTrip({ _id: id, tenant, legs: legs.map(leg) });
  await insertTrips(h.db, [
    trip('dated', [{ date: 20260610, loadDate: '2026-05-01T08:00', unloadDate: '2026-05-01T18:00' }]),
    trip('loaded-in', [{ loadDate: '2026-06-11T23:30', unloadDate: null }]),
    trip('offloaded-in', [{ date: 20260501, loadDate: '2026-05-01T08:00', unloadDate: '2026-06-10T00:10' }]),
    trip('spanning', [{ loadDate: '2026-06-09T20:00', unloadDate: '2026-06-12T09:00' }]),
    trip('spanning-to-first-day', [{ loadDate: '2026-06-08T20:00', unloadDate: '2026-06-10T06:00' }]),
    trip('spanning-late', [{ loadDate: '2026-05-12T08:00', unloadDate: '2026-07-30T09:00' }]),
    trip('spanning-second-leg', [
      { loadDate: '2026-04-01T08:00', unloadDate: '2026-04-01T18:00' },
      { loadDate: '2026-06-01T08:00', unloadDate: '2026-06-20T09:00' },
    ]),
    trip('two-reasons', [{ date: 20260611, loadDate: '2026-06-10T08:00', unloadDate: '2026-06-11T09:00' }]),
    // Not read: ended the day before, loaded more than 31 days before, loaded after, in transit since before.
    trip('ended-before', [{ loadDate: '2026-06-08T08:00', unloadDate: '2026-06-09T23:59' }]),
    trip('loaded-too-early', [{ loadDate: '2026-05-09T23:00', unloadDate: '2026-06-15T09:00' }]),
    trip('loaded-after', [{ loadDate: '2026-06-12T00:00', unloadDate: '2026-06-12T09:00' }]),
    trip('in-transit-since-before', [{ loadDate: '2026-06-05T08:00', unloadDate: null }]),
    trip('other-tenant', [{ loadDate: '2026-06-10T08:00', unloadDate: '2026-06-10T18:00' }], TENANT_B),
  ]);
  const expected = ['dated', 'loaded-in', 'offloaded-in', 'spanning', 'spanning-late', 'spanning-second-leg', 'spanning-to-first-day', 'two-reasons'];
  const fromDay = '2026-06-10';
  const plans = {
    // 2 days after the first: the legs on the road are read by their offloading.
    'by offloading': parseMxDateTime('2026-06-12T12:00'),
    // A year after: by their loading.
    'by loading': parseMxDateTime('2027-06-12T12:00'),
  };
  for (const [name, now] of Object.entries(plans)) {
    const ids: string[] = [];
    for await (const x of streamTripsTouchingDays(h.db, TENANT_A, { fromDay, toDay: '2026-06-11', now }, 10_000)) ids.push(x._id);
    t.same([...ids].sort(), [...expected].sort(), `${name}: every trip the rule names, once`);
  }
  // The 11th alone: the trips dated or offloaded on the 10th only are not read.
  for (const [name, now] of Object.entries(plans)) {
    const ids: string[] = [];
    for await (const x of streamTripsTouchingDays(h.db, TENANT_A, { fromDay: '2026-06-11', toDay: '2026-06-11', now }, 10_000)) ids.push(x._id);
    t.same([...ids].sort(), ['loaded-in', 'spanning', 'spanning-late', 'spanning-second-leg', 'two-reasons'], `${name}: 2026-06-11 alone`);
  }
}
