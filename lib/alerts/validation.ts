/**
 * Domain checks of a schedule request. The HTTP layer already validated the
 * body against the spec; these hold for every caller (MCP tools, scripts) and
 * cover what a JSON schema cannot say: the tenant, and the serialised size of
 * `extraData`.
 */
import { invalidBody, foreignTenant } from '../http/api-error.ts';
import { isMonthKey } from '../time/mexico-city.ts';
import { parseDateTime } from '../time/date-time.ts';
import { ALERT_RULE_IDS, isAlertRuleId, type AlertRuleId } from './rules.ts';
import { hasLoneSurrogate, loneSurrogateProblem } from '../shared/lone-surrogate.ts';

export const MAX_USERS_PER_REQUEST = 1000;
export const MAX_USER_ID_LENGTH = 128;
export const MAX_EXTRA_DATA_BYTES = 8192;
export const MAX_EXTRA_DATA_KEYS = 50;
export const MAX_NAME_LENGTH = 200;

export interface ScheduleAlertsInput {
  tenantId?: string;
  userIds: string[];
  ruleId: string;
  cycleKey: string;
  nameAlert: string;
  extraData?: Record<string, unknown>;
  /** ISO 8601 date-time; default now. */
  dueDate?: string;
  individual?: boolean;
}

export interface ValidScheduleInput {
  userIds: string[];
  ruleId: AlertRuleId;
  cycleKey: string;
  nameAlert: string;
  extraData: Record<string, unknown>;
  dueDate: Date;
  individual: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && (Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null);

const DUE_DATE_MIN = Date.UTC(1969, 11, 31);
const DUE_DATE_MAX = Date.UTC(3000, 0, 2) - 1;

/** Problems with `extraData`, one detail each (empty when it is fine). */
export function extraDataProblems(extra: unknown): string[] {
  if (extra === undefined) return [];
  if (!isPlainObject(extra)) return ['extraData must be an object'];
  const problems: string[] = [];
  if (Object.keys(extra).length > MAX_EXTRA_DATA_KEYS) problems.push(`extraData must not have more than ${MAX_EXTRA_DATA_KEYS} keys`);
  // Any key and any depth: extraData is stored serialised (extra-data.ts), and its size bounds its depth. Measured
  // without JSON.stringify, whose recursion overflows the stack on a body nested some thousands deep (a 500).
  const bytes = jsonByteLength(extra);
  if (bytes > MAX_EXTRA_DATA_BYTES) problems.push(`extraData is ${bytes} bytes as JSON; the limit is ${MAX_EXTRA_DATA_BYTES}`);
  else {
    const path = nonFiniteNumber(extra);
    if (path !== null)
      problems.push(`extraData.${path} is an infinite number (e.g. 1e400, beyond the largest a double holds): it would come back null; send it as text`);
  }
  return problems;
}

/**
 * The UTF-8 size of `JSON.stringify(root)`, for a value parsed from JSON (objects, arrays, strings, numbers, booleans,
 * null), counted iteratively: no depth can overflow the stack.
 */
export function jsonByteLength(root: unknown): number {
  let bytes = 0;
  const stack: unknown[] = [root];
  while (stack.length) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      bytes += 2 + Math.max(0, value.length - 1);
      for (const v of value) stack.push(v === undefined || typeof v === 'function' || typeof v === 'symbol' ? null : v);
    } else if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function') {
      const entries = Object.entries(value).filter(([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol');
      bytes += 2 + Math.max(0, entries.length - 1);
      for (const [k, v] of entries) {
        bytes += Buffer.byteLength(JSON.stringify(k), 'utf8') + 1;
        stack.push(v);
      }
    } else bytes += Buffer.byteLength(JSON.stringify(value) ?? 'null', 'utf8');
  }
  return bytes;
}

/** The path of a number that is not finite (JSON's 1e400 parses to Infinity and is written back as null); null when none. */
function nonFiniteNumber(root: Record<string, unknown>): string | null {
  // Iterative: the size check above bounds the values walked, and no depth can overflow the stack.
  const stack: [unknown, string][] = Object.entries(root).map(([k, v]) => [v, k]);
  while (stack.length) {
    const [value, path] = stack.pop()!;
    if (typeof value === 'number' && !Number.isFinite(value)) return path.slice(0, 100);
    if (typeof value === 'object' && value !== null)
      for (const [k, v] of Object.entries(value)) stack.push([v, Array.isArray(value) ? `${path}[${k}]` : `${path}.${k}`]);
  }
  return null;
}

/**
 * 403 when `tenantId` names another tenant (checked first: nothing about the
 * body is disclosed to the wrong tenant); 400 listing every other problem.
 */
export function validateScheduleInput(tenant: string, input: ScheduleAlertsInput, now: Date): ValidScheduleInput {
  if (input.tenantId !== undefined && input.tenantId !== tenant) {
    throw foreignTenant(`tenantId ${input.tenantId} does not match the authenticated tenant`);
  }
  const problems: string[] = [];
  const userIds = Array.isArray(input.userIds) ? input.userIds : [];
  if (userIds.length === 0) problems.push('userIds must contain at least 1 user');
  if (userIds.length > MAX_USERS_PER_REQUEST) problems.push(`userIds must not contain more than ${MAX_USERS_PER_REQUEST} users`);
  const seen = new Set<string>();
  const dupes = new Set<string>();
  for (const id of userIds) {
    if (typeof id !== 'string' || id.trim() === '' || id !== id.trim() || id.length > MAX_USER_ID_LENGTH) {
      problems.push(`userIds entries must be 1–${MAX_USER_ID_LENGTH} characters without leading or trailing spaces (got ${JSON.stringify(id)})`);
      continue;
    }
    if (seen.has(id)) dupes.add(id);
    seen.add(id);
  }
  if (dupes.size > 0) problems.push(`userIds must be distinct; repeated: ${[...dupes].slice(0, 10).join(', ')}`);
  if (!isAlertRuleId(input.ruleId)) problems.push(`ruleId '${input.ruleId}' is unknown; known rules: ${ALERT_RULE_IDS.join(', ')}`);
  if (typeof input.cycleKey !== 'string' || !isMonthKey(input.cycleKey)) problems.push('cycleKey must be a month YYYY-MM');
  // Characters as the schema's maxLength counts them (code points: an emoji is one).
  if (typeof input.nameAlert !== 'string' || input.nameAlert.trim() === '' || [...input.nameAlert].length > MAX_NAME_LENGTH) {
    problems.push(`nameAlert must be 1–${MAX_NAME_LENGTH} characters`);
  } else if (hasLoneSurrogate(input.nameAlert)) problems.push(loneSurrogateProblem('nameAlert'));
  problems.push(...extraDataProblems(input.extraData));
  let dueDate = now;
  if (input.dueDate !== undefined) {
    const ms = parseDateTime(input.dueDate);
    if (Number.isNaN(ms)) problems.push('dueDate must be a valid date-time (ISO 8601)');
    // The schema's pattern keeps the written year in 1970–2999; its offset can move the instant a day either way, which
    // still writes back as RFC 3339 (a four-digit year). Checked here too for callers that bypass the schema.
    else if (ms < DUE_DATE_MIN || ms > DUE_DATE_MAX) problems.push('dueDate must be in the years 1970–2999');
    else dueDate = new Date(ms);
  }
  if (problems.length > 0) throw invalidBody(problems);
  return {
    userIds,
    ruleId: input.ruleId as AlertRuleId,
    cycleKey: input.cycleKey,
    nameAlert: input.nameAlert,
    extraData: input.extraData ?? {},
    dueDate,
    individual: input.individual ?? true,
  };
}
