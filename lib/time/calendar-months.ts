/** Calendar months of Mexico City days ('YYYY-MM-DD' and 'YYYY-MM'): what the kept totals' months are made of. */
import { mxAddDays } from './mexico-city.ts';

/** The days of a month ('YYYY-MM'). */
export function daysOfMonth(month: string): string[] {
  const days: string[] = [];
  for (let d = `${month}-01`; d.startsWith(month); d = mxAddDays(d, 1)) days.push(d);
  return days;
}

/** The months wholly in [fromDay, toDay] ('YYYY-MM', consecutive). */
export function wholeMonths(fromDay: string, toDay: string): string[] {
  const out: string[] = [];
  for (let m = fromDay.slice(0, 7); m <= toDay.slice(0, 7);) {
    const days = daysOfMonth(m);
    if ((days[0] as string) >= fromDay && (days[days.length - 1] as string) <= toDay) out.push(m);
    m = mxAddDays(days[days.length - 1] as string, 1).slice(0, 7);
  }
  return out;
}
