/**
 * House rule: arrows run one way (docs/architecture.md, "Where things live"). Reads every
 * import and re-export of lib/ (a regex over the source, resolved to repository paths) and
 * checks the directions the house keeps:
 * - nothing in lib/ imports handlers/ (the composition root and handlers) or scripts/ (the demo generator);
 * - lib/db imports values only from the homes below the domain areas (type-only imports of row types are fine);
 * - keyset paging lives in lib/shared: lib/shared imports nothing from lib/db;
 * - webhooks import nothing from alerts (alerts publish their events to webhooks);
 * - lib/http imports nothing from the areas it serves (the webhook URL message is passed in);
 * - the two worker plugins are Fastify plugins (fastify-plugin).
 */
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

interface ImportEdge {
  from: string;
  to: string;
  typeOnly: boolean;
}

const IMPORT_RE = /^\s*(import|export)\s+(type\s+)?(?:([^'";]*?)\s+from\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC_RE = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** `import type {…}` or `import { type A, type B }`: erased at run time. */
function isTypeOnly(keyword: string | undefined, clause: string | undefined): boolean {
  if (keyword) return true;
  const named = clause?.trim().match(/^\{([\s\S]*)\}$/);
  if (!named) return false;
  const names = named[1]!.split(',').map((n) => n.trim()).filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
}

/** The imports of one source file; relative specifiers resolved to paths from the repository root. */
export function importsOf(file: string, source: string): ImportEdge[] {
  const resolve = (spec: string) => (spec.startsWith('.') ? normalize(join(dirname(file), spec)) : spec);
  const edges: ImportEdge[] = [];
  for (const m of source.matchAll(IMPORT_RE)) edges.push({ from: file, to: resolve(m[4]!), typeOnly: isTypeOnly(m[2], m[3]) });
  for (const m of source.matchAll(DYNAMIC_RE)) edges.push({ from: file, to: resolve(m[1]!), typeOnly: false });
  return edges;
}

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts'))
    .map((e) => relative(root, join(e.parentPath, e.name)));
}

const edges = sources('lib').flatMap((f) => importsOf(f, readFileSync(join(root, f), 'utf8')));
const under = (dir: string) => (path: string) => path.startsWith(`${dir}/`) || path === dir;
const show = (list: ImportEdge[]) => list.map((e) => `${e.from} → ${e.to}${e.typeOnly ? ' (type)' : ''}`);

t.test('the reader sees what the rules are about', async (t) => {
  const sample = `import type { A } from '../alerts/jobs.ts';
import { type B, type C } from './b.ts';
import { D, type E } from '../d.ts';
import {
  F,
  type G,
} from "../../handlers/types.ts";
export { H } from '../model/h.ts';
import 'side-effect';
const m = await import('../../scripts/demo/load.ts');`;
  const got = importsOf('lib/db/x.ts', sample).map((e) => [e.to, e.typeOnly]);
  t.same(got, [
    ['lib/alerts/jobs.ts', true],
    ['lib/db/b.ts', true],
    ['lib/d.ts', false],
    ['handlers/types.ts', false],
    ['lib/model/h.ts', false],
    ['side-effect', false],
    ['scripts/demo/load.ts', false],
  ]);
  t.ok(edges.length > 300, `lib/ has its imports read (${edges.length})`);
  t.ok(edges.some((e) => e.from === 'lib/db/alert-jobs-repo.ts' && e.to === 'lib/alerts/jobs.ts' && e.typeOnly), 'a type-only row import of lib/db is seen as such');
});

t.test('nothing in lib/ imports handlers/ or scripts/ (the demo generator)', async (t) => {
  t.same(show(edges.filter((e) => under('handlers')(e.to) || under('scripts')(e.to))), []);
});

t.test('lib/db imports values only from the homes below the domain areas', async (t) => {
  const below = ['lib/db', 'lib/model', 'lib/money', 'lib/time', 'lib/shared'];
  const allowed = (to: string) => !to.startsWith('lib/') || to === 'lib/config.ts' || below.some((d) => under(d)(to));
  t.same(show(edges.filter((e) => under('lib/db')(e.from) && !e.typeOnly && !allowed(e.to))), []);
});

t.test('keyset paging has one home: lib/shared imports nothing from lib/db', async (t) => {
  t.same(show(edges.filter((e) => under('lib/shared')(e.from) && under('lib/db')(e.to))), []);
});

t.test('webhooks import nothing from alerts', async (t) => {
  t.same(show(edges.filter((e) => under('lib/webhooks')(e.from) && under('lib/alerts')(e.to))), []);
});

t.test('lib/http imports nothing from the areas it serves', async (t) => {
  const areas = ['lib/alerts', 'lib/analytics', 'lib/finance', 'lib/imports', 'lib/tax', 'lib/trips', 'lib/webhooks'];
  t.same(show(edges.filter((e) => under('lib/http')(e.from) && areas.some((a) => under(a)(e.to)))), []);
});

t.test('the worker plugins are Fastify plugins', async (t) => {
  for (const file of ['lib/alerts/plugin.ts', 'lib/webhooks/plugin.ts']) {
    t.ok(edges.some((e) => e.from === file && e.to === 'fastify-plugin' && !e.typeOnly), `${file} uses fastify-plugin`);
  }
});
