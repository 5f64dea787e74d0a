/**
 * What the authorization server may fetch as a client ID metadata document (a `client_id` that is
 * an `https` URL: the MCP authorization spec 2025-11-25, "Client ID Metadata Documents"), against
 * server-side request forgery: a client chooses the URL, the service fetches it.
 *
 * - By default only public names: an address or a `localhost` name as client id is refused before
 *   any fetch, and oidc-provider's own dispatcher drops a connection whose peer is a special-use
 *   address (loopback, private, link-local, ...), so a public name resolving to one is refused too.
 * - Origins listed in OAUTH_CLIENT_METADATA_PRIVATE_ORIGINS (tests, private networks) are fetched
 *   whatever they resolve to, trusting the CA certificates of OAUTH_CLIENT_METADATA_CA as well as
 *   the system's. Nothing else is.
 */
import { request } from 'node:https';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { OAuthSettings } from '../config.ts';

const ADDRESS_OR_LOCAL = /^(localhost|\[.*\]|\d+\.\d+\.\d+\.\d+)$/i;

/** Whether a client id's document may be fetched: a listed private origin, or a public name. */
export function mayFetchClientMetadata(clientId: string, privateOrigins: readonly string[]): boolean {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return false;
  }
  if (url.protocol !== 'https:') return false;
  if (privateOrigins.includes(url.origin)) return true;
  const host = url.hostname;
  return !ADDRESS_OR_LOCAL.test(host) && !host.endsWith('.localhost') && host.includes('.');
}

/** The fetch oidc-provider uses (its `fetch` option): listed private origins through node:https with the extra CA, the rest as the library does. */
export async function clientMetadataFetch(settings: OAuthSettings['clientMetadata']): Promise<typeof globalThis.fetch> {
  const ca = settings.caFile ? await readFile(settings.caFile, 'utf8') : undefined;
  const privateOrigins = new Set(settings.privateOrigins);
  return async (input, options = {}) => {
    const target = new URL(input instanceof Request ? input.url : input);
    if (!privateOrigins.has(target.origin)) return await globalThis.fetch(target, options);
    return await new Promise<Response>((resolve, reject) => {
      const headers = Object.fromEntries(new Headers(options.headers).entries());
      const req = request(target, { method: 'GET', headers, ...(ca ? { ca } : {}), ...(options.signal ? { signal: options.signal } : {}) }, (res) => {
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
        }
        // Redirects are not followed (oidc-provider asks for `redirect: 'manual'` and refuses any status but 200).
        const status = res.statusCode ?? 502;
        const bodiless = status === 204 || status === 205 || status === 304;
        if (bodiless) res.resume();
        resolve(new Response(bodiless ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>), { status, headers: out }));
      });
      req.on('error', reject);
      req.end();
    });
  };
}
