/**
 * The alert rule catalogue, as pure functions over loaded documents: each rule
 * turns a tenant's data for a cycle (a Mexico City month) into findings, reusing
 * the domain functions so an alert agrees with the lists and audits:
 *
 *   overdue-invoices          documentBalance + tenant credit days
 *   shrinkage-over-tolerance  legShrinkage of delivered legs (tolerance per client/product)
 *   tax-findings              reconcileDocument
 *   unbilled-deliveries       tripOffloadDate / tripFreightValue + isInvoiceCancelled
 *
 * Loading the data is lib/alerts/evaluate.ts's job.
 */
import type { FinancialDocument } from '../model/financial-document.ts';
import type { TripDocument } from '../model/trip-document.ts';
import type { TenantSettings } from '../model/tenant-settings.ts';
import { documentBalance, type BalanceInput } from '../finance/balance.ts';
import { rateOf, toMxn } from '../money/currency.ts';
import { isInvoiceCancelled } from '../finance/cancellation.ts';
import { isDelivered } from '../trips/delivery-state.ts';
import { legShrinkage } from '../trips/shrinkage.ts';
import { reconcileDocument } from '../tax/reconcile.ts';
import { tripFreightValue, tripOffloadDate } from '../analytics/dispatch-to-bill.ts';
import { fromCents, toCents } from '../money/cents.ts';
import { daysBetweenDates, mxAddDays, mxDateString, mxMonthRange, MS_PER_DAY } from '../time/mexico-city.ts';

export const ALERT_RULE_IDS = ['overdue-invoices', 'shrinkage-over-tolerance', 'tax-findings', 'unbilled-deliveries'] as const;
export type AlertRuleId = (typeof ALERT_RULE_IDS)[number];

export const isAlertRuleId = (value: string): value is AlertRuleId => (ALERT_RULE_IDS as readonly string[]).includes(value);

export const ALERT_RULE_TITLES: Record<AlertRuleId, string> = {
  'overdue-invoices': 'Overdue invoices (pending balance past due)',
  'shrinkage-over-tolerance': 'Shrinkage beyond tolerance in the cycle',
  'tax-findings': 'Tax reconciliation findings in the cycle',
  'unbilled-deliveries': 'Delivered trips not yet billed',
};

export type Severity = 'critical' | 'warning' | 'info';

export interface AlertFinding {
  code: string;
  severity: Severity;
  /** Financial document id, `tripId/shipment` for a leg, or trip id. */
  ref: string;
  client: string;
  message: string;
  /** MXN; signed for tax differences. */
  amount: number;
  /** ISO instant of the invoice, leg or delivery. */
  date: string;
  details: Record<string, unknown>;
}

export interface AlertSummary {
  findings: number;
  critical: number;
  warning: number;
  info: number;
  /** Σ |amount| of every finding, in MXN. */
  amount: number;
}

export interface RuleOutcome {
  status: 'triggered' | 'clear';
  message: string;
  summary: AlertSummary;
  /** Most important first, capped at `MAX_LISTED_FINDINGS`. */
  findings: AlertFinding[];
  truncated: boolean;
}

/** Findings stored per alert record; the summary still counts them all. */
export const MAX_LISTED_FINDINGS = 200;

export interface RuleInput {
  cycleKey: string;
  /** Evaluation instant (epoch ms). */
  asOf: number;
  settings: TenantSettings;
}

const SEVERITY_ORDER: Record<Severity, number> = { critical: 0, warning: 1, info: 2 };

const money = (pesos: number): string => `MXN ${pesos.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

const iso = (ms: number): string => new Date(ms).toISOString();

/** Sorts (severity, then |amount| desc, then ref), caps the list and summarises. */
export function outcome(findings: AlertFinding[], message: (s: AlertSummary) => string): RuleOutcome {
  const summary: AlertSummary = { findings: findings.length, critical: 0, warning: 0, info: 0, amount: 0 };
  let amountC = 0;
  for (const f of findings) {
    summary[f.severity] += 1;
    amountC += Math.abs(toCents(f.amount));
  }
  summary.amount = fromCents(amountC);
  const sorted = [...findings].sort(
    (a, b) =>
      SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || Math.abs(b.amount) - Math.abs(a.amount) || (a.ref < b.ref ? -1 : a.ref > b.ref ? 1 : 0),
  );
  return {
    status: summary.critical + summary.warning > 0 ? 'triggered' : 'clear',
    message: message(summary),
    summary,
    findings: sorted.slice(0, MAX_LISTED_FINDINGS),
    truncated: sorted.length > MAX_LISTED_FINDINGS,
  };
}

// ---------------------------------------------------------------------------
// overdue-invoices

/** Days past due from which an overdue invoice is critical rather than a warning. */
export const OVERDUE_CRITICAL_DAYS = 30;

export function creditDaysFor(settings: Pick<TenantSettings, 'creditDaysByClient' | 'defaultCreditDays'>, client: string): number {
  return settings.creditDaysByClient[client] ?? settings.defaultCreditDays;
}

/**
 * Invoices emitted before the end of the cycle (and no later than `asOf`), not
 * cancelled, with a pending balance, whose due day (invoice day + the client's
 * credit days, Mexico City calendar) is before the evaluation day. Pure per
 * document, so a large portfolio can be fed in chunks (see `overdueOutcome`).
 */
export type OverdueInvoiceSource = BalanceInput &
  Pick<FinancialDocument, '_id' | 'id' | 'client' | 'date' | 'exchangeRate'> & {
    invoice: Pick<FinancialDocument['invoice'], 'uuid' | 'num'>;
  };

export function overdueInvoiceFindings(docs: Iterable<OverdueInvoiceSource>, input: RuleInput): AlertFinding[] {
  const { endExclusive } = mxMonthRange(input.cycleKey);
  const cutoff = Math.min(endExclusive, input.asOf + 1);
  const today = mxDateString(input.asOf);
  const findings: AlertFinding[] = [];
  for (const doc of docs) {
    if (doc.date >= cutoff) continue;
    const balance = documentBalance(doc);
    if (balance.isCancelled || balance.pending <= 0) continue;
    // Alerts speak MXN: a document in another currency at its exchange rate.
    const pending = toMxn(balance.pending, rateOf(doc));
    // Whole days, as the receivables aging and the forecast read the same setting (Math.round): 2.6 is 3.
    const creditDays = Math.round(creditDaysFor(input.settings, doc.client));
    const dueDate = mxAddDays(mxDateString(doc.date), creditDays);
    const daysOverdue = daysBetweenDates(dueDate, today);
    if (daysOverdue <= 0) continue;
    const folio = doc.invoice?.num ?? doc.id;
    findings.push({
      code: 'OVERDUE_INVOICE',
      severity: daysOverdue > OVERDUE_CRITICAL_DAYS ? 'critical' : 'warning',
      ref: doc._id,
      client: doc.client,
      message: `Invoice ${folio} is ${plural(daysOverdue, 'day')} overdue, ${money(pending)} pending`,
      amount: pending,
      date: iso(doc.date),
      details: {
        folio,
        uuid: doc.invoice?.uuid ?? null,
        total: balance.total,
        paid: balance.paid,
        creditNotes: balance.creditNotes,
        pending: balance.pending,
        dueDate,
        daysOverdue,
        creditDays,
      },
    });
  }
  return findings;
}

export function overdueOutcome(findings: AlertFinding[], input: RuleInput): RuleOutcome {
  const today = mxDateString(input.asOf);
  return outcome(findings, (s) =>
    s.findings === 0 ? `No overdue invoices as of ${today}` : `${plural(s.findings, 'overdue invoice')}, ${money(s.amount)} pending as of ${today}`,
  );
}

export function overdueInvoices(docs: Iterable<OverdueInvoiceSource>, input: RuleInput): RuleOutcome {
  return overdueOutcome(overdueInvoiceFindings(docs, input), input);
}

// ---------------------------------------------------------------------------
// shrinkage-over-tolerance

/**
 * Legs delivered in the cycle (their delivery instant in the Mexico City month)
 * whose shrinkage exceeds the tenant's tolerance for the client and products.
 * A leg in transit has no shrinkage yet (lib/trips/delivery-state.ts): it is
 * never a finding, and is judged in the cycle of its delivery once recorded.
 */
export function shrinkageOverTolerance(trips: Iterable<TripDocument>, input: RuleInput): RuleOutcome {
  const { start, endExclusive } = mxMonthRange(input.cycleKey);
  const findings: AlertFinding[] = [];
  let excessLitresTotal = 0;
  for (const trip of trips) {
    for (const leg of trip.shipments) {
      if (!isDelivered(leg) || leg.unloadDate < start || leg.unloadDate >= endExclusive) continue;
      const s = legShrinkage(leg, input.settings, trip.client);
      if (!s.exceedsTolerance) continue;
      excessLitresTotal += s.excessLitres;
      findings.push({
        code: 'SHRINKAGE_OVER_TOLERANCE',
        severity: 'warning',
        ref: `${trip._id}/${leg.shipment}`,
        client: trip.client,
        message: `Leg ${leg.shipment} of trip ${trip._id} lost ${s.shrinkageVolume} L (${s.shrinkagePercent}%), tolerance ${s.tolerancePct}%`,
        amount: s.value,
        date: iso(leg.unloadDate),
        details: {
          tripId: trip._id,
          legId: leg.id,
          shipment: leg.shipment,
          products: leg.products.map((p) => p.code),
          loaded: s.loaded,
          offloaded: s.offloaded,
          shrinkageVolume: s.shrinkageVolume,
          shrinkagePercent: s.shrinkagePercent,
          tolerancePct: s.tolerancePct,
          excessLitres: s.excessLitres,
          recoverableLitres: s.recoverableLitres,
          pricePerLitre: s.pricePerLitre,
        },
      });
    }
  }
  const litres = Math.round(excessLitresTotal * 1000) / 1000;
  return outcome(findings, (s) =>
    s.findings === 0
      ? `No leg over shrinkage tolerance in ${input.cycleKey}`
      : `${plural(s.findings, 'leg')} over shrinkage tolerance in ${input.cycleKey}: ${litres} L beyond tolerance, ${money(s.amount)} recoverable`,
  );
}

// ---------------------------------------------------------------------------
// tax-findings

const TAX_SEVERITY = { discrepancy: 'critical', warning: 'warning', info: 'info' } as const;

/** Reconciliation findings of the invoices emitted in the cycle (cancelled documents carry no tax and are skipped). */
export function taxFindings(docs: Iterable<FinancialDocument>, input: RuleInput): RuleOutcome {
  const { start, endExclusive } = mxMonthRange(input.cycleKey);
  const findings: AlertFinding[] = [];
  let reconciled = 0;
  for (const doc of docs) {
    if (doc.date < start || doc.date >= endExclusive) continue;
    const r = reconcileDocument(doc, input.settings);
    if (r.cancelled) continue;
    reconciled += 1;
    for (const f of r.findings) {
      if (f.code === 'DOCUMENT_CANCELLED') continue;
      findings.push({
        code: f.code,
        severity: TAX_SEVERITY[f.kind],
        ref: doc._id,
        client: doc.client,
        message: f.message,
        amount: toMxn(f.difference, rateOf(doc)),
        date: iso(doc.date),
        details: {
          uuid: f.uuid,
          kind: f.kind,
          conceptIndex: f.conceptIndex ?? null,
          declared: f.declared,
          expected: f.expected,
          difference: f.difference,
        },
      });
    }
  }
  return outcome(findings, (s) =>
    s.critical + s.warning === 0
      ? `No tax discrepancies or warnings in ${plural(reconciled, 'invoice')} of ${input.cycleKey}`
      : `${[s.critical > 0 ? plural(s.critical, 'discrepancy', 'discrepancies') : '', s.warning > 0 ? plural(s.warning, 'warning') : ''].filter(Boolean).join(' and ')} in ${plural(reconciled, 'invoice')} of ${input.cycleKey}`,
  );
}

// ---------------------------------------------------------------------------
// unbilled-deliveries

/** Days after delivery from which an unbilled trip is critical rather than a warning. */
export const UNBILLED_CRITICAL_DAYS = 7;

/**
 * Trips delivered (every leg offloaded; the last offload is the delivery) in
 * the cycle and no later than `asOf`, without a linked invoice that exists and
 * is not cancelled. `linked` holds the tenant's documents named by `idFinan`.
 */
export function unbilledDeliveries(trips: Iterable<TripDocument>, linked: ReadonlyMap<string, FinancialDocument>, input: RuleInput): RuleOutcome {
  const { start, endExclusive } = mxMonthRange(input.cycleKey);
  const findings: AlertFinding[] = [];
  for (const trip of trips) {
    const deliveredAt = tripOffloadDate(trip);
    if (deliveredAt === null || deliveredAt < start || deliveredAt >= endExclusive || deliveredAt > input.asOf) continue;
    const doc = trip.idFinan ? linked.get(trip.idFinan) : undefined;
    if (doc && !isInvoiceCancelled(doc)) continue;
    const reason = !trip.idFinan ? 'no linked invoice' : !doc ? 'linked invoice not found' : 'linked invoice cancelled';
    const days = Math.floor((input.asOf - deliveredAt) / MS_PER_DAY);
    const value = tripFreightValue(trip);
    findings.push({
      code: 'UNBILLED_DELIVERY',
      severity: days > UNBILLED_CRITICAL_DAYS ? 'critical' : 'warning',
      ref: trip._id,
      client: trip.client,
      message: `Trip ${trip._id} delivered ${mxDateString(deliveredAt)} is not billed (${reason}), ${money(value)} of freight`,
      amount: value,
      date: iso(deliveredAt),
      details: {
        deliveredAt: iso(deliveredAt),
        daysSinceDelivery: days,
        legs: trip.shipments.length,
        idFinan: trip.idFinan,
        reason,
      },
    });
  }
  return outcome(findings, (s) =>
    s.findings === 0
      ? `Every trip delivered in ${input.cycleKey} is billed`
      : `${plural(s.findings, 'delivered trip')} of ${input.cycleKey} not billed, ${money(s.amount)} of freight`,
  );
}
