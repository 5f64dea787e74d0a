/**
 * Requests whose params this server checks itself. The SDK parses a request against its schema
 * before the handler and throws the schema's own error, which reaches the client as -32603
 * "Internal error" with the raw issue list; a request with malformed params is the client's
 * mistake: -32602 "Invalid params" (JSON-RPC 2.0 §5.1) with a short message naming each problem.
 * (For tools/call the SDK's Server checks the params itself before the handler, also as -32602,
 * in its own words; what it lets through is parsed here for its type.)
 */
import { z } from 'zod';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** The schema to register a handler under: the method alone, params left to `checkedRequest`. */
export const anyParams = <M extends string>(method: M) => z.looseObject({ method: z.literal(method) });

/** `request` as `schema` reads it, or the -32602 that names what is wrong (at most five problems). */
export function checkedRequest<S extends z.ZodType>(schema: S, request: unknown): z.output<S> {
  const parsed = schema.safeParse(request);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.map(String).join('.') : 'the request';
    return `${where}: ${issue.message}`;
  });
  const more = problems.length > 5 ? `; and ${problems.length - 5} more` : '';
  const method = (request as { method?: unknown }).method;
  throw new McpError(ErrorCode.InvalidParams, `Invalid params of ${String(method)}: ${problems.slice(0, 5).join('; ')}${more}`);
}
