#!/usr/bin/env node
/**
 * Builds the scripts the tests spawn (test/helpers/script-bundle.ts), or the test files
 * (test/helpers/test-bundle.mjs), into one esbuild bundle:
 * `node script-bundle-build.mjs <outdir> <entry>...` writes <outdir> and prints the metafile's
 * input list as JSON. Its own process because esbuild's plugins need its asynchronous API, and
 * spawnScript is synchronous.
 *
 * - Packages stay external (node_modules as installed); code splitting keeps every dynamic
 *   import lazy (start.ts loads the service's modules while the engine starts; oidc-provider
 *   loads only when OAuth is on).
 * - `import.meta.url` (and `.dirname`, `.filename`) is the source file's, not the bundle's: the
 *   code finds generated/openapi.json, docs/, fixtures and the engine's jar next to itself.
 * - Functions and classes keep their names (`keepNames`): what a test or a log reads of them is
 *   what the source says.
 * - Linked source maps (run with --enable-source-maps) naming each source by its absolute URL:
 *   stack traces name this checkout's .ts lines.
 */
import { build } from 'esbuild';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const [outdir, ...entryPoints] = process.argv.slice(2);
if (!outdir || entryPoints.length === 0) throw new Error('usage: script-bundle-build.mjs <outdir> <entry>...');

const sourceImportMeta = {
  name: 'source-import-meta',
  setup(b) {
    b.onLoad({ filter: /\.(ts|js|mjs)$/ }, async (args) => {
      if (!args.path.startsWith(root) || args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
      const source = await readFile(args.path, 'utf8');
      const contents = source
        .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
        .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
        .replaceAll('import.meta.filename', JSON.stringify(args.path));
      return { contents, loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

const result = await build({
  absWorkingDir: root,
  entryPoints,
  outdir,
  outbase: root,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  packages: 'external',
  target: `node${process.versions.node}`,
  sourcemap: 'linked',
  sourcesContent: false,
  metafile: true,
  keepNames: true,
  logLevel: 'error',
  plugins: [sourceImportMeta],
});
// The maps name their sources relative to the bundle, which Node resolves from the bundle's real
// path: where .cache is a link (worktrees share one), that is another checkout's file. Absolute URLs.
for (const file of Object.keys(result.metafile.outputs)) {
  if (!file.endsWith('.map')) continue;
  const mapPath = path.resolve(root, file);
  const map = JSON.parse(await readFile(mapPath, 'utf8'));
  map.sources = map.sources.map((s) => pathToFileURL(path.resolve(path.dirname(mapPath), s)).href);
  await writeFile(mapPath, JSON.stringify(map));
}
process.stdout.write(JSON.stringify(Object.keys(result.metafile.inputs)));
