/**
 * The imports tests in one process, each file of test/imports/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import imports from './imports/imports.ts';
import acknowledgements from './imports/acknowledgements.ts';
import archive from './imports/archive.ts';
import operations from './imports/operations.ts';
import crash from './imports/crash.ts';
import inheritedNames from './imports/inherited-names.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('imports', imports);
t.test('imports-acknowledgements', acknowledgements);
t.test('imports-archive', archive);
t.test('imports-operations', operations);
t.test('imports-crash', crash);
t.test('imports-inherited-names', inheritedNames);
