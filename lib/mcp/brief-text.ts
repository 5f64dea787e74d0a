/**
 * Short forms of the spec's prose for the tool catalogue, which every agent
 * pays for on each conversation; the full text stays in the resources.
 */

/** The first sentence of `text`, whitespace folded (one ends before a capital, a backtick or a parenthesis, never after "e.g." or "i.e."). */
export function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const m = /^(.+?(?<!\be\.g|\bi\.e)[.!?])\s+(?=[A-Z`(*"])/.exec(flat);
  return m?.[1] ?? flat;
}

/** Descriptions up to this length are kept whole. */
export const BRIEF_LIMIT = 100;

/**
 * A parameter's or field's description in the catalogue: whole when short,
 * else its first sentence, without its parenthesised asides when that is
 * still long (the full text is in the tool's reference resource).
 */
export function briefDescription(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= BRIEF_LIMIT) return flat;
  const sentence = firstSentence(flat);
  if (sentence.length <= BRIEF_LIMIT) return sentence;
  return sentence.replace(/\s*\([^()]*\)/g, '').replace(/\s+([,;:.])/g, '$1');
}
