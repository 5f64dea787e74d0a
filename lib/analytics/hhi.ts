/**
 * Customer concentration by the Herfindahl–Hirschman Index: HHI = Σ sᵢ² with
 * sᵢ each client's share of revenue in percent (0..10,000).
 *
 * Bands (configurable per tenant, defaults in tenant settings) follow the
 * U.S. Department of Justice & FTC, Horizontal Merger Guidelines (19 Aug 2010),
 * §5.3: unconcentrated HHI < 1,500; moderately concentrated 1,500–2,500;
 * highly concentrated > 2,500. Designed for markets, used here on a carrier's
 * customer base as a dependency measure.
 */
import type { HhiBands } from '../model/tenant-settings.ts';
import { fromCents, toCents } from '../money/cents.ts';

export type ConcentrationBand = 'unconcentrated' | 'moderate' | 'high';

export interface ClientShare {
  client: string;
  revenue: number;
  /** Percent of total revenue (4 decimals); null only when total revenue is 0. */
  sharePct: number | null;
  /** sharePct ≥ bands.singleClientFlagPct. */
  flagged: boolean;
}

export interface Concentration {
  /** 0..10,000 (2 decimals); null when total revenue is 0. */
  hhi: number | null;
  band: ConcentrationBand | null;
  shares: ClientShare[];
  totalRevenue: number;
  clients: number;
  explanation?: string;
}

const EPS = 1e-9;

/**
 * Rows for the same client are merged (summed in cents). Negative net revenue
 * (credit notes above invoices) counts as 0: a share below zero is meaningless.
 * Shares are sorted by revenue, largest first.
 */
export function concentration(revenueByClient: readonly { client: string; revenue: number }[], bands: HhiBands): Concentration {
  const byClient = new Map<string, number>();
  for (const r of revenueByClient) byClient.set(r.client, (byClient.get(r.client) ?? 0) + toCents(r.revenue));
  const rows = [...byClient.entries()]
    .map(([client, cents]) => ({ client, cents: Math.max(0, cents) }))
    .sort((a, b) => b.cents - a.cents || (a.client < b.client ? -1 : a.client > b.client ? 1 : 0));
  const totalC = rows.reduce((s, r) => s + r.cents, 0);
  if (totalC === 0) {
    return {
      hhi: null,
      band: null,
      shares: rows.map((r) => ({ client: r.client, revenue: fromCents(r.cents), sharePct: null, flagged: false })),
      totalRevenue: 0,
      clients: rows.length,
      explanation: 'Total revenue is 0 in the period: shares and HHI are undefined.',
    };
  }
  let hhi = 0;
  const shares: ClientShare[] = rows.map((r) => {
    const pct = (r.cents / totalC) * 100;
    hhi += pct * pct;
    return { client: r.client, revenue: fromCents(r.cents), sharePct: Math.round(pct * 10_000) / 10_000, flagged: pct + EPS >= bands.singleClientFlagPct };
  });
  const hhiRounded = Math.round(hhi * 100) / 100;
  const band: ConcentrationBand = hhiRounded < bands.unconcentratedBelow ? 'unconcentrated' : hhiRounded > bands.highlyConcentratedAbove ? 'high' : 'moderate';
  return { hhi: hhiRounded, band, shares, totalRevenue: fromCents(totalC), clients: rows.length };
}
