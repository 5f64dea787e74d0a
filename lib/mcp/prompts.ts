/**
 * MCP prompts: the jobs agents are asked to do here, each a template that
 * names the tools to call and how. Arguments are plain strings (MCP prompt
 * arguments are), checked here; a bad one is an InvalidParams error saying
 * what is expected.
 */
import { ErrorCode, McpError, type GetPromptResult, type Prompt } from '@modelcontextprotocol/sdk/types.js';
import { isMxDateString } from '../time/mexico-city.ts';

interface PromptArgument {
  name: string;
  description: string;
  required: boolean;
  /** What a valid value looks like, and how to say so. */
  pattern: RegExp;
  /** A further check the pattern cannot make (a day that exists). */
  valid?: (value: string) => boolean;
  expected: string;
  /** Tools only this argument's step calls: the argument is offered only in a session that has them. */
  tools?: string[];
}

interface PromptTemplate {
  name: string;
  title: string;
  description: string;
  /** The tools every run of the prompt calls: it is offered only in a session that has them all. */
  tools: string[];
  arguments: PromptArgument[];
  text: (args: Record<string, string>, has: (tool: string) => boolean) => string;
}

// Years 1970–2999, as every tool the prompts name takes them (the spec's CalendarDate, TargetMonth, PositionMonth, CycleKey):
// a prompt never fills in a value its tools refuse.
const MONTH = { pattern: /^(19[7-9][0-9]|2[0-9]{3})-(0[1-9]|1[0-2])$/, expected: 'a calendar month as YYYY-MM, 1970–2999 (e.g. 2026-03)' };
const RFC = { pattern: /^[A-ZÑ&]{3,4}[0-9]{6}[A-Z0-9]{3}$/, expected: 'an RFC of 12 (company) or 13 (person) characters, upper case (e.g. PEM990101AB1)' };
const DAY = {
  pattern: /^(19[7-9][0-9]|2[0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/,
  valid: isMxDateString,
  expected: 'a day of the calendar as YYYY-MM-DD, 1970–2999',
};

/** First and last day of a YYYY-MM month. */
function monthDays(month: string): { first: string; last: string } {
  const [y, m] = month.split('-').map(Number) as [number, number];
  const last = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return { first: `${month}-01`, last: `${month}-${String(last).padStart(2, '0')}` };
}

/** Days from `first` to `last`, both included (0 when `last` is before `first`). */
function daysBetween(first: string, last: string): number {
  return Math.max(0, Math.round((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / 86_400_000) + 1);
}

/** The longest period auditDiscountsAndShrinkage covers (its spec: "at most 366 days; longer: its first 366 days"). */
const AUDIT_MAX_DAYS = 366;

export const PROMPTS: PromptTemplate[] = [
  {
    name: 'month-end-tax-review',
    title: 'Month-end tax review',
    description: "Review a month's CFDI taxes: reconcile VAT and the 4% retention, explain each discrepancy and warning, and list the invoices to correct.",
    tools: ['getTaxSummary', 'getFinancialDoc', 'listFinancialDocs', 'getTaxPosition'],
    arguments: [{ name: 'month', description: 'The month to review, YYYY-MM (America/Mexico_City).', required: true, ...MONTH }],
    text: ({ month }) => {
      const { first, last } = monthDays(month!);
      return [
        `Do the month-end tax review of ${month} for my company.`,
        `1. Call getTaxSummary with {"targetMonth": "${month}"} (read freight://docs/tools/getTaxSummary.md for the rules). Report the month's totals: taxable base, VAT declared vs expected, 4% retention declared vs expected, exempt amounts.`,
        `2. Call getTaxSummary again with {"targetMonth": "${month}", "findingKind": "discrepancy"} and then "warning"; for each finding explain in one line what is wrong and what the correct amount is.`,
        `3. For each invoice named in a finding, call getFinancialDoc with its id (or listFinancialDocs with {"uuid": ...}) to confirm the client and amounts.`,
        `4. Call listFinancialDocs with {"startDate": "${first}", "endDate": "${last}", "cancellationStatus": "pending"} and list the cancellations still awaiting the receiver: they count as valid until accepted.`,
        `5. Call getTaxPosition with {"month": "${month}"}: the VAT payable or in favour on the cash basis (collected, retained by clients, creditable, the previous month's retention credit), the IVA and ISR retained to pay by the 17th, and the non-creditable VAT warnings to fix with the suppliers.`,
        'Finish with a table of the invoices to correct (folio, client, issue, amount) and the totals to declare.',
      ].join('\n');
    },
  },
  {
    name: 'shrinkage-claim',
    title: 'Shrinkage claim for a client',
    description:
      'Prepare a fuel shrinkage (merma) claim against a client: the legs over tolerance, their litres and value, what was already recovered on invoices and what is still recoverable.',
    tools: ['auditDiscountsAndShrinkage', 'listShipments', 'getFinancialDoc'],
    arguments: [
      { name: 'client', description: "The client's RFC.", required: true, ...RFC },
      { name: 'startDate', description: 'First day of the period, YYYY-MM-DD (default: 90 days ago).', required: false, ...DAY },
      { name: 'endDate', description: 'Last day of the period, YYYY-MM-DD (default: today).', required: false, ...DAY },
    ],
    text: ({ client, startDate, endDate }) => {
      const period = JSON.stringify({ client, ...(startDate ? { startDate } : {}), ...(endDate ? { endDate } : {}) });
      return [
        `Prepare a shrinkage claim against client ${client}${startDate || endDate ? ` for ${startDate ?? '…'} to ${endDate ?? 'today'}` : ''}.`,
        `1. Call auditDiscountsAndShrinkage with ${period} (formulas: freight://docs/tools/auditDiscountsAndShrinkage.md). Take the legs over tolerance, their shrinkage litres and value, the value already deducted on invoices and the value still recoverable.`,
        // The trips of the audit's own period: listShipments has no default period (nor the audit's 366-day cap), so a
        // period the caller left open (the 90-day default) or the audit shortened is the one the audit answers.
        `2. Call listShipments with ${
          startDate && endDate && daysBetween(startDate, endDate) <= AUDIT_MAX_DAYS
            ? JSON.stringify({ client, startDate, endDate, dateFilterBy: 'offload' })
            : `${JSON.stringify({ client, dateFilterBy: 'offload' })} plus "startDate" and "endDate" set to the period the audit answered (its period.startDate and period.endDate)`
        } to get each trip's legs with loaded and offloaded litres and the linked invoice (financialLinked); only delivered legs count (a leg in transit has no shrinkage yet).`,
        '3. For the trips with a linked invoice, call getFinancialDoc to show whether a shrinkage deduction was already applied.',
        'Finish with the claim: one line per leg (trip, leg, product, loaded, offloaded, litres over tolerance, value), the total still recoverable, and the evidence (reception tickets) each line rests on.',
      ].join('\n');
    },
  },
  {
    name: 'collections-follow-up',
    title: 'Collections follow-up of overdue invoices',
    description:
      'List the overdue and unpaid invoices, by client, with what each owes and since when, and propose the follow-up (and optionally schedule the overdue-invoices alert).',
    tools: ['listFinancialDocs', 'getCashInflowForecast'],
    arguments: [
      { name: 'client', description: "Only this client's invoices (RFC; default: every client).", required: false, ...RFC },
      {
        name: 'month',
        description: 'Schedule the overdue-invoices alert for this cycle, YYYY-MM (default: no alert).',
        required: false,
        ...MONTH,
        tools: ['scheduleAlerts', 'listAlerts'],
      },
    ],
    text: ({ client, month }, has) => {
      const filter = client ? `, "client": "${client}"` : '';
      return [
        `Prepare the collections follow-up of overdue invoices${client ? ` of client ${client}` : ''}.`,
        `1. Call listFinancialDocs with {"paymentStatus": "unpaid"${filter}, "cancelled": false, "limit": 100} and then {"paymentStatus": "partial"${filter}, "cancelled": false, "limit": 100}; follow meta.nextCursor (argument cursor) while meta.hasMore is true.`,
        "2. An invoice is overdue when its due date (invoice date + the client's credit days, 30 by default) has passed and balance.pending > 0.",
        `3. Call getCashInflowForecast with {${client ? `"client": "${client}"` : ''}} to see each client's usual payment delay and the expected inflow.`,
        ...(month
          ? [
              `4. Call scheduleAlerts with {"body": {"userIds": ["collections"], "ruleId": "overdue-invoices", "cycleKey": "${month}", "nameAlert": "Overdue invoices ${month}"}} so the check is repeated and stored (listAlerts shows the result).`,
            ]
          : has('scheduleAlerts')
            ? ['4. To have the check stored as an alert, use scheduleAlerts with ruleId "overdue-invoices" (ask me first).']
            : []),
        'Finish with a table per client: folio, invoice date, due date, days overdue, pending amount; the total overdue; and the client to call first.',
      ].join('\n');
    },
  },
];

/**
 * The tools of a session (its toolsets, read-only or not), for the prompts to offer only what it can run: a prompt
 * whose tools are not all there is not offered (prompts/get: InvalidParams naming them), nor an argument whose step's
 * tools are not. Undefined: every tool of the catalogue.
 */
export type SessionTools = ReadonlySet<string> | undefined;

const hasAll = (tools: SessionTools, names: readonly string[] = []): boolean => tools === undefined || names.every((n) => tools.has(n));
const offered = (tools: SessionTools): PromptTemplate[] => PROMPTS.filter((p) => hasAll(tools, p.tools));
const argumentsOf = (prompt: PromptTemplate, tools: SessionTools): PromptArgument[] => prompt.arguments.filter((a) => hasAll(tools, a.tools));

/** The `prompts/list` entries of a session with `tools`. */
export const promptListing = (tools?: SessionTools): Prompt[] =>
  offered(tools).map((p) => ({
    name: p.name,
    title: p.title,
    description: p.description,
    arguments: argumentsOf(p, tools).map(({ name, description, required }) => ({ name, description, required })),
  }));

/** `prompts/get`: the template filled in, or InvalidParams naming the argument and what it expects. */
export function getPrompt(name: string, args: Record<string, string> | undefined, tools?: SessionTools): GetPromptResult {
  const prompt = PROMPTS.find((p) => p.name === name);
  if (!prompt)
    throw new McpError(
      ErrorCode.InvalidParams,
      `Unknown prompt: ${name} (prompts: ${
        offered(tools)
          .map((p) => p.name)
          .join(', ') || 'none'
      })`,
    );
  if (!hasAll(tools, prompt.tools)) {
    const missing = prompt.tools.filter((n) => !tools?.has(n));
    throw new McpError(
      ErrorCode.InvalidParams,
      `Prompt ${name} calls ${missing.join(', ')}, not in this session's tools; connect with ?toolsets= naming their toolsets (or all), without readOnly=true if a tool writes`,
    );
  }
  const takes = argumentsOf(prompt, tools);
  const given = args ?? {};
  const unknown = Object.keys(given).filter((k) => !takes.some((a) => a.name === k));
  if (unknown.length)
    throw new McpError(
      ErrorCode.InvalidParams,
      `${name}: unknown argument(s) ${unknown.join(', ')} (takes: ${takes.map((a) => a.name).join(', ') || 'none'}${takes.length < prompt.arguments.length ? " in this session's toolsets" : ''})`,
    );
  const values: Record<string, string> = {};
  for (const arg of takes) {
    const value = given[arg.name]?.trim();
    if (!value) {
      if (arg.required) throw new McpError(ErrorCode.InvalidParams, `${name}: argument '${arg.name}' is required: ${arg.expected}`);
      continue;
    }
    if (!arg.pattern.test(value) || (arg.valid && !arg.valid(value)))
      throw new McpError(ErrorCode.InvalidParams, `${name}: argument '${arg.name}' is '${value}', expected ${arg.expected}`);
    values[arg.name] = value;
  }
  return {
    description: prompt.description,
    messages: [{ role: 'user', content: { type: 'text', text: prompt.text(values, (tool) => hasAll(tools, [tool])) } }],
  };
}
