/**
 * The tax lines of a concept and a document's tax totals (docs/domain.md "Real CFDIs": ISR 001,
 * IVA 002, IEPS 003; Tasa, Cuota, Exento). Pure, in the document's currency, in integer cents.
 * A line may carry 6 decimals (Anexo 20); a document's totals are what its Comprobante/Impuestos
 * states: per group (transfers by tax, factor and rate; retentions by tax) the exact sum of its
 * concepts' lines rounded once to cents, and the totals the sums of those groups (taxTotalsC).
 *
 * A concept states its taxes in `taxes` (every line of the CFDI). A concept without it (the
 * compact form of the demo data, and documents written before the field existed) has no tax
 * but IVA: a transfer at `vatRate` of `vat` when it is subject (ObjetoImp 02) or declares
 * VAT, and a retention at `retentionRate` of `retention` when one is declared; their base is
 * the concept's amount − discount.
 */
import type { ConceptTaxes, FinancialDocument, InvoiceConcept, TaxLine, TaxName } from '../model/financial-document.ts';
import { exactSumCents, fromCents, microsToCents, toCents, toMicros } from '../money/cents.ts';
import { groupBy } from '../shared/group-by.ts';

const RATE_EPS = 1e-9;
export const sameRate = (a: number, b: number): boolean => Math.abs(a - b) < RATE_EPS;

/** amount − discount of a concept, in cents. */
export const conceptBaseC = (c: Pick<InvoiceConcept, 'amount' | 'discount'>): number => toCents(c.amount) - toCents(c.discount);

/** Every tax line of a concept (see the module comment for the compact form). */
const NONE: readonly TaxLine[] = Object.freeze([]);

export function conceptTaxes(c: InvoiceConcept): ConceptTaxes {
  if (c.taxes) return c.taxes;
  const withVat = c.objetoImp === '02' || c.vat !== 0;
  const withRetention = c.retention !== 0;
  if (!withVat && !withRetention) return { transfers: NONE as TaxLine[], retentions: NONE as TaxLine[] };
  const base = fromCents(conceptBaseC(c));
  return {
    transfers: withVat ? [{ tax: 'IVA', factor: 'Tasa', rate: c.vatRate, base, amount: c.vat }] : (NONE as TaxLine[]),
    retentions: withRetention ? [{ tax: 'IVA', factor: 'Tasa', rate: c.retentionRate, base, amount: c.retention }] : (NONE as TaxLine[]),
  };
}

/**
 * Not subject to tax: ObjetoImp 01, or another key than 02 (03 without itemised taxes, 04 …)
 * declaring no tax line. Such a concept is in SubTotal and in no tax base.
 */
export function isNotSubject(c: InvoiceConcept): boolean {
  if (c.objetoImp === '01') return true;
  if (c.objetoImp === '02') return false;
  const t = conceptTaxes(c);
  return t.transfers.length + t.retentions.length === 0;
}

/** The IVA base bucket of a transfer line: 16%, 8%, 0%, exempt, or any other rate. */
export type VatBaseBucket = 'rate16' | 'rate8' | 'rate0' | 'exempt' | 'otherRates';
export function vatBucket(line: Pick<TaxLine, 'factor' | 'rate'>): VatBaseBucket {
  if (line.factor === 'Exento') return 'exempt';
  if (line.factor !== 'Tasa' || line.rate === null) return 'otherRates';
  if (sameRate(line.rate, 0.16)) return 'rate16';
  if (sameRate(line.rate, 0.08)) return 'rate8';
  if (sameRate(line.rate, 0)) return 'rate0';
  return 'otherRates';
}

/** Per-tax totals of a document, integer cents of its currency. */
export interface TaxTotalsC {
  /** IVA bases by rate (Σ line bases). */
  vatBases: Record<VatBaseBucket, number>;
  vatTransferred: number;
  vatRetained: number;
  isrTransferred: number;
  isrRetained: number;
  iepsTransferred: number;
  iepsRetained: number;
  /** Σ every transfer / retention line, whatever the tax. */
  transferred: number;
  retained: number;
}

export const zeroTaxTotalsC = (): TaxTotalsC => ({
  vatBases: { rate16: 0, rate8: 0, rate0: 0, exempt: 0, otherRates: 0 },
  vatTransferred: 0,
  vatRetained: 0,
  isrTransferred: 0,
  isrRetained: 0,
  iepsTransferred: 0,
  iepsRetained: 0,
  transferred: 0,
  retained: 0,
});

const KEY: Record<TaxName, { transfer: keyof TaxTotalsC; retention: keyof TaxTotalsC }> = {
  IVA: { transfer: 'vatTransferred', retention: 'vatRetained' },
  ISR: { transfer: 'isrTransferred', retention: 'isrRetained' },
  IEPS: { transfer: 'iepsTransferred', retention: 'iepsRetained' },
};

/**
 * The groups of a CFDI's Comprobante/Impuestos node (Anexo 20, Guía de llenado): a transfer by Impuesto, TipoFactor
 * and TasaOCuota; a retention by Impuesto.
 */
export const transferGroup = (l: Pick<TaxLine, 'tax' | 'factor' | 'rate'>): string => `${l.tax}|${l.factor}|${l.rate ?? ''}`;
export const retentionGroup = (l: Pick<TaxLine, 'tax'>): string => l.tax;

/**
 * Σ of these lines' `field` per group, each group's exact sum rounded to cents once (exactSumCents), in cents: what the
 * CFDI states as its own total of them ("el redondeo de la suma"), which a sum of lines each rounded first can miss by
 * cents when they carry 6 decimals.
 */
export function groupedCents<T extends TaxLine>(lines: readonly T[], groupOf: (l: T) => string, field: 'base' | 'amount'): number {
  if (lines.length === 0) return 0;
  let cents = 0;
  for (const group of groupBy(lines, groupOf).values()) cents += exactSumCents(group.map((l) => l[field]));
  return cents;
}

/**
 * A document's totals from its concepts' lines, as its Comprobante/Impuestos states them: each transfer group (tax,
 * factor, rate) and retention group (tax) summed exactly and rounded once; the IVA bases per bucket the rounded bases of
 * its groups. A concept's own figures (its `vat`, `retention`) are its lines rounded: they need not add up to these.
 * (groupedCents by line, without arrays per group: this runs for every document of a report.)
 */
export function taxTotalsC(concepts: readonly ConceptTaxes[]): TaxTotalsC {
  const transfers: { key: string; line: TaxLine; amountM: number; baseM: number }[] = [];
  const retentions: { key: string; line: TaxLine; amountM: number }[] = [];
  for (const c of concepts) {
    for (const l of c.transfers) {
      const key = transferGroup(l);
      const baseM = l.tax === 'IVA' ? toMicros(l.base) : 0;
      const g = transfers.find((x) => x.key === key);
      if (g) {
        g.amountM += toMicros(l.amount);
        g.baseM += baseM;
      } else transfers.push({ key, line: l, amountM: toMicros(l.amount), baseM });
    }
    for (const l of c.retentions) {
      const key = retentionGroup(l);
      const g = retentions.find((x) => x.key === key);
      if (g) g.amountM += toMicros(l.amount);
      else retentions.push({ key, line: l, amountM: toMicros(l.amount) });
    }
  }
  const t = zeroTaxTotalsC();
  for (const g of transfers) {
    const c = microsToCents(g.amountM);
    (t[KEY[g.line.tax].transfer] as number) += c;
    t.transferred += c;
    if (g.line.tax === 'IVA') t.vatBases[vatBucket(g.line)] += microsToCents(g.baseM);
  }
  for (const g of retentions) {
    const c = microsToCents(g.amountM);
    (t[KEY[g.line.tax].retention] as number) += c;
    t.retained += c;
  }
  return t;
}

/**
 * A document's tax totals from its concepts. A document without concepts (an older
 * header-only shape) has only its header IVA: iTax1 transferred, iTax2 retained.
 */
export function documentTaxTotalsC(doc: Pick<FinancialDocument, 'iTax1' | 'iTax2'> & { invoice: { concepts?: readonly InvoiceConcept[] } }): TaxTotalsC {
  const t = zeroTaxTotalsC();
  const concepts = doc.invoice.concepts ?? [];
  if (concepts.length === 0) {
    t.vatTransferred = t.transferred = toCents(doc.iTax1);
    t.vatRetained = t.retained = toCents(doc.iTax2);
    return t;
  }
  return taxTotalsC(concepts.map(conceptTaxes));
}
