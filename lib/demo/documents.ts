/**
 * Financial documents (CFDI invoices with their payments and cancellations),
 * one per plan entry, in id (= emission) order. Each draws from its own PRNG
 * sub-stream; the trip it bills is redrawn from its sketch. Steps: concepts →
 * (maybe) a tax error → totals → identity → payments → invoice cancellation →
 * status → the stored shape.
 */
import type { CanceledRecord, FinancialDocument } from '../model/financial-document.ts';
import { fromCents } from '../money/cents.ts';
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
  if (cancelledInvoice) canceled.push(invoiceCancellation(world, plan, j, rng, uuid, idOf('CAN', canceled.length + 1)));
  canceled.sort((a, b) => a.date - b.date);
  const { payments } = ledger;

  const status = statusOf(world, cancelledInvoice, ledger);
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
