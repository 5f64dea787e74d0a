/**
 * The spec tests in one process, each file of test/spec/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import examples from './spec/examples.ts';
import patternsRe2 from './spec/patterns-re2.ts';
import mediaTypes from './spec/media-types.ts';
import schemaNames from './spec/schema-names.ts';
import operationFiles from './spec/operation-files.ts';
import routePolicy from './spec/route-policy.ts';
import servedDocument from './spec/served-document.ts';
import demoGenerate from './spec/demo-generate.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('spec-examples', examples);
t.test('spec-patterns-re2', patternsRe2);
t.test('spec-media-types', mediaTypes);
t.test('schema-names', schemaNames);
t.test('operation-files', operationFiles);
t.test('route-policy', routePolicy);
t.test('served-document', servedDocument);
t.test('demo-generate', demoGenerate);
