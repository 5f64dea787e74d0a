/**
 * MCP interface for AI agents. buildApp registers it by default (option
 * `mcp`: options, or `false` to leave it out); the service passes its
 * configuration's (MCP_* variables: AppConfig.mcp), others get the defaults.
 */
export { registerMcp, type McpOptions, type McpHandle, type RegisterMcpArgs } from './transports.ts';
export { buildToolTable, toolInputSchema, isToolOperation, dispatchTool, toToolResult, type ToolDefinition } from './tools-from-spec.ts';
export { OPENAPI_URI, DOMAIN_NOTES_URI } from './resources.ts';
export { MCP_OPERATION_IDS, type McpOperationId } from './operation-ids.ts';
