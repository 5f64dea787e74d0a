/** Where the authorization server lives under the issuer: what its routes (routes.ts) and its configuration (provider.ts) share. */

/** The consent page of an interaction (lib/oauth/routes.ts). */
export const INTERACTION_PATH = '/oauth/interaction';

/** The path of the issuer (a service behind a path prefix), '' at the root. */
export const issuerPath = (issuer: string): string => new URL(issuer).pathname.replace(/\/+$/, '');
