/**
 * An invoice's payment history: CFDI P payment complements and E credit notes,
 * in date order, their balances chained (before of the first = iTot, after =
 * before − amount, never below 0). PUE invoices get one payment 0–3 days after
 * emission; PPD ones instalments around the client's due date, or (bad debt)
 * at most one partial payment. ~2% of complements are issued wrong first:
 * the wrong one is cancelled (motive 01) and names the re-issued one.
 */
import type { CanceledRecord, PaymentRecord } from '../../lib/model/financial-document.ts';
import { fromCents } from '../../lib/money/cents.ts';
import { mxDayStartAt } from '../../lib/time/mexico-city.ts';
import type { ClientProfile } from './clients.ts';
import { DAY, HOUR, MIN } from './numbers.ts';
import type { Rng } from './random.ts';

export interface RecordDraft {
  kind: PaymentRecord['kind'];
  date: number;
  amountC: number;
  canceled: boolean;
  uuid: string;
  /** For cancelled payment records: the uuid of the record re-issued in its place. */
  replacedBy?: string;
}

interface Due {
  date: number;
  amountC: number;
}

export interface PaymentTerms {
  client: ClientProfile;
  method: 'PUE' | 'PPD';
  /** Invoice emission instant and total (cents). */
  invDate: number;
  totC: number;
  /** Nothing is recorded after this instant. */
  end: number;
}

/** The records of a valid invoice, sorted by date (a cancelled record before its replacement at the same instant). */
export function paymentDrafts(rng: Rng, terms: PaymentTerms): RecordDraft[] {
  const records: RecordDraft[] = [];
  const note = creditNote(rng, terms);
  if (note) records.push(note);
  const remainingC = terms.totC - (note?.amountC ?? 0);
  const schedule = terms.method === 'PUE' ? puePayment(rng, terms, remainingC) : ppdPayments(rng, terms, remainingC);
  for (const p of schedule) {
    if (p.date > terms.end || p.amountC <= 0) continue;
    const good: RecordDraft = { kind: 'payment', date: p.date, amountC: p.amountC, canceled: false, uuid: rng.uuid() };
    if (rng.chance(0.02)) {
      const wrong = wrongComplement(rng, terms.invDate, p, good.uuid);
      if (wrong) records.push(wrong);
    }
    records.push(good);
  }
  return records.sort((a, b) => a.date - b.date || Number(b.canceled) - Number(a.canceled));
}

/** ~3% of PPD invoices: a 1–8% credit note 2–25 days after emission. */
function creditNote(rng: Rng, { method, invDate, totC, end }: PaymentTerms): RecordDraft | null {
  if (method !== 'PPD' || !rng.chance(0.03)) return null;
  const at = bankTime(invDate + rng.float(2, 25) * DAY, rng, invDate);
  const amountC = Math.round(totC * rng.float(0.01, 0.08));
  if (at > end || amountC <= 0) return null;
  return { kind: 'creditNote', date: at, amountC, canceled: false, uuid: rng.uuid() };
}

/** Paid in one exhibition: a receipt 0–3 days after emission, so balances compute uniformly. */
function puePayment(rng: Rng, { invDate }: PaymentTerms, remainingC: number): Due[] {
  return [{ date: bankTime(invDate + rng.float(0, 3) * DAY, rng, invDate + 10 * MIN), amountC: remainingC }];
}

/** Instalments from the due date ± the client's delay; bad debt: sometimes one partial payment, then nothing. */
function ppdPayments(rng: Rng, { client, invDate }: PaymentTerms, remainingC: number): Due[] {
  const schedule: Due[] = [];
  const badDebt = rng.chance(client.badDebtRate);
  const n = 1 + rng.weightedIndex(client.installments);
  const due = invDate + client.creditDays * DAY;
  let at = due + rng.normal(client.payDelayMean, client.payDelaySd) * DAY;
  if (at < invDate + DAY) at = invDate + rng.float(1, 4) * DAY;
  if (badDebt) {
    if (rng.chance(0.4)) schedule.push({ date: bankTime(at, rng, invDate + HOUR), amountC: Math.round(remainingC * rng.float(0.2, 0.6)) });
    return schedule;
  }
  let left = remainingC;
  for (let i = 0; i < n && left > 0; i++) {
    const amountC = i === n - 1 ? left : Math.min(left, Math.round(left * rng.float(0.3, 0.6)));
    schedule.push({ date: bankTime(at, rng, invDate + HOUR), amountC });
    left -= amountC;
    at += rng.float(7, 30) * DAY;
  }
  return schedule;
}

/** A complement issued 1–72 h earlier with a typo under the right amount (so its own balance stays ≥ 0). */
function wrongComplement(rng: Rng, invDate: number, p: Due, replacedBy: string): RecordDraft | null {
  const wrongAt = Math.max(invDate + MIN, p.date - Math.round(rng.float(1, 72) * HOUR));
  const wrongC = Math.max(1, Math.round(p.amountC * rng.float(0.85, 0.995)));
  if (wrongAt >= p.date) return null;
  return { kind: 'payment', date: wrongAt, amountC: wrongC, canceled: true, uuid: rng.uuid(), replacedBy };
}

/** Bank hours (09:00–18:00 Mexico City) of the day of t, never before `notBefore`. */
function bankTime(t: number, rng: Rng, notBefore: number): number {
  const at = mxDayStartAt(t) + Math.round(rng.float(9, 18) * HOUR);
  return at < notBefore ? notBefore + rng.int(30, 240) * MIN : at;
}

export interface Ledger {
  payments: PaymentRecord[];
  /** Cancellations of the cancelled payment records, in record order. */
  canceled: CanceledRecord[];
  /** Open balance after the valid records, cents. */
  balanceC: number;
  paidAny: boolean;
}

/**
 * Stored records with chained balances. A cancelled record keeps its own
 * balances at the time and moves nothing; it is cancelled 5–50 minutes after issue.
 * `idOf(tag, n)` names records: 'PAG' / 'NC' by position, 'CAN' by cancellation number.
 */
export function ledgerOf(records: readonly RecordDraft[], totC: number, end: number, rng: Rng, idOf: (tag: 'PAG' | 'NC' | 'CAN', n: number) => string): Ledger {
  const canceled: CanceledRecord[] = [];
  let balanceC = totC;
  let paidAny = false;
  const payments: PaymentRecord[] = records.map((r, i) => {
    const beforeC = balanceC;
    const appliedC = Math.min(r.amountC, beforeC);
    const afterC = r.canceled ? Math.max(0, beforeC - r.amountC) : beforeC - appliedC;
    if (!r.canceled) {
      balanceC = afterC;
      paidAny = true;
    } else {
      canceled.push({
        id: idOf('CAN', canceled.length + 1),
        target: 'payment',
        uuid: r.uuid,
        date: Math.min(end, r.date + Math.round(rng.float(5, 50) * MIN)),
        motive: '01',
        replacementUuid: r.replacedBy ?? null,
      });
    }
    return {
      id: idOf(r.kind === 'creditNote' ? 'NC' : 'PAG', i + 1),
      kind: r.kind,
      uuid: r.uuid,
      date: r.date,
      amount: fromCents(r.canceled ? r.amountC : appliedC),
      balanceBefore: fromCents(beforeC),
      balanceAfter: fromCents(afterC),
      canceled: r.canceled,
    };
  });
  return { payments, canceled, balanceC, paidAny };
}
