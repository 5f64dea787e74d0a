/**
 * DIOT rows (docs/domain.md, "DIOT"): per supplier and type of operation, the value of the acts
 * effectively paid in the month by VAT rate, the VAT paid (creditable or not), the VAT the carrier
 * retained, and the returns and discounts (credit notes received). Pure, from the month's payment
 * lines (tax-position.ts); cancelled CFDIs report nothing.
 */
import { fromCents } from '../money/cents.ts';
import type { PaymentLine } from './tax-position.ts';

/** 04 national supplier, 05 foreign, 15 global (the public RFC XAXX010101000). */
export type ThirdPartyType = '04' | '05' | '15';
/**
 * The 2025 catalogue (SAT, Instructivo para el armado del archivo de carga masiva DIOT, enero 2025, §3.1): 02 transfer
 * of goods, 03 professional services, 06 temporary use of goods (leasing), 07 import of goods or services, 85 others,
 * 87 global operations (the global third party, 15). 08 (import by virtual transfer) never follows from a CFDI.
 */
export type OperationType = '02' | '03' | '06' | '07' | '85' | '87';

export const FOREIGN_RFC = 'XEXX010101000';
export const PUBLIC_RFC = 'XAXX010101000';

export function thirdPartyTypeOf(rfc: string): ThirdPartyType {
  if (rfc === FOREIGN_RFC) return '05';
  if (rfc === PUBLIC_RFC) return '15';
  return '04';
}

/**
 * The type of operation of a payment line, by its supplier and the product code of the CFDI's largest concept: the
 * global third party (15) is 87; leasing of real estate (c_ClaveProdServ 8013xxxx) 06; a persona física (13-character
 * RFC) whose CFDI shows ISR retained (fees, LISR art. 106) 03; goods (the UNSPSC segments 10–69 the catalogue
 * follows: fuel, tyres, parts) 02; anything else 85. A foreign supplier (05) takes only 02, 03 or 07 (§3.1): its services
 * are imported (07).
 */
export function operationTypeOf(line: Pick<PaymentLine, 'party' | 'mainCode' | 'retainsIsr'>): OperationType {
  const third = thirdPartyTypeOf(line.party);
  if (third === '15') return '87';
  // By the document, not the line: its credit notes and what is paid beyond its Total carry no ISR, yet are its row's.
  const professional = line.party.length === 13 && line.retainsIsr;
  const goods = /^[1-6]/.test(line.mainCode);
  if (third === '05') return professional ? '03' : goods ? '02' : '07';
  // Before fees: a persona física's rent carries ISR retained too (LISR art. 116).
  if (line.mainCode.startsWith('8013')) return '06';
  if (professional) return '03';
  return goods ? '02' : '85';
}

export interface DiotRow {
  thirdPartyType: ThirdPartyType;
  operationType: OperationType;
  /** Null for a foreign supplier (05): the CFDI carries the generic RFC only. */
  rfc: string | null;
  /** Foreign tax id (NumRegIdTrib) is not on a received CFDI 4.0's Emisor: null. */
  foreignTaxId: string | null;
  name: string;
  paid: { rate16: number; rate8: number; rate0: number; exempt: number; imports: number };
  vat: { rate16: number; rate8: number; creditable: number; nonCreditable: number };
  vatRetained: number;
  returnsAndDiscounts: number;
  documents: number;
  payments: number;
}

type Named = Pick<PaymentLine, 'date' | 'uuid' | 'paymentUuid'>;

/**
 * A supplier's and type of operation's sums over some payment lines, in integer cents: one DIOT
 * row, or a day's share of one kept on write (tax-position-rollup.ts), which add up to the row.
 */
export interface DiotPartial {
  /** diotKeyOf: `${rfc}|${operationType}`, a foreign supplier's (05) with its name's foreignSupplierKey. */
  key: string;
  thirdPartyType: ThirdPartyType;
  operationType: OperationType;
  rfc: string;
  /** The name on the latest line (`named`); a foreign supplier's (05) names all have the key's foreignSupplierKey. */
  name: string;
  named: Named;
  c: { p16: number; p8: number; p0: number; ex: number; v16: number; v8: number; cred: number; non: number; ret: number; returns: number };
  documents: number;
  payments: number;
}

/** Whether line a is later than b (date, then UUID, then the payment's UUID): the supplier's name is the one on its latest line. */
const laterThan = (a: Named, b: Named): boolean =>
  a.date !== b.date ? a.date > b.date : a.uuid !== b.uuid ? a.uuid > b.uuid : (a.paymentUuid ?? '') > (b.paymentUuid ?? '');

const named = (l: Named): Named => ({ date: l.date, uuid: l.uuid, paymentUuid: l.paymentUuid });

/**
 * Who a foreign supplier (05) is: every foreign supplier's CFDI carries the same generic RFC, so its name tells them
 * apart. The name in Unicode NFC, runs of white space (tabs, line breaks, no-break spaces) as one space, trimmed, in
 * upper case (locale-independent: "Acme  llc" and "ACME LLC" are one supplier). Accents and punctuation are kept:
 * "ACME, LLC" is another supplier than "ACME LLC".
 */
export function foreignSupplierKey(name: string): string {
  return name.normalize('NFC').replace(/\s+/gu, ' ').trim().toUpperCase();
}

/**
 * The row a line adds to (cancelled CFDIs report nothing: null): `${rfc}|${operationType}`, and for a foreign
 * supplier (05) `${rfc}|${operationType}|${foreignSupplierKey(name)}` (the name last: it may hold a `|`).
 */
export function diotKeyOf(l: PaymentLine): string | null {
  if (l.nonCreditable === 'DOCUMENT_CANCELLED') return null;
  const key = `${l.party}|${operationTypeOf(l)}`;
  return thirdPartyTypeOf(l.party) === '05' ? `${key}|${foreignSupplierKey(l.partyName)}` : key;
}

/**
 * The sums of these payment lines by supplier and type of operation; a line for which
 * `countsDocument` holds adds 1 to its row's documents (each document once per row).
 */
export function diotPartials(lines: readonly PaymentLine[], countsDocument: (l: PaymentLine) => boolean): Map<string, DiotPartial> {
  const byKey = new Map<string, DiotPartial>();
  for (const l of lines) {
    const key = diotKeyOf(l);
    if (key === null) continue;
    let a = byKey.get(key);
    if (!a) {
      const operationType = operationTypeOf(l);
      a = {
        key,
        thirdPartyType: thirdPartyTypeOf(l.party),
        operationType,
        rfc: l.party,
        name: l.partyName,
        named: named(l),
        c: { p16: 0, p8: 0, p0: 0, ex: 0, v16: 0, v8: 0, cred: 0, non: 0, ret: 0, returns: 0 },
        documents: 0,
        payments: 0,
      };
      byKey.set(key, a);
    } else if (laterThan(l, a.named)) {
      a.name = l.partyName;
      a.named = named(l);
    }
    if (countsDocument(l)) a.documents += 1;
    if (l.kind === 'creditNote') {
      a.c.returns += l.returnsC;
      continue;
    }
    a.payments += 1;
    a.c.p16 += l.basesC.rate16;
    a.c.p8 += l.basesC.rate8;
    a.c.p0 += l.basesC.rate0;
    a.c.ex += l.basesC.exempt;
    // The VAT of the payment split by rate in proportion to the bases (one rate per document in practice).
    const taxed = l.basesC.rate16 * 16 + l.basesC.rate8 * 8;
    const v16 = taxed === 0 ? 0 : l.basesC.rate8 === 0 ? l.vatC : Math.round((l.vatC * l.basesC.rate16 * 16) / taxed);
    a.c.v16 += v16;
    a.c.v8 += l.vatC - v16;
    if (l.nonCreditable === null) a.c.cred += l.vatC;
    else a.c.non += l.vatC;
    a.c.ret += l.vatRetainedC;
  }
  return byKey;
}

/**
 * Of one document's payment lines of a month, the one per row that counts the document there:
 * its latest (a day's share kept on write counts the document on the day of that line).
 */
export function documentCountingLines(lines: readonly PaymentLine[]): Set<PaymentLine> {
  const last = new Map<string, PaymentLine>();
  for (const l of lines) {
    const key = diotKeyOf(l);
    if (key === null) continue;
    const seen = last.get(key);
    if (!seen || laterThan(l, seen)) last.set(key, l);
  }
  return new Set(last.values());
}

/** Partials of the same month (days' shares) added up, in rows. */
export function mergeDiotPartials(parts: Iterable<DiotPartial>): DiotPartial[] {
  const byKey = new Map<string, DiotPartial>();
  for (const p of parts) {
    const a = byKey.get(p.key);
    if (!a) {
      byKey.set(p.key, { ...p, named: { ...p.named }, c: { ...p.c } });
      continue;
    }
    if (laterThan(p.named, a.named)) {
      a.name = p.name;
      a.named = { ...p.named };
    }
    for (const k of Object.keys(a.c) as (keyof DiotPartial['c'])[]) a.c[k] += p.c[k];
    a.documents += p.documents;
    a.payments += p.payments;
  }
  return [...byKey.values()];
}

/** A foreign supplier's (05) foreignSupplierKey, '' for any other: after the RFC, what orders the rows. */
const supplierOf = (a: DiotPartial): string => (a.thirdPartyType === '05' ? foreignSupplierKey(a.name) : '');

/**
 * Rows from a month's partials, by supplier then type of operation: by RFC, the foreign suppliers (05, all one RFC)
 * by their foreignSupplierKey in UTF-16 code-unit order (not the locale's: the order kept on write is the one
 * computed), then by type of operation.
 */
export function diotRowsOf(partials: readonly DiotPartial[]): DiotRow[] {
  const byCodeUnits = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return [...partials]
    .sort((x, y) => x.rfc.localeCompare(y.rfc) || byCodeUnits(supplierOf(x), supplierOf(y)) || x.operationType.localeCompare(y.operationType))
    .map((a) => ({
      thirdPartyType: a.thirdPartyType,
      operationType: a.operationType,
      rfc: a.thirdPartyType === '05' ? null : a.rfc,
      foreignTaxId: null,
      name: a.name,
      paid: { rate16: fromCents(a.c.p16), rate8: fromCents(a.c.p8), rate0: fromCents(a.c.p0), exempt: fromCents(a.c.ex), imports: 0 },
      vat: { rate16: fromCents(a.c.v16), rate8: fromCents(a.c.v8), creditable: fromCents(a.c.cred), nonCreditable: fromCents(a.c.non) },
      vatRetained: fromCents(a.c.ret),
      returnsAndDiscounts: fromCents(a.c.returns),
      documents: a.documents,
      payments: a.payments,
    }));
}

/**
 * The DIOT rows of a month's payment lines, by supplier then type of operation. A supplier whose
 * CFDIs carry different names is shown with the name on its latest line of the month, whatever
 * order the lines come in (the rows kept on write and those computed from the documents agree);
 * foreign suppliers (05) share one generic RFC, so each is told apart by its name (foreignSupplierKey)
 * and names that differ only in case or spacing are one supplier, shown with its latest spelling.
 * A document counts once per row, by its UUID.
 */
export function diotRows(lines: readonly PaymentLine[]): DiotRow[] {
  const seen = new Set<string>();
  const first = (l: PaymentLine): boolean => {
    const k = `${diotKeyOf(l)}|${l.uuid}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  };
  return diotRowsOf([...diotPartials(lines, first).values()]);
}

/** The CSV's columns, in order (see docs/domain.md "DIOT": the SAT's 2025 batch layout could not be established). */
export const DIOT_CSV_COLUMNS = [
  'thirdPartyType',
  'operationType',
  'rfc',
  'foreignTaxId',
  'name',
  'paidRate16',
  'paidRate8',
  'paidRate0',
  'paidExempt',
  'paidImports',
  'vatRate16',
  'vatRate8',
  'vatCreditable',
  'vatNonCreditable',
  'vatRetained',
  'returnsAndDiscounts',
] as const;

/** RFC 4180: quote a field that holds a comma, a quote or a line break; a leading =, +, - or @ is prefixed with ' (spreadsheet formulas). */
function csvField(v: string | number | null): string {
  if (v === null) return '';
  if (typeof v === 'number') return v.toFixed(2);
  const safe = /^[=+\-@]/.test(v) ? `'${v}` : v;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

export function diotCsv(rows: readonly DiotRow[]): string {
  const lines = [DIOT_CSV_COLUMNS.join(',')];
  for (const r of rows) {
    lines.push(
      [
        r.thirdPartyType,
        r.operationType,
        r.rfc,
        r.foreignTaxId,
        r.name,
        r.paid.rate16,
        r.paid.rate8,
        r.paid.rate0,
        r.paid.exempt,
        r.paid.imports,
        r.vat.rate16,
        r.vat.rate8,
        r.vat.creditable,
        r.vat.nonCreditable,
        r.vatRetained,
        r.returnsAndDiscounts,
      ]
        .map(csvField)
        .join(','),
    );
  }
  return lines.join('\r\n') + '\r\n';
}
