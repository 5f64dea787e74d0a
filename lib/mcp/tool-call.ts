/**
 * One tool call, end to end: the user's confirmation where the tool changes
 * money and the client can ask (MCP elicitation), asked once the arguments
 * passed the operation's validation, the REST operation, the
 * result budget, and the MCP result (untrusted text stripped and flagged).
 */
import type { FastifyInstance } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { errorBody } from '../http/api-error.ts';
import { dispatchTool, toToolResult, type DispatchContext, type ToolDefinition } from './tools-from-spec.ts';
import { errorWithinBudget, withinBudget } from './result-budget.ts';

/** What the user answered to a confirmation: `unanswered` when the client failed or timed out. */
export type ConfirmAnswer = 'accept' | 'decline' | 'cancel' | 'unanswered';

export interface ToolCallContext extends DispatchContext {
  /** Asks the user through the client (elicitation); absent when the client cannot. */
  confirm?: (message: string) => Promise<ConfirmAnswer>;
}

/** The arguments as shown to the user, bounded (a month of delivery rows is not a dialog). */
const ARGUMENTS_SHOWN = 1500;

/**
 * The question asked before a tool that changes money runs: the operation's
 * `x-mcp-confirm` (what the write changes) and the call's arguments.
 * Undefined for a tool that needs none.
 */
export function confirmationMessage(tool: ToolDefinition, args: Record<string, unknown>): string | undefined {
  const why = tool.operation.extensions['x-mcp-confirm'];
  if (typeof why !== 'string') return undefined;
  const shown = JSON.stringify(args);
  const clipped = shown.length > ARGUMENTS_SHOWN ? `${shown.slice(0, ARGUMENTS_SHOWN)}… (${shown.length} characters in all)` : shown;
  return `${tool.title} (${tool.name}): ${why.trim()}\nArguments: ${clipped}\nGo ahead?`;
}

const NOT_DONE: Record<Exclude<ConfirmAnswer, 'accept'>, string> = {
  decline: 'the user declined it',
  cancel: 'the user dismissed the confirmation',
  unanswered: 'the confirmation got no answer',
};

export async function callTool(app: FastifyInstance, tool: ToolDefinition, args: Record<string, unknown>, ctx: ToolCallContext): Promise<CallToolResult> {
  const question = ctx.confirm ? confirmationMessage(tool, args) : undefined;
  if (question !== undefined && ctx.confirm) {
    // The arguments first, by the REST operation's own validation (its handler not run): an invalid call gets its 400 without asking the user.
    const checked = await dispatchTool(app, tool, args, { ...ctx, validateOnly: true });
    if (checked.statusCode >= 400) return toToolResult(errorWithinBudget(checked), tool);
    const answer = await ctx.confirm(question);
    if (answer !== 'accept') {
      const detail = `${tool.name} was not run: ${NOT_DONE[answer]}, so nothing was written. Do not retry unless the user asks for it again.`;
      return toToolResult({ statusCode: 409, body: errorBody(409, 'Not confirmed', [detail], { reason: 'conflict' }) }, tool);
    }
  }
  const first = await dispatchTool(app, tool, args, ctx);
  const { result, note } = await withinBudget(tool, args, first, (again) => dispatchTool(app, tool, again, ctx));
  return toToolResult(result, tool, note ? [note] : []);
}
