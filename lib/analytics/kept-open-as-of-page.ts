/**
 * The financial-docs list's `openAsOf` from the kept open-items index (docs/rollups.md
 * "Receivables"): lib/finance cannot import this area (analytics reads finance), so the
 * composition hands it to the list as `ServiceContext.openAsOfPage`.
 */
import type { OpenAsOfPageReader } from '../context.ts';
import { mxDateString } from '../time/mexico-city.ts';
import { openAtPage } from './open-spans-repo.ts';
import { receivablesRollups, settleReceivablesMarks } from './receivables-rollup-kind.ts';

/** null while the receivables kind is not built: the list then evaluates the documents. Marked days up to T's are settled first. */
export const keptOpenAsOfPage: OpenAsOfPageReader = async (db, tenant, q, page, maxTimeMS) => {
  if (!(await receivablesRollups.ready(db))) return null;
  await settleReceivablesMarks(db, tenant, mxDateString(q.asOf), maxTimeMS);
  return openAtPage(db, tenant, q, page, maxTimeMS);
};
