/**
 * Evaluates one alert rule for a tenant and cycle: loads the tenant settings
 * and the data the rule needs, then runs the pure rule (lib/alerts/rules.ts).
 */
import type { Db } from 'mongodb';
import { getTenantSettings } from '../settings/settings-repo.ts';
import { docsByIds, docsEmittedBefore, docsEmittedBetween, tripsOffloadedBetween, type DocumentBalanceFields } from './alert-sources-repo.ts';
import type { FinancialDocument } from '../model/financial-document.ts';
import { mxMonthRange } from '../time/mexico-city.ts';
import {
  ALERT_RULE_IDS,
  isAlertRuleId,
  overdueInvoiceFindings,
  overdueOutcome,
  shrinkageOverTolerance,
  taxFindings,
  unbilledDeliveries,
  type AlertFinding,
  type RuleInput,
  type RuleOutcome,
} from './rules.ts';

export interface EvaluateInput {
  tenant: string;
  ruleId: string;
  cycleKey: string;
  /** Evaluation instant. */
  asOf: Date;
}

const CHUNK = 500;

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of source) out.push(item);
  return out;
}

export async function evaluateAlertRule(db: Db, input: EvaluateInput, maxTimeMS: number): Promise<RuleOutcome> {
  const { tenant, ruleId, cycleKey } = input;
  if (!isAlertRuleId(ruleId)) throw new Error(`unknown alert rule '${ruleId}' (known: ${ALERT_RULE_IDS.join(', ')})`);
  const settings = await getTenantSettings(db, tenant);
  const rule: RuleInput = { cycleKey, asOf: input.asOf.getTime(), settings };
  const { start, endExclusive } = mxMonthRange(cycleKey);
  switch (ruleId) {
    case 'overdue-invoices': {
      // Streamed in chunks: a portfolio can be large, the overdue part is what is kept.
      const findings: AlertFinding[] = [];
      let chunk: DocumentBalanceFields[] = [];
      for await (const doc of docsEmittedBefore(db, tenant, Math.min(endExclusive, rule.asOf + 1), maxTimeMS)) {
        chunk.push(doc);
        if (chunk.length >= CHUNK) {
          findings.push(...overdueInvoiceFindings(chunk, rule));
          chunk = [];
        }
      }
      findings.push(...overdueInvoiceFindings(chunk, rule));
      return overdueOutcome(findings, rule);
    }
    case 'shrinkage-over-tolerance':
      // Shrinkage exists from the delivery on: the legs delivered in the cycle.
      return shrinkageOverTolerance(await tripsOffloadedBetween(db, tenant, start, endExclusive, maxTimeMS), rule);
    case 'tax-findings':
      return taxFindings(await collect(docsEmittedBetween(db, tenant, start, endExclusive, maxTimeMS)), rule);
    case 'unbilled-deliveries': {
      const trips = await tripsOffloadedBetween(db, tenant, start, endExclusive, maxTimeMS);
      const ids = [...new Set(trips.map((t) => t.idFinan).filter((id): id is string => typeof id === 'string' && id.length > 0))];
      const linked = new Map<string, FinancialDocument>();
      for (let i = 0; i < ids.length; i += CHUNK) {
        for (const doc of await docsByIds(db, tenant, ids.slice(i, i + CHUNK), maxTimeMS)) linked.set(doc._id, doc);
      }
      return unbilledDeliveries(trips, linked, rule);
    }
  }
}
