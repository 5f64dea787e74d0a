/**
 * The type check (`npm run typecheck`: tsc --strict over lib, handlers, scripts, test and
 * generated) as a test file, so it runs beside the other files of `npm test` instead of
 * before them: tsc is single-threaded, and ahead of tap it left a core idle for most of a
 * minute. A reply that drifts from the spec's generated types fails here.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { ROOT } from './helpers/service.ts';

t.setTimeout(300_000);

t.test('tsc --noEmit -p tsconfig.json: no type error', async (t) => {
  const started = Date.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '--noEmit', '-p', path.join(ROOT, 'tsconfig.json')],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
  const errors = output.split('\n').filter((l) => /error TS\d+/.test(l));
  t.same(errors.slice(0, 20), [], `no type errors (${errors.length})`);
  t.equal(code, 0, `tsc exits 0 after ${((Date.now() - started) / 1000).toFixed(1)} s`, { output: output.slice(0, 4000) });
});
