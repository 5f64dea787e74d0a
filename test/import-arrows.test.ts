/**
 * House rule: arrows run one way (docs/architecture.md, "Where things live"). Reads every
 * import and re-export of lib/ (a regex over the source, resolved to repository paths) and
 * checks the directions the house keeps:
 * - nothing in lib/ imports handlers/ (the composition root and handlers) or scripts/ (the demo generator,
 *   the embedded engine's launcher and supervisor in scripts/embedded-mongo/);
 * - lib/ knows only MongoDB: it reads no EMBEDDED_MONGO_* setting and has no embedded-engine module
 *   (the launcher hands the service a connected database and the engine's health as callbacks);
 * - lib/db is the ground floor (connection, collection names, the index mechanism, pipeline expressions, paging): it
 *   imports nothing from any area, not even a type; each area owns its repository beside its rows (lib/<area>/*-repo.ts)
 *   and its index specs beside its repository (lib/<area>/*-indexes.ts): lib/db opens no area's collection;
 * - every area's index specs are ensured at start: lib/service-indexes.ts, above lib/db, joins them all;
 * - no import cycle among the modules of lib/ (type-only imports count: a circle is a circle);
 * - the ledger (lib/finance/ledger) is the one writer of financial documents from facts: only it opens the facts'
 *   store, and lib/imports only maps CFDI to facts (it imports nothing of finance but the ledger's facts and entry);
 * - keyset paging lives in lib/shared: lib/shared imports nothing from lib/db;
 * - webhooks import nothing from alerts (alerts publish their events to webhooks);
 * - lib/http imports nothing from the areas it serves (the webhook URL message is passed in);
 * - the two worker plugins are Fastify plugins (fastify-plugin);
 * - lib/app holds the app's plugins (fastify-plugin), which buildApp composes: it is the top of lib/, nothing else in lib/ imports it.
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
  const names = named[1]!
    .split(',')
    .map((n) => n.trim())
    .filter(Boolean);
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

const libSources = new Map(sources('lib').map((f) => [f, readFileSync(join(root, f), 'utf8')] as const));
const edges = [...libSources].flatMap(([f, source]) => importsOf(f, source));
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
  t.ok(
    edges.some((e) => e.from === 'lib/analytics/trip-audits-repo.ts' && e.to === 'lib/analytics/shrinkage-recovery.ts' && e.typeOnly),
    'a type-only row import of a repository is seen as such',
  );
});

t.test('nothing in lib/ imports handlers/ or scripts/ (the demo generator)', async (t) => {
  t.same(show(edges.filter((e) => under('handlers')(e.to) || under('scripts')(e.to))), []);
});

t.test("lib/ knows only MongoDB: the embedded engine is the launcher's (scripts/embedded-mongo)", async (t) => {
  t.same(show(edges.filter((e) => under('scripts/embedded-mongo')(e.to))), [], 'nothing in lib/ imports the launcher');
  const settings = [...libSources]
    .filter(([, source]) => /\bEMBEDDED_MONGO_\w*/.test(source))
    .map(([f, source]) => `${f}: ${source.match(/\bEMBEDDED_MONGO_\w*/)![0]}`);
  t.same(settings, [], 'lib/ reads no EMBEDDED_MONGO_* setting (the launcher reads and validates its own)');
  const engineModules = [...libSources.keys()].filter((f) => /^lib\/db\/(embedded|engine-supervisor|data-dir|open)\.ts$/.test(f));
  t.same(engineModules, [], 'no launcher, supervisor, DATA_DIR check or port file in lib/db');
});

t.test('lib/db is the ground floor: it imports nothing from any area, not even a type', async (t) => {
  const below = ['lib/db', 'lib/model', 'lib/money', 'lib/time', 'lib/shared'];
  const allowed = (to: string) => !to.startsWith('lib/') || to === 'lib/config.ts' || below.some((d) => under(d)(to));
  t.same(show(edges.filter((e) => under('lib/db')(e.from) && !allowed(e.to))), []);
  t.same(
    [...libSources.keys()].filter((f) => /^lib\/db\/.*-repo\.ts$/.test(f) && f !== 'lib/db/service-secrets-repo.ts'),
    [],
    "an area's repository lives in its area",
  );
  // Outside the list of names, lib/db uses only the collections of its own infrastructure: an area's
  // index specs, queries or accessors in lib/db would name the area's collection.
  const own = new Set(['serviceSecrets', 'leases', 'rollupState']);
  const named = [...libSources]
    .filter(([f]) => under('lib/db')(f) && f !== 'lib/db/collections.ts')
    .flatMap(([f, source]) => [...source.matchAll(/\bCOLLECTIONS\.(\w+)/g)].filter((m) => !own.has(m[1]!)).map((m) => `${f}: COLLECTIONS.${m[1]}`));
  t.same(named, [], "lib/db names no area's collection (its index specs live in the area)");
});

t.test("every area's index specs are ensured at start (lib/service-indexes.ts joins them)", async (t) => {
  const specs = [...libSources.keys()].filter((f) => /-indexes\.ts$/.test(f) && !under('lib/db')(f) && f !== 'lib/service-indexes.ts').sort();
  t.ok(specs.length >= 7, `the areas' index specs are found (${specs.join(', ')})`);
  const composed = new Set(edges.filter((e) => e.from === 'lib/service-indexes.ts').map((e) => e.to));
  t.same(
    specs.filter((f) => !composed.has(f)),
    [],
    'an area file of index specs lib/service-indexes.ts does not import: its indexes would never be created at start',
  );
});

/** The first import cycle among these files (each file's imports in source order), as a path that closes on itself. */
export function findCycle(graph: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): string[] | null => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue;
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(file, 'done');
    return null;
  };
  for (const file of [...graph.keys()].sort()) {
    if (state.has(file)) continue;
    const found = visit(file);
    if (found) return found;
  }
  return null;
}

t.test('no import cycle among the modules of lib/', async (t) => {
  t.same(
    findCycle(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', ['a']],
      ]),
    ),
    ['a', 'b', 'c', 'a'],
    'the search finds a circle',
  );
  t.equal(
    findCycle(
      new Map([
        ['a', ['b', 'c']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    null,
    'and no circle where there is none',
  );
  const graph = new Map<string, string[]>([...libSources.keys()].map((f) => [f, []]));
  for (const e of edges) if (graph.has(e.to)) graph.get(e.from)!.push(e.to);
  const cycle = findCycle(graph);
  t.equal(cycle && cycle.join(' → '), null, 'an import cycle (type-only imports included)');
});

t.test('the ledger is the one writer of financial documents from facts', async (t) => {
  const ledger = under('lib/finance/ledger');
  t.same(show(edges.filter((e) => e.to === 'lib/finance/ledger/facts-repo.ts' && !ledger(e.from))), [], "only the ledger opens the facts' store");
  const importsReach = (e: ImportEdge) => under('lib/finance')(e.to) && !['lib/finance/ledger/facts.ts', 'lib/finance/ledger/record-facts.ts'].includes(e.to);
  t.same(
    show(edges.filter((e) => under('lib/imports')(e.from) && importsReach(e))),
    [],
    'lib/imports hands facts to the ledger and writes no financial document itself',
  );
  t.same(
    show(edges.filter((e) => under('lib/finance')(e.from) && under('lib/imports')(e.to))),
    [],
    'finance (the ledger included) imports nothing from lib/imports',
  );
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
    t.ok(
      edges.some((e) => e.from === file && e.to === 'fastify-plugin' && !e.typeOnly),
      `${file} uses fastify-plugin`,
    );
  }
});

t.test("lib/app holds the app's plugins, the top of lib/", async (t) => {
  const app = under('lib/app');
  const plugins = [...libSources.keys()].filter(app);
  t.ok(plugins.length > 0, 'lib/app has its plugins');
  for (const file of plugins) {
    t.ok(
      edges.some((e) => e.from === file && e.to === 'fastify-plugin' && !e.typeOnly),
      `${file} uses fastify-plugin`,
    );
  }
  t.same(show(edges.filter((e) => app(e.to) && !app(e.from))), [], 'nothing else in lib/ imports lib/app');
});
