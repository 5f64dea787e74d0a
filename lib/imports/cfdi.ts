/**
 * Reads a parsed XML tree as one of the files the import understands:
 *
 * - a CFDI 4.0 Comprobante (`http://www.sat.gob.mx/cfd/4`) of type I (invoice),
 *   E (credit note, CfdiRelacionados 01), P (payment complement, Pagos 2.0) or
 *   T (transfer, only useful with Carta Porte), stamped (TimbreFiscalDigital
 *   1.1), optionally with a Carta Porte 3.0/3.1 complement;
 * - a SAT cancellation acknowledgement (`http://cancelacfd.sat.gob.mx`, root
 *   `Acuse` or `Cancelacion`) whose `Folios/Folio` carry UUID, Motivo and
 *   FolioSustitucion.
 *
 * Everything is checked here, before anything is stored: required attributes,
 * number and date formats, amounts ≥ 0, the tax codes the model can hold. A
 * problem is an ImportRejection with a reason naming the attribute.
 */
import { parseMxDateTime } from '../time/mexico-city.ts';
import { childOf, childrenOf, type XmlElement } from './xml-tree.ts';
import { reject } from './rejection.ts';

export const NS = {
  cfdi4: 'http://www.sat.gob.mx/cfd/4',
  cfdi33: 'http://www.sat.gob.mx/cfd/3',
  tfd: 'http://www.sat.gob.mx/TimbreFiscalDigital',
  pagos20: 'http://www.sat.gob.mx/Pagos20',
  cartaPorte30: 'http://www.sat.gob.mx/CartaPorte30',
  cartaPorte31: 'http://www.sat.gob.mx/CartaPorte31',
  cancel: 'http://cancelacfd.sat.gob.mx',
  /** This service's delivery addenda (delivered volumes per destination and product; see README). */
  delivery: 'urn:freight-backoffice:entregas:1',
} as const;

const KEPT = new Set<string>([NS.cfdi4, NS.cfdi33, NS.tfd, NS.pagos20, NS.cartaPorte30, NS.cartaPorte31, NS.cancel, NS.delivery]);
/** The namespaces whose elements the tree keeps. */
export const keepNamespace = (ns: string): boolean => KEPT.has(ns);

const UUID_RE = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;
const RFC_RE = /^[A-ZÑ&]{3,4}[0-9]{6}[A-Z0-9]{3}$/;
const AMOUNT_RE = /^[0-9]{1,18}(\.[0-9]{1,6})?$/;
const RATE_RE = /^[0-9](\.[0-9]{1,6})?$/;

export type ObjetoImp = '01' | '02' | '03';

export interface CfdiTax {
  /** 001 ISR, 002 IVA, 003 IEPS. */
  tax: string;
  factor: 'Tasa' | 'Cuota' | 'Exento';
  rate: number;
  base: number;
  amount: number;
}

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
  installment: number;
  balanceBefore: number;
  paid: number;
  balanceAfter: number;
  currency: string;
  /** EquivalenciaDR: units of the document's currency per unit of the payment's. */
  equivalence: number;
}

export interface CfdiPayment {
  date: number;
  amount: number;
  currency: string;
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
  value: number;
  /** (destination id, quantity) when the goods are split by CantidadTransporta. */
  split: { destination: string; quantity: number }[];
}

export interface CartaPorte {
  version: string;
  idCcp: string;
  totalDistanceKm: number;
  locations: CartaPorteLocation[];
  goods: CartaPorteGoods[];
  vehicle: { config: string; plate: string; year: string; trailers: string[] };
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
  type: 'I' | 'E' | 'P' | 'T';
  uuid: string;
  certifiedAt: number;
  serie: string;
  folio: string;
  date: number;
  paymentMethod: 'PUE' | 'PPD' | null;
  currency: string;
  subTotal: number;
  discount: number;
  total: number;
  issuer: { rfc: string; name: string };
  receiver: { rfc: string; name: string };
  related: { relation: string; uuids: string[] }[];
  concepts: CfdiConcept[];
  payments: CfdiPayment[];
  cartaPorte: CartaPorte | null;
  deliveries: Delivery[];
}

export interface CancellationFolio {
  uuid: string;
  motive: '01' | '02' | '03' | '04';
  replacementUuid: string | null;
  /** EstatusUUID of the acknowledgement (201/202 accepted), when given. */
  status: string | null;
}

export interface CancellationAck {
  file: 'cancellation';
  issuerRfc: string;
  date: number;
  folios: CancellationFolio[];
}

export type ImportFile = Cfdi | CancellationAck;

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
  return Number(v);
}

function rate(el: XmlElement, attr: string): number {
  const v = req(el, attr);
  if (!RATE_RE.test(v)) return reject(`${where(el)}@${attr} is not a rate: "${v.slice(0, 40)}"`);
  return Number(v);
}

function dateTime(el: XmlElement, attr: string, required = true): number {
  const v = required ? req(el, attr) : opt(el, attr);
  if (v === undefined) return NaN;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,3})?$/.test(v)) return reject(`${where(el)}@${attr} is not an ISO date-time without offset: "${v.slice(0, 40)}"`);
  try {
    return parseMxDateTime(v);
  } catch {
    return reject(`${where(el)}@${attr} is not a valid date-time: "${v}"`);
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
  if (list.length !== 1) return reject(list.length === 0 ? `${parent.name} has no ${name}` : `${parent.name} has ${list.length} ${name} elements, expected one`);
  return list[0]!;
}

// --------------------------------------------------------------------------- CFDI

function readTax(el: XmlElement): CfdiTax {
  const tax = req(el, 'Impuesto');
  const factor = req(el, 'TipoFactor');
  if (factor !== 'Tasa' && factor !== 'Cuota' && factor !== 'Exento') return reject(`${el.name}@TipoFactor "${factor}" is not Tasa, Cuota or Exento`);
  return {
    tax,
    factor,
    base: amount(el, 'Base'),
    rate: factor === 'Exento' ? 0 : rate(el, 'TasaOCuota'),
    amount: factor === 'Exento' ? 0 : amount(el, 'Importe'),
  };
}

function readConcept(el: XmlElement, index: number): CfdiConcept {
  const objetoImp = req(el, 'ObjetoImp');
  if (objetoImp !== '01' && objetoImp !== '02' && objetoImp !== '03') {
    return reject(`Concepto ${index + 1}: ObjetoImp "${objetoImp}" is not supported (01, 02 or 03)`);
  }
  const taxes = childOf(el, NS.cfdi4, 'Impuestos');
  const transfers = taxes ? (childOf(taxes, NS.cfdi4, 'Traslados')?.children ?? []).filter((c) => c.name === 'Traslado').map(readTax) : [];
  const retentions = taxes ? (childOf(taxes, NS.cfdi4, 'Retenciones')?.children ?? []).filter((c) => c.name === 'Retencion').map(readTax) : [];
  for (const t of [...transfers, ...retentions]) {
    if (t.tax !== '002') return reject(`Concepto ${index + 1} carries tax ${t.tax}; only IVA (002) transfers and retentions are imported`);
  }
  if (objetoImp !== '02' && (transfers.length || retentions.length)) return reject(`Concepto ${index + 1} is ObjetoImp ${objetoImp} but carries taxes`);
  if (transfers.length > 1 || retentions.length > 1) return reject(`Concepto ${index + 1} carries more than one IVA transfer or retention`);
  return {
    code: req(el, 'ClaveProdServ'),
    quantity: amount(el, 'Cantidad'),
    unit: req(el, 'ClaveUnidad'),
    description: req(el, 'Descripcion'),
    unitPrice: amount(el, 'ValorUnitario'),
    amount: amount(el, 'Importe'),
    discount: amount(el, 'Descuento', false),
    objetoImp,
    transfers,
    retentions,
  };
}

function readPayments(complement: XmlElement): CfdiPayment[] {
  const pagos = one(complement, NS.pagos20, 'Pagos');
  if (pagos.attrs.Version !== '2.0') return reject(`Pagos@Version "${pagos.attrs.Version ?? ''}" is not 2.0`);
  const list = childrenOf(pagos, NS.pagos20, 'Pago');
  if (list.length === 0) return reject('Pagos has no Pago');
  return list.map((p) => {
    const docs = childrenOf(p, NS.pagos20, 'DoctoRelacionado').map((d): CfdiPaymentDoc => {
      const before = amount(d, 'ImpSaldoAnt');
      const paid = amount(d, 'ImpPagado');
      const after = amount(d, 'ImpSaldoInsoluto');
      if (Math.abs(Math.round(before * 100) - Math.round(paid * 100) - Math.round(after * 100)) > 1) {
        reject(`DoctoRelacionado ${d.attrs.IdDocumento ?? ''}: ImpSaldoInsoluto ${after} ≠ ImpSaldoAnt ${before} − ImpPagado ${paid}`);
      }
      const equivalence = opt(d, 'EquivalenciaDR') === undefined ? 1 : rate10(d, 'EquivalenciaDR');
      return {
        invoiceUuid: uuidOf(d, 'IdDocumento'),
        installment: Number(opt(d, 'NumParcialidad') ?? '1'),
        balanceBefore: before,
        paid,
        balanceAfter: after,
        currency: req(d, 'MonedaDR'),
        equivalence,
      };
    });
    if (docs.length === 0) return reject('Pago has no DoctoRelacionado');
    return { date: dateTime(p, 'FechaPago'), amount: amount(p, 'Monto'), currency: req(p, 'MonedaP'), docs };
  });
}

function rate10(el: XmlElement, attr: string): number {
  const v = req(el, attr);
  if (!/^[0-9]{1,18}(\.[0-9]{1,10})?$/.test(v) || Number(v) <= 0) return reject(`${el.name}@${attr} is not a positive number: "${v.slice(0, 40)}"`);
  return Number(v);
}

function readCartaPorte(complement: XmlElement): CartaPorte | null {
  const cp = childOf(complement, NS.cartaPorte31, 'CartaPorte') ?? childOf(complement, NS.cartaPorte30, 'CartaPorte');
  if (!cp) return null;
  const ns = cp.ns;
  const ubicaciones = one(cp, ns, 'Ubicaciones');
  const locations = childrenOf(ubicaciones, ns, 'Ubicacion').map((u): CartaPorteLocation => {
    const kind = req(u, 'TipoUbicacion');
    if (kind !== 'Origen' && kind !== 'Destino') return reject(`Ubicacion@TipoUbicacion "${kind}" is not Origen or Destino`);
    const dom = childOf(u, ns, 'Domicilio');
    return {
      kind,
      id: req(u, 'IDUbicacion'),
      rfc: rfcOf(u, 'RFCRemitenteDestinatario'),
      name: opt(u, 'NombreRemitenteDestinatario') ?? '',
      date: dateTime(u, 'FechaHoraSalidaLlegada'),
      distanceKm: kind === 'Destino' ? amount(u, 'DistanciaRecorrida') : 0,
      street: [dom?.attrs.Calle, dom?.attrs.NumeroExterior].filter(Boolean).join(' '),
      municipality: dom?.attrs.Municipio ?? '',
      locality: dom?.attrs.Localidad ?? '',
      state: dom ? req(dom, 'Estado') : reject(`Ubicacion ${u.attrs.IDUbicacion ?? ''} has no Domicilio`),
      country: dom?.attrs.Pais ?? 'MEX',
      zip: dom?.attrs.CodigoPostal ?? '',
    };
  });
  if (!locations.some((l) => l.kind === 'Origen')) reject('Carta Porte has no Origen');
  if (!locations.some((l) => l.kind === 'Destino')) reject('Carta Porte has no Destino');
  const mercancias = one(cp, ns, 'Mercancias');
  const goods = childrenOf(mercancias, ns, 'Mercancia').map((m): CartaPorteGoods => ({
    code: req(m, 'BienesTransp'),
    description: req(m, 'Descripcion'),
    quantity: amount(m, 'Cantidad'),
    unit: req(m, 'ClaveUnidad'),
    value: amount(m, 'ValorMercancia', false),
    split: childrenOf(m, ns, 'CantidadTransporta').map((c) => ({ destination: req(c, 'IDDestino'), quantity: amount(c, 'Cantidad') })),
  }));
  if (goods.length === 0) reject('Carta Porte Mercancias has no Mercancia');
  const auto = one(mercancias, ns, 'Autotransporte');
  const ident = one(auto, ns, 'IdentificacionVehicular');
  const trailers = (childOf(auto, ns, 'Remolques')?.children ?? []).filter((r) => r.name === 'Remolque').map((r) => req(r, 'Placa'));
  const figures = childOf(cp, ns, 'FiguraTransporte')?.children.filter((f) => f.name === 'TiposFigura') ?? [];
  const op = figures.find((f) => f.attrs.TipoFigura === '01');
  return {
    version: req(cp, 'Version'),
    idCcp: opt(cp, 'IdCCP') ?? '',
    totalDistanceKm: amount(cp, 'TotalDistRec', false),
    locations,
    goods,
    vehicle: { config: req(ident, 'ConfigVehicular'), plate: req(ident, 'PlacaVM'), year: opt(ident, 'AnioModeloVM') ?? '', trailers },
    driver: op ? { rfc: rfcOf(op, 'RFCFigura'), name: opt(op, 'NombreFigura') ?? '', license: opt(op, 'NumLicencia') ?? '' } : null,
  };
}

function readDeliveries(root: XmlElement): Delivery[] {
  const addenda = childOf(root, NS.cfdi4, 'Addenda');
  if (!addenda) return [];
  const out: Delivery[] = [];
  for (const entregas of childrenOf(addenda, NS.delivery, 'Entregas')) {
    for (const e of childrenOf(entregas, NS.delivery, 'Entrega')) {
      out.push({ destination: req(e, 'IDDestino'), code: req(e, 'BienesTransp'), quantity: amount(e, 'CantidadDescargada'), date: dateTime(e, 'FechaHoraDescarga') });
    }
  }
  return out;
}

function readCfdi(root: XmlElement): Cfdi {
  const version = root.attrs.Version;
  if (version !== '4.0') return reject(`Comprobante@Version "${version ?? ''}" is not 4.0`);
  const type = req(root, 'TipoDeComprobante');
  if (type !== 'I' && type !== 'E' && type !== 'P' && type !== 'T') return reject(`TipoDeComprobante "${type}" is not imported (I, E, P or T)`);
  const complement = childOf(root, NS.cfdi4, 'Complemento');
  const stamp = complement ? childOf(complement, NS.tfd, 'TimbreFiscalDigital') : undefined;
  if (!stamp) return reject('not stamped: no TimbreFiscalDigital in Complemento (import the XML returned by SAT or your PAC)');
  const emisor = one(root, NS.cfdi4, 'Emisor');
  const receptor = one(root, NS.cfdi4, 'Receptor');
  const conceptsEl = one(root, NS.cfdi4, 'Conceptos');
  const concepts = childrenOf(conceptsEl, NS.cfdi4, 'Concepto').map(readConcept);
  if (concepts.length === 0) reject('Conceptos has no Concepto');
  const method = opt(root, 'MetodoPago');
  if (method !== undefined && method !== 'PUE' && method !== 'PPD') reject(`MetodoPago "${method}" is not PUE or PPD`);
  if (type === 'I' && method === undefined) reject('an invoice (I) needs MetodoPago');
  const currency = req(root, 'Moneda');
  if ((type === 'I' || type === 'E') && currency !== 'MXN') reject(`Moneda ${currency}: only MXN invoices and credit notes are imported`);
  const related = childrenOf(root, NS.cfdi4, 'CfdiRelacionados').map((r) => ({
    relation: req(r, 'TipoRelacion'),
    uuids: childrenOf(r, NS.cfdi4, 'CfdiRelacionado').map((c) => uuidOf(c, 'UUID')),
  }));
  return {
    file: 'cfdi',
    type,
    uuid: uuidOf(stamp, 'UUID'),
    certifiedAt: dateTime(stamp, 'FechaTimbrado'),
    serie: opt(root, 'Serie') ?? '',
    folio: opt(root, 'Folio') ?? '',
    date: dateTime(root, 'Fecha'),
    paymentMethod: (method as 'PUE' | 'PPD' | undefined) ?? null,
    currency,
    subTotal: amount(root, 'SubTotal'),
    discount: amount(root, 'Descuento', false),
    total: amount(root, 'Total'),
    issuer: { rfc: rfcOf(emisor, 'Rfc'), name: opt(emisor, 'Nombre') ?? '' },
    receiver: { rfc: rfcOf(receptor, 'Rfc'), name: opt(receptor, 'Nombre') ?? '' },
    related,
    concepts,
    payments: type === 'P' ? readPayments(complement!) : [],
    cartaPorte: readCartaPorte(complement!),
    deliveries: readDeliveries(root),
  };
}

function readCancellation(root: XmlElement): CancellationAck {
  const foliosEls = childrenOf(root, NS.cancel, 'Folios');
  const folios: CancellationFolio[] = [];
  for (const f of foliosEls) {
    for (const folio of childrenOf(f, NS.cancel, 'Folio')) {
      const motive = req(folio, 'Motivo');
      if (motive !== '01' && motive !== '02' && motive !== '03' && motive !== '04') return reject(`Folio@Motivo "${motive}" is not 01, 02, 03 or 04`);
      const replacement = opt(folio, 'FolioSustitucion');
      if (motive === '01' && replacement === undefined) reject(`Folio ${folio.attrs.UUID ?? ''}: motive 01 needs FolioSustitucion (the replacement UUID)`);
      if (motive !== '01' && replacement !== undefined) reject(`Folio ${folio.attrs.UUID ?? ''}: FolioSustitucion is only valid with motive 01`);
      folios.push({
        uuid: uuidOf(folio, 'UUID'),
        motive,
        replacementUuid: replacement === undefined ? null : uuidOf(folio, 'FolioSustitucion'),
        status: opt(folio, 'EstatusUUID') ?? null,
      });
    }
  }
  if (folios.length === 0) reject('cancellation has no Folios/Folio with UUID and Motivo');
  return { file: 'cancellation', issuerRfc: rfcOf(root, 'RfcEmisor'), date: dateTime(root, 'Fecha'), folios };
}

/** What a parsed file is, or an ImportRejection saying why it is not importable. */
export function readImportFile(root: XmlElement): ImportFile {
  if (root.ns === NS.cfdi4 && root.name === 'Comprobante') return readCfdi(root);
  if (root.ns === NS.cancel && (root.name === 'Acuse' || root.name === 'Cancelacion')) return readCancellation(root);
  if (root.ns === NS.cfdi33 && root.name === 'Comprobante') {
    return reject(`unsupported: CFDI ${root.attrs.Version ?? '3.x'} (namespace ${NS.cfdi33}); only CFDI 4.0 is imported`);
  }
  return reject(`not a CFDI 4.0 or SAT cancellation acknowledgement: root element ${root.name} in namespace "${root.ns || '(none)'}"`);
}
