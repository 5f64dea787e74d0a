/**
 * Reads a parsed XML tree as one of the files the import understands:
 *
 * - a CFDI Comprobante, 4.0 (`http://www.sat.gob.mx/cfd/4`) or 3.3
 *   (`http://www.sat.gob.mx/cfd/3`, the archive before 2023-04-01), of type I
 *   (invoice), E (credit note, CfdiRelacionados 01), P (payment complement,
 *   Pagos 2.0, or Pagos 1.0 on 3.3) or T (transfer, only useful with Carta
 *   Porte), stamped (TimbreFiscalDigital 1.1), optionally with a Carta Porte
 *   1.0, 2.0, 3.0 or 3.1 complement by road; every tax of its concepts (ISR 001,
 *   IVA 002, IEPS 003; Tasa, Cuota, Exento), its Moneda and TipoCambio. A
 *   payment or Carta Porte complement of another version, or Carta Porte by
 *   air, sea or rail, refuses the file with that reason;
 * - a SAT cancellation acknowledgement (`Acuse`): as the SAT and PACs return it
 *   (root in no namespace, `Folios` in `http://cancelacfd.sat.gob.mx` with the
 *   child elements `UUID` and `EstatusUUID`, a Signature, Fecha with up to 7
 *   fractional digits), the web service's `CancelaCFDResult` alone or in the
 *   SOAP envelope the SAT answers with (`Envelope/Body/CancelaCFDResponse/
 *   CancelaCFDResult`, which PACs such as Finkok hand over as the acuse), or
 *   this service's earlier form (root in that namespace, `Folios/Folio`
 *   attributes UUID, Motivo, FolioSustitucion, EstatusUUID);
 * - a taxpayer's cancellation request (`Cancelacion` in that namespace,
 *   `Folios/Folio` with UUID, Motivo, FolioSustitucion): a request, which
 *   cancels nothing by itself.
 *
 * Everything is checked here, before anything is stored: required attributes,
 * number and date formats, amounts ≥ 0. A problem is an ImportRejection with a
 * reason naming the attribute.
 */
import type { ObjetoImp, TaxLine, TaxName } from '../model/financial-document.ts';
import { parseMxDateTime } from '../time/mexico-city.ts';
import { childOf, childrenOf, type XmlElement } from './xml-tree.ts';
import { reject, shown } from './rejection.ts';
import { ownEntry } from '../shared/own-entry.ts';

export const NS = {
  cfdi4: 'http://www.sat.gob.mx/cfd/4',
  cfdi33: 'http://www.sat.gob.mx/cfd/3',
  tfd: 'http://www.sat.gob.mx/TimbreFiscalDigital',
  pagos10: 'http://www.sat.gob.mx/Pagos',
  pagos20: 'http://www.sat.gob.mx/Pagos20',
  cartaPorte10: 'http://www.sat.gob.mx/CartaPorte',
  cartaPorte20: 'http://www.sat.gob.mx/CartaPorte20',
  cartaPorte30: 'http://www.sat.gob.mx/CartaPorte30',
  cartaPorte31: 'http://www.sat.gob.mx/CartaPorte31',
  cancel: 'http://cancelacfd.sat.gob.mx',
  /** Local (state) taxes: the ImpuestosLocales complement, version 1.0. */
  implocal: 'http://www.sat.gob.mx/implocal',
  /** This service's delivery addenda (delivered volumes per destination and product; docs/importing.md, "Delivery addenda"). */
  delivery: 'urn:freight-backoffice:entregas:1',
} as const;

const KEPT = new Set<string>([
  NS.cfdi4,
  NS.cfdi33,
  NS.tfd,
  NS.pagos10,
  NS.pagos20,
  NS.cartaPorte10,
  NS.cartaPorte20,
  NS.cartaPorte30,
  NS.cartaPorte31,
  NS.cancel,
  NS.implocal,
  NS.delivery,
]);
/**
 * Payment and Carta Porte complements of versions not read here: kept in the tree only so that
 * the file is refused naming them, never imported without what they carry.
 */
const SAT_NS = 'http://www.sat.gob.mx/';
const isPagosNs = (ns: string): boolean => ns.startsWith(`${SAT_NS}Pagos`);
const isCartaPorteNs = (ns: string): boolean => ns.startsWith(`${SAT_NS}CartaPorte`);
/**
 * Elements kept while parsing: those in the namespaces read, payment and Carta Porte complements
 * of any version (so that one not read is refused naming it), and elements in no namespace under
 * a parent in no namespace or in the cancelacfd one (acknowledgements whose elements carry no
 * namespace, as some PACs return them). A CFDI's namespace-less Addenda content stays dropped.
 */
export const keepNamespace = (ns: string, parent?: { ns: string; name: string }): boolean =>
  KEPT.has(ns) ||
  isPagosNs(ns) ||
  isCartaPorteNs(ns) ||
  (parent !== undefined && (isSoapBody(ns, parent) || (ns === '' && (parent.ns === '' || parent.ns === NS.cancel || SOAP_NS.has(parent.ns)))));

/** SOAP 1.1 and 1.2 envelopes: the SAT's cancellation web service answers in one, and PACs pass it on as the acuse. */
const SOAP_NS = new Set(['http://schemas.xmlsoap.org/soap/envelope/', 'http://www.w3.org/2003/05/soap-envelope']);
/** The Body (or Header) of a SOAP envelope: kept so that an acknowledgement inside it is read. */
const isSoapBody = (ns: string, parent: { ns: string; name: string }): boolean => SOAP_NS.has(ns) && parent.ns === ns && parent.name === 'Envelope';

const UUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const RFC_RE = /^[A-ZÑ&]{3,4}[0-9]{6}[A-Z0-9]{3}$/;
const AMOUNT_RE = /^[0-9]{1,18}(\.[0-9]{1,6})?$/;
/**
 * Amounts are kept as binary doubles and summed in integer cents (lib/money/cents.ts), exact to the
 * cent up to 15 significant digits: an amount (or an MXN value) from 10^13 pesos on is refused, not
 * rounded. Anexo 20's t_Importe admits 18 integer digits; no freight document comes near 10^13.
 */
const MAX_AMOUNT = 1e13;
const MAX_AMOUNT_SHOWN = '9,999,999,999,999.99';
/** TasaOCuota: a rate (0.160000) or an amount per unit (a Cuota may exceed 1). */
const RATE_RE = /^[0-9]{1,18}(\.[0-9]{1,6})?$/;
const CURRENCY_RE = /^[A-Z]{3}$/;
const OBJETO_IMP = new Set(['01', '02', '03', '04', '05', '06', '07', '08']);

export type { ObjetoImp };

/** SAT tax codes (c_Impuesto). */
export const TAX_NAMES: Readonly<Record<string, TaxName>> = { '001': 'ISR', '002': 'IVA', '003': 'IEPS' };

export type CfdiTax = TaxLine;

export interface CfdiConcept {
  code: string;
  quantity: number;
  unit: string;
  description: string;
  unitPrice: number;
  amount: number;
  discount: number;
  objetoImp: ObjetoImp;
  transfers: CfdiTax[];
  retentions: CfdiTax[];
}

export interface CfdiPaymentDoc {
  /** UUID of the paid invoice (IdDocumento). */
  invoiceUuid: string;
  /** ImpSaldoAnt, ImpPagado, ImpSaldoInsoluto: in the paid document's currency (MonedaDR). */
  balanceBefore: number;
  paid: number;
  balanceAfter: number;
  currency: string;
  /** EquivalenciaDR: units of the document's currency per unit of the payment's. */
  equivalence: number;
  /** MXN per unit of the document's currency on the payment date: TipoCambioP ÷ EquivalenciaDR (1 for MXN). */
  exchangeRate: number;
}

export interface CfdiPayment {
  date: number;
  amount: number;
  currency: string;
  /** TipoCambioP: MXN per unit of the payment's currency (1 for MXN). */
  exchangeRate: number;
  /** FormaDePagoP (c_FormaPago: 01 cash…). */
  form: string | null;
  docs: CfdiPaymentDoc[];
}

export interface CartaPorteLocation {
  kind: 'Origen' | 'Destino';
  id: string;
  rfc: string;
  name: string;
  date: number;
  distanceKm: number;
  street: string;
  municipality: string;
  locality: string;
  state: string;
  country: string;
  zip: string;
}

export interface CartaPorteGoods {
  code: string;
  description: string;
  quantity: number;
  unit: string;
  /** ValorMercancia (0 when absent), in `currency`. */
  value: number;
  /** Mercancia@Moneda; absent: the CFDI's Moneda. */
  currency?: string;
  /** (destination id, quantity, and the origin id it names) when the goods are split by CantidadTransporta. */
  split: { destination: string; quantity: number; origin?: string }[];
}

/** The Carta Porte versions read. */
export type CartaPorteVersion = '1.0' | '2.0' | '3.0' | '3.1';

export interface CartaPorte {
  version: CartaPorteVersion;
  idCcp: string;
  totalDistanceKm: number;
  locations: CartaPorteLocation[];
  goods: CartaPorteGoods[];
  vehicle: { config: string; plate: string; year: string; trailers: string[] };
  /** `rfc`: the driver's RFC, or the foreign tax id of a driver not resident in Mexico (NumRegIdTribFigura). */
  driver: { rfc: string; name: string; license: string } | null;
}

/** Delivered volume of one product at one destination (the service's delivery addenda). */
export interface Delivery {
  destination: string;
  code: string;
  quantity: number;
  date: number;
}

export interface Cfdi {
  file: 'cfdi';
  /** Comprobante@Version: 4.0, or 3.3 (before 2023-04-01). */
  version: '3.3' | '4.0';
  type: 'I' | 'E' | 'P' | 'T';
  uuid: string;
  certifiedAt: number;
  serie: string;
  folio: string;
  date: number;
  paymentMethod: 'PUE' | 'PPD' | null;
  /** FormaPago (c_FormaPago: 01 cash, 03 transfer, 99 to be defined…); null when absent (types P and T). */
  paymentForm: string | null;
  /** Receptor@UsoCFDI (c_UsoCFDI: G03 expenses, S01 without tax effects…); null when absent (CFDI 3.3 may omit it). */
  use: string | null;
  currency: string;
  /** TipoCambio: MXN per unit of `currency` (1 for MXN, and for XXX: no currency, types P and T). */
  exchangeRate: number;
  /** Comprobante/Impuestos TotalImpuestosTrasladados / TotalImpuestosRetenidos; null without that node. */
  taxTotals: { transferred: number; retained: number } | null;
  /** The local taxes complement's TotaldeTraslados / TotaldeRetenciones (state taxes, outside Impuestos); null without it. */
  localTaxes: { transferred: number; retained: number } | null;
  subTotal: number;
  discount: number;
  total: number;
  issuer: { rfc: string; name: string };
  receiver: { rfc: string; name: string };
  related: { relation: string; uuids: string[] }[];
  concepts: CfdiConcept[];
  payments: CfdiPayment[];
  /** The Pagos complement's version (1.0 on CFDI 3.3, 2.0 on 4.0); null without payments. */
  pagosVersion: '1.0' | '2.0' | null;
  cartaPorte: CartaPorte | null;
  deliveries: Delivery[];
}

export type CancellationMotive = '01' | '02' | '03' | '04';

/** One UUID of an acknowledgement: the SAT's answer about it. */
export interface AcknowledgedFolio {
  uuid: string;
  /** EstatusUUID: 201 request received, 202 already cancelled (any other code refuses the file). */
  code: '201' | '202';
  /** Only this service's earlier form repeats the request's motive; the SAT's does not. */
  motive: CancellationMotive | null;
  replacementUuid: string | null;
}

/** The SAT's cancellation acknowledgement (Acuse). */
export interface CancellationAck {
  file: 'cancellation';
  issuerRfc: string;
  date: number;
  folios: AcknowledgedFolio[];
}

/** One UUID of a request. */
export interface RequestedFolio {
  uuid: string;
  motive: CancellationMotive;
  replacementUuid: string | null;
}

/** A taxpayer's signed cancellation request (Cancelacion): it cancels nothing by itself. */
export interface CancellationRequest {
  file: 'cancellationRequest';
  issuerRfc: string;
  date: number;
  folios: RequestedFolio[];
}

export type ImportFile = Cfdi | CancellationAck | CancellationRequest;

// --------------------------------------------------------------------------- attribute readers

const where = (el: XmlElement): string => el.name;

function req(el: XmlElement, attr: string): string {
  const v = el.attrs[attr];
  if (v === undefined || v.trim() === '') return reject(`${where(el)}@${attr} is missing`);
  return v.trim();
}
const opt = (el: XmlElement, attr: string): string | undefined => {
  const v = el.attrs[attr]?.trim();
  return v === undefined || v === '' ? undefined : v;
};

function amount(el: XmlElement, attr: string, required = true): number {
  const v = required ? req(el, attr) : opt(el, attr);
  if (v === undefined) return 0;
  if (!AMOUNT_RE.test(v)) return reject(`${where(el)}@${attr} is not a non-negative decimal amount: "${v.slice(0, 40)}"`);
  const n = Number(v);
  if (n >= MAX_AMOUNT) return reject(`${where(el)}@${attr} ${v} is beyond ${MAX_AMOUNT_SHOWN}: no amount that large can be kept to the cent`);
  return n;
}

/** An amount in a currency other than MXN: its MXN value must be kept to the cent too. */
function withinMxn(el: XmlElement, attr: string, value: number, rate: number): void {
  if (value * rate >= MAX_AMOUNT)
    reject(`${where(el)}@${attr} × its exchange rate ${rate} is beyond ${MAX_AMOUNT_SHOWN} MXN: no amount that large can be kept to the cent`);
}

function rate(el: XmlElement, attr: string): number {
  const v = req(el, attr);
  if (!RATE_RE.test(v)) return reject(`${where(el)}@${attr} is not a rate: "${v.slice(0, 40)}"`);
  return Number(v);
}

/**
 * A date-time without offset (Mexico City wall time). The SAT's acknowledgement writes up to 7
 * fractional digits (.NET ticks): `fractionDigits` allows them, read to the millisecond.
 */
function dateTime(el: XmlElement, attr: string, required = true, fractionDigits = 3): number {
  const v = required ? req(el, attr) : opt(el, attr);
  if (v === undefined) return NaN;
  const m = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d+))?$/.exec(v);
  if (!m || (m[2] !== undefined && m[2].length > fractionDigits)) {
    return reject(`${where(el)}@${attr} is not an ISO date-time without offset (up to ${fractionDigits} fractional digits): "${v.slice(0, 40)}"`);
  }
  // As every date of this service: a CFDI of year 0000 or 9999 is none anyone issued (and years 0–99 read as 19xx).
  const year = Number(v.slice(0, 4));
  if (year < 1970 || year > 2999) return reject(`${where(el)}@${attr} is outside the years 1970–2999: "${v.slice(0, 40)}"`);
  try {
    return parseMxDateTime(m[2] === undefined ? m[1]! : `${m[1]}.${m[2].slice(0, 3)}`);
  } catch {
    return reject(`${where(el)}@${attr} is not a valid date-time: "${shown(v)}"`);
  }
}

function uuidOf(el: XmlElement, attr: string): string {
  const v = req(el, attr);
  if (!UUID_RE.test(v)) return reject(`${where(el)}@${attr} is not a UUID: "${v.slice(0, 40)}"`);
  return v.toUpperCase();
}

function rfcOf(el: XmlElement, attr: string): string {
  const v = req(el, attr).toUpperCase();
  if (!RFC_RE.test(v)) return reject(`${where(el)}@${attr} is not an RFC: "${v.slice(0, 20)}"`);
  return v;
}

function one(parent: XmlElement, ns: string, name: string): XmlElement {
  const list = childrenOf(parent, ns, name);
  if (list.length !== 1)
    return reject(list.length === 0 ? `${parent.name} has no ${name}` : `${parent.name} has ${list.length} ${name} elements, expected one`);
  return list[0]!;
}

// --------------------------------------------------------------------------- CFDI

/** The CFDI versions read: 4.0 and, for the archive before 2023-04-01, 3.3 (docs/domain.md, "A carrier's archive"). */
type CfdiVersion = '3.3' | '4.0';
const CFDI_NS: Readonly<Record<CfdiVersion, string>> = { '3.3': NS.cfdi33, '4.0': NS.cfdi4 };

/** A concept's cfdi:Traslado or cfdi:Retencion: every SAT tax, Tasa, Cuota or Exento (only a transfer may be exempt). */
function readTax(el: XmlElement, concept: number): CfdiTax {
  const code = req(el, 'Impuesto');
  const tax = ownEntry(TAX_NAMES, code);
  if (tax === undefined) return reject(`Concepto ${concept}: ${el.name}@Impuesto "${code.slice(0, 10)}" is not a SAT tax (001 ISR, 002 IVA, 003 IEPS)`);
  const factor = req(el, 'TipoFactor');
  if (factor !== 'Tasa' && factor !== 'Cuota' && factor !== 'Exento')
    return reject(`Concepto ${concept}: ${el.name}@TipoFactor "${shown(factor)}" is not Tasa, Cuota or Exento`);
  if (factor === 'Exento' && el.name === 'Retencion') return reject(`Concepto ${concept}: a retention cannot be Exento`);
  return {
    tax,
    factor,
    base: amount(el, 'Base'),
    rate: factor === 'Exento' ? null : rate(el, 'TasaOCuota'),
    amount: factor === 'Exento' ? 0 : amount(el, 'Importe'),
  };
}

/**
 * A concept and its taxes. CFDI 3.3 has no ObjetoImp: a concept with taxes is subject (02), one
 * without is not (01), as docs/domain.md reads the 3.3 rule.
 */
function readConcept(el: XmlElement, index: number, version: CfdiVersion): CfdiConcept {
  const ns = CFDI_NS[version];
  const taxes = childOf(el, ns, 'Impuestos');
  const transfers = taxes ? childrenOf(childOf(taxes, ns, 'Traslados') ?? taxes, ns, 'Traslado').map((t) => readTax(t, index + 1)) : [];
  const retentions = taxes ? childrenOf(childOf(taxes, ns, 'Retenciones') ?? taxes, ns, 'Retencion').map((t) => readTax(t, index + 1)) : [];
  const objetoImp = version === '3.3' ? (transfers.length || retentions.length ? '02' : '01') : req(el, 'ObjetoImp');
  if (!OBJETO_IMP.has(objetoImp)) return reject(`Concepto ${index + 1}: ObjetoImp "${objetoImp.slice(0, 10)}" is not a SAT ObjetoImp (01 to 08)`);
  if (objetoImp === '01' && (transfers.length || retentions.length))
    return reject(`Concepto ${index + 1} is ObjetoImp 01 (not subject to tax) but carries taxes`);
  return {
    code: req(el, 'ClaveProdServ'),
    quantity: amount(el, 'Cantidad'),
    unit: req(el, 'ClaveUnidad'),
    description: req(el, 'Descripcion'),
    unitPrice: amount(el, 'ValorUnitario'),
    amount: amount(el, 'Importe'),
    discount: amount(el, 'Descuento', false),
    objetoImp: objetoImp as ObjetoImp,
    transfers,
    retentions,
  };
}

/** The payment complement versions read, by namespace: Pagos 1.0 (CFDI 3.3, 2018–2022) and 2.0. */
const PAGOS_VERSION: Readonly<Record<string, '1.0' | '2.0'>> = { [NS.pagos10]: '1.0', [NS.pagos20]: '2.0' };

/**
 * One paid document. Pagos 2.0 states EquivalenciaDR; Pagos 1.0 states TipoCambioDR with the same
 * meaning (units of the document's currency per unit of the payment's), and lets ImpPagado out
 * when the payment pays one document in its own currency (then ImpPagado is the Monto).
 */
function readPaymentDoc(d: XmlElement, version: '1.0' | '2.0', payment: { currency: string; rate: number; amount: number; docs: number }): CfdiPaymentDoc {
  const currency = req(d, 'MonedaDR');
  if (!CURRENCY_RE.test(currency) || currency === 'XXX') reject(`DoctoRelacionado@MonedaDR "${currency.slice(0, 10)}" is not an ISO 4217 currency`);
  const id = shown(d.attrs.IdDocumento ?? '');
  if (version === '1.0' && (opt(d, 'ImpSaldoAnt') === undefined || opt(d, 'ImpSaldoInsoluto') === undefined))
    reject(
      `DoctoRelacionado ${id}: ImpSaldoAnt and ImpSaldoInsoluto are missing (Pagos 1.0 leaves them out only for a PUE invoice); the balance they move is unknown`,
    );
  const before = amount(d, 'ImpSaldoAnt');
  let paid: number;
  if (version === '1.0' && opt(d, 'ImpPagado') === undefined) {
    if (payment.docs !== 1 || currency !== payment.currency)
      return reject(`DoctoRelacionado ${id}: ImpPagado is missing, and the payment pays several documents or another currency`);
    paid = payment.amount;
  } else paid = amount(d, 'ImpPagado');
  const after = amount(d, 'ImpSaldoInsoluto');
  if (Math.abs(Math.round(before * 100) - Math.round(paid * 100) - Math.round(after * 100)) > 1) {
    reject(`DoctoRelacionado ${id}: ImpSaldoInsoluto ${after} ≠ ImpSaldoAnt ${before} − ImpPagado ${paid}`);
  }
  const equivalenceAttr = version === '1.0' ? 'TipoCambioDR' : 'EquivalenciaDR';
  if (version === '1.0' && currency !== payment.currency && opt(d, equivalenceAttr) === undefined)
    reject(`DoctoRelacionado ${id}: TipoCambioDR is missing: a document in ${currency} paid in ${payment.currency} states it`);
  const equivalence = opt(d, equivalenceAttr) === undefined ? 1 : rate10(d, equivalenceAttr);
  return {
    invoiceUuid: uuidOf(d, 'IdDocumento'),
    balanceBefore: before,
    paid,
    balanceAfter: after,
    currency,
    equivalence,
    // MXN per unit of the paid document's currency, to 6 decimals (exactly 1 for an MXN document).
    exchangeRate: currency === 'MXN' ? 1 : Math.round((payment.rate / equivalence) * 1e6) / 1e6,
  };
}

function readPayments(complement: XmlElement): { version: '1.0' | '2.0'; payments: CfdiPayment[] } {
  const all = complement.children.filter((c) => c.name === 'Pagos' && isPagosNs(c.ns));
  if (all.length === 0) return reject('a payment CFDI (P) without a Pagos complement');
  if (all.length > 1) return reject(`Complemento has ${all.length} Pagos complements, expected one`);
  const pagos = all[0]!;
  const version = ownEntry(PAGOS_VERSION, pagos.ns);
  if (version === undefined) return reject(`unsupported payment complement: namespace ${shown(pagos.ns)} (Pagos 1.0 and 2.0 are read)`);
  if (pagos.attrs.Version !== version) return reject(`Pagos@Version "${shown(pagos.attrs.Version ?? '')}" is not ${version} (namespace ${pagos.ns})`);
  const list = childrenOf(pagos, pagos.ns, 'Pago');
  if (list.length === 0) return reject('Pagos has no Pago');
  const payments = list.map((p) => {
    const paymentCurrency = req(p, 'MonedaP');
    if (!CURRENCY_RE.test(paymentCurrency) || paymentCurrency === 'XXX') reject(`Pago@MonedaP "${paymentCurrency.slice(0, 10)}" is not an ISO 4217 currency`);
    if (paymentCurrency !== 'MXN' && opt(p, 'TipoCambioP') === undefined)
      reject(`Pago@TipoCambioP is missing: a payment in ${paymentCurrency} states its MXN exchange rate`);
    const paymentRate = paymentCurrency === 'MXN' ? 1 : rate10(p, 'TipoCambioP');
    const paymentAmount = amount(p, 'Monto');
    withinMxn(p, 'Monto', paymentAmount, paymentRate);
    const docEls = childrenOf(p, pagos.ns, 'DoctoRelacionado');
    if (docEls.length === 0) return reject('Pago has no DoctoRelacionado');
    const payment = { currency: paymentCurrency, rate: paymentRate, amount: paymentAmount, docs: docEls.length };
    const docs = docEls.map((d) => readPaymentDoc(d, version, payment));
    return {
      date: dateTime(p, 'FechaPago'),
      amount: paymentAmount,
      currency: paymentCurrency,
      exchangeRate: paymentRate,
      form: opt(p, 'FormaDePagoP') ?? null,
      docs,
    };
  });
  return { version, payments };
}

function rate10(el: XmlElement, attr: string): number {
  const v = req(el, attr);
  if (!/^[0-9]{1,18}(\.[0-9]{1,10})?$/.test(v) || Number(v) <= 0) return reject(`${el.name}@${attr} is not a positive number: "${v.slice(0, 40)}"`);
  return Number(v);
}

/** The Carta Porte versions read, by namespace (1.0 of 2021, 2.0 of 2022–2023, 3.0 and 3.1). */
const CARTA_PORTE_VERSION: Readonly<Record<string, CartaPorteVersion>> = {
  [NS.cartaPorte10]: '1.0',
  [NS.cartaPorte20]: '2.0',
  [NS.cartaPorte30]: '3.0',
  [NS.cartaPorte31]: '3.1',
};

/** Carta Porte transport elements other than road, with the mode they describe. */
const NOT_ROAD: Readonly<Record<string, string>> = { TransporteAereo: 'air', TransporteMaritimo: 'sea', TransporteFerroviario: 'rail' };

/** A trip here is a truck on the road (Autotransporte; AutotransporteFederal in 1.0): air, sea and rail legs are not read. */
function roadTransport(mercancias: XmlElement, ns: string, road: string): XmlElement {
  const auto = childOf(mercancias, ns, road);
  if (!auto) {
    const other = mercancias.children.find((c) => c.ns === ns && ownEntry(NOT_ROAD, c.name) !== undefined);
    if (other)
      reject(
        `Carta Porte by ${ownEntry(NOT_ROAD, other.name)} (${other.name}): only road transport (${road}) makes a trip in this service; the file is not imported`,
      );
  }
  return one(mercancias, ns, road);
}

function address(u: XmlElement, ns: string, id: string): Pick<CartaPorteLocation, 'street' | 'municipality' | 'locality' | 'state' | 'country' | 'zip'> {
  const dom = childOf(u, ns, 'Domicilio') ?? reject(`Ubicacion ${shown(id)} has no Domicilio`);
  return {
    // Trimmed, as every other attribute read (opt, req): "  210 " is 210.
    street: [opt(dom, 'Calle'), opt(dom, 'NumeroExterior')].filter(Boolean).join(' '),
    municipality: opt(dom, 'Municipio') ?? '',
    locality: opt(dom, 'Localidad') ?? '',
    state: req(dom, 'Estado'),
    country: opt(dom, 'Pais') ?? 'MEX',
    zip: opt(dom, 'CodigoPostal') ?? '',
  };
}

const withCurrency = (moneda: string | undefined): { currency?: string } => (moneda === undefined ? {} : { currency: moneda.toUpperCase() });

const withOrigin = (id: string | undefined): { origin?: string } => (id === undefined ? {} : { origin: id });

function readGoods(mercancias: XmlElement, ns: string): CartaPorteGoods[] {
  const goods = childrenOf(mercancias, ns, 'Mercancia').map((m): CartaPorteGoods => ({
    code: req(m, 'BienesTransp'),
    description: req(m, 'Descripcion'),
    quantity: amount(m, 'Cantidad'),
    unit: req(m, 'ClaveUnidad'),
    value: amount(m, 'ValorMercancia', false),
    ...withCurrency(opt(m, 'Moneda')),
    split: childrenOf(m, ns, 'CantidadTransporta').map((c) => ({
      destination: req(c, 'IDDestino'),
      quantity: amount(c, 'Cantidad'),
      ...withOrigin(opt(c, 'IDOrigen')),
    })),
  }));
  if (goods.length === 0) reject('Carta Porte Mercancias has no Mercancia');
  return goods;
}

function checkEnds(locations: CartaPorteLocation[]): CartaPorteLocation[] {
  if (!locations.some((l) => l.kind === 'Origen')) reject('Carta Porte has no Origen');
  if (!locations.some((l) => l.kind === 'Destino')) reject('Carta Porte has no Destino');
  return locations;
}

/** Carta Porte 2.0, 3.0 and 3.1: Ubicacion with TipoUbicacion and IDUbicacion, Autotransporte, FiguraTransporte/TiposFigura. */
function readCartaPorte2x(cp: XmlElement): Omit<CartaPorte, 'version'> {
  const ns = cp.ns;
  const mercancias = one(cp, ns, 'Mercancias');
  const auto = roadTransport(mercancias, ns, 'Autotransporte');
  const ubicaciones = one(cp, ns, 'Ubicaciones');
  // Carta Porte 2.0 makes IDUbicacion optional (3.0 requires it): a missing one is numbered by position, as in 1.0.
  const numbered = { Origen: 0, Destino: 0 };
  const locations = childrenOf(ubicaciones, ns, 'Ubicacion').map((u): CartaPorteLocation => {
    const kind = req(u, 'TipoUbicacion');
    if (kind !== 'Origen' && kind !== 'Destino') return reject(`Ubicacion@TipoUbicacion "${shown(kind)}" is not Origen or Destino`);
    const id =
      ns === NS.cartaPorte20 && opt(u, 'IDUbicacion') === undefined
        ? `${kind === 'Origen' ? 'OR' : 'DE'}${String(++numbered[kind]).padStart(6, '0')}`
        : req(u, 'IDUbicacion');
    return {
      kind,
      id,
      rfc: rfcOf(u, 'RFCRemitenteDestinatario'),
      name: opt(u, 'NombreRemitenteDestinatario') ?? '',
      date: dateTime(u, 'FechaHoraSalidaLlegada'),
      distanceKm: kind === 'Destino' ? amount(u, 'DistanciaRecorrida') : 0,
      ...address(u, ns, id),
    };
  });
  const ident = one(auto, ns, 'IdentificacionVehicular');
  const trailers = (childOf(auto, ns, 'Remolques')?.children ?? []).filter((r) => r.name === 'Remolque').map((r) => req(r, 'Placa'));
  const figures = childOf(cp, ns, 'FiguraTransporte')?.children.filter((f) => f.name === 'TiposFigura') ?? [];
  const op = figures.find((f) => f.attrs.TipoFigura === '01');
  return {
    idCcp: opt(cp, 'IdCCP') ?? '',
    totalDistanceKm: amount(cp, 'TotalDistRec', false),
    locations: checkEnds(locations),
    goods: readGoods(mercancias, ns),
    vehicle: { config: req(ident, 'ConfigVehicular'), plate: req(ident, 'PlacaVM'), year: opt(ident, 'AnioModeloVM') ?? '', trailers },
    driver: op ? { rfc: driverId(op, 'RFCFigura', 'NumRegIdTribFigura'), name: opt(op, 'NombreFigura') ?? '', license: opt(op, 'NumLicencia') ?? '' } : null,
  };
}

/**
 * The driver's identifier: the RFC, or, for a driver not resident in Mexico (a cross-border leg), the foreign tax id
 * (NumRegIdTribFigura; NumRegIdTribOperador in 1.0). Carta Porte makes the RFC optional for exactly that driver: a file
 * with the foreign id only is valid and is read, not refused for a missing RFC.
 */
function driverId(op: XmlElement, rfcAttr: string, foreignIdAttr: string): string {
  if (opt(op, rfcAttr) !== undefined) return rfcOf(op, rfcAttr);
  const foreign = opt(op, foreignIdAttr);
  if (foreign === undefined)
    return reject(`${where(op)}@${rfcAttr} is missing, and so is ${foreignIdAttr} (a driver not resident in Mexico): the driver is not identified`);
  if (foreign.length > 40) return reject(`${where(op)}@${foreignIdAttr} is longer than 40 characters: "${shown(foreign.slice(0, 40))}"`);
  return foreign;
}

/**
 * Carta Porte 1.0 (2021): each Ubicacion holds an Origen (IDOrigen, RFCRemitente, FechaHoraSalida)
 * or a Destino (IDDestino, RFCDestinatario, FechaHoraProgLlegada) and its DistanciaRecorrida; the
 * truck is AutotransporteFederal; the driver FiguraTransporte/Operadores/Operador (its RFCOperador,
 * or NumRegIdTribOperador for a driver not resident in Mexico: driverId). IDOrigen and IDDestino are
 * optional: a missing one is numbered by position (OR000001, DE000001, …); RFCRemitente and
 * RFCDestinatario are optional too (empty).
 */
function readCartaPorte10(cp: XmlElement): Omit<CartaPorte, 'version'> {
  const ns = cp.ns;
  const mercancias = one(cp, ns, 'Mercancias');
  const auto = roadTransport(mercancias, ns, 'AutotransporteFederal');
  const ubicaciones = one(cp, ns, 'Ubicaciones');
  let origins = 0;
  let destinations = 0;
  const locations = childrenOf(ubicaciones, ns, 'Ubicacion').map((u, i): CartaPorteLocation => {
    const o = childOf(u, ns, 'Origen');
    const d = childOf(u, ns, 'Destino');
    if ((o ? 1 : 0) + (d ? 1 : 0) !== 1) return reject(`Ubicacion ${i + 1} holds ${o && d ? 'both an Origen and a Destino' : 'neither Origen nor Destino'}`);
    const pad = (n: number) => String(n).padStart(6, '0');
    if (o) {
      const id = opt(o, 'IDOrigen') ?? `OR${pad(++origins)}`;
      const rfc = opt(o, 'RFCRemitente') === undefined ? '' : rfcOf(o, 'RFCRemitente');
      return { kind: 'Origen', id, rfc, name: opt(o, 'NombreRemitente') ?? '', date: dateTime(o, 'FechaHoraSalida'), distanceKm: 0, ...address(u, ns, id) };
    }
    const id = opt(d!, 'IDDestino') ?? `DE${pad(++destinations)}`;
    const rfc = opt(d!, 'RFCDestinatario') === undefined ? '' : rfcOf(d!, 'RFCDestinatario');
    return {
      kind: 'Destino',
      id,
      rfc,
      name: opt(d!, 'NombreDestinatario') ?? '',
      date: dateTime(d!, 'FechaHoraProgLlegada'),
      distanceKm: amount(u, 'DistanciaRecorrida'),
      ...address(u, ns, id),
    };
  });
  const ident = one(auto, ns, 'IdentificacionVehicular');
  const trailers = (childOf(auto, ns, 'Remolques')?.children ?? []).filter((r) => r.name === 'Remolque').map((r) => req(r, 'Placa'));
  const operators = childOf(childOf(cp, ns, 'FiguraTransporte') ?? cp, ns, 'Operadores');
  const op = operators ? childOf(operators, ns, 'Operador') : undefined;
  return {
    idCcp: '',
    totalDistanceKm: amount(cp, 'TotalDistRec', false),
    locations: checkEnds(locations),
    goods: readGoods(mercancias, ns),
    vehicle: { config: req(ident, 'ConfigVehicular'), plate: req(ident, 'PlacaVM'), year: opt(ident, 'AnioModeloVM') ?? '', trailers },
    driver: op
      ? {
          rfc: driverId(op, 'RFCOperador', 'NumRegIdTribOperador'),
          name: opt(op, 'NombreOperador') ?? '',
          license: opt(op, 'NumLicencia') ?? '',
        }
      : null,
  };
}

function readCartaPorte(complement: XmlElement): CartaPorte | null {
  const all = complement.children.filter((c) => c.name === 'CartaPorte' && isCartaPorteNs(c.ns));
  if (all.length === 0) return null;
  if (all.length > 1) return reject(`Complemento has ${all.length} CartaPorte complements, expected one`);
  const cp = all[0]!;
  const version = ownEntry(CARTA_PORTE_VERSION, cp.ns);
  if (version === undefined)
    return reject(`unsupported Carta Porte complement: namespace ${shown(cp.ns)} (Carta Porte 1.0, 2.0, 3.0 and 3.1 are read); the file is not imported`);
  if (cp.attrs.Version !== version) return reject(`CartaPorte@Version "${(cp.attrs.Version ?? '').slice(0, 10)}" is not ${version} (namespace ${cp.ns})`);
  return { ...(version === '1.0' ? readCartaPorte10(cp) : readCartaPorte2x(cp)), version };
}

function readDeliveries(root: XmlElement): Delivery[] {
  const addenda = childOf(root, root.ns, 'Addenda');
  if (!addenda) return [];
  const out: Delivery[] = [];
  for (const entregas of childrenOf(addenda, NS.delivery, 'Entregas')) {
    for (const e of childrenOf(entregas, NS.delivery, 'Entrega')) {
      out.push({
        destination: req(e, 'IDDestino'),
        code: req(e, 'BienesTransp'),
        quantity: amount(e, 'CantidadDescargada'),
        date: dateTime(e, 'FechaHoraDescarga'),
      });
    }
  }
  return out;
}

/** Comprobante/Impuestos: the document's declared totals (absent attributes: 0); null without the node. */
function readTaxTotals(root: XmlElement): Cfdi['taxTotals'] {
  const el = childOf(root, root.ns, 'Impuestos');
  if (!el) return null;
  return { transferred: amount(el, 'TotalImpuestosTrasladados', false), retained: amount(el, 'TotalImpuestosRetenidos', false) };
}

/**
 * The local taxes complement (implocal 1.0): state taxes a CFDI adds to or takes off its Total
 * outside Comprobante/Impuestos (a lodging tax, a public works' inspection retention), so its Total
 * adds up only with them. Only its totals are kept; the taxes themselves are the states' matter.
 */
function readLocalTaxes(complement: XmlElement): Cfdi['localTaxes'] {
  const all = childrenOf(complement, NS.implocal, 'ImpuestosLocales');
  if (all.length === 0) return null;
  if (all.length > 1) return reject(`Complemento has ${all.length} ImpuestosLocales complements, expected one`);
  const el = all[0]!;
  if (el.attrs.version !== '1.0') return reject(`ImpuestosLocales@version "${shown(el.attrs.version ?? '')}" is not 1.0`);
  return { transferred: amount(el, 'TotaldeTraslados'), retained: amount(el, 'TotaldeRetenciones') };
}

function readCfdi(root: XmlElement, version: CfdiVersion): Cfdi {
  if (root.attrs.Version !== version)
    return reject(
      // CFDI 3.2 and older, in the 3.3 namespace, write the attribute in lower case (version="3.2").
      `unsupported: CFDI ${(root.attrs.Version ?? root.attrs.version ?? '').slice(0, 10)} (namespace ${root.ns}, which is CFDI ${version}); CFDI 3.3 and 4.0 are imported`,
    );
  const ns = root.ns;
  const type = req(root, 'TipoDeComprobante');
  if (type !== 'I' && type !== 'E' && type !== 'P' && type !== 'T') return reject(`TipoDeComprobante "${shown(type)}" is not imported (I, E, P or T)`);
  const complement = childOf(root, ns, 'Complemento');
  const stamp = complement ? childOf(complement, NS.tfd, 'TimbreFiscalDigital') : undefined;
  if (!stamp) return reject('not stamped: no TimbreFiscalDigital in Complemento (import the XML returned by SAT or your PAC)');
  const emisor = one(root, ns, 'Emisor');
  const receptor = one(root, ns, 'Receptor');
  const conceptsEl = one(root, ns, 'Conceptos');
  const concepts = childrenOf(conceptsEl, ns, 'Concepto').map((c, i) => readConcept(c, i, version));
  if (concepts.length === 0) reject('Conceptos has no Concepto');
  const method = opt(root, 'MetodoPago');
  if (method !== undefined && method !== 'PUE' && method !== 'PPD') reject(`MetodoPago "${shown(method)}" is not PUE or PPD`);
  if (type === 'I' && method === undefined) reject('an invoice (I) needs MetodoPago');
  const currency = req(root, 'Moneda');
  if (!CURRENCY_RE.test(currency)) reject(`Moneda "${currency.slice(0, 10)}" is not an ISO 4217 currency code`);
  if ((type === 'I' || type === 'E') && currency === 'XXX')
    reject(`Moneda XXX (no currency) is only for payment complements and transfers, not for a ${type === 'I' ? 'invoice' : 'credit note'}`);
  // MXN per unit: required with another currency (SAT rule); 1 for MXN and for XXX.
  if (currency !== 'MXN' && currency !== 'XXX' && opt(root, 'TipoCambio') === undefined)
    reject(`Comprobante@TipoCambio is missing: Moneda ${currency} needs its MXN exchange rate`);
  const exchangeRate = currency === 'MXN' || currency === 'XXX' ? 1 : rate10(root, 'TipoCambio');
  // 3.3 allows one CfdiRelacionados, 4.0 several: the same elements either way.
  const related = childrenOf(root, ns, 'CfdiRelacionados').map((r) => ({
    relation: req(r, 'TipoRelacion'),
    uuids: childrenOf(r, ns, 'CfdiRelacionado').map((c) => uuidOf(c, 'UUID')),
  }));
  const total = amount(root, 'Total');
  withinMxn(root, 'Total', total, exchangeRate);
  const pagos = type === 'P' ? readPayments(complement!) : null;
  if (type !== 'P' && complement!.children.some((c) => isPagosNs(c.ns))) reject(`a Pagos complement on a CFDI of type ${type} (only type P carries payments)`);
  return {
    file: 'cfdi',
    version,
    type,
    uuid: uuidOf(stamp, 'UUID'),
    certifiedAt: dateTime(stamp, 'FechaTimbrado'),
    serie: opt(root, 'Serie') ?? '',
    folio: opt(root, 'Folio') ?? '',
    date: dateTime(root, 'Fecha'),
    paymentMethod: (method as 'PUE' | 'PPD' | undefined) ?? null,
    paymentForm: opt(root, 'FormaPago') ?? null,
    use: opt(receptor, 'UsoCFDI') ?? null,
    currency,
    exchangeRate,
    taxTotals: readTaxTotals(root),
    localTaxes: readLocalTaxes(complement!),
    subTotal: amount(root, 'SubTotal'),
    discount: amount(root, 'Descuento', false),
    total,
    issuer: { rfc: rfcOf(emisor, 'Rfc'), name: opt(emisor, 'Nombre') ?? '' },
    receiver: { rfc: rfcOf(receptor, 'Rfc'), name: opt(receptor, 'Nombre') ?? '' },
    related,
    concepts,
    payments: pagos?.payments ?? [],
    pagosVersion: pagos?.version ?? null,
    cartaPorte: readCartaPorte(complement!),
    deliveries: readDeliveries(root),
  };
}

/** SAT EstatusUUID codes of an acknowledgement that refuse the cancellation (the SAT's catalogue). */
const REFUSED_CODES: Readonly<Record<string, string>> = {
  '203': 'the UUID does not belong to the issuer',
  '204': 'the CFDI cannot be cancelled',
  '205': 'the UUID is not known to the SAT',
  '206': 'the UUID is not a CFDI of the issuer',
};

function motiveOf(folio: XmlElement): { motive: CancellationMotive; replacementUuid: string | null } {
  const motive = req(folio, 'Motivo');
  if (motive !== '01' && motive !== '02' && motive !== '03' && motive !== '04') return reject(`Folio@Motivo "${motive.slice(0, 10)}" is not 01, 02, 03 or 04`);
  const replacement = opt(folio, 'FolioSustitucion');
  if (motive === '01' && replacement === undefined) reject(`Folio ${shown(folio.attrs.UUID ?? '')}: motive 01 needs FolioSustitucion (the replacement UUID)`);
  if (motive !== '01' && replacement !== undefined) reject(`Folio ${shown(folio.attrs.UUID ?? '')}: FolioSustitucion is only valid with motive 01`);
  return { motive, replacementUuid: replacement === undefined ? null : uuidOf(folio, 'FolioSustitucion') };
}

function ackCode(uuid: string, code: string): AcknowledgedFolio['code'] {
  if (code === '201' || code === '202') return code;
  const why = ownEntry(REFUSED_CODES, code);
  return reject(`the SAT did not accept the cancellation of ${uuid} (EstatusUUID ${code.slice(0, 10)}${why ? `: ${why}` : ''})`);
}

/** A UUID written as an element's text (the SAT's acknowledgement). */
function uuidText(el: XmlElement): string {
  const v = el.text.trim();
  if (!UUID_RE.test(v)) return reject(`Folios/UUID is not a UUID: "${v.slice(0, 40)}"`);
  return v.toUpperCase();
}

/** The namespaces an acknowledgement's elements come in: cancelacfd, or none (as some PACs write it). */
const ACK_NS = [NS.cancel, ''] as const;
const ackChildren = (el: XmlElement, name: string): XmlElement[] => ACK_NS.flatMap((ns) => childrenOf(el, ns, name));
const ackChild = (el: XmlElement, name: string): XmlElement | undefined => ackChildren(el, name)[0];

/**
 * The SAT's acknowledgement (Acuse) in every shape PACs return it, with its folios as
 * - `Folios` with the child elements UUID and EstatusUUID, one pair per Folios (the SAT's own
 *   form: root in no namespace, `Folios` in the cancelacfd namespace; some PACs, e.g. Timbox,
 *   write every element without a namespace; it does not repeat the motive); or
 * - `Folios/Folio` attributes UUID, Motivo, FolioSustitucion and EstatusUUID (absent: 201, the
 *   request was received): this service's earlier form, root in the cancelacfd namespace.
 * The root may be `Acuse` or the web service's `CancelaCFDResult`, in either namespace.
 */
function readAcuse(root: XmlElement): CancellationAck {
  const folios: AcknowledgedFolio[] = [];
  for (const f of ackChildren(root, 'Folios')) {
    const uuidEl = ackChild(f, 'UUID');
    const statusEl = ackChild(f, 'EstatusUUID');
    const attributed = ackChildren(f, 'Folio');
    if (uuidEl || statusEl) {
      if (!uuidEl || !statusEl) reject('Acuse: Folios needs the elements UUID and EstatusUUID');
      const uuid = uuidText(uuidEl!);
      folios.push({ uuid, code: ackCode(uuid, statusEl!.text.trim()), motive: null, replacementUuid: null });
    }
    for (const folio of attributed) {
      const uuid = uuidOf(folio, 'UUID');
      folios.push({ uuid, code: ackCode(uuid, opt(folio, 'EstatusUUID') ?? '201'), ...motiveOf(folio) });
    }
  }
  if (folios.length === 0) reject('Acuse has no Folios with UUID and EstatusUUID (elements, or Folio attributes)');
  return { file: 'cancellation', issuerRfc: rfcOf(root, 'RfcEmisor'), date: dateTime(root, 'Fecha', true, 7), folios };
}

/**
 * The acknowledgement a SOAP envelope carries: the SAT's cancellation web service answers
 * `Envelope/Body/CancelaCFDResponse/CancelaCFDResult` (the cancelacfd namespace, or none), and
 * some PACs put an `Acuse` straight in the Body. Another answer (a Fault, a PAC's own result) is none.
 */
function acuseInEnvelope(root: XmlElement): XmlElement | undefined {
  const body = childOf(root, root.ns, 'Body');
  if (!body) return undefined;
  const response = ackChild(body, 'CancelaCFDResponse');
  return (response ? ackChild(response, 'CancelaCFDResult') : undefined) ?? ackChild(body, 'CancelaCFDResult') ?? ackChild(body, 'Acuse');
}

/** A taxpayer's cancellation request (since 2022: `Folios/Folio` with UUID, Motivo, FolioSustitucion). */
function readRequest(root: XmlElement): CancellationRequest {
  const folios: RequestedFolio[] = [];
  for (const f of childrenOf(root, NS.cancel, 'Folios')) {
    if (childOf(f, NS.cancel, 'UUID') && !childOf(f, NS.cancel, 'Folio')) {
      reject('cancellation request without Motivo (the scheme before 2022, Folios/UUID): since 2022 a request states its Motivo; it is not recorded');
    }
    for (const folio of childrenOf(f, NS.cancel, 'Folio')) folios.push({ uuid: uuidOf(folio, 'UUID'), ...motiveOf(folio) });
  }
  if (folios.length === 0) reject('cancellation request has no Folios/Folio with UUID and Motivo');
  return { file: 'cancellationRequest', issuerRfc: rfcOf(root, 'RfcEmisor'), date: dateTime(root, 'Fecha', true, 7), folios };
}

/** What a parsed file is, or an ImportRejection saying why it is not importable. */
export function readImportFile(root: XmlElement): ImportFile {
  if (root.ns === NS.cfdi4 && root.name === 'Comprobante') return readCfdi(root, '4.0');
  if (root.ns === NS.cfdi33 && root.name === 'Comprobante') return readCfdi(root, '3.3');
  if ((root.ns === '' || root.ns === NS.cancel) && (root.name === 'Acuse' || root.name === 'CancelaCFDResult')) return readAcuse(root);
  if (root.ns === NS.cancel && root.name === 'Cancelacion') return readRequest(root);
  if (root.name === 'Envelope') {
    const acuse = SOAP_NS.has(root.ns) ? acuseInEnvelope(root) : undefined;
    if (acuse) return readAcuse(acuse);
    return reject(
      `a SOAP envelope (${root.ns || 'no namespace'}) without a SAT acknowledgement (Body/CancelaCFDResponse/CancelaCFDResult or Body/Acuse): import the acknowledgement or CFDI it carries`,
    );
  }
  return reject(`not a CFDI (3.3 or 4.0) or SAT cancellation acknowledgement: root element ${shown(root.name)} in namespace "${shown(root.ns) || '(none)'}"`);
}
