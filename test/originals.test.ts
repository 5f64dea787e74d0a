/**
 * The originals tests in one process, each file of test/originals/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import originals from './originals/originals.ts';
import receivedOriginals from './originals/received-originals.ts';
import printedOriginals from './originals/printed-originals.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(360_000);
t.test('originals', originals);
t.test('received-originals', receivedOriginals);
t.test('printed-originals', printedOriginals);
