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
 */
import { errorBody } from '../http/api-error.ts';
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
  if (first.statusCode >= 400 || bytes(first.body) <= room) return { result: first };
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
    if (!isList(retry.body) || retry.statusCode >= 400) return { result: retry };
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
