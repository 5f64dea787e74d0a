/**
 * The db tests in one process, each file of test/db/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import readAll from './db/read-all.ts';
import deleteInBatches from './db/delete-in-batches.ts';
import rollupMarksWindow from './db/rollup-marks-window.ts';
import monitorWatchdog from './db/monitor-watchdog.ts';
import indexSpecs from './db/index-specs.ts';
import replaceScoped from './db/replace-scoped.ts';
import markedRollupDrain from './db/marked-rollup-drain.ts';
import rebuildRollupsLanes from './db/rebuild-rollups-lanes.ts';
import chunkedDocument from './db/chunked-document.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('db-read-all', readAll);
t.test('db-delete-in-batches', deleteInBatches);
t.test('db-rollup-marks-window', rollupMarksWindow);
t.test('db-monitor-watchdog', monitorWatchdog);
t.test('index-specs', indexSpecs);
t.test('db-replace-scoped', replaceScoped);
t.test('db-marked-rollup-drain', markedRollupDrain);
t.test('rebuild-rollups-lanes', rebuildRollupsLanes);
t.test('db-chunked-document', chunkedDocument);
