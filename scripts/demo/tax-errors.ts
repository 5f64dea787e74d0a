/**
 * Deliberate tax errors: ~2% of documents (35% of the ones later cancelled)
 * carry ONE declared-≠-expected tax amount on a concept: VAT off, VAT on the
 * gross amount, retention on the whole subtotal, retention off or missing for a
 * company. Persons and the public RFC only get VAT errors (their retention
 * stays 0, an invariant the demo keeps). Document totals are summed from the
 * declared (wrong) values afterwards, so only a per-concept check finds them.
 */
import { rateOfCents } from '../../lib/money/cents.ts';
import type { ConceptDraft } from './invoice-concepts.ts';
import type { Rng } from './random.ts';

type TaxErrorKind = 'vatOff' | 'vatGross' | 'retSubtotal' | 'retOff' | 'retMissing';

const COMPANY_KINDS: readonly TaxErrorKind[] = ['vatOff', 'vatGross', 'retSubtotal', 'retOff', 'retMissing'];
const COMPANY_WEIGHTS = [0.3, 0.15, 0.25, 0.2, 0.1];
const PERSON_KINDS: readonly TaxErrorKind[] = ['vatOff', 'vatGross'];
const PERSON_WEIGHTS = [0.7, 0.3];

/** Puts one error on the drafts (in place); a kind that does not fit the concepts falls back to VAT off. */
export function injectTaxError(drafts: ConceptDraft[], rng: Rng, isCompany: boolean, retentionRate: number): void {
  const freight = drafts.filter((d) => d.kind === 'freight');
  const taxed = drafts.filter((d) => d.objetoImp === '02');
  if (taxed.length === 0) return;
  const kind = isCompany ? rng.weighted(COMPANY_KINDS, COMPANY_WEIGHTS) : rng.weighted(PERSON_KINDS, PERSON_WEIGHTS);
  const f = freight[0];
  const vatOff = (): void => shiftVat(rng.pick(taxed), rng);
  switch (kind) {
    case 'vatGross': {
      const c = taxed.find((x) => x.discountC > 0);
      if (c) c.vatC = rateOfCents(c.amountC, c.vatRate);
      else vatOff();
      return;
    }
    case 'retSubtotal':
      if (f) retentionOnSubtotal(drafts, freight, f, retentionRate, rng);
      else vatOff();
      return;
    case 'retOff':
      if (f) shiftRetention(f, rng);
      else vatOff();
      return;
    case 'retMissing':
      if (f && f.retentionC > 0) for (const x of freight) x.retentionC = 0;
      else vatOff();
      return;
    default:
      vatOff();
  }
}

/** ±0.50–max/100 pesos, never taking the amount below 0. */
function offBy(rng: Rng, current: number, max: number): number {
  const d = (rng.chance(0.5) ? 1 : -1) * rng.int(50, max);
  return current + d < 0 ? -d : d;
}

function shiftVat(c: ConceptDraft, rng: Rng): void {
  c.vatC += offBy(rng, c.vatC, 6_000);
}

function shiftRetention(c: ConceptDraft, rng: Rng): void {
  c.retentionC += offBy(rng, c.retentionC, 2_500);
}

/** The naive "4% × SubTotal" (tolls, demurrage and shortage lines included), booked on the first freight line. */
function retentionOnSubtotal(drafts: readonly ConceptDraft[], freight: readonly ConceptDraft[], first: ConceptDraft, rate: number, rng: Rng): void {
  let subC = 0;
  for (const d of drafts) subC += d.amountC - d.discountC;
  let othersC = 0;
  for (const x of freight) if (x !== first) othersC += x.retentionC;
  const onFirst = rateOfCents(subC, rate) - othersC;
  if (onFirst > first.retentionC) first.retentionC = onFirst;
  else shiftRetention(first, rng);
}
