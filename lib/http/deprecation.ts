/**
 * Version 1 of the list responses (the bare array) is deprecated. The dates are
 * the contract stated in the spec's Versioning section; responses served as
 * version 1 carry them as RFC 9745 `Deprecation`, RFC 8594 `Sunset` and a
 * `Link` to the migration notes.
 */
export const V1_DEPRECATED_AT = new Date('2026-11-01T00:00:00Z');
export const V1_SUNSET_AT = new Date('2027-06-30T00:00:00Z');
/** The migration notes: the Versioning section of the API description in Swagger UI. */
export const V1_MIGRATION_URL = '/docs#/';

export const v1DeprecationHeaders = (): Record<string, string> => ({
  // RFC 9745: a Structured Field Date, seconds since the epoch.
  deprecation: `@${Math.floor(V1_DEPRECATED_AT.getTime() / 1000)}`,
  // RFC 8594: an HTTP-date.
  sunset: V1_SUNSET_AT.toUTCString(),
  link: `<${V1_MIGRATION_URL}>; rel="deprecation"; type="text/html", <${V1_MIGRATION_URL}>; rel="sunset"; type="text/html"`,
});
