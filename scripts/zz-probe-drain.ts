import { benchConfig } from './bench-fairness.ts';
import { openDatabase } from './embedded-mongo/open-database.ts';
import { ROLLUP_KINDS } from '../lib/rollups/kinds.ts';
import { markSourcesDays } from '../lib/db/rollup-marks.ts';
import { FINANCIAL_DOC_MARK_SOURCES } from '../lib/finance/financial-doc-days.ts';
import { RECEIVED_DOC_MARK_SOURCES } from '../lib/received/received-doc-days.ts';
import { TRIP_MARK_SOURCES } from '../lib/trips/trip-days.ts';
import { childPid, cpuMs } from './proc-stats.ts';

const config = benchConfig({ DATA_DIR: process.env.DATA_DIR!, MONGODB_DB: 'freight' });
const database = await openDatabase(config, {});
const db = database.db;
const engine = childPid(process.pid, 'embedded-mongo');
const tenant = 'TGO850101AB1';
const days = (process.env.DAYS ?? '2026-10-01,2026-10-05,2026-10-08,2026-10-09,2026-10-12,2026-10-15,2026-10-20,2026-10-21,2026-10-25,2026-11-05').split(',');
const only = process.env.ONLY;
for (let round = 0; round < Number(process.env.ROUNDS ?? 3); round++) {
  await markSourcesDays(db, tenant, [...FINANCIAL_DOC_MARK_SOURCES, ...RECEIVED_DOC_MARK_SOURCES, ...TRIP_MARK_SOURCES], days);
  const line: string[] = [];
  for (const kind of ROLLUP_KINDS) {
    if (only && kind.name !== only) continue;
    const t0 = performance.now();
    const c0 = process.cpuUsage();
    const e0 = cpuMs(engine);
    let n = 0;
    for (let i = 0; i < 5; i++) n += await kind.drain(db, 1000, 600_000);
    const c = process.cpuUsage(c0);
    line.push(`${kind.name} ${n} wall ${Math.round(performance.now() - t0)} cpu ${Math.round((c.user + c.system) / 1000)} engine ${cpuMs(engine) - e0}`);
  }
  console.log(`round ${round}\n  ${line.join('\n  ')}`);
}
await database.close();
