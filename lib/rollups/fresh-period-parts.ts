/**
 * What a report of a kind with derived months reads of [fromDay, toDay]: the months wholly in it
 * and the days of its partial months, brought up to date first (the days marked by a write are
 * recomputed, in passes, which marks their months; the whole months are folded again when
 * marked). Area-free: the kind and its two reads are the caller's.
 */
import type { Db } from 'mongodb';
import { daysOfMonth, wholeMonths } from '../time/calendar-months.ts';
import { mxAddDays } from '../time/mexico-city.ts';
import type { MarkedRollupKind } from './marked-rollup-kind.ts';

export interface PeriodParts<M, D> {
  months: M[];
  days: D[];
}

export async function readFreshPeriodParts<M, D>(
  kind: MarkedRollupKind,
  db: Db,
  tenant: string,
  period: { fromDay: string; toDay: string; maxTimeMS: number },
  read: { months(months: readonly string[]): Promise<M[]>; days(from: string, to: string): Promise<D[]> },
): Promise<PeriodParts<M, D>> {
  const { fromDay, toDay, maxTimeMS } = period;
  if (toDay < fromDay) return { months: [], days: [] };
  await kind.settle(db, tenant, { from: fromDay, to: toDay, maxPasses: 4, maxTimeMS });
  const months = wholeMonths(fromDay, toDay);
  if (!months.length) return { months: [], days: await read.days(fromDay, toDay) };
  const first = daysOfMonth(months[0] as string)[0] as string;
  const last = daysOfMonth(months[months.length - 1] as string).pop() as string;
  await kind.settleMonths(db, tenant, { from: months[0] as string, to: months[months.length - 1] as string, maxTimeMS });
  const [kept, before, after] = await Promise.all([
    read.months(months),
    fromDay < first ? read.days(fromDay, mxAddDays(first, -1)) : [],
    last < toDay ? read.days(mxAddDays(last, 1), toDay) : [],
  ]);
  return { months: kept, days: [...before, ...after] };
}
