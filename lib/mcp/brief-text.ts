/**
 * The spec's prose in the tool catalogue, which every agent pays for on each
 * conversation. Descriptions are never cut (a cut loses what the later
 * sentences say); where the catalogue is over budget, the spec's text is what
 * gets shorter (test/mcp-catalogue.test.ts).
 */

/** `text` with its whitespace folded: the YAML block's line breaks are not meaning. */
export const wholeText = (text: string): string => text.replace(/\s+/g, ' ').trim();

/** The first sentence of `text`, whitespace folded (one ends before a capital, a backtick or a parenthesis, never after "e.g." or "i.e."). */
export function firstSentence(text: string): string {
  const flat = wholeText(text);
  const m = /^(.+?(?<!\be\.g|\bi\.e)[.!?])\s+(?=[A-Z`(*"])/.exec(flat);
  return m?.[1] ?? flat;
}
