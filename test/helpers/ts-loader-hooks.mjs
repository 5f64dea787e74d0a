/**
 * The module hooks test/helpers/ts-loader.mjs registers (they run in Node's hooks thread): a
 * `.ts` file is loaded as an ES module, its types stripped by esbuild (the same transform tsx
 * uses, with tsconfig.json's compiler options and an inline source map); everything else is
 * left to Node. A test process's main module, test/<name>.test.ts, resolves to its bundle when
 * `npm test`'s set-up built a fresh one (test/helpers/test-bundle.mjs).
 *
 * Transforms are cached on disk, content-addressed: the key is the file's name and source, the
 * options and esbuild's version, so an edited file is never served stale and checkouts sharing
 * the cache directory (worktrees share .cache) cannot see each other's output. A miss transforms
 * and writes through a temporary file and a rename, so parallel test processes never read a
 * partial entry.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const cacheDir = path.join(root, '.cache', 'ts-loader');
const esbuildVersion = JSON.parse(readFileSync(path.join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8')).version;
const compilerOptions = JSON.parse(readFileSync(path.join(root, 'tsconfig.json'), 'utf8')).compilerOptions ?? {};

/** @type {import('esbuild').TransformOptions} */
const options = {
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  // Source lines in stack traces; the original text is on disk, so the map need not carry it.
  sourcemap: 'inline',
  sourcesContent: false,
  tsconfigRaw: { compilerOptions },
};
const optionsKey = JSON.stringify([esbuildVersion, options]);

let esbuild;

/** The main module (no parent) of a test process: its bundle, when fresh. */
export async function resolve(specifier, context, nextResolve) {
  if (context.parentURL === undefined && specifier.startsWith('file:') && specifier.endsWith('.test.ts')) {
    const { bundledTest } = await import('./test-bundle.mjs');
    const url = bundledTest(specifier);
    if (url) return { url, format: 'module', shortCircuit: true };
  }
  return nextResolve(specifier, context);
}

export async function load(url, context, nextLoad) {
  if (!url.startsWith('file:')) return nextLoad(url, context);
  const file = fileURLToPath(url);
  if (!file.endsWith('.ts') && !file.endsWith('.mts')) return nextLoad(url, context);
  const source = readFileSync(file, 'utf8');
  // The map names the file relative to the module's own URL, so the output depends on the
  // basename only; the full path still goes into the key.
  const sourcefile = path.basename(file);
  const key = createHash('sha256').update(optionsKey).update('\0').update(file).update('\0').update(source).digest('hex');
  const entry = path.join(cacheDir, key.slice(0, 2), `${key}.mjs`);
  let code;
  try {
    code = readFileSync(entry, 'utf8');
  } catch {
    esbuild ??= await import('esbuild');
    code = (await esbuild.transform(source, { ...options, sourcefile })).code;
    try {
      mkdirSync(path.dirname(entry), { recursive: true });
      const tmp = `${entry}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
      writeFileSync(tmp, code);
      renameSync(tmp, entry);
    } catch {
      // A read-only or full cache only costs the next process the transform again.
    }
  }
  return { format: 'module', source: code, shortCircuit: true };
}
