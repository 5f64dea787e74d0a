/**
 * Content negotiation by `Accept` (RFC 9110 §12.5.1) and the `Vary` that goes with it (§12.5.5): pure
 * functions, no request or reply.
 */

/** One media range of an `Accept` header: type and subtype lower-cased (they are case-insensitive), and its weight. */
export interface MediaRange {
  type: string;
  subtype: string;
  /** The `q` parameter, 0 to 1 (1 when absent). 0 means "not acceptable". */
  q: number;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/i;
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/** Splits at `sep` outside quoted strings (a parameter value may hold a comma or a semicolon). */
function splitOutsideQuotes(text: string, sep: string): string[] {
  const parts: string[] = [];
  let start = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted && c === '\\') i++;
    else if (c === '"') quoted = !quoted;
    else if (!quoted && c === sep) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** One `type/subtype *( ; parameter )` element, or undefined when it is not one (it is then ignored, as RFC 9110 §5.6.1 lets a recipient do). */
function parseRange(element: string): MediaRange | undefined {
  const [range = '', ...params] = splitOutsideQuotes(element, ';').map((s) => s.trim());
  const slash = range.indexOf('/');
  const type = range.slice(0, slash).toLowerCase();
  const subtype = range.slice(slash + 1).toLowerCase();
  if (slash < 0 || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) return undefined;
  let q = 1;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0 || param.slice(0, eq).trim().toLowerCase() !== 'q') continue;
    const value = param.slice(eq + 1).trim();
    if (!QVALUE.test(value)) return undefined;
    q = Number(value);
  }
  return { type, subtype, q };
}

/** The media ranges of an `Accept` header value, malformed elements left out. */
export function parseAccept(header: string): MediaRange[] {
  return splitOutsideQuotes(header, ',')
    .map((element) => element.trim())
    .filter(Boolean)
    .flatMap((element) => parseRange(element) ?? []);
}

/**
 * The weight `ranges` give `mediaType` (no parameters, e.g. `application/json`): that of its own range (parameters
 * other than q aside; the highest when it is named more than once), else of `type/*`, else of `*\/*`, the most specific
 * range applying (RFC 9110 §12.5.1). With `exactOnly`, wildcards do not count: only a range naming it does. Undefined
 * when no range applies (not acceptable).
 */
export function weightOf(ranges: readonly MediaRange[], mediaType: string, { exactOnly = false } = {}): number | undefined {
  const [type, subtype] = mediaType.toLowerCase().split('/') as [string, string];
  const best = (match: (r: MediaRange) => boolean): number | undefined => {
    const qs = ranges.filter(match).map((r) => r.q);
    return qs.length ? Math.max(...qs) : undefined;
  };
  const exact = best((r) => r.type === type && r.subtype === subtype);
  if (exact !== undefined || exactOnly) return exact;
  return best((r) => r.type === type && r.subtype === '*') ?? best((r) => r.type === '*' && r.subtype === '*');
}

/**
 * A `Vary` value naming `names` besides what `current` already names (kept, in order; names compared
 * case-insensitively, whole names only: `accept` is not in `accept-encoding`). `*` stays `*`.
 */
export function mergeVary(current: string | number | readonly string[] | undefined, names: readonly string[]): string {
  const listed = (Array.isArray(current) ? current.join(',') : String(current ?? ''))
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (listed.includes('*')) return '*';
  const seen = new Set(listed.map((s) => s.toLowerCase()));
  for (const name of names) {
    if (seen.has(name.toLowerCase())) continue;
    seen.add(name.toLowerCase());
    listed.push(name);
  }
  return listed.join(', ');
}
