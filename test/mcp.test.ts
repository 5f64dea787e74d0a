/**
 * The mcp tests in one process, each file of test/mcp/ a subtest with its own harness: a test
 * process costs ~2.5 CPU-s before its first assertion (tap, the TypeScript loader, the app's modules),
 * paid once here instead of once per file (issue 39).
 */
import t from 'tap';
import { shareEngineInThisProcess } from './helpers/harness.ts';
import results from './mcp/results.ts';
import sessions from './mcp/sessions.ts';
import sse from './mcp/sse.ts';
import toolsets from './mcp/toolsets.ts';
import streamable from './mcp/streamable.ts';

shareEngineInThisProcess();
// tap's 120 s per file, for each part (a loaded machine runs them several times slower than a quiet one)
t.setTimeout(600_000);
t.test('mcp-results', results);
t.test('mcp-sessions', sessions);
t.test('mcp-sse', sse);
t.test('mcp-toolsets', toolsets);
t.test('mcp-streamable', streamable);
