/**
 * The spec's MCP operations (spec/paths/mcp.yaml). They carry
 * `x-no-fastify-config: true`: glue skips them and lib/mcp registers their
 * routes itself, so they have no entry in the REST handler map and are never
 * turned into tools. test/mcp-tools.test.ts checks this list against their document (spec/mcp.yaml, not the REST one).
 */
export const MCP_OPERATION_IDS = ['mcpPost', 'mcpStream', 'mcpDeleteSession', 'mcpLegacySse', 'mcpLegacyMessage'] as const;
export type McpOperationId = (typeof MCP_OPERATION_IDS)[number];
