/**
 * Financial documents (CFDI invoices with their payments and cancellations),
 * one per plan entry, in id (= emission) order. Each draws from its own PRNG
 * sub-stream; the trip it bills is redrawn from its sketch. Steps: concepts →
 * (maybe) a tax error → totals → identity → payments → invoice cancellation and
 * where it stands (its own sub-stream) → status → the stored shape.
 */
import type { CanceledRecord, FinancialDocument } from '../../lib/model/financial-document.ts';
import { fromCents } from '../../lib/money/cents.ts';
import { isInEffect } from '../../lib/finance/cancellation.ts';
import { businessDaysDeadline, receiverDeadline } from '../../lib/time/business-days.ts';
import { docId, docNo, nCedOf, nRelOf, uuidOf } from './ids.ts';
import { conceptDrafts, finishConcepts } from './invoice-concepts.ts';
import { DAY, MIN } from './numbers.ts';
import { ledgerOf, paymentDrafts, type Ledger } from './payments.ts';
import { ROLE, type Plan } from './plan.ts';
import type { Rng } from './random.ts';
import { DOC_STATUS } from './status-codes.ts';
import { injectTaxError } from './tax-errors.ts';
import { ghostSketch, tripSketch } from './trip-sketch.ts';
import { STREAM, streamRng, type World } from './world.ts';

/** Lazily, in id (= emission) order. */
export function* docsIterator(world: World, plan: Plan): Generator<FinancialDocument> {
  for (let j = 0; j < plan.docCount; j++) yield buildDoc(world, plan, j);
}

const isCancelledRole = (role: number): boolean => role === ROLE.cancelled01 || role === ROLE.cancelled02 || role === ROLE.ghostCancelled03;

export function buildDoc(world: World, plan: Plan, j: number): FinancialDocument {
  const src = plan.docSource[j]!;
  const role = plan.docRole[j]!;
  const invDate = plan.docDate[j]!;
  const sk = src >= 0 ? tripSketch(world, src) : ghostSketch(world, -src - 1);
  const rng = streamRng(world, STREAM.doc, j);
  const client = sk.client;
  const cancelledInvoice = isCancelledRole(role);

  const { drafts, faltC } = conceptDrafts(world, sk, rng, invDate);
  if (rng.chance(cancelledInvoice && role !== ROLE.ghostCancelled03 ? 0.35 : 0.02)) {
    injectTaxError(drafts, rng, client.isCompany, world.settings.retentionRate);
  }
  const { concepts, totals } = finishConcepts(drafts);
  const { subC, discC, vatC, retC, shipC, tollC, totC } = totals;
  if (totC < 0) throw new Error(`demo generator: negative total on document ${j}`); // cannot happen: retention ≤ 4% of a base ≤ SubTotal

  const id = docId(world, j);
  const uuid = uuidOf(world, j);
  const timestamp = invDate + rng.int(0, 90_000);
  const certAt = invDate + rng.int(20, 480) * 1000;
  const paymentMethod: 'PUE' | 'PPD' = rng.chance(client.pueRate) ? 'PUE' : 'PPD';
  const end = world.end;

  const idOf = (tag: string, n: number): string => `${world.prefix}-${tag}-${docNo(j)}-${n}`;
  const records = cancelledInvoice ? [] : paymentDrafts(rng, { client, method: paymentMethod, invDate, totC, end });
  const ledger = ledgerOf(records, totC, end, rng, idOf);
  const canceled = [...ledger.canceled];
  const cxRng = streamRng(world, STREAM.cancellation, j);
  const acceptance = { totalC: totC, certAt, end };
  if (cancelledInvoice) canceled.push(withStatus(invoiceCancellation(world, plan, j, rng, uuid, idOf('CAN', canceled.length + 1)), acceptance, cxRng));
  else {
    const refused = rejectedRequest(invDate, uuid, idOf('CAN', canceled.length + 1), acceptance, cxRng);
    if (refused) canceled.push(refused);
  }
  canceled.sort((a, b) => a.date - b.date);
  const { payments } = ledger;
  // A request still waiting for the receiver at endDate cancels nothing (yet).
  const invoiceCancelled = canceled.some((c) => c.target === 'invoice' && isInEffect(c));

  const status = statusOf(world, invoiceCancelled, ledger);
  const lastUpdate = lastUpdateOf(rng, end, Math.max(timestamp, certAt), ledger, canceled);

  const serie = world.profile.serie;
  const r2 = fromCents;
  return {
    _id: id,
    id,
    company: world.tenant,
    client: client.def.rfc,
    clientName: client.def.name,
    date: invDate,
    timestamp,
    lastUpdate: new Date(lastUpdate).toISOString(),
    iSub: r2(subC),
    iTot: r2(totC),
    iTax1: r2(vatC),
    iTax2: r2(retC),
    iDesc: r2(discC),
    iFalt: r2(faltC),
    tarif1: sk.tarifUnit,
    status,
    statusAuth: !cancelledInvoice && !rng.chance(0.01),
    ref1: nRelOf(sk),
    ref2: nCedOf(sk),
    invoice: {
      id: `${world.prefix}-INV-${docNo(j)}`,
      num: `${serie}-${world.profile.folioStart + j}`,
      serie,
      uuid,
      date: invDate,
      satCertDate: new Date(certAt).toISOString(),
      paymentMethod,
      iSub: r2(subC),
      iTot: r2(totC),
      iTax1: r2(vatC),
      iTax2: r2(retC),
      ship: r2(shipC),
      toll: r2(tollC),
      source: rng.weighted(['TMS', 'portal', 'manual'], [0.8, 0.1, 0.1]),
      user: rng.pick(world.profile.users),
      pdf: `cfdi/${world.tenant}/${uuid}.pdf`,
      xml: `cfdi/${world.tenant}/${uuid}.xml`,
      concepts,
    },
    payments,
    canceled,
  };
}

/**
 * The cancellation of document j's own invoice. Motive 01 names the
 * replacement (its partner, issued for the same trip) and follows it by 2–40
 * minutes, like 02; motive 03 (a ghost: the operation did not happen) comes 0.5–15 days after emission.
 */
function invoiceCancellation(world: World, plan: Plan, j: number, rng: Rng, uuid: string, id: string): CanceledRecord {
  const role = plan.docRole[j]!;
  const partner = plan.docPartner[j]!;
  const at =
    role === ROLE.ghostCancelled03
      ? Math.min(world.end, plan.docDate[j]! + Math.round(rng.float(0.5, 15) * DAY))
      : Math.min(world.end, plan.docDate[partner]! + Math.round(rng.float(2, 40) * MIN));
  return {
    id,
    target: 'invoice',
    uuid,
    date: at,
    motive: role === ROLE.cancelled01 ? '01' : role === ROLE.cancelled02 ? '02' : '03',
    replacementUuid: role === ROLE.cancelled01 ? uuidOf(world, partner) : null,
  };
}

/** What decides whether a cancellation needs the receiver's acceptance, and the end of the data. */
interface AcceptanceInput {
  totalC: number;
  certAt: number;
  end: number;
}

/**
 * Where a cancellation requested at `c.date` stands at endDate (lib/model CancellationStatus): up to
 * 1,000 MXN, or within the business day after certification, it needs no acceptance (accepted at
 * once, SAT 201); otherwise the receiver accepts within 0.1–2.5 days (80%) or stays silent until its
 * 3 business days end (tacit acceptance, expired); an answer after endDate leaves it pending.
 */
function withStatus(c: CanceledRecord, a: AcceptanceInput, rng: Rng): CanceledRecord {
  const requestedAt = c.date;
  const needsAcceptance = a.totalC > 100_000 && requestedAt >= businessDaysDeadline(a.certAt, 1);
  if (!needsAcceptance) return { ...c, status: 'accepted', requestedAt, statusSource: 'acknowledgement', satStatus: '201' };
  const tacit = rng.chance(0.2);
  const answeredAt = tacit ? receiverDeadline(requestedAt) : requestedAt + Math.round(rng.float(0.1, 2.5) * DAY);
  if (answeredAt > a.end) return { ...c, status: 'pending', requestedAt, statusSource: 'acknowledgement', satStatus: '201' };
  return {
    ...c,
    date: answeredAt,
    status: tacit ? 'expired' : 'accepted',
    requestedAt,
    statusSource: 'status-service',
    satStatus: tacit ? 'Plazo vencido' : 'Cancelado con aceptación',
  };
}

/**
 * Requests on valid invoices over 1,000 MXN that did not cancel them: 3% of those of the last 10
 * days have one still waiting for the receiver at endDate (pending, requested in the last 2.5
 * days); 0.5% of the others one their receiver rejected within 0.2–2.5 days (motive 02 or 03,
 * 1–20 days after emission).
 */
function rejectedRequest(invDate: number, uuid: string, id: string, a: AcceptanceInput, rng: Rng): CanceledRecord | null {
  if (a.totalC <= 100_000) return null;
  const motive: CanceledRecord['motive'] = rng.chance(0.5) ? '02' : '03';
  const base = { id, target: 'invoice' as const, uuid, motive, replacementUuid: null };
  if (invDate >= a.end - 10 * DAY) {
    if (!rng.chance(0.03)) return null;
    const requestedAt = Math.max(businessDaysDeadline(a.certAt, 1), a.end - Math.round(rng.float(0.1, 2.5) * DAY));
    if (requestedAt > a.end || receiverDeadline(requestedAt) <= a.end) return null;
    return { ...base, date: requestedAt, status: 'pending', requestedAt, statusSource: 'acknowledgement', satStatus: '201' };
  }
  if (!rng.chance(0.005)) return null;
  const requestedAt = invDate + Math.round(rng.float(1, 20) * DAY);
  const answeredAt = requestedAt + Math.round(rng.float(0.2, 2.5) * DAY);
  if (answeredAt > a.end) return null;
  return { ...base, date: answeredAt, status: 'rejected', requestedAt, statusSource: 'status-service', satStatus: 'Solicitud rechazada' };
}

/** 9 cancelled, 6 paid (balance 0), the profile's partial status when partly paid, else 4 invoiced. */
function statusOf(world: World, cancelledInvoice: boolean, ledger: Ledger): number {
  if (cancelledInvoice) return DOC_STATUS.cancelled;
  if (ledger.balanceC === 0) return DOC_STATUS.paid;
  return ledger.paidAny ? world.profile.partialStatus : DOC_STATUS.invoiced;
}

/** Last change: the latest record, up to 10 minutes later (never beyond that), but not past endDate unless a record is. */
function lastUpdateOf(rng: Rng, end: number, issued: number, ledger: Ledger, canceled: readonly CanceledRecord[]): number {
  let last = issued;
  for (const p of ledger.payments) last = Math.max(last, p.date);
  for (const c of canceled) last = Math.max(last, c.date);
  return Math.min(Math.max(end, last), last + rng.int(0, 600) * 1000);
}
