/**
 * A freight invoice (type I, no taxes) with a Carta Porte 3.1 of tenant A, as the trip-based
 * differential tests import it (test/*-rollups-differential.test.ts): one origin, a destination
 * and a product per leg, the concepts given, deliveries in the addenda (urn:freight-backoffice:entregas:1).
 */
import { TENANT_A } from './harness.ts';
import { HOUR, money, wallOf } from './differential-days.ts';

export interface CartaPorteLeg {
  km: number;
  /** Product key (BienesTransp) and its description. */
  product: string;
  productDesc: string;
  litres: number;
  /** Offloaded litres and instant (in the addenda), or null (in transit). */
  unload: { at: number; offloaded: number } | null;
}

export interface CartaPorteSpec {
  uuid: string;
  client: string;
  /** The loading instant at the origin. */
  load: number;
  /** The invoice's instant (and its stamp's). */
  issued: number;
  plate: string;
  driver: readonly [string, string];
  /** Invoice concepts: quantity and amount in cents. */
  concepts: readonly { code: string; desc: string; qty: string; c: number }[];
  legs: readonly CartaPorteLeg[];
}

/** The driver and plate of the tests that do not vary them. */
export const ONE_DRIVER: readonly [string, string] = ['HEGR751212AB3', 'RAUL HERNANDEZ GARCIA'];
export const ONE_PLATE = 'XA1234B';

export function cartaPorteXml(p: CartaPorteSpec): string {
  const subC = p.concepts.reduce((s, l) => s + l.c, 0);
  const fecha = wallOf(p.issued);
  const concepts = p.concepts
    .map(
      (l) =>
        `<cfdi:Concepto ClaveProdServ="${l.code}" Cantidad="${l.qty}" ClaveUnidad="E48" Descripcion="${l.desc}" ValorUnitario="${money(Math.round(l.c / Number(l.qty)))}" Importe="${money(l.c)}" ObjetoImp="01"/>`,
    )
    .join('');
  const dests = p.legs
    .map(
      (l, i) =>
        `<cartaporte31:Ubicacion TipoUbicacion="Destino" IDUbicacion="DE00000${i + 1}" RFCRemitenteDestinatario="${p.client}" NombreRemitenteDestinatario="ESTACION ${i + 1}" FechaHoraSalidaLlegada="${wallOf(p.load + 6 * HOUR)}" DistanciaRecorrida="${l.km}"><cartaporte31:Domicilio Calle="Av. Uno" NumeroExterior="1" Localidad="15" Municipio="087" Estado="VER" Pais="MEX" CodigoPostal="91000"/></cartaporte31:Ubicacion>`,
    )
    .join('');
  const goods = p.legs
    .map(
      (l, i) =>
        `<cartaporte31:Mercancia BienesTransp="${l.product}" Descripcion="${l.productDesc}" Cantidad="${l.litres}" ClaveUnidad="LTR" MaterialPeligroso="Si" CveMaterialPeligroso="1202" Embalaje="Z01" PesoEnKg="1000" ValorMercancia="1000.00" Moneda="MXN"><cartaporte31:CantidadTransporta Cantidad="${l.litres}" IDOrigen="OR000001" IDDestino="DE00000${i + 1}"/></cartaporte31:Mercancia>`,
    )
    .join('');
  const deliveries = p.legs
    .map((l, i) =>
      l.unload === null
        ? ''
        : `<fb:Entrega IDDestino="DE00000${i + 1}" BienesTransp="${l.product}" CantidadDescargada="${l.unload.offloaded}" FechaHoraDescarga="${wallOf(l.unload.at)}"/>`,
    )
    .join('');
  return `<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:cartaporte31="http://www.sat.gob.mx/CartaPorte31" Version="4.0" Serie="F" Folio="${p.uuid.slice(9, 13)}" Fecha="${fecha}" FormaPago="03" NoCertificado="00001000000500000001" SubTotal="${money(subC)}" Moneda="MXN" Total="${money(subC)}" TipoDeComprobante="I" Exportacion="01" MetodoPago="PUE" LugarExpedicion="91700" Sello="AAAA" Certificado="AAAA">
  <cfdi:Emisor Rfc="${TENANT_A}" Nombre="TRANSPORTES DEL GOLFO" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="${p.client}" Nombre="CLIENTE ${p.client.slice(0, 3)}" DomicilioFiscalReceptor="91000" RegimenFiscalReceptor="601" UsoCFDI="G03"/>
  <cfdi:Conceptos>${concepts}</cfdi:Conceptos>
  <cfdi:Complemento>
    <cartaporte31:CartaPorte Version="3.1" IdCCP="CCC${p.uuid.slice(3)}" TranspInternac="No" TotalDistRec="${(p.legs.reduce((s, l) => s + l.km * 10, 0) / 10).toFixed(1)}">
      <cartaporte31:Ubicaciones><cartaporte31:Ubicacion TipoUbicacion="Origen" IDUbicacion="OR000001" RFCRemitenteDestinatario="PRE920716IU5" NombreRemitenteDestinatario="TERMINAL VERACRUZ" FechaHoraSalidaLlegada="${wallOf(p.load)}"><cartaporte31:Domicilio Calle="Av. Marina" NumeroExterior="210" Localidad="24" Municipio="193" Estado="VER" Pais="MEX" CodigoPostal="91700"/></cartaporte31:Ubicacion>${dests}</cartaporte31:Ubicaciones>
      <cartaporte31:Mercancias PesoBrutoTotal="1000" UnidadPeso="KGM" NumTotalMercancias="${p.legs.length}">${goods}
        <cartaporte31:Autotransporte PermSCT="TPAF01" NumPermisoSCT="0X2XTXZ0X5X0X3X2X1X0"><cartaporte31:IdentificacionVehicular ConfigVehicular="T3S2" PesoBrutoVehicular="48" PlacaVM="${p.plate}" AnioModeloVM="2022"/><cartaporte31:Seguros AseguraRespCivil="SEGUROS DEL GOLFO" PolizaRespCivil="RC-55501"/></cartaporte31:Autotransporte>
      </cartaporte31:Mercancias>
      <cartaporte31:FiguraTransporte><cartaporte31:TiposFigura TipoFigura="01" RFCFigura="${p.driver[0]}" NumLicencia="VER0012345" NombreFigura="${p.driver[1]}"/></cartaporte31:FiguraTransporte>
    </cartaporte31:CartaPorte>
    <tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID="${p.uuid}" FechaTimbrado="${fecha}" RfcProvCertif="SAT970701NN3" SelloCFD="AAAA" NoCertificadoSAT="00001000000509846663" SelloSAT="BBBB"/>
  </cfdi:Complemento>${deliveries ? `\n  <cfdi:Addenda><fb:Entregas xmlns:fb="urn:freight-backoffice:entregas:1">${deliveries}</fb:Entregas></cfdi:Addenda>` : ''}
</cfdi:Comprobante>`;
}

/** A leg as the fleet and unit-economics tests plan it: diesel, delivered (7.25 litres short) at `unload` or in transit. */
export interface PlannedLeg {
  km: number;
  litres: number;
  freightC: number;
  /** Delivery instant in the addenda, or null (in transit). */
  unload: number | null;
}
export interface PlannedTrip {
  uuid: string;
  client: string;
  plate: string;
  driver: [string, string];
  load: number;
  legs: PlannedLeg[];
}

/** A planned trip's Carta Porte: a freight concept per leg, invoiced an hour after the loading. */
export const plannedTripXml = (p: PlannedTrip): string =>
  cartaPorteXml({
    uuid: p.uuid,
    client: p.client,
    load: p.load,
    issued: p.load + HOUR,
    plate: p.plate,
    driver: p.driver,
    concepts: p.legs.map((l, i) => ({ code: '78101807', desc: `Flete tramo ${i + 1}`, qty: '1', c: l.freightC })),
    legs: p.legs.map((l) => ({
      km: l.km,
      product: '15101505',
      productDesc: 'Combustible diesel',
      litres: l.litres,
      unload: l.unload === null ? null : { at: l.unload, offloaded: Math.round((l.litres - 7.25) * 1000) / 1000 },
    })),
  });
