/**
 * What serves an MCP session once a client opens one: the SDK's transports and the per-session
 * McpServer (server.ts, with the SDK's server and its zod schemas). Loaded by the first MCP request,
 * not when the routes are registered: ~0.4 CPU-s that most processes building the app (each test
 * file, each spawned service) would pay for no session at all (issue 39).
 */
import { onFirstUse } from '../shared/on-first-use.ts';

export const sessionRuntime = onFirstUse(async () => {
  const [server, streamable, sse, types, requestBody] = await Promise.all([
    import('./server.ts'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/server/sse.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('@modelcontextprotocol/sdk/server/requestBody.js'),
  ]);
  return {
    createMcpServer: server.createMcpServer,
    StreamableHTTPServerTransport: streamable.StreamableHTTPServerTransport,
    SSEServerTransport: sse.SSEServerTransport,
    isInitializeRequest: types.isInitializeRequest,
    /** Whether a value is one JSON-RPC message as the SDK's transports read it (they refuse the whole POST otherwise). */
    isJsonRpcMessage: (value: unknown): boolean => types.JSONRPCMessageSchema.safeParse(value).success,
    supportedProtocolVersions: types.SUPPORTED_PROTOCOL_VERSIONS,
    maxBatchSize: requestBody.MAX_BATCH_SIZE,
  };
});
