/**
 * Stamped CFDI 4.0 (or 3.3) XML for tests, built from a few numbers: every tax amount is round2(base ×
 * rate) unless given, the document totals (SubTotal, Descuento, Comprobante/Impuestos, Total)
 * follow from the lines. Also the SAT's cancellation acknowledgement as PACs return it, a
 * taxpayer's cancellation request, and a Pagos 2.0 complement.
 */

export interface TaxSpec {
  /** 001 ISR, 002 IVA, 003 IEPS. */
  tax: '001' | '002' | '003';
  factor?: 'Tasa' | 'Cuota' | 'Exento';
  rate?: number;
  /** Default: the line's amount − discount. */
  base?: number;
  /** Default: round2(base × rate). */
  amount?: number;
}

export interface LineSpec {
  code?: string;
  desc: string;
  amount: number;
  discount?: number;
  objetoImp?: string;
  transfers?: TaxSpec[];
  retentions?: TaxSpec[];
}

export interface CfdiSpec {
  issuer: string;
  issuerName?: string;
  receiver: string;
  receiverName?: string;
  uuid: string;
  /** Wall time, Mexico City: 2026-10-05T10:00:00. */
  fecha: string;
  certified?: string;
  method?: 'PUE' | 'PPD';
  currency?: string;
  exchangeRate?: number;
  lines: LineSpec[];
  /** The XML declaration's encoding (the text is returned as a string; encode it as declared). */
  encoding?: string;
  /** FormaPago (01 cash, 03 transfer…); absent by default. */
  paymentForm?: string;
  /** Receptor@UsoCFDI; default G03. */
  use?: string;
  /** CFDI 3.3 (namespace cfd/3): no Exportacion, no ObjetoImp, no receiver's fiscal address or regime. Default 4.0. */
  version?: '3.3' | '4.0';
}

const r2 = (x: number): number => Math.round(x * 100 + Number.EPSILON * 100) / 100;
const money = (x: number): string => x.toFixed(2);
const esc = (s: string): string => s.replaceAll('&', '&amp;').replaceAll('"', '&quot;').replaceAll('<', '&lt;');

interface Resolved {
  tax: string;
  factor: string;
  rate?: number;
  base: number;
  amount: number;
}

function resolve(t: TaxSpec, lineBase: number): Resolved {
  const factor = t.factor ?? 'Tasa';
  const base = t.base ?? lineBase;
  if (factor === 'Exento') return { tax: t.tax, factor, base, amount: 0 };
  return { tax: t.tax, factor, rate: t.rate!, base, amount: t.amount ?? r2(base * t.rate!) };
}

const taxXml = (el: 'Traslado' | 'Retencion', t: Resolved): string =>
  `<cfdi:${el} Base="${money(t.base)}" Impuesto="${t.tax}" TipoFactor="${t.factor}"${t.factor === 'Exento' ? '' : ` TasaOCuota="${t.rate!.toFixed(6)}" Importe="${money(t.amount)}"`}/>`;

/** A stamped CFDI 4.0 invoice (type I) and the totals it states. */
export function invoiceXml(o: CfdiSpec): { xml: string; subTotal: number; discount: number; transferred: number; retained: number; total: number } {
  let sub = 0;
  let disc = 0;
  let transferred = 0;
  let retained = 0;
  const v33 = o.version === '3.3';
  const concepts = o.lines.map((l) => {
    const discount = l.discount ?? 0;
    const lineBase = r2(l.amount - discount);
    const tr = (l.transfers ?? []).map((t) => resolve(t, lineBase));
    const re = (l.retentions ?? []).map((t) => resolve(t, lineBase));
    sub += l.amount;
    disc += discount;
    for (const t of tr) transferred += t.amount;
    for (const t of re) retained += t.amount;
    const taxes =
      tr.length || re.length
        ? `<cfdi:Impuestos>${tr.length ? `<cfdi:Traslados>${tr.map((t) => taxXml('Traslado', t)).join('')}</cfdi:Traslados>` : ''}${re.length ? `<cfdi:Retenciones>${re.map((t) => taxXml('Retencion', t)).join('')}</cfdi:Retenciones>` : ''}</cfdi:Impuestos>`
        : '';
    const objetoImp = l.objetoImp ?? (tr.length || re.length ? '02' : '01');
    return `<cfdi:Concepto ClaveProdServ="${l.code ?? '78101802'}" Cantidad="1" ClaveUnidad="E48" Descripcion="${esc(l.desc)}" ValorUnitario="${money(l.amount)}" Importe="${money(l.amount)}"${discount ? ` Descuento="${money(discount)}"` : ''}${v33 ? '' : ` ObjetoImp="${objetoImp}"`}>${taxes}</cfdi:Concepto>`;
  });
  sub = r2(sub);
  disc = r2(disc);
  transferred = r2(transferred);
  retained = r2(retained);
  const total = r2(sub - disc + transferred - retained);
  const currency = o.currency ?? 'MXN';
  const header =
    transferred || retained
      ? `<cfdi:Impuestos${retained ? ` TotalImpuestosRetenidos="${money(retained)}"` : ''}${transferred ? ` TotalImpuestosTrasladados="${money(transferred)}"` : ''}/>`
      : '';
  const xml =
    `<?xml version="1.0" encoding="${o.encoding ?? 'UTF-8'}"?>\n` +
    `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/${v33 ? '3' : '4'}" Version="${v33 ? '3.3' : '4.0'}" Serie="T" Folio="${o.uuid.slice(0, 8)}" Fecha="${o.fecha}" SubTotal="${money(sub)}"${disc ? ` Descuento="${money(disc)}"` : ''} Moneda="${currency}"${currency === 'MXN' ? '' : ` TipoCambio="${o.exchangeRate}"`} Total="${money(total)}" TipoDeComprobante="I"${v33 ? '' : ' Exportacion="01"'}${o.paymentForm ? ` FormaPago="${o.paymentForm}"` : ''} MetodoPago="${o.method ?? 'PUE'}" LugarExpedicion="91700">` +
    `<cfdi:Emisor Rfc="${esc(o.issuer)}" Nombre="${esc(o.issuerName ?? 'EMISOR')}" RegimenFiscal="${v33 ? '601' : '626'}"/>` +
    `<cfdi:Receptor Rfc="${esc(o.receiver)}" Nombre="${esc(o.receiverName ?? 'RECEPTOR')}"${v33 ? '' : ' DomicilioFiscalReceptor="96400" RegimenFiscalReceptor="601"'} UsoCFDI="${o.use ?? 'G03'}"/>` +
    `<cfdi:Conceptos>${concepts.join('')}</cfdi:Conceptos>${header}` +
    `<cfdi:Complemento><tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${o.uuid}" FechaTimbrado="${o.certified ?? o.fecha}" RfcProvCertif="SAT970701NN3" SelloCFD="A" NoCertificadoSAT="00001000000509846663" SelloSAT="B"/></cfdi:Complemento>` +
    `</cfdi:Comprobante>`;
  return { xml, subTotal: sub, discount: disc, transferred, retained, total };
}

/** A Pagos 2.0 complement paying one invoice in its currency. */
export function paymentXml(o: {
  issuer: string;
  receiver: string;
  uuid: string;
  fecha: string;
  invoiceUuid: string;
  currency: string;
  exchangeRate: number;
  before: number;
  paid: number;
  /** FormaDePagoP; default 03 (transfer). */
  form?: string;
}): string {
  const rate = o.currency === 'MXN' ? '' : ` TipoCambioP="${o.exchangeRate}"`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" xmlns:pago20="http://www.sat.gob.mx/Pagos20" Version="4.0" Fecha="${o.fecha}" SubTotal="0" Moneda="XXX" Total="0" TipoDeComprobante="P" Exportacion="01" LugarExpedicion="91700">` +
    `<cfdi:Emisor Rfc="${esc(o.issuer)}" Nombre="EMISOR" RegimenFiscal="626"/><cfdi:Receptor Rfc="${esc(o.receiver)}" Nombre="RECEPTOR" DomicilioFiscalReceptor="96400" RegimenFiscalReceptor="601" UsoCFDI="CP01"/>` +
    `<cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="ACT" Descripcion="Pago" ValorUnitario="0" Importe="0" ObjetoImp="01"/></cfdi:Conceptos>` +
    `<cfdi:Complemento><pago20:Pagos Version="2.0"><pago20:Totales MontoTotalPagos="${money(r2(o.paid * o.exchangeRate))}"/>` +
    `<pago20:Pago FechaPago="${o.fecha}" FormaDePagoP="${o.form ?? '03'}" MonedaP="${o.currency}"${rate} Monto="${money(o.paid)}">` +
    `<pago20:DoctoRelacionado IdDocumento="${o.invoiceUuid}" MonedaDR="${o.currency}" EquivalenciaDR="1" NumParcialidad="1" ImpSaldoAnt="${money(o.before)}" ImpPagado="${money(o.paid)}" ImpSaldoInsoluto="${money(r2(o.before - o.paid))}" ObjetoImpDR="01"/>` +
    `</pago20:Pago></pago20:Pagos>` +
    `<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${o.uuid}" FechaTimbrado="${o.fecha}" RfcProvCertif="SAT970701NN3" SelloCFD="A" NoCertificadoSAT="00001000000509846663" SelloSAT="B"/></cfdi:Complemento>` +
    `</cfdi:Comprobante>`
  );
}

/** The SAT's acknowledgement as PACs return it: root in no namespace, Folios/UUID + EstatusUUID as elements, a Signature. */
export function satAcuseXml(o: { issuer: string; fecha: string; folios: { uuid: string; code: string }[] }): string {
  const folios = o.folios
    .map((f) => `<Folios xmlns="http://cancelacfd.sat.gob.mx"><UUID>${f.uuid}</UUID><EstatusUUID>${f.code}</EstatusUUID></Folios>`)
    .join('');
  return (
    `<?xml version="1.0" encoding="utf-8"?><Acuse xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" Fecha="${o.fecha}" RfcEmisor="${esc(o.issuer)}">${folios}` +
    `<Signature Id="SelloSAT" xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo><CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315" /></SignedInfo><SignatureValue>AAAA</SignatureValue></Signature></Acuse>`
  );
}

/** A taxpayer's signed cancellation request (Cancelacion, since 2022). */
export function requestXml(o: { issuer: string; fecha: string; folios: { uuid: string; motive: string; replacement?: string }[] }): string {
  const folios = o.folios.map((f) => `<Folio UUID="${f.uuid}" Motivo="${f.motive}"${f.replacement ? ` FolioSustitucion="${f.replacement}"` : ''}/>`).join('');
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Cancelacion xmlns="http://cancelacfd.sat.gob.mx" Fecha="${o.fecha}" RfcEmisor="${esc(o.issuer)}"><Folios>${folios}</Folios>` +
    `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignatureValue>AAAA</SignatureValue></Signature></Cancelacion>`
  );
}
