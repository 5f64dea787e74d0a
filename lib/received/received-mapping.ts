/**
 * Pure mapping of a received CFDI (Receptor = the tenant) into the facts of lib/received: the
 * import (lib/imports/import-documents.ts) routes a file here when the tenant is its receiver.
 * Reads the parsed-CFDI model only, so every CFDI version the parser reads is received alike.
 */
import type { AcknowledgedFolio, Cfdi, RequestedFolio } from '../imports/cfdi.ts';
import { creditNoteOf } from '../imports/financial-mapping.ts';
import type { CancellationFact, CancellationRequestFact } from '../finance/ledger/facts.ts';
import type { ReceivedFact, ReceivedInvoiceFact } from './received-rows.ts';

/** Why a received CFDI is not imported (the import reports it as the file's rejection), or its fact. */
export type ReceivedMapping = { fact: ReceivedFact; invoices: string[] } | { refusal: string };

export function receivedFactOf(cfdi: Cfdi): ReceivedMapping {
  switch (cfdi.type) {
    case 'I':
      return { fact: receivedInvoiceFact(cfdi), invoices: [cfdi.uuid] };
    case 'P': {
      const records = cfdi.payments.flatMap((p) =>
        p.docs.map((d) => ({
          invoiceUuid: d.invoiceUuid,
          date: p.date,
          amount: d.paid,
          balanceBefore: d.balanceBefore,
          balanceAfter: d.balanceAfter,
          ...(d.currency === 'MXN' ? {} : { exchangeRate: d.exchangeRate }),
          form: p.form,
        })),
      );
      const fact = {
        kind: 'payment' as const,
        uuid: cfdi.uuid,
        ...(cfdi.pagosVersion ? { pagosVersion: cfdi.pagosVersion } : {}),
        records: records.map((r, i) => ({ ...r, seq: i + 1 })),
      };
      return { fact, invoices: [...new Set(records.map((r) => r.invoiceUuid))] };
    }
    case 'E': {
      // One invoice named twice (in two CfdiRelacionados 01, or twice in one) is still one invoice (UUIDs are read upper-cased).
      const uuids = [...new Set(cfdi.related.filter((r) => r.relation === '01').flatMap((r) => r.uuids))];
      if (uuids.length !== 1)
        return { refusal: `received credit note (E) relates ${uuids.length} invoices with TipoRelacion 01; exactly one is needed to know which it credits` };
      return { fact: creditNoteOf(cfdi, uuids[0]!), invoices: [uuids[0]!] };
    }
    case 'T':
      return { refusal: 'a transfer CFDI (T) received from another taxpayer is not imported: it carries no amount the tenant owes' };
  }
}

function receivedInvoiceFact(cfdi: Cfdi): ReceivedInvoiceFact {
  return {
    kind: 'invoice',
    uuid: cfdi.uuid,
    certifiedAt: cfdi.certifiedAt,
    supplier: { rfc: cfdi.issuer.rfc, name: cfdi.issuer.name },
    serie: cfdi.serie,
    folio: cfdi.folio,
    date: cfdi.date,
    currency: cfdi.currency,
    exchangeRate: cfdi.exchangeRate,
    paymentMethod: cfdi.paymentMethod ?? 'PUE',
    paymentForm: cfdi.paymentForm,
    use: cfdi.use,
    cfdiVersion: cfdi.version,
    ...(cfdi.cartaPorte ? { cartaPorteVersion: cfdi.cartaPorte.version } : {}),
    subTotal: cfdi.subTotal,
    discount: cfdi.discount,
    total: cfdi.total,
    concepts: cfdi.concepts.map((c) => ({
      code: c.code,
      description: c.description,
      quantity: c.quantity,
      unit: c.unit,
      unitPrice: c.unitPrice,
      amount: c.amount,
      discount: c.discount,
      transfers: c.transfers.map((t) => ({ ...t })),
      retentions: c.retentions.map((t) => ({ ...t })),
    })),
  };
}

/** A supplier's cancellation acknowledgement or request about CFDI it issued to the tenant: one fact per UUID. */
export function receivedCancellationFacts(
  file: { file: 'cancellation'; date: number; folios: AcknowledgedFolio[] } | { file: 'cancellationRequest'; date: number; folios: RequestedFolio[] },
): (CancellationFact | CancellationRequestFact)[] {
  if (file.file === 'cancellation')
    return file.folios.map((f) => ({
      kind: 'cancellation',
      uuid: f.uuid,
      date: file.date,
      motive: f.motive,
      replacementUuid: f.replacementUuid,
      code: f.code,
    }));
  return file.folios.map((f) => ({ kind: 'cancellationRequest', uuid: f.uuid, date: file.date, motive: f.motive, replacementUuid: f.replacementUuid }));
}
