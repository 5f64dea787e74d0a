/**
 * Epoch ms of a date-time as the spec's `date-time` format admits it (RFC 3339 §5.6, as ajv-formats checks it); NaN
 * when it does not read. Date.parse refuses two forms the format admits: a leap second (`23:59:60`, RFC 3339 §5.7),
 * read as the last millisecond of its minute (a Date has no 61st second), and an offset of whole hours (`+05`), read
 * as `+05:00`. A value the schema admits is never a 400.
 */
export function parseDateTime(text: string): number {
  const normalized = text
    .replace(/:60(?:\.\d+)?(?=(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$)/, ':59.999')
    .replace(/([Tt ]\d{2}:\d{2}:\d{2}(?:\.\d+)?[+-]\d{2})$/, '$1:00');
  return Date.parse(normalized);
}
