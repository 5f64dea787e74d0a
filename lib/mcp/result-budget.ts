/**
 * Every tool result within a budget: at most RESULT_BUDGET_BYTES of text
 * (100 KiB, about 25k tokens), what an agent can read without its context
 * overflowing. Nothing is ever cut silently:
 *
 * - A list (`{meta, data: [...]}` taking `limit`) over budget is asked again
 *   for as many items as fit, through the REST operation itself, so its
 *   `meta.nextCursor` (or the page to ask next) continues exactly after the
 *   last item returned: no gap, no repeat. The result says so in a note.
 *   Asked by `page`, the smaller page size divides the asked one, so the
 *   smaller page starts where the asked page did.
 * - Any other result over budget is a tool error saying how large it is and
 *   how to ask for less (`limit`, `detail=summary`, narrower filters).
 * - An error over budget (a body of thousands of invalid rows) keeps its code,
 *   message and reason and as many of its first problems (`details`, `fields`)
 *   as fit, then a last detail saying how many more were left out.
 */
import { ERROR_REASONS, errorBody, type ErrorReason } from '../http/api-error.ts';
import type { DispatchResult, ToolDefinition } from './tools-from-spec.ts';
import { renderJson } from './render-json.ts';

export const RESULT_BUDGET_BYTES = 100 * 1024;
/** Room kept for the notes a result opens with (truncation, third-party text). */
const NOTE_ROOM = 2048;
/** Requests for a list that fits: the data may change between them. */
const ATTEMPTS = 4;
/** The deepest `page` the REST lists answer. */
const MAX_PAGE = 500;

/** Bytes of a body as a tool result shows it. */
const bytes = (body: unknown): number => Buffer.byteLength(renderJson(body));

interface ListBody {
  meta: { limit: number; page: number; nextCursor?: string | null; hasMore?: boolean };
  data: unknown[];
  [key: string]: unknown;
}
const isList = (body: unknown): body is ListBody => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { meta, data } = body as { meta?: unknown; data?: unknown };
  return Array.isArray(data) && typeof meta === 'object' && meta !== null && typeof (meta as { limit?: unknown }).limit === 'number';
};

/** How many leading items of a list fit the budget (binary search on the rendered text). */
function itemsThatFit(body: ListBody, budget: number): number {
  let lo = 0;
  let hi = body.data.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (bytes({ ...body, data: body.data.slice(0, mid) }) <= budget) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The largest divisor of `n` not above `max` (at least 1). */
function divisorAtMost(n: number, max: number): number {
  for (let d = Math.min(n, max); d > 1; d--) if (n % d === 0) return d;
  return 1;
}

export interface BudgetedResult {
  result: DispatchResult;
  /** Said before the JSON when the list was shortened. */
  note?: string;
}

const kb = (n: number): string => `${Math.ceil(n / 1024)} KB`;

/** How to ask a tool for less, from the arguments it takes. */
function askForLess(tool: ToolDefinition): string {
  const ways = [
    ...(tool.locations.has('limit') ? ['a smaller `limit`'] : []),
    ...(tool.locations.has('detail') ? ['`detail=summary`'] : []),
    ...(tool.locations.has('findingsLimit') ? ['a smaller `findingsLimit`'] : []),
    'narrower filters (a shorter period, one client)',
  ];
  return ways.join(', or ');
}

function tooLarge(tool: ToolDefinition, size: number, budget: number, what: string): BudgetedResult {
  return {
    result: {
      statusCode: 413,
      body: errorBody(413, 'Result too large', [
        `${what} is ${kb(size)} as text, over the ${kb(budget)} a tool result may hold; none of it is returned rather than part of it.` +
          (tool.operation.method === 'GET' ? ` Ask for ${askForLess(tool)}.` : ' Read what it changed with the read tools.'),
      ]),
    },
  };
}

interface ErrorShape {
  error: { code: number; message: string; details: unknown[]; fields?: unknown[]; [key: string]: unknown };
}
const isErrorShape = (body: unknown): body is ErrorShape => {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { error } = body as { error?: unknown };
  if (typeof error !== 'object' || error === null || Array.isArray(error)) return false;
  const { message, details, fields } = error as { message?: unknown; details?: unknown; fields?: unknown };
  return typeof message === 'string' && Array.isArray(details) && (fields === undefined || Array.isArray(fields));
};

/** The last detail of a shortened error: how many problems are not listed. */
const leftOut = (n: number, listed: number, budget: number): string =>
  listed === 0
    ? `${n.toLocaleString('en-US')} problem${n === 1 ? '' : 's'}, none listed: the first alone is over the ${kb(budget)} of text a tool result may hold.`
    : `…and ${n.toLocaleString('en-US')} more problem${n === 1 ? '' : 's'}, left out to keep this result within ${kb(budget)} of text: ` +
      'correct the ones listed and call again to see the rest.';

/**
 * An error answer within the budget (the same one when it fits). The service's error shape keeps its
 * code, message and reason, its first details and fields that fit (the n-th field with the n-th
 * detail), and ends with a detail saying how many problems were left out; any other error body too
 * large is replaced by one saying so.
 */
export function errorWithinBudget(result: DispatchResult, budget = RESULT_BUDGET_BYTES): DispatchResult {
  const room = budget - NOTE_ROOM;
  const size = bytes(result.body);
  if (size <= room) return result;
  const body = result.body;
  if (isErrorShape(body)) {
    const { error } = body;
    const total = Math.max(error.details.length, error.fields?.length ?? 0);
    const shortened = (n: number): ErrorShape => ({
      ...body,
      error: {
        ...error,
        details: [...error.details.slice(0, n), leftOut(total - n, n, budget)],
        ...(error.fields ? { fields: error.fields.slice(0, n) } : {}),
      },
    });
    // Each listed problem takes at least its detail's length: a bound that spares rendering the whole list.
    let hi = 0;
    let used = 0;
    while (hi < total - 1) {
      used += Buffer.byteLength(renderJson(error.details[hi] ?? ''));
      if (used > room) break;
      hi += 1;
    }
    let lo = 0;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (bytes(shortened(mid)) <= room) lo = mid;
      else hi = mid - 1;
    }
    if (total > 0 && bytes(shortened(lo)) <= room) return { statusCode: result.statusCode, body: shortened(lo) };
  }
  const status = result.statusCode;
  const shaped = isErrorShape(body) ? body.error : undefined;
  const message = shaped && shaped.message.length <= 200 ? shaped.message : 'Error too large';
  const reason =
    typeof shaped?.reason === 'string' && (ERROR_REASONS as readonly string[]).includes(shaped.reason) ? (shaped.reason as ErrorReason) : undefined;
  const detail = `The error answer (HTTP ${status}) is ${kb(size)} as text, over the ${kb(budget)} a tool result may hold; none of it is returned rather than part of it.`;
  return { statusCode: status, body: errorBody(status, message, [detail], reason ? { reason } : {}) };
}

/**
 * `first` (the answer to `args`) within the budget. `redo` runs the tool
 * again with other arguments (the list's smaller page).
 */
export async function withinBudget(
  tool: ToolDefinition,
  args: Record<string, unknown>,
  first: DispatchResult,
  redo: (args: Record<string, unknown>) => Promise<DispatchResult>,
  budget = RESULT_BUDGET_BYTES,
): Promise<BudgetedResult> {
  const room = budget - NOTE_ROOM;
  if (first.statusCode >= 400) return { result: errorWithinBudget(first, budget) };
  if (bytes(first.body) <= room) return { result: first };
  if (tool.operation.method !== 'GET') {
    // A write has happened: its answer is withheld, the write is not undone, and the agent must know both.
    return tooLarge(tool, bytes(first.body), budget, `The operation was carried out (HTTP ${first.statusCode}), but its answer`);
  }
  if (!isList(first.body) || !tool.locations.has('limit')) return tooLarge(tool, bytes(first.body), budget, 'The result');
  const asked = first.body.meta.limit;
  const byCursor = typeof args.cursor === 'string';
  const offset = byCursor ? 0 : (first.body.meta.page - 1) * asked;
  let current: DispatchResult = first;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const body = current.body as ListBody;
    const fit = itemsThatFit(body, room);
    if (fit === 0) return tooLarge(tool, bytes({ ...body, data: body.data.slice(0, 1) }), budget, 'The first item alone');
    // By cursor (or from the first item) any page size continues the walk; by page, one dividing the offset starts where asked.
    const limit = offset === 0 ? fit : divisorAtMost(asked, fit);
    const page = offset / limit + 1;
    if (page > MAX_PAGE) return tooLarge(tool, bytes(first.body), budget, `This page (${asked} items)`);
    const retry = await redo({ ...args, limit, ...(byCursor || page === 1 ? {} : { page }) });
    if (retry.statusCode >= 400) return { result: errorWithinBudget(retry, budget) };
    if (!isList(retry.body)) return bytes(retry.body) <= room ? { result: retry } : tooLarge(tool, bytes(retry.body), budget, 'The result');
    current = retry;
    if (bytes(retry.body) > room) continue;
    const meta = retry.body.meta;
    const next =
      typeof meta.nextCursor === 'string'
        ? // A cursor goes with no page but the first: the page the call asked for is left out.
          `call again with the same arguments${args.page !== undefined && args.page !== 1 ? ' but no "page",' : ''} and "cursor": "${meta.nextCursor}"`
        : meta.hasMore === false
          ? 'nothing is left'
          : `call again with the same arguments, "limit": ${limit} and "page": ${page + 1}`;
    const note =
      `Truncated: ${retry.body.data.length} of the up to ${asked} items asked for, to keep this result within ${kb(budget)} of text. ` +
      `For the next items, ${next}.`;
    return { result: retry, note };
  }
  return tooLarge(tool, bytes(current.body), budget, 'The result');
}
