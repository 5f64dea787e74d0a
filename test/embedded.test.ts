/**
 * The embedded tests in one process, each file of test/embedded/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import indexes from './embedded/indexes.ts';
import store from './embedded/store.ts';
import crash from './embedded/crash.ts';
import oom from './embedded/oom.ts';
import connections from './embedded/connections.ts';
import facet from './embedded/facet.ts';
import engine from './embedded/engine.ts';
import commitRace from './embedded/commit-race.ts';
import durability from './embedded/durability.ts';
import orderedStream from './embedded/ordered-stream.ts';
import cursorCompaction from './embedded/cursor-compaction.ts';
import deleteMany from './embedded/delete-many.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('embedded-indexes', indexes);
t.test('embedded-store', store);
t.test('embedded-crash', crash);
t.test('embedded-oom', oom);
t.test('embedded-connections', connections);
t.test('embedded-facet', facet);
t.test('embedded-engine', engine);
t.test('embedded-commit-race', commitRace);
t.test('embedded-durability', durability);
t.test('embedded-ordered-stream', orderedStream);
t.test('embedded-cursor-compaction', cursorCompaction);
t.test('embedded-delete-many', deleteMany);
