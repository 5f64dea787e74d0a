/**
 * The URLs of OAuth for MCP, all from the issuer (OAUTH_ISSUER, else PUBLIC_BASE_URL: the service as
 * clients reach it). The protected resource is the MCP server: its canonical URI (RFC 8707, the MCP
 * authorization spec's "Canonical Server URI") is the streamable HTTP endpoint, `${issuer}/mcp`; the
 * legacy SSE endpoint is the same server by its older transport, and a client connecting there gets
 * metadata naming `${issuer}/sse` (clients check that the metadata's resource covers the URL they
 * connect to). A token for either works on both transports.
 */

/** The MCP transports' paths, in the order their resources are listed. */
export const MCP_RESOURCE_PATHS = ['/mcp', '/sse'] as const;
export type McpResourcePath = (typeof MCP_RESOURCE_PATHS)[number];

/** The resource identifier of an MCP endpoint. */
export const mcpResourceUrl = (issuer: string, path: McpResourcePath = '/mcp'): string => `${issuer}${path}`;

/** Every resource an access token may be issued for here. */
export const mcpResourceUrls = (issuer: string): string[] => MCP_RESOURCE_PATHS.map((p) => mcpResourceUrl(issuer, p));

/** Where a transport's protected resource metadata is served (RFC 9728 §3.1: the well-known path, then the resource's path). */
export const PROTECTED_RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource';

/**
 * The metadata URL a 401 names (RFC 9728 §5.1): under the issuer, so it reaches this service
 * through a proxy that serves it under a path prefix too.
 */
export const resourceMetadataUrl = (issuer: string, path: McpResourcePath): string => `${issuer}${PROTECTED_RESOURCE_METADATA_PATH}${path}`;

/** The scopes a token may carry: what an API key may do (lib/auth/api-key-record.ts). */
export const OAUTH_SCOPES = ['read', 'write'] as const;
