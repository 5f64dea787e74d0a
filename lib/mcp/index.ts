/**
 * MCP interface for AI agents. buildApp registers it (option `mcp`); scripts
 * only choose options, e.g. `buildApp({ ..., mcp: mcpOptionsFromEnv() })`.
 */
export { registerMcp, mcpOptionsFromEnv, type McpOptions, type McpHandle, type RegisterMcpArgs } from './transports.ts';
export { buildToolTable, toolInputSchema, isToolOperation, dispatchTool, toToolResult, type ToolDefinition } from './tools-from-spec.ts';
export { OPENAPI_URI, DOMAIN_NOTES_URI } from './resources.ts';
export { MCP_OPERATION_IDS, type McpOperationId } from './operation-ids.ts';
