/**
 * GET /api/tax/position: the month's tax position on the cash basis (docs/domain.md, "The month's
 * tax position"). Reads the month kept on write (kept-tax-position.ts, docs/rollups.md), or
 * computes the figures from the month's rows (tax-position-month.ts, tax-position.ts, pure), and
 * shows each with its first `limit` lines.
 */
import type { ServiceContext } from '../context.ts';
import { fromCents } from '../money/cents.ts';
import { mxDateString, mxMonthKey, mxMonthRange } from '../time/mexico-city.ts';
import { onBusinessDay } from '../time/business-days.ts';
import type { components } from '../../generated/api.d.ts';
import type { Conforms } from '../spec/conforms.ts';
import { monthRange, monthRows } from './tax-position-month.ts';
import { keptPosition, type PositionFiguresView } from './kept-tax-position.ts';
import { taxPositionRollups } from './tax-position-rollup-kind.ts';
import { NON_CREDITABLE_MESSAGES, POSITION_FIGURES, positionFigures, type FigureLine, type NonCreditableCode, type PositionFigure } from './tax-position.ts';

export const CASH_BASIS_DESCRIPTION =
  'Cash basis (LIVA art. 1-B): VAT is due when collected and creditable when paid. Issued and received PUE CFDIs count in the month of their date; PPD CFDIs by their payment complements dated in the month, each amount in proportion paid ÷ Total.';

export const FIGURE_DESCRIPTIONS: Readonly<Record<PositionFigure, string>> = {
  vatCollected: "VAT of the carrier's invoices collected in the month (LIVA art. 1-B, 5-D).",
  vatRetainedByClients: 'The 4% VAT its clients retained on those collections (LIVA art. 1-A fr. II c; RLIVA art. 3 fr. II).',
  creditableVat:
    'VAT of received CFDIs paid to the supplier in the month that may be credited (LIVA art. 5 fr. I–III); what the carrier retained is next month’s retention credit.',
  nonCreditableVat: 'VAT of received CFDIs paid in the month that may not be credited: cancelled, S01, fuel paid in cash (LISR art. 27 fr. III), no VAT shown.',
  retentionCredit: 'IVA the carrier retained and paid for the previous month, creditable in this one (LIVA art. 5 fr. IV).',
  vatRetainedByCarrier: 'IVA the carrier retained when it paid in the month, due by the 17th of the next month (LIVA art. 1-A; RLIVA art. 3).',
  isrRetainedByCarrier: 'ISR the carrier retained when it paid in the month (LISR art. 106, 113-J), due by the 17th of the next month.',
  isrRetainedByClients: "ISR the carrier's clients retained on their payments (LISR art. 113-J), credited against its ISR.",
};

export interface TaxPositionLineView {
  side: 'issued' | 'received';
  docId: string;
  uuid: string;
  party: string;
  partyName: string;
  paymentMethod: 'PUE' | 'PPD';
  settlement: 'pue' | 'payment' | 'creditNote';
  paymentUuid: string | null;
  payments: number;
  date: string;
  paid: number;
  share: number;
  amount: number;
  reason: NonCreditableCode | null;
}

export const lineView = (l: FigureLine): TaxPositionLineView => ({
  side: l.side,
  docId: l.docId,
  uuid: l.uuid,
  party: l.party,
  partyName: l.partyName,
  paymentMethod: l.paymentMethod,
  settlement: l.settlement,
  paymentUuid: l.paymentUuid,
  payments: l.payments,
  date: new Date(l.date).toISOString(),
  paid: fromCents(l.paidC),
  share: l.share,
  amount: fromCents(l.amountC),
  reason: l.reason,
});

export interface TaxPosition {
  tenant: string;
  month: string;
  computedAt: string;
  basis: 'cash';
  basisDescription: string;
  period: { startDate: string; endDate: string; timeZone: 'America/Mexico_City'; previousMonth: string };
  vat: { collected: number; retainedByClients: number; creditable: number; retentionCredit: number; payable: number; result: 'payable' | 'inFavour' | 'zero' };
  retentions: { vatRetained: number; isrRetained: number; total: number; dueDate: string };
  isrRetainedByClients: number;
  nonCreditableVat: number;
  figures: { figure: PositionFigure; amount: number; description: string; lineCount: number; lines: TaxPositionLineView[] }[];
  warnings: {
    total: number;
    byCode: Record<string, number>;
    items: { code: NonCreditableCode; message: string; docId: string; uuid: string; supplier: string; date: string; vat: number }[];
  };
}

/** The 17th of the month after `month` (LIVA art. 1-A: retentions are paid by then), or the next business day when it is a day off (CFF art. 12). */
export function retentionDueDate(month: string): string {
  const next = mxDateString(mxMonthRange(month).endExclusive);
  return onBusinessDay(`${next.slice(0, 8)}17`);
}

/** The figures of a month from its documents (the reference the kept months are checked against). */
async function documentPosition(
  ctx: ServiceContext,
  tenant: string,
  month: string,
  limit: number,
): Promise<PositionFiguresView & { firstLines: Record<PositionFigure, FigureLine[]> }> {
  const rows = await monthRows(ctx, tenant, month);
  const f = positionFigures(rows.collections, rows.payments, rows.previousPayments);
  const lineCounts = {} as Record<PositionFigure, number>;
  const firstLines = {} as Record<PositionFigure, FigureLine[]>;
  for (const name of POSITION_FIGURES) {
    lineCounts[name] = f.lines[name].length;
    firstLines[name] = f.lines[name].slice(0, limit);
  }
  const warningsByCode: Record<string, number> = {};
  for (const w of f.lines.nonCreditableVat) warningsByCode[w.reason!] = (warningsByCode[w.reason!] ?? 0) + 1;
  return { totalsC: f.totalsC, lineCounts, firstLines, warningsByCode };
}

/**
 * From the months kept on write when the store holds them (docs/rollups.md); `fromDocuments`:
 * from the month's documents (what the kept months are checked against).
 */
export async function getTaxPosition(
  ctx: ServiceContext,
  tenant: string,
  input: { month?: string; limit: number },
  opts: { fromDocuments?: boolean } = {},
): Promise<TaxPosition> {
  const now = ctx.now();
  const month = input.month ?? mxMonthKey(now.getTime());
  const range = monthRange(month);
  const previousMonth = mxMonthKey(range.start - 1);
  const f =
    !opts.fromDocuments && (await taxPositionRollups.ready(ctx.db))
      ? await keptPosition(ctx, tenant, month, previousMonth, input.limit)
      : await documentPosition(ctx, tenant, month, input.limit);
  const t = (name: PositionFigure): number => fromCents(f.totalsC[name]);
  const vatPayableC = f.totalsC.vatCollected - f.totalsC.vatRetainedByClients - f.totalsC.creditableVat - f.totalsC.retentionCredit;
  return {
    tenant,
    month,
    computedAt: now.toISOString(),
    basis: 'cash',
    basisDescription: CASH_BASIS_DESCRIPTION,
    period: {
      startDate: mxDateString(range.start),
      endDate: mxDateString(range.endExclusive - 1),
      timeZone: 'America/Mexico_City',
      previousMonth,
    },
    vat: {
      collected: t('vatCollected'),
      retainedByClients: t('vatRetainedByClients'),
      creditable: t('creditableVat'),
      retentionCredit: t('retentionCredit'),
      payable: fromCents(vatPayableC),
      result: vatPayableC > 0 ? 'payable' : vatPayableC < 0 ? 'inFavour' : 'zero',
    },
    retentions: {
      vatRetained: t('vatRetainedByCarrier'),
      isrRetained: t('isrRetainedByCarrier'),
      total: fromCents(f.totalsC.vatRetainedByCarrier + f.totalsC.isrRetainedByCarrier),
      dueDate: retentionDueDate(month),
    },
    isrRetainedByClients: t('isrRetainedByClients'),
    nonCreditableVat: t('nonCreditableVat'),
    figures: POSITION_FIGURES.map((name) => ({
      figure: name,
      amount: t(name),
      description: FIGURE_DESCRIPTIONS[name],
      lineCount: f.lineCounts[name],
      lines: f.firstLines[name].map(lineView),
    })),
    warnings: {
      total: f.lineCounts.nonCreditableVat,
      byCode: f.warningsByCode,
      items: f.firstLines.nonCreditableVat.map((w) => ({
        code: w.reason!,
        message: NON_CREDITABLE_MESSAGES[w.reason!],
        docId: w.docId,
        uuid: w.uuid,
        supplier: w.party,
        date: new Date(w.date).toISOString(),
        vat: fromCents(w.amountC),
      })),
    },
  };
}

// Checked against the spec: a field renamed on one side only fails type-checking here.
export type TaxPositionCheck = Conforms<TaxPosition, components['schemas']['TaxPosition']>;
