/**
 * GET /api/tax-summary: monthly reconciliation of SubTotal, VAT and the 4% VAT
 * retention per client (docs/domain.md "Tax reconciliation"). Documents stream from
 * MongoDB (tenant + period first, projected to what the reconciliation reads);
 * each is reconciled by the pure reconcileDocument and folded into integer-cent
 * totals (tax-totals.ts) and a bounded findings list (findings-list.ts).
 */
import type { ServiceContext } from '../context.ts';
import { getTracedSettings } from '../settings/settings-source.ts';
import { findTaxDocsByIds, streamTaxDocs } from './tax-repo.ts';
import { listTaxFindings } from './tax-rollups-repo.ts';
import { readFreshTaxDays, readFreshTaxMonth, taxSummaryRollups } from './tax-summary-rollup-kind.ts';
import { mxMonthRange } from '../time/mexico-city.ts';
import { normalizeTaxDoc } from './normalize-tax-doc.ts';
import { monthsOf, resolveTaxPeriod, MAX_PERIOD_DAYS, type TaxPeriod } from '../shared/period.ts';
import { FindingsCollector, FINDING_KIND_ORDER, listedFinding, type FindingsReport } from './findings-list.ts';
import type { IndexedFinding } from './tax-day-rollup.ts';
import {
  ALLOWED_VAT_RATES,
  FREIGHT_CODE_PREFIX,
  LEGAL_ISR_RETENTION_RATES,
  LEGAL_VAT_RETENTION_RATES,
  reconcileDocument,
  type FindingKind,
  type ReconcileSettings,
} from './reconcile.ts';
import { clientList, largestFirst, type ClientList, type ReportOptions } from '../shared/client-list.ts';
import { invoiceBasisContribution, paymentBasisContributions, TaxTotalsAccumulator, type MonthTaxTotals, type TaxTotals } from './tax-totals.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';

export type TaxBasis = 'invoice' | 'payment';

export interface TaxSummaryInput {
  limit: number;
  basis: TaxBasis;
  client?: string;
  targetMonth?: string;
  startDate?: string;
  endDate?: string;
  findingKind?: FindingKind;
}

export interface TaxSummary {
  tenant: string;
  computedAt: string;
  basis: TaxBasis;
  basisDescription: string;
  period: Omit<TaxPeriod, 'start' | 'end'> & { maxDays: number };
  filters: { client: string | null; findingKind: FindingKind | null };
  parameters: {
    vatRate: number;
    allowedVatRates: number[];
    retentionRate: number;
    discrepancyTolerance: number;
    freightConcepts: string;
    retentionRule: string;
    accessorialRetention: string;
    legalRetentionRates: { vat: number[]; isr: number[] };
    otherTaxes: string;
    currency: string;
    cancellations: string;
    rounding: string;
    settingsSource: { vatRate: 'tenant' | 'default'; retentionRate: 'tenant' | 'default'; discrepancyTolerance: 'tenant' | 'default' };
  };
  totals: TaxTotals;
  months: (Omit<MonthTaxTotals, 'clients'> & { clients: ClientList<MonthTaxTotals['clients'][number]> })[];
  findings: FindingsReport;
}

const BASIS_DESCRIPTION: Record<TaxBasis, string> = {
  invoice: 'Month of the invoice date (emission, Mexico City): every non-cancelled invoice emitted in the period with its full amounts.',
  payment:
    'Cash basis: PUE invoices in the month of their invoice date; PPD invoices in the months of their valid payment complements (credit notes and cancelled records excluded), each amount scaled by paid ÷ Total (Pagos 2.0 proportional rule), payments beyond the Total carrying no tax.',
};

/** A period that is one whole calendar month (the payment basis keeps months: a document counts once in it). */
function isWholeMonth(period: TaxPeriod): boolean {
  const month = period.startDate.slice(0, 7);
  const r = mxMonthRange(month);
  return period.days > 0 && period.start === r.start && period.end === r.endExclusive - 1;
}

/**
 * From the totals kept on write (docs/rollups.md): on the invoice basis the period's days, on
 * the payment basis its month (brought up to date first); the client's rows only when a client
 * is asked for; the first `limit` findings from the findings index. The same figures as
 * reconciling every document of the period (test/tax-rollups-differential.test.ts).
 */
async function addKept(
  ctx: ServiceContext,
  tenant: string,
  period: TaxPeriod,
  settings: ReconcileSettings,
  input: TaxSummaryInput,
  acc: TaxTotalsAccumulator,
  findings: FindingsCollector,
): Promise<void> {
  const timeout = ctx.config.queryTimeoutMs;
  const month = period.startDate.slice(0, 7);
  const days =
    input.basis === 'invoice'
      ? await readFreshTaxDays(ctx.db, tenant, settings, period.startDate, period.endDate, timeout)
      : [await readFreshTaxMonth(ctx.db, tenant, settings, month, timeout)].filter((d) => d !== null);
  for (const day of days) {
    for (const row of day.rows) {
      if (input.client !== undefined && row.client !== input.client) continue;
      acc.addDayRow(day.month, row);
      findings.addCounts(row.findingCounts);
    }
  }
  if (period.days === 0) return;
  let room = input.limit;
  const keys: IndexedFinding[] = [];
  for (const kind of input.findingKind ? [input.findingKind] : FINDING_KIND_ORDER) {
    if (room <= 0) break;
    const listed = await listTaxFindings(
      ctx.db,
      tenant,
      {
        start: period.start,
        end: period.end,
        kind,
        limit: room,
        ...(input.client !== undefined ? { client: input.client } : {}),
        ...(input.basis === 'payment' ? { month } : {}),
      },
      timeout,
    );
    keys.push(...listed);
    room -= listed.length;
  }
  // The listed findings' text: their documents reconciled again (at most `limit` of them).
  const docs = await findTaxDocsByIds(
    ctx.db,
    tenant,
    keys.map((k) => k.docId),
    timeout,
  );
  const reconciled = new Map(docs.map((d) => [d.id, reconcileDocument(normalizeTaxDoc(d), settings)]));
  for (const k of keys) {
    const r = reconciled.get(k.docId);
    const f = r?.findings[k.n];
    if (r && f && f.code === k.code) findings.addListed(listedFinding(r, f, input.basis === 'invoice' ? r.month : month), r.date);
  }
}

/** `fromDocuments`: reconcile every document of the period, not the kept days (what verification compares against). */
export async function getTaxSummary(ctx: ServiceContext, tenant: string, input: TaxSummaryInput, opts: ReportOptions = {}): Promise<TaxSummary> {
  const now = ctx.now();
  const period = resolveTaxPeriod(now, input.targetMonth, input.startDate, input.endDate);
  const { settings, sourceOf } = await getTracedSettings(ctx.db, tenant);
  const slices = monthsOf(period);
  const acc = new TaxTotalsAccumulator(input.basis);
  const findings = new FindingsCollector(input.limit, input.findingKind ?? null);

  const kept = !opts.fromDocuments && (input.basis === 'invoice' || isWholeMonth(period)) && (await taxSummaryRollups.ready(ctx.db));
  if (kept) {
    await addKept(ctx, tenant, period, settings, input, acc, findings);
  } else {
    const cursor = streamTaxDocs(
      ctx.db,
      tenant,
      { basis: input.basis, start: period.start, end: period.end, ...(input.client ? { client: input.client } : {}) },
      ctx.config.queryTimeoutMs,
    );
    for await (const raw of cursor) {
      const doc = normalizeTaxDoc(raw);
      const r = reconcileDocument(doc, settings);
      const contributions = input.basis === 'invoice' ? [invoiceBasisContribution(doc, r)] : paymentBasisContributions(doc, r, slices);
      const first = contributions[0];
      if (!first) continue; // payment basis: selected, but nothing that counts falls in the period
      for (const c of contributions) acc.add(c);
      findings.add(r, first.month);
    }
  }

  const { totals, months } = acc.result(slices.map((s) => s.month));
  const { start: _s, end: _e, ...periodOut } = period;
  return {
    tenant,
    computedAt: now.toISOString(),
    basis: input.basis,
    basisDescription: BASIS_DESCRIPTION[input.basis],
    period: { ...periodOut, maxDays: MAX_PERIOD_DAYS },
    filters: { client: input.client ?? null, findingKind: input.findingKind ?? null },
    parameters: {
      vatRate: settings.vatRate,
      allowedVatRates: [...new Set([...ALLOWED_VAT_RATES, settings.vatRate])],
      retentionRate: settings.retentionRate,
      discrepancyTolerance: settings.discrepancyTolerance,
      freightConcepts: `Concepts of kind 'freight', or of kind 'other' under a SAT key of the ${FREIGHT_CODE_PREFIX}xx family (78101800–78101899).`,
      retentionRule:
        'Expected retention = Σ round2(freight base × retentionRate) when the client is a company (12-character RFC); 0 for a persona física (13 characters) and for XAXX010101000/XEXX010101000 (LIVA art. 1-A fr. II c; RLIVA art. 3 fr. II).',
      accessorialRetention:
        'A retention on a taxed accessorial (demurrage, handling) at the retention rate is accepted and reported as info ACCESSORIAL_RETENTION; an IVA retention at another rate the law sets (legalRetentionRates) is info RETENTION_AT_LEGAL_RATE, at a rate no rule sets a warning RETENTION_RATE_UNUSUAL; an amount that is not its base × its rate is a RETENTION_MISMATCH.',
      legalRetentionRates: {
        vat: [...new Set([settings.retentionRate, ...LEGAL_VAT_RETENTION_RATES.map((l) => l.rate)])],
        isr: LEGAL_ISR_RETENTION_RATES.map((l) => l.rate),
      },
      otherTaxes:
        'ISR retained (1.25% by a RESICO carrier billing a company, LISR art. 113-J; 10% on services of a persona física) is reported per month and client (isrRetained) and is info ISR_RETAINED at those rates; IEPS is reported apart. Each ISR/IEPS line is checked against round2(base × rate) (TAX_MISMATCH). IVA bases at 16%, 8%, 0% and exempt are reported apart (vatBases): all legal, none a discrepancy.',
      currency:
        'Every amount is in MXN: a document in another currency (Moneda) is reconciled in its own currency and its amounts converted at its TipoCambio (on the payment basis at the rate of the payments counted), each rounded to cents. Findings keep the document currency (their `currency`).',
      cancellations:
        'Only cancelled invoices (cancellation accepted or expired) are left out (cancelledDocuments); a pending or rejected cancellation counts in full, with an info finding (CANCELLATION_PENDING, CANCELLATION_REJECTED); pendingCancellations counts the pending ones.',
      rounding: 'Per concept, half away from zero to cents; sums in integer cents; declared vs expected compared per concept against discrepancyTolerance.',
      settingsSource: { vatRate: sourceOf('vatRate'), retentionRate: sourceOf('retentionRate'), discrepancyTolerance: sourceOf('discrepancyTolerance') },
    },
    totals,
    months: months.map((m) => ({
      ...m,
      clients: clientList([...m.clients].sort(largestFirst((c) => c.totals.total)), input.limit, opts),
    })),
    findings: findings.report(),
  };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type TaxSummaryCheck = Conforms<TaxSummary, components['schemas']['TaxSummaryResponse']>;
