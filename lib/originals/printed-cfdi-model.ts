/**
 * What the printed form of a CFDI shows (docs/domain.md, "The printed form"), read from the kept
 * original XML: every value is the attribute's text as the XML writes it (amounts are not
 * re-formatted: the printed form repeats the legal document, it does not recompute it). Empty
 * string where the XML has no such attribute. Pure.
 */
import { NS, keepNamespace } from '../imports/cfdi.ts';
import { childOf, childrenOf, parseXmlTree, type XmlElement, type XmlTreeLimits } from '../imports/xml-tree.ts';

export interface PrintedTax {
  kind: 'Traslado' | 'Retención';
  base: string;
  impuesto: string;
  tipoFactor: string;
  tasaOCuota: string;
  importe: string;
}

export interface PrintedConcept {
  claveProdServ: string;
  noIdentificacion: string;
  cantidad: string;
  claveUnidad: string;
  unidad: string;
  descripcion: string;
  valorUnitario: string;
  importe: string;
  descuento: string;
  objetoImp: string;
  taxes: PrintedTax[];
}

export interface PrintedRelation {
  tipoRelacion: string;
  uuids: string[];
}

export interface PrintedPaymentDoc {
  idDocumento: string;
  serieFolio: string;
  moneda: string;
  equivalencia: string;
  parcialidad: string;
  saldoAnterior: string;
  pagado: string;
  saldoInsoluto: string;
}

export interface PrintedPayment {
  fecha: string;
  formaDePago: string;
  moneda: string;
  tipoCambio: string;
  monto: string;
  numOperacion: string;
  docs: PrintedPaymentDoc[];
}

export interface PrintedLocation {
  tipo: string;
  id: string;
  rfc: string;
  nombre: string;
  fechaHora: string;
  distancia: string;
  domicilio: string;
}

export interface PrintedGoods {
  bienesTransp: string;
  descripcion: string;
  cantidad: string;
  claveUnidad: string;
  pesoEnKg: string;
  materialPeligroso: string;
}

export interface PrintedFigure {
  tipo: string;
  rfc: string;
  nombre: string;
  licencia: string;
}

export interface PrintedCartaPorte {
  version: string;
  idCcp: string;
  transpInternac: string;
  totalDistRec: string;
  locations: PrintedLocation[];
  pesoBrutoTotal: string;
  unidadPeso: string;
  numTotalMercancias: string;
  goods: PrintedGoods[];
  /** Autotransporte: permit, vehicle, insurance and trailers, one line each. */
  vehicle: { permiso: string; vehiculo: string; seguro: string; remolques: string } | null;
  figures: PrintedFigure[];
}

export interface PrintedStamp {
  version: string;
  uuid: string;
  fechaTimbrado: string;
  rfcProvCertif: string;
  leyenda: string;
  selloCfd: string;
  noCertificadoSat: string;
  selloSat: string;
}

export interface PrintedCfdi {
  version: '3.3' | '4.0';
  serie: string;
  folio: string;
  fecha: string;
  lugarExpedicion: string;
  tipoDeComprobante: string;
  exportacion: string;
  formaPago: string;
  metodoPago: string;
  condicionesDePago: string;
  moneda: string;
  tipoCambio: string;
  subTotal: string;
  descuento: string;
  total: string;
  totalTraslados: string;
  totalRetenciones: string;
  noCertificado: string;
  sello: string;
  emisor: { rfc: string; nombre: string; regimenFiscal: string };
  receptor: { rfc: string; nombre: string; domicilioFiscal: string; regimenFiscal: string; usoCfdi: string; residenciaFiscal: string; numRegIdTrib: string };
  informacionGlobal: { periodicidad: string; meses: string; anio: string } | null;
  relations: PrintedRelation[];
  concepts: PrintedConcept[];
  /** The document's tax summary (Comprobante/Impuestos), one line per tax, rate and factor. */
  taxes: PrintedTax[];
  /** The local taxes complement (implocal), one line per state tax, as written. */
  localTaxes: PrintedLocalTax[];
  payments: { version: string; totales: Record<string, string>; payments: PrintedPayment[] } | null;
  cartaPorte: PrintedCartaPorte | null;
  stamp: PrintedStamp;
}

export interface PrintedLocalTax {
  kind: 'Traslado' | 'Retención';
  /** ImpLocTrasladado / ImpLocRetenido: the tax's name as the issuer writes it. */
  name: string;
  /** TasadeTraslado / TasadeRetencion: a percentage. */
  rate: string;
  importe: string;
}

/** The XML is not a stamped CFDI 3.3 or 4.0 (a kept acknowledgement, say): it has no printed form. */
export class NotPrintable extends Error {}

const a = (el: XmlElement | undefined, name: string): string => el?.attrs[name] ?? '';
/** Children by local name in any of the given namespaces (payment and Carta Porte versions differ only there). */
const kids = (el: XmlElement | undefined, name: string, nss?: readonly string[]): XmlElement[] =>
  el ? el.children.filter((c) => c.name === name && (nss === undefined || nss.includes(c.ns))) : [];
const kid = (el: XmlElement | undefined, name: string, nss?: readonly string[]): XmlElement | undefined => kids(el, name, nss)[0];

const PAGOS_NS = [NS.pagos10, NS.pagos20];
const CARTA_PORTE_NS = [NS.cartaPorte10, NS.cartaPorte20, NS.cartaPorte30, NS.cartaPorte31];

function taxesOf(parent: XmlElement | undefined, ns: string): PrintedTax[] {
  const read = (kind: PrintedTax['kind'], group: string, item: string): PrintedTax[] =>
    childrenOf(parent ?? EMPTY, ns, group).flatMap((g) =>
      childrenOf(g, ns, item).map((t) => ({
        kind,
        base: a(t, 'Base'),
        impuesto: a(t, 'Impuesto'),
        tipoFactor: a(t, 'TipoFactor'),
        tasaOCuota: a(t, 'TasaOCuota'),
        importe: a(t, 'Importe'),
      })),
    );
  return [...read('Traslado', 'Traslados', 'Traslado'), ...read('Retención', 'Retenciones', 'Retencion')];
}
const EMPTY: XmlElement = { ns: '', name: '', attrs: {}, children: [], text: '' };

function localTaxesOf(complements: XmlElement): PrintedLocalTax[] {
  const local = kid(complements, 'ImpuestosLocales', [NS.implocal]);
  const read = (kind: PrintedLocalTax['kind'], item: string, name: string, rate: string): PrintedLocalTax[] =>
    kids(local, item, [NS.implocal]).map((t) => ({ kind, name: a(t, name), rate: a(t, rate), importe: a(t, 'Importe') }));
  return [
    ...read('Traslado', 'TrasladosLocales', 'ImpLocTrasladado', 'TasadeTraslado'),
    ...read('Retención', 'RetencionesLocales', 'ImpLocRetenido', 'TasadeRetencion'),
  ];
}

function paymentsOf(complemento: XmlElement | undefined): PrintedCfdi['payments'] {
  const pagos = kid(complemento, 'Pagos', PAGOS_NS);
  if (!pagos) return null;
  const totales = kid(pagos, 'Totales', PAGOS_NS);
  return {
    version: a(pagos, 'Version'),
    totales: totales ? { ...totales.attrs } : {},
    payments: kids(pagos, 'Pago', PAGOS_NS).map((p) => ({
      fecha: a(p, 'FechaPago'),
      formaDePago: a(p, 'FormaDePagoP'),
      moneda: a(p, 'MonedaP'),
      tipoCambio: a(p, 'TipoCambioP'),
      monto: a(p, 'Monto'),
      numOperacion: a(p, 'NumOperacion'),
      docs: kids(p, 'DoctoRelacionado', PAGOS_NS).map((d) => ({
        idDocumento: a(d, 'IdDocumento'),
        serieFolio: [a(d, 'Serie'), a(d, 'Folio')].filter(Boolean).join('-'),
        moneda: a(d, 'MonedaDR'),
        // Pagos 2.0 writes EquivalenciaDR, 1.0 TipoCambioDR.
        equivalencia: a(d, 'EquivalenciaDR') || a(d, 'TipoCambioDR'),
        parcialidad: a(d, 'NumParcialidad'),
        saldoAnterior: a(d, 'ImpSaldoAnt'),
        pagado: a(d, 'ImpPagado'),
        saldoInsoluto: a(d, 'ImpSaldoInsoluto'),
      })),
    })),
  };
}

const addressOf = (d: XmlElement | undefined): string =>
  d
    ? [a(d, 'Calle'), a(d, 'NumeroExterior'), a(d, 'Colonia'), a(d, 'Localidad'), a(d, 'Municipio'), a(d, 'Estado'), a(d, 'Pais'), a(d, 'CodigoPostal')]
        .filter(Boolean)
        .join(', ')
    : '';

function locationsOf(cp: XmlElement): PrintedLocation[] {
  return kids(kid(cp, 'Ubicaciones', CARTA_PORTE_NS), 'Ubicacion', CARTA_PORTE_NS).map((u) => {
    // Carta Porte 1.0 nests Origen/Destino; 2.0 and later write TipoUbicacion on the Ubicacion.
    const origen = kid(u, 'Origen', CARTA_PORTE_NS);
    const destino = kid(u, 'Destino', CARTA_PORTE_NS);
    const side = origen ?? destino;
    return {
      tipo: a(u, 'TipoUbicacion') || (origen ? 'Origen' : destino ? 'Destino' : ''),
      id: a(u, 'IDUbicacion') || a(side, 'IDOrigen') || a(side, 'IDDestino'),
      rfc: a(u, 'RFCRemitenteDestinatario') || a(side, 'RFCRemitente') || a(side, 'RFCDestinatario'),
      nombre: a(u, 'NombreRemitenteDestinatario') || a(side, 'NombreRemitente') || a(side, 'NombreDestinatario'),
      fechaHora: a(u, 'FechaHoraSalidaLlegada') || a(side, 'FechaHoraSalida') || a(side, 'FechaHoraProgLlegada'),
      distancia: a(u, 'DistanciaRecorrida'),
      domicilio: addressOf(kid(u, 'Domicilio', CARTA_PORTE_NS)),
    };
  });
}

function vehicleOf(mercancias: XmlElement | undefined): PrintedCartaPorte['vehicle'] {
  const auto = kid(mercancias, 'Autotransporte', CARTA_PORTE_NS) ?? kid(mercancias, 'AutotransporteFederal', CARTA_PORTE_NS);
  if (!auto) return null;
  const iv = kid(auto, 'IdentificacionVehicular', CARTA_PORTE_NS);
  const seg = kid(auto, 'Seguros', CARTA_PORTE_NS);
  const remolques = kids(kid(auto, 'Remolques', CARTA_PORTE_NS), 'Remolque', CARTA_PORTE_NS);
  return {
    permiso: [a(auto, 'PermSCT'), a(auto, 'NumPermisoSCT')].filter(Boolean).join(' '),
    vehiculo: [a(iv, 'ConfigVehicular'), a(iv, 'PlacaVM') && `placa ${a(iv, 'PlacaVM')}`, a(iv, 'AnioModeloVM') && `modelo ${a(iv, 'AnioModeloVM')}`]
      .filter(Boolean)
      .join(', '),
    // Carta Porte 1.0 writes the insurer on Autotransporte; later versions on Seguros.
    seguro: [a(seg, 'AseguraRespCivil') || a(auto, 'NombreAseg'), a(seg, 'PolizaRespCivil') || a(auto, 'NumPolizaSeguro')].filter(Boolean).join(' póliza '),
    remolques: remolques.map((r) => [a(r, 'SubTipoRem'), a(r, 'Placa')].filter(Boolean).join(' ')).join('; '),
  };
}

function figuresOf(cp: XmlElement): PrintedFigure[] {
  const figura = kid(cp, 'FiguraTransporte', CARTA_PORTE_NS);
  const tipos = kids(figura, 'TiposFigura', CARTA_PORTE_NS).map((f) => ({
    tipo: a(f, 'TipoFigura'),
    rfc: a(f, 'RFCFigura'),
    nombre: a(f, 'NombreFigura'),
    licencia: a(f, 'NumLicencia'),
  }));
  // Carta Porte 1.0: FiguraTransporte/Operadores/Operador (TipoFigura 01, the driver).
  const operadores = kids(kid(figura, 'Operadores', CARTA_PORTE_NS), 'Operador', CARTA_PORTE_NS).map((o) => ({
    tipo: '01',
    rfc: a(o, 'RFCOperador'),
    nombre: a(o, 'NombreOperador'),
    licencia: a(o, 'NumLicencia'),
  }));
  return [...tipos, ...operadores];
}

function cartaPorteOf(complemento: XmlElement | undefined): PrintedCartaPorte | null {
  const cp = kid(complemento, 'CartaPorte', CARTA_PORTE_NS);
  if (!cp) return null;
  const mercancias = kid(cp, 'Mercancias', CARTA_PORTE_NS);
  return {
    version: a(cp, 'Version'),
    idCcp: a(cp, 'IdCCP'),
    transpInternac: a(cp, 'TranspInternac'),
    totalDistRec: a(cp, 'TotalDistRec'),
    locations: locationsOf(cp),
    pesoBrutoTotal: a(mercancias, 'PesoBrutoTotal'),
    unidadPeso: a(mercancias, 'UnidadPeso'),
    numTotalMercancias: a(mercancias, 'NumTotalMercancias'),
    goods: kids(mercancias, 'Mercancia', CARTA_PORTE_NS).map((m) => ({
      bienesTransp: a(m, 'BienesTransp'),
      descripcion: a(m, 'Descripcion'),
      cantidad: a(m, 'Cantidad'),
      claveUnidad: a(m, 'ClaveUnidad'),
      pesoEnKg: a(m, 'PesoEnKg'),
      materialPeligroso: a(m, 'MaterialPeligroso'),
    })),
    vehicle: vehicleOf(mercancias),
    figures: figuresOf(cp),
  };
}

/** Reads a parsed CFDI 3.3 or 4.0; NotPrintable when the root is not a stamped Comprobante. */
export function printedCfdiOf(root: XmlElement): PrintedCfdi {
  const ns = root.ns === NS.cfdi4 ? NS.cfdi4 : root.ns === NS.cfdi33 ? NS.cfdi33 : null;
  if (ns === null || root.name !== 'Comprobante') throw new NotPrintable('the kept file is not a CFDI 3.3 or 4.0 Comprobante');
  const complemento = childrenOf(root, ns, 'Complemento');
  const tfd = complemento.map((c) => childOf(c, NS.tfd, 'TimbreFiscalDigital')).find((x) => x !== undefined);
  if (!tfd) throw new NotPrintable('the CFDI has no TimbreFiscalDigital: it was never stamped');
  const emisor = childOf(root, ns, 'Emisor');
  const receptor = childOf(root, ns, 'Receptor');
  const impuestos = childOf(root, ns, 'Impuestos');
  const global = childOf(root, ns, 'InformacionGlobal');
  const allComplements: XmlElement = { ...EMPTY, children: complemento.flatMap((c) => c.children) };
  return {
    version: ns === NS.cfdi4 ? '4.0' : '3.3',
    serie: a(root, 'Serie'),
    folio: a(root, 'Folio'),
    fecha: a(root, 'Fecha'),
    lugarExpedicion: a(root, 'LugarExpedicion'),
    tipoDeComprobante: a(root, 'TipoDeComprobante'),
    exportacion: a(root, 'Exportacion'),
    formaPago: a(root, 'FormaPago'),
    metodoPago: a(root, 'MetodoPago'),
    condicionesDePago: a(root, 'CondicionesDePago'),
    moneda: a(root, 'Moneda'),
    tipoCambio: a(root, 'TipoCambio'),
    subTotal: a(root, 'SubTotal'),
    descuento: a(root, 'Descuento'),
    total: a(root, 'Total'),
    totalTraslados: a(impuestos, 'TotalImpuestosTrasladados'),
    totalRetenciones: a(impuestos, 'TotalImpuestosRetenidos'),
    noCertificado: a(root, 'NoCertificado'),
    sello: a(root, 'Sello'),
    emisor: { rfc: a(emisor, 'Rfc'), nombre: a(emisor, 'Nombre'), regimenFiscal: a(emisor, 'RegimenFiscal') },
    receptor: {
      rfc: a(receptor, 'Rfc'),
      nombre: a(receptor, 'Nombre'),
      domicilioFiscal: a(receptor, 'DomicilioFiscalReceptor'),
      regimenFiscal: a(receptor, 'RegimenFiscalReceptor'),
      usoCfdi: a(receptor, 'UsoCFDI'),
      residenciaFiscal: a(receptor, 'ResidenciaFiscal'),
      numRegIdTrib: a(receptor, 'NumRegIdTrib'),
    },
    informacionGlobal: global ? { periodicidad: a(global, 'Periodicidad'), meses: a(global, 'Meses'), anio: a(global, 'Año') } : null,
    // 4.0 repeats CfdiRelacionados (one per TipoRelacion); 3.3 has at most one.
    relations: childrenOf(root, ns, 'CfdiRelacionados').map((r) => ({
      tipoRelacion: a(r, 'TipoRelacion'),
      uuids: childrenOf(r, ns, 'CfdiRelacionado').map((c) => a(c, 'UUID')),
    })),
    concepts: childrenOf(childOf(root, ns, 'Conceptos') ?? EMPTY, ns, 'Concepto').map((c) => ({
      claveProdServ: a(c, 'ClaveProdServ'),
      noIdentificacion: a(c, 'NoIdentificacion'),
      cantidad: a(c, 'Cantidad'),
      claveUnidad: a(c, 'ClaveUnidad'),
      unidad: a(c, 'Unidad'),
      descripcion: a(c, 'Descripcion'),
      valorUnitario: a(c, 'ValorUnitario'),
      importe: a(c, 'Importe'),
      descuento: a(c, 'Descuento'),
      objetoImp: a(c, 'ObjetoImp'),
      taxes: taxesOf(childOf(c, ns, 'Impuestos'), ns),
    })),
    taxes: taxesOf(impuestos, ns),
    localTaxes: localTaxesOf(allComplements),
    payments: paymentsOf(allComplements),
    cartaPorte: cartaPorteOf(allComplements),
    stamp: {
      version: a(tfd, 'Version'),
      uuid: a(tfd, 'UUID'),
      fechaTimbrado: a(tfd, 'FechaTimbrado'),
      rfcProvCertif: a(tfd, 'RfcProvCertif'),
      leyenda: a(tfd, 'Leyenda'),
      selloCfd: a(tfd, 'SelloCFD'),
      noCertificadoSat: a(tfd, 'NoCertificadoSAT'),
      selloSat: a(tfd, 'SelloSAT'),
    },
  };
}

/** Fewer elements than an import allows: a printed form is bounded in pages (lib/originals/printed-form.ts). */
export const PRINT_XML_LIMITS: XmlTreeLimits = { maxDepth: 32, maxElements: 50_000 };

/** Parses the kept bytes (UTF-8, ISO-8859-1 or windows-1252, as their declaration says) and reads them. */
export const readPrintedCfdi = (bytes: Buffer): PrintedCfdi => printedCfdiOf(parseXmlTree(bytes, keepNamespace, PRINT_XML_LIMITS));
