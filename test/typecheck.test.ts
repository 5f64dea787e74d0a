/**
 * The type check (`npm run typecheck`: tsc --strict over lib, handlers, scripts, test and
 * generated) as a test file, so it runs beside the other files of `npm test` instead of
 * before them: tsc is single-threaded, and ahead of tap it left a core idle for most of a
 * minute. A reply that drifts from the spec's generated types fails here.
 *
 * Incremental (issue 39: the suite within 15 minutes): tsc keeps its build info in .cache/tsc/,
 * one file per checkout and TypeScript version. That info holds every file's content hash and
 * diagnostics, errors included: tsc re-reads and hashes every file of the program (node_modules'
 * types and TypeScript's libs too) and re-checks each changed file and every file whose view of it
 * changed, and reports the kept errors of the others, so the result is the full check's. A run
 * with nothing changed re-checks nothing.
 */
import t from 'tap';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { ROOT } from './helpers/service.ts';

t.setTimeout(300_000);

const tscPackage = path.join(ROOT, 'node_modules', 'typescript');
const { version } = JSON.parse(await readFile(path.join(tscPackage, 'package.json'), 'utf8')) as { version: string };
// Per checkout (worktrees share .cache) and TypeScript version; tsc itself rebuilds from scratch when its options change.
const buildInfoDir = path.join(ROOT, '.cache', 'tsc');
const buildInfo = path.join(buildInfoDir, `${createHash('sha256').update(`${ROOT}\n${version}`).digest('hex').slice(0, 16)}.tsbuildinfo`);
await mkdir(buildInfoDir, { recursive: true });

t.test('tsc --noEmit -p tsconfig.json: no type error', async (t) => {
  const started = Date.now();
  const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
    execFile(
      process.execPath,
      [path.join(tscPackage, 'bin', 'tsc'), '--noEmit', '-p', path.join(ROOT, 'tsconfig.json'), '--incremental', '--tsBuildInfoFile', buildInfo],
      { cwd: ROOT, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: `${stdout}${stderr}` }),
    );
  });
  const errors = output.split('\n').filter((l) => /error TS\d+/.test(l));
  t.same(errors.slice(0, 20), [], `no type errors (${errors.length})`);
  t.equal(code, 0, `tsc exits 0 after ${((Date.now() - started) / 1000).toFixed(1)} s`, { output: output.slice(0, 4000) });
});
