/**
 * Names of the SAT catalogue keys a printed CFDI shows beside the key (Anexo 20's catálogos:
 * c_FormaPago, c_MetodoPago, c_TipoDeComprobante, c_UsoCFDI, c_RegimenFiscal, c_TipoRelacion,
 * c_Impuesto, c_ObjetoImp, c_Exportacion). The key is always printed; a key not listed here is
 * printed alone. Pure.
 */

import { ownEntry } from '../shared/own-entry.ts';

const FORMA_PAGO: Readonly<Record<string, string>> = {
  '01': 'Efectivo',
  '02': 'Cheque nominativo',
  '03': 'Transferencia electrónica de fondos',
  '04': 'Tarjeta de crédito',
  '05': 'Monedero electrónico',
  '06': 'Dinero electrónico',
  '08': 'Vales de despensa',
  '12': 'Dación en pago',
  '13': 'Pago por subrogación',
  '14': 'Pago por consignación',
  '15': 'Condonación',
  '17': 'Compensación',
  '23': 'Novación',
  '24': 'Confusión',
  '25': 'Remisión de deuda',
  '26': 'Prescripción o caducidad',
  '27': 'A satisfacción del acreedor',
  '28': 'Tarjeta de débito',
  '29': 'Tarjeta de servicios',
  '30': 'Aplicación de anticipos',
  '31': 'Intermediario pagos',
  '99': 'Por definir',
};

const PAYMENT_METHOD_LABELS: Readonly<Record<string, string>> = { PUE: 'Pago en una sola exhibición', PPD: 'Pago en parcialidades o diferido' };

const TIPO_COMPROBANTE: Readonly<Record<string, string>> = { I: 'Ingreso', E: 'Egreso', T: 'Traslado', N: 'Nómina', P: 'Pago' };

const USO_CFDI: Readonly<Record<string, string>> = {
  G01: 'Adquisición de mercancías',
  G02: 'Devoluciones, descuentos o bonificaciones',
  G03: 'Gastos en general',
  I01: 'Construcciones',
  I02: 'Mobiliario y equipo de oficina por inversiones',
  I03: 'Equipo de transporte',
  I04: 'Equipo de computo y accesorios',
  I05: 'Dados, troqueles, moldes, matrices y herramental',
  I06: 'Comunicaciones telefónicas',
  I07: 'Comunicaciones satelitales',
  I08: 'Otra maquinaria y equipo',
  D01: 'Honorarios médicos, dentales y gastos hospitalarios',
  D02: 'Gastos médicos por incapacidad o discapacidad',
  D03: 'Gastos funerales',
  D04: 'Donativos',
  D05: 'Intereses reales efectivamente pagados por créditos hipotecarios (casa habitación)',
  D06: 'Aportaciones voluntarias al SAR',
  D07: 'Primas por seguros de gastos médicos',
  D08: 'Gastos de transportación escolar obligatoria',
  D09: 'Depósitos en cuentas para el ahorro, primas que tengan como base planes de pensiones',
  D10: 'Pagos por servicios educativos (colegiaturas)',
  S01: 'Sin efectos fiscales',
  CP01: 'Pagos',
  CN01: 'Nómina',
  P01: 'Por definir',
};

const REGIMEN_FISCAL: Readonly<Record<string, string>> = {
  '601': 'General de Ley Personas Morales',
  '603': 'Personas Morales con Fines no Lucrativos',
  '605': 'Sueldos y Salarios e Ingresos Asimilados a Salarios',
  '606': 'Arrendamiento',
  '607': 'Régimen de Enajenación o Adquisición de Bienes',
  '608': 'Demás ingresos',
  '610': 'Residentes en el Extranjero sin Establecimiento Permanente en México',
  '611': 'Ingresos por Dividendos (socios y accionistas)',
  '612': 'Personas Físicas con Actividades Empresariales y Profesionales',
  '614': 'Ingresos por intereses',
  '615': 'Régimen de los ingresos por obtención de premios',
  '616': 'Sin obligaciones fiscales',
  '620': 'Sociedades Cooperativas de Producción que optan por diferir sus ingresos',
  '621': 'Incorporación Fiscal',
  '622': 'Actividades Agrícolas, Ganaderas, Silvícolas y Pesqueras',
  '623': 'Opcional para Grupos de Sociedades',
  '624': 'Coordinados',
  '625': 'Régimen de las Actividades Empresariales con ingresos a través de Plataformas Tecnológicas',
  '626': 'Régimen Simplificado de Confianza',
};

const TIPO_RELACION: Readonly<Record<string, string>> = {
  '01': 'Nota de crédito de los documentos relacionados',
  '02': 'Nota de débito de los documentos relacionados',
  '03': 'Devolución de mercancía sobre facturas o traslados previos',
  '04': 'Sustitución de los CFDI previos',
  '05': 'Traslados de mercancías facturados previamente',
  '06': 'Factura generada por los traslados previos',
  '07': 'CFDI por aplicación de anticipo',
  '08': 'Factura generada por pagos en parcialidades',
  '09': 'Factura generada por pagos diferidos',
};

const IMPUESTO: Readonly<Record<string, string>> = { '001': 'ISR', '002': 'IVA', '003': 'IEPS' };

const OBJETO_IMP: Readonly<Record<string, string>> = {
  '01': 'No objeto de impuesto',
  '02': 'Sí objeto de impuesto',
  '03': 'Sí objeto del impuesto y no obligado al desglose',
  '04': 'Sí objeto del impuesto y no causa impuesto',
  '05': 'Sí objeto del impuesto, IVA crédito PODEBI',
};

const EXPORTACION: Readonly<Record<string, string>> = {
  '01': 'No aplica',
  '02': 'Definitiva con clave A1',
  '03': 'Temporal',
  '04': 'Definitiva con clave distinta a A1',
};

export type CatalogName =
  'formaPago' | 'metodoPago' | 'tipoDeComprobante' | 'usoCfdi' | 'regimenFiscal' | 'tipoRelacion' | 'impuesto' | 'objetoImp' | 'exportacion';

const CATALOGS: Readonly<Record<CatalogName, Readonly<Record<string, string>>>> = {
  formaPago: FORMA_PAGO,
  metodoPago: PAYMENT_METHOD_LABELS,
  tipoDeComprobante: TIPO_COMPROBANTE,
  usoCfdi: USO_CFDI,
  regimenFiscal: REGIMEN_FISCAL,
  tipoRelacion: TIPO_RELACION,
  impuesto: IMPUESTO,
  objetoImp: OBJETO_IMP,
  exportacion: EXPORTACION,
};

/** `03 Transferencia electrónica de fondos`; the key alone when unknown; '' when absent. */
export function labelled(catalog: CatalogName, key: string): string {
  if (!key) return '';
  const name = ownEntry(CATALOGS[catalog], key);
  return name ? `${key} ${name}` : key;
}

/** The tax's short name (IVA, ISR, IEPS) or its key. */
export const taxName = (key: string): string => ownEntry(IMPUESTO, key) ?? key;
