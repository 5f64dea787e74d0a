/**
 * Text that JSON can carry but UTF-8 (BSON) cannot store: half of a surrogate pair on its own (`"\ud800"`). Stored, it
 * would come back as U+FFFD, silently; a field that keeps text refuses it instead.
 */

/** With the u flag a whole pair is one code point, not matched. */
export const LONE_SURROGATE = /\p{Cs}/u;

export const hasLoneSurrogate = (text: string): boolean => LONE_SURROGATE.test(text);

/** The 400 detail for a field holding one. */
export const loneSurrogateProblem = (field: string): string =>
  `${field} must be well-formed Unicode text (it holds half of a surrogate pair, U+D800–U+DFFF, alone)`;
