/**
 * Every `pattern` of the served document compiles in RE2 (Go's regexp, what kin-openapi
 * and Go or Rust validators use) as well as in ECMA-262 with the `u` flag (Ajv, this
 * service), and the two agree on a set of probes: no `\uXXXX` escapes (RE2 has none) and no
 * literal invisible or line-terminator characters either (Go and zod generators put patterns in
 * source code, where a BOM or U+2028 does not compile): `\xHH` escapes only; no lookaround (WebhookUrl says it with `not`), no repeat count over 1000 (Cursor's
 * upper bound is its maxLength), no `\s` or `.` whose meaning differs between dialects.
 * Go is run from test/helpers/re2-patterns.go (standard library only: nothing is downloaded);
 * without Go on PATH the RE2 half is skipped with a message, as issue 22 allows.
 */
import type { Test } from 'tap';
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { loadSpec } from '../../handlers/app.ts';
import { ROOT } from '../helpers/service.ts';

export default async function patternsRe2Tests(t: Test): Promise<void> {
interface Found {
  where: string;
  pattern: string;
  example?: string;
}

/** Every string `pattern` in the document, with the example of the schema (or parameter) that holds it. */
function patterns(node: unknown, where: string, example: string | undefined, out: Found[]): Found[] {
  if (Array.isArray(node)) node.forEach((item, i) => patterns(item, `${where}/${i}`, undefined, out));
  else if (node && typeof node === 'object') {
    const obj = node as Record<string, unknown>;
    const own = typeof obj.example === 'string' ? obj.example : example;
    if (typeof obj.pattern === 'string') out.push({ where, pattern: obj.pattern, ...(own === undefined ? {} : { example: own }) });
    for (const [key, value] of Object.entries(obj))
      if (key !== 'example' && key !== 'examples') patterns(value, `${where}/${key}`, key === 'schema' ? own : undefined, out);
  }
  return out;
}

/** Probes where dialects part ways: Unicode and C1 whitespace, the byte order mark, URLs the WebhookUrl rule is about. */
const PROBES = [
  '',
  'a',
  ' a',
  'a ',
  'a b',
  '\u3000a',
  'a\u00a0',
  '\u0085a',
  'a\u001c',
  '\ufeffa',
  'a\u2028b',
  'user-0042',
  'Facturas vencidas marzo',
  'https://hooks.example.com/freight',
  'https://hooks.example.com/a\u2003b',
  'https://hooks.example.com/a\u001cb',
  'http://93.184.216.34:80/x',
  'http://10.0.0.1/',
  'https://10.example.com/',
  'https://a.localhost:443/',
  'https://LOCALHOST',
  'http://192.0.2.1',
  'http://100.64.1.1/',
  'CAC930412FM3',
  '2026-03',
  '2024-02-29',
  '2026-02-29',
  '\ufefftripId,shipmentId,productCode,offloaded,offloadDate\r\n',
];

const spec = loadSpec();
const found = patterns(spec, '#', undefined, []);
t.ok(found.length >= 30, `${found.length} patterns in the served document`);
/** A pattern as a test name can show it (a literal U+2028 would end the TAP line). */
const shown = (pattern: string) => pattern.slice(0, 80).replace(/[^\x20-\x7e]/gu, (c) => `\\u{${c.codePointAt(0)!.toString(16)}}`);
const samples = (f: Found) => (f.example === undefined ? PROBES : [f.example, ...PROBES]);
// Format (Cf: BOM, zero-width, bidi), control (Cc), line and paragraph separators, and every space but the ASCII one.
const invisible = /[\p{Cf}\p{Cc}\p{Zl}\p{Zp}\p{Zs}]/u;
for (const f of found)
  t.notOk(
    invisible.test(f.pattern.replace(/ /g, '')),
    `${f.where}: no literal invisible or line-terminator character (${shown(f.pattern.split('').find((c) => c !== ' ' && invisible.test(c)) ?? '')})`,
  );
const ecma = found.map((f) => new RegExp(f.pattern, 'u'));
t.pass('every pattern compiles as ECMA-262 with the u flag (Ajv)');
for (const [i, f] of found.entries()) if (f.example !== undefined) t.ok(ecma[i]!.test(f.example), `${f.where}: its example matches`);

/** Runs the Go helper on the patterns. */
function runGo(input: string): Promise<{ error: string; matches: boolean[] }[]> {
  return new Promise((resolve, reject) => {
    // -trimpath as the set-up's Go builds: the standard library from their build cache entries.
    const env = { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -trimpath`.trim() };
    const child = spawn('go', ['run', path.join(ROOT, 'test', 'helpers', 're2-patterns.go')], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as { error: string; matches: boolean[] }[]) : reject(new Error(`go run failed (${code}): ${err}`)),
    );
    child.stdin.end(input);
  });
}

const noGo = (() => {
  try {
    execFileSync('go', ['version'], { stdio: 'ignore' });
    return false as const;
  } catch {
    return 'Go is not on PATH: install it (Debian: apt-get install golang-go, or https://go.dev/dl) to check the patterns with RE2';
  }
})();
t.test('RE2 (Go regexp): every pattern compiles and matches as ECMA-262 does', { timeout: 180_000, skip: noGo }, async (t) => {
  const started = Date.now();
  const results = await runGo(JSON.stringify(found.map((f) => ({ pattern: f.pattern, samples: samples(f) }))));
  t.comment(`go run: ${Date.now() - started} ms for ${found.length} patterns`);
  for (const [i, f] of found.entries()) {
    const r = results[i]!;
    t.equal(r.error, '', `${f.where} compiles in RE2: ${shown(f.pattern)}`);
    if (r.error) continue;
    const disagree = samples(f).filter((s, j) => r.matches[j] !== ecma[i]!.test(s));
    t.same(disagree, [], `${f.where}: RE2 and ECMA-262 agree on every probe`);
  }
});
}
