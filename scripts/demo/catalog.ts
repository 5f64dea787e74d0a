/**
 * Reference data for the demo dataset: Mexican places (SAT state keys, INEGI/SAT
 * municipality keys, postcodes, coordinates), fuel terminals, client companies
 * and persons, fuel products, driver names, street names and vehicle
 * configurations.
 *
 * Everything here is fictional but shaped like the real thing: company names do
 * not belong to real firms, RFCs follow the SAT layout (3 or 4 letters, YYMMDD,
 * 2-character homoclave and a check digit computed with the SAT algorithm), the
 * municipality keys are the c_Municipio keys of the named municipalities and the
 * coordinates are the city centres (for plausible road distances).
 */
import { hashString } from './random.ts';

/** Service area of a demo tenant: the Gulf/centre (Veracruz-based) or the north/Bajío (Monterrey-based). */
export type ServiceArea = 'golfo' | 'norte';

// ---------------------------------------------------------------------------
// RFC
// ---------------------------------------------------------------------------

const RFC_ALPHABET = '0123456789ABCDEFGHIJKLMN&OPQRSTUVWXYZ Ñ';

/**
 * SAT check digit (last homoclave character) of an RFC given without it:
 * 11 characters for a company, 12 for a person. Σ value × (13 − position) over
 * the space-left-padded 12-character string, then (11 − Σ mod 11) mod 11, with
 * 10 written as 'A'.
 */
export function rfcCheckDigit(withoutCheck: string): string {
  const s = withoutCheck.toUpperCase().padStart(12, ' ');
  if (s.length !== 12) throw new RangeError(`rfcCheckDigit: expected 11 or 12 characters, got "${withoutCheck}"`);
  let sum = 0;
  for (let i = 0; i < 12; i++) {
    const v = RFC_ALPHABET.indexOf(s[i] as string);
    if (v < 0) throw new RangeError(`rfcCheckDigit: invalid character in "${withoutCheck}"`);
    sum += v * (13 - i);
  }
  return RFC_ALPHABET[(11 - (sum % 11)) % 11] as string;
}

/** Completes an RFC with its check digit. */
export function withCheckDigit(withoutCheck: string): string {
  return withoutCheck.toUpperCase() + rfcCheckDigit(withoutCheck);
}

/** Generic RFC for the public at large. */
export const PUBLIC_RFC = 'XAXX010101000';

// ---------------------------------------------------------------------------
// States and cities
// ---------------------------------------------------------------------------

export interface City {
  /** Stable key, e.g. "VER-193". */
  key: string;
  name: string;
  /** SAT c_Estado key. */
  state: string;
  /** SAT c_Municipio key (3 digits, within the state). */
  municipality: string;
  /** A postcode of the city (c_CodigoPostal). */
  zip: string;
  lat: number;
  lon: number;
  /** Service areas whose fleets deliver here. */
  areas: readonly ServiceArea[];
}

type CityRow = [state: string, municipality: string, name: string, zip: string, lat: number, lon: number, areas: string];

const CITY_ROWS: readonly CityRow[] = [
  // Veracruz
  ['VER', '189', 'Tuxpan', '92800', 20.956, -97.406, 'g'],
  ['VER', '131', 'Poza Rica de Hidalgo', '93260', 20.533, -97.459, 'g'],
  ['VER', '193', 'Veracruz', '91700', 19.173, -96.134, 'g'],
  ['VER', '028', 'Boca del Río', '94290', 19.106, -96.106, 'g'],
  ['VER', '087', 'Xalapa', '91000', 19.544, -96.91, 'g'],
  ['VER', '039', 'Coatzacoalcos', '96400', 18.134, -94.459, 'g'],
  ['VER', '108', 'Minatitlán', '96700', 17.994, -94.546, 'g'],
  ['VER', '044', 'Córdoba', '94500', 18.884, -96.926, 'g'],
  ['VER', '118', 'Orizaba', '94300', 18.85, -97.1, 'g'],
  ['VER', '141', 'San Andrés Tuxtla', '95700', 18.448, -95.213, 'g'],
  ['VER', '124', 'Papantla', '93400', 20.447, -97.32, 'g'],
  // Tamaulipas
  ['TAM', '038', 'Tampico', '89000', 22.255, -97.868, 'gn'],
  ['TAM', '009', 'Ciudad Madero', '89400', 22.276, -97.832, 'gn'],
  ['TAM', '003', 'Altamira', '89600', 22.393, -97.943, 'gn'],
  ['TAM', '032', 'Reynosa', '88500', 26.081, -98.288, 'n'],
  ['TAM', '022', 'Matamoros', '87300', 25.869, -97.502, 'n'],
  ['TAM', '027', 'Nuevo Laredo', '88000', 27.476, -99.516, 'n'],
  ['TAM', '041', 'Victoria', '87000', 23.736, -99.146, 'n'],
  // Nuevo León
  ['NLE', '039', 'Monterrey', '64000', 25.686, -100.316, 'n'],
  ['NLE', '026', 'Guadalupe', '67100', 25.677, -100.259, 'n'],
  ['NLE', '046', 'San Nicolás de los Garza', '66400', 25.744, -100.302, 'n'],
  ['NLE', '006', 'Apodaca', '66600', 25.781, -100.188, 'n'],
  ['NLE', '048', 'Santa Catarina', '66350', 25.673, -100.458, 'n'],
  ['NLE', '012', 'Cadereyta Jiménez', '67450', 25.592, -99.983, 'n'],
  ['NLE', '021', 'General Escobedo', '66050', 25.797, -100.316, 'n'],
  ['NLE', '031', 'Juárez', '67250', 25.648, -100.095, 'n'],
  // Coahuila
  ['COA', '030', 'Saltillo', '25000', 25.423, -101.005, 'n'],
  ['COA', '027', 'Ramos Arizpe', '25900', 25.54, -100.947, 'n'],
  ['COA', '018', 'Monclova', '25700', 26.907, -101.42, 'n'],
  ['COA', '035', 'Torreón', '27000', 25.543, -103.406, 'n'],
  ['COA', '025', 'Piedras Negras', '26000', 28.7, -100.523, 'n'],
  // San Luis Potosí
  ['SLP', '028', 'San Luis Potosí', '78000', 22.152, -100.976, 'n'],
  ['SLP', '035', 'Soledad de Graciano Sánchez', '78430', 22.183, -100.939, 'n'],
  ['SLP', '013', 'Ciudad Valles', '79000', 21.986, -99.011, 'gn'],
  // Guanajuato
  ['GTO', '020', 'León', '37000', 21.122, -101.684, 'n'],
  ['GTO', '027', 'Salamanca', '36700', 20.571, -101.192, 'n'],
  ['GTO', '017', 'Irapuato', '36500', 20.677, -101.356, 'n'],
  ['GTO', '007', 'Celaya', '38000', 20.523, -100.815, 'n'],
  ['GTO', '031', 'San Miguel de Allende', '37700', 20.915, -100.744, 'n'],
  // Querétaro
  ['QRO', '014', 'Querétaro', '76000', 20.588, -100.39, 'n'],
  ['QRO', '016', 'San Juan del Río', '76800', 20.389, -99.996, 'gn'],
  ['QRO', '011', 'El Marqués', '76240', 20.617, -100.3, 'n'],
  // Jalisco
  ['JAL', '039', 'Guadalajara', '44100', 20.673, -103.344, 'n'],
  ['JAL', '120', 'Zapopan', '45100', 20.721, -103.392, 'n'],
  ['JAL', '098', 'San Pedro Tlaquepaque', '45500', 20.64, -103.312, 'n'],
  ['JAL', '070', 'El Salto', '45680', 20.52, -103.181, 'n'],
  ['JAL', '053', 'Lagos de Moreno', '47400', 21.356, -101.93, 'n'],
  // Aguascalientes and Zacatecas
  ['AGU', '001', 'Aguascalientes', '20000', 21.882, -102.291, 'n'],
  ['ZAC', '056', 'Zacatecas', '98000', 22.77, -102.583, 'n'],
  ['ZAC', '017', 'Guadalupe', '98600', 22.747, -102.518, 'n'],
  // Puebla and Tlaxcala
  ['PUE', '114', 'Puebla', '72000', 19.041, -98.206, 'g'],
  ['PUE', '156', 'Tehuacán', '75700', 18.462, -97.393, 'g'],
  ['PUE', '132', 'San Martín Texmelucan', '74000', 19.284, -98.438, 'g'],
  ['PUE', '019', 'Atlixco', '74200', 18.908, -98.436, 'g'],
  ['TLA', '033', 'Tlaxcala', '90000', 19.318, -98.237, 'g'],
  ['TLA', '005', 'Apizaco', '90300', 19.413, -98.142, 'g'],
  // Hidalgo
  ['HID', '048', 'Pachuca de Soto', '42000', 20.101, -98.759, 'g'],
  ['HID', '076', 'Tula de Allende', '42800', 20.054, -99.343, 'g'],
  ['HID', '077', 'Tulancingo de Bravo', '43600', 20.083, -98.363, 'g'],
  ['HID', '069', 'Tizayuca', '43800', 19.838, -98.978, 'g'],
  // Estado de México and Ciudad de México
  ['MEX', '106', 'Toluca', '50000', 19.282, -99.655, 'g'],
  ['MEX', '104', 'Tlalnepantla de Baz', '54000', 19.54, -99.195, 'g'],
  ['MEX', '033', 'Ecatepec de Morelos', '55000', 19.601, -99.05, 'g'],
  ['MEX', '121', 'Cuautitlán Izcalli', '54700', 19.647, -99.246, 'g'],
  ['MEX', '057', 'Naucalpan de Juárez', '53000', 19.478, -99.238, 'g'],
  ['CMX', '002', 'Azcapotzalco', '02000', 19.487, -99.184, 'g'],
  ['CMX', '007', 'Iztapalapa', '09000', 19.357, -99.093, 'g'],
  ['CMX', '005', 'Gustavo A. Madero', '07000', 19.482, -99.113, 'g'],
  ['CMX', '010', 'Álvaro Obregón', '01000', 19.358, -99.203, 'g'],
  // Oaxaca and Tabasco
  ['OAX', '067', 'Oaxaca de Juárez', '68000', 17.061, -96.725, 'g'],
  ['OAX', '079', 'Salina Cruz', '70600', 16.167, -95.2, 'g'],
  ['OAX', '043', 'Heroica Ciudad de Juchitán de Zaragoza', '70000', 16.434, -95.02, 'g'],
  ['OAX', '184', 'San Juan Bautista Tuxtepec', '68300', 18.088, -96.123, 'g'],
  ['TAB', '004', 'Centro (Villahermosa)', '86000', 17.989, -92.93, 'g'],
  ['TAB', '002', 'Cárdenas', '86500', 18.001, -93.375, 'g'],
  ['TAB', '014', 'Paraíso', '86600', 18.398, -93.213, 'g'],
  ['TAB', '005', 'Comalcalco', '86300', 18.263, -93.224, 'g'],
];

export const CITIES: readonly City[] = CITY_ROWS.map(([state, municipality, name, zip, lat, lon, areas]) => ({
  key: `${state}-${municipality}`,
  name,
  state,
  municipality,
  zip,
  lat,
  lon,
  areas: [...(areas.includes('g') ? ['golfo' as const] : []), ...(areas.includes('n') ? ['norte' as const] : [])],
}));

const CITY_BY_KEY = new Map(CITIES.map((c) => [c.key, c]));

export function cityByKey(key: string): City {
  const c = CITY_BY_KEY.get(key);
  if (!c) throw new RangeError(`unknown city key ${key}`);
  return c;
}

/** Cities of some states (in catalog order). */
export function citiesOfStates(states: readonly string[]): City[] {
  return CITIES.filter((c) => states.includes(c.state));
}

// ---------------------------------------------------------------------------
// Distances
// ---------------------------------------------------------------------------

function haversineKm(a: City, b: City): number {
  const R = 6371;
  const toRad = (d: number): number => (d * Math.PI) / 180;
  const dLat = toRad(b.lat - a.lat);
  const dLon = toRad(b.lon - a.lon);
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(toRad(a.lat)) * Math.cos(toRad(b.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * R * Math.asin(Math.min(1, Math.sqrt(h)));
}

/**
 * Plausible road distance in whole km: great-circle distance × a detour factor
 * of 1.22–1.50 fixed per city pair (mountain roads through the Sierra Madre are
 * longer than plains roads; the factor is a hash, not geography). Deliveries
 * inside the same city are 12–45 km (terminal to station across town).
 */
export function roadDistanceKm(from: City, to: City): number {
  const h = hashString(from.key < to.key ? `${from.key}|${to.key}` : `${to.key}|${from.key}`);
  if (from.key === to.key) return 12 + (h % 34);
  const factor = 1.22 + ((h % 1000) / 1000) * 0.28;
  return Math.max(15, Math.round(haversineKm(from, to) * factor));
}

// ---------------------------------------------------------------------------
// Fuel terminals (origins) and their operators (shippers)
// ---------------------------------------------------------------------------

export interface Operator {
  rfc: string;
  name: string;
}

export const OPERATORS: Readonly<Record<string, Operator>> = {
  PND: { rfc: withCheckDigit('PND9407129K'), name: 'Petrolíferos Nacionales de Distribución SA de CV' },
  TPG: { rfc: withCheckDigit('TPG1005186H'), name: 'Terminales de Petrolíferos del Golfo SA de CV' },
  ALP: { rfc: withCheckDigit('ALP1402273R'), name: 'Almacenamiento y Logística Portuaria SA de CV' },
  TEN: { rfc: withCheckDigit('TEN1709197B'), name: 'Terminal Energética del Noreste SA de CV' },
};

export interface TerminalDef {
  cityKey: string;
  name: string;
  operator: keyof typeof OPERATORS;
  street: string;
  areas: readonly ServiceArea[];
}

export const TERMINALS: readonly TerminalDef[] = [
  { cityKey: 'VER-189', name: 'Terminal Marítima Tuxpan', operator: 'ALP', street: 'Carretera Tuxpan-Tampico Km 2.5', areas: ['golfo'] },
  { cityKey: 'VER-131', name: 'TAD Poza Rica', operator: 'PND', street: 'Blvd. Lázaro Cárdenas 1200', areas: ['golfo'] },
  { cityKey: 'VER-193', name: 'TAD Veracruz', operator: 'PND', street: 'Av. Díaz Mirón 4500', areas: ['golfo'] },
  { cityKey: 'VER-039', name: 'Terminal Pajaritos', operator: 'TPG', street: 'Carretera Coatzacoalcos-Villahermosa Km 5', areas: ['golfo'] },
  { cityKey: 'VER-118', name: 'TAD Escamela', operator: 'PND', street: 'Carretera Federal 150 Km 283', areas: ['golfo'] },
  { cityKey: 'HID-076', name: 'Refinería Tula (despacho)', operator: 'PND', street: 'Carretera Jorobas-Tula Km 26.5', areas: ['golfo'] },
  { cityKey: 'HID-048', name: 'TAD Pachuca', operator: 'PND', street: 'Carretera México-Pachuca Km 84', areas: ['golfo'] },
  { cityKey: 'PUE-114', name: 'TAD Puebla', operator: 'PND', street: 'Av. 18 de Noviembre 2001', areas: ['golfo'] },
  { cityKey: 'CMX-002', name: 'TAD Azcapotzalco', operator: 'PND', street: 'Av. 22 de Febrero 350', areas: ['golfo'] },
  { cityKey: 'TAB-004', name: 'TAD Villahermosa', operator: 'TPG', street: 'Carretera Villahermosa-Cárdenas Km 3', areas: ['golfo'] },
  { cityKey: 'OAX-079', name: 'Refinería Salina Cruz (despacho)', operator: 'PND', street: 'Carretera Transístmica Km 5', areas: ['golfo'] },
  { cityKey: 'TAM-009', name: 'Refinería Madero (despacho)', operator: 'PND', street: 'Av. Álvaro Obregón 100', areas: ['golfo', 'norte'] },
  { cityKey: 'TAM-003', name: 'Terminal Altamira', operator: 'TEN', street: 'Puerto Industrial Altamira, Calle Río Tamesí 4', areas: ['norte'] },
  { cityKey: 'NLE-012', name: 'Refinería Cadereyta (despacho)', operator: 'PND', street: 'Carretera Monterrey-Reynosa Km 36.5', areas: ['norte'] },
  { cityKey: 'NLE-048', name: 'TAD Santa Catarina', operator: 'PND', street: 'Av. Industriales del Poniente 500', areas: ['norte'] },
  { cityKey: 'TAM-032', name: 'TAD Reynosa', operator: 'TEN', street: 'Carretera Reynosa-Monterrey Km 3', areas: ['norte'] },
  { cityKey: 'TAM-027', name: 'Terminal Nuevo Laredo', operator: 'TEN', street: 'Carretera Nacional Km 8', areas: ['norte'] },
  { cityKey: 'COA-030', name: 'TAD Saltillo', operator: 'PND', street: 'Blvd. Isidro López Zertuche 3000', areas: ['norte'] },
  { cityKey: 'COA-035', name: 'TAD Torreón', operator: 'PND', street: 'Carretera Torreón-San Pedro Km 7', areas: ['norte'] },
  { cityKey: 'SLP-028', name: 'TAD San Luis Potosí', operator: 'PND', street: 'Eje 122 Zona Industrial 140', areas: ['norte'] },
  { cityKey: 'GTO-027', name: 'Refinería Salamanca (despacho)', operator: 'PND', street: 'Av. Faja de Oro s/n', areas: ['norte'] },
  { cityKey: 'QRO-014', name: 'TAD Querétaro', operator: 'PND', street: 'Av. 5 de Febrero 2100', areas: ['norte'] },
  { cityKey: 'JAL-070', name: 'TAD El Castillo', operator: 'PND', street: 'Carretera El Castillo Km 1.2', areas: ['norte'] },
];

// ---------------------------------------------------------------------------
// Clients
// ---------------------------------------------------------------------------

export type ClientKind = 'distribuidor' | 'gasolinera' | 'industrial' | 'persona' | 'publico';

export interface ClientDef {
  rfc: string;
  name: string;
  /** Short commercial name used in place names. */
  short: string;
  kind: ClientKind;
  /** States where its stations / plants are. */
  states: readonly string[];
  areas: readonly ServiceArea[];
}

type ClientRow = [rfcWithoutCheck: string, name: string, short: string, kind: ClientKind, states: string, areas: string];

const CLIENT_ROWS: readonly ClientRow[] = [
  // Gulf / centre (Transportes del Golfo)
  ['DCG0803147H', 'Distribuidora de Combustibles del Golfo SA de CV', 'DICOGO', 'distribuidor', 'VER TAM', 'g'],
  ['GHE110527KP', 'Gasolineras Huasteca Express SA de CV', 'Huasteca Express', 'gasolinera', 'VER HID TAM', 'g'],
  ['SCE0509193M', 'Servicio Costa Esmeralda SA de CV', 'Costa Esmeralda', 'gasolinera', 'VER', 'g'],
  ['CLT990623R2', 'Combustibles y Lubricantes de Tuxpan SA de CV', 'COLUTUX', 'distribuidor', 'VER PUE', 'g'],
  ['PSU120210BQ', 'Petrolíferos del Sureste SA de CV', 'PETROSUR', 'distribuidor', 'TAB OAX VER', 'g'],
  ['GGP0711059T', 'Grupo Gasolinero Poblano SA de CV', 'GasPoblano', 'gasolinera', 'PUE TLA', 'g'],
  ['EAL150316UD', 'Estaciones del Altiplano SA de CV', 'Altiplano', 'gasolinera', 'HID MEX', 'g'],
  ['EME100830N4', 'Energéticos Metropolitanos SA de CV', 'EnerMetro', 'gasolinera', 'CMX MEX', 'g'],
  ['CAC930412FM', 'Cementos y Agregados del Centro SA de CV', 'CEMAC', 'industrial', 'HID PUE', 'g'],
  ['APA9707182J', 'Agroindustrias del Papaloapan SA de CV', 'AgroPapaloapan', 'industrial', 'VER OAX', 'g'],
  ['CVI1309018L', 'Constructora Vial del Istmo SA de CV', 'Vial del Istmo', 'industrial', 'OAX VER', 'g'],
  ['IAC880222QW', 'Ingenio Azucarero La Concordia SA de CV', 'Ingenio La Concordia', 'industrial', 'VER', 'g'],
  ['TUX090615EB', 'Transportes Urbanos de Xalapa SA de CV', 'TUXSA', 'industrial', 'VER', 'g'],
  ['ECO141008LS', 'Energía y Combustibles de Oaxaca SA de CV', 'ECOAX', 'gasolinera', 'OAX', 'g'],
  ['LTM1902213C', 'Logística y Transporte Mexiquense SA de CV', 'LOTRAMEX', 'industrial', 'MEX CMX', 'g'],
  // Both areas
  ['SPT060707G8', 'Servicios Petroleros de Tamaulipas SA de CV', 'SEPETAM', 'distribuidor', 'TAM VER NLE', 'gn'],
  ['QIA030417F6', 'Química Industrial de Altamira SA de CV', 'QUIMIALT', 'industrial', 'TAM', 'gn'],
  // North / Bajío (Fletes del Norte)
  ['GRE080125H4', 'Gasolineras Regiomontanas SA de CV', 'GasRegia', 'gasolinera', 'NLE', 'n'],
  ['CNO021011P6', 'Combustibles del Noreste SA de CV', 'CONOR', 'distribuidor', 'NLE COA TAM', 'n'],
  ['ALC960503LJ', 'Aceros Laminados de Coahuila SA de CV', 'ALACOA', 'industrial', 'COA', 'n'],
  ['MSM110419D7', 'Minera Sierra Madre Oriental SA de CV', 'Minera SMO', 'industrial', 'COA SLP ZAC', 'n'],
  ['ESB040812T9', 'Estaciones de Servicio del Bajío SA de CV', 'ES Bajío', 'gasolinera', 'GTO QRO AGU', 'n'],
  ['PQU1411205K', 'Petrolíferos de Querétaro SA de CV', 'PETROQRO', 'distribuidor', 'QRO GTO', 'n'],
  ['GPO070228V3', 'Gasolineras Potosinas SA de CV', 'GasPotosina', 'gasolinera', 'SLP', 'n'],
  ['ACF100706J2', 'Autotransportes de Carga La Frontera SA de CV', 'La Frontera', 'industrial', 'TAM NLE', 'n'],
  ['DEO160524A1', 'Distribuidora Energética de Occidente SA de CV', 'DEOSA', 'distribuidor', 'JAL AGU', 'n'],
  ['AVS120313M7', 'Agrícola Valle de San Juan SA de CV', 'Valle de San Juan', 'industrial', 'QRO GTO', 'n'],
  ['ECT1809114P', 'Energía y Combustibles Tapatíos SA de CV', 'ECOTAP', 'gasolinera', 'JAL', 'n'],
  ['GLA170605RX', 'Gasolineras La Lagunera SA de CV', 'La Lagunera', 'gasolinera', 'COA', 'n'],
  ['PBA130828N6', 'Plásticos del Bajío SA de CV', 'PLABASA', 'industrial', 'GTO', 'n'],
  // Personas físicas (13-character RFC): small station owners
  ['HEML750312Q4', 'José Luis Hernández Martínez', 'Gasolinera El Crucero', 'persona', 'VER', 'g'],
  ['GAPR6809051B', 'Rosa María García Pérez', 'Servicio La Rosa', 'persona', 'PUE', 'g'],
  ['TORM820117KS', 'Miguel Ángel Torres Ramírez', 'Servicio Torres', 'persona', 'NLE', 'n'],
  ['SAVE7906308N', 'Esperanza Sánchez Vázquez', 'Gasolinera San Miguel', 'persona', 'GTO', 'n'],
];

const areasOf = (s: string): ServiceArea[] => [...(s.includes('g') ? ['golfo' as const] : []), ...(s.includes('n') ? ['norte' as const] : [])];

export const CLIENTS: readonly ClientDef[] = [
  ...CLIENT_ROWS.map(([base, name, short, kind, states, areas]) => ({
    rfc: withCheckDigit(base),
    name,
    short,
    kind,
    states: states.split(' '),
    areas: areasOf(areas),
  })),
  {
    rfc: PUBLIC_RFC,
    name: 'PUBLICO EN GENERAL',
    short: 'Público en general',
    kind: 'publico' as const,
    states: ['VER', 'TAM', 'NLE', 'GTO', 'PUE'],
    areas: ['golfo', 'norte'] as const,
  },
];

// ---------------------------------------------------------------------------
// Products
// ---------------------------------------------------------------------------

export interface FuelProduct {
  /** SAT c_ClaveProdServ. */
  code: string;
  desc: string;
  short: string;
  /** SAT c_ClaveUnidad: LTR = litre. */
  unit: 'LTR';
}

export const PRODUCTS: Readonly<Record<'diesel' | 'regular' | 'premium', FuelProduct>> = {
  diesel: { code: '15101505', desc: 'Combustible diésel', short: 'Diésel', unit: 'LTR' },
  regular: { code: '15101514', desc: 'Gasolina regular menor a 91 octanos', short: 'Gasolina regular', unit: 'LTR' },
  premium: { code: '15101515', desc: 'Gasolina premium mayor o igual a 91 octanos', short: 'Gasolina premium', unit: 'LTR' },
};

/** Product mix (diesel, regular, premium) by client kind. */
export const PRODUCT_MIX: Readonly<Record<ClientKind, readonly [number, number, number]>> = {
  distribuidor: [0.5, 0.35, 0.15],
  gasolinera: [0.3, 0.55, 0.15],
  industrial: [1, 0, 0],
  persona: [0.35, 0.5, 0.15],
  publico: [0.6, 0.3, 0.1],
};

// ---------------------------------------------------------------------------
// SAT keys of invoice concepts
// ---------------------------------------------------------------------------

export const CONCEPT_CODES = {
  /** Servicios de transporte de carga por carretera (en camión) a nivel regional y nacional. */
  roadFreight: '78101802',
  /** Servicios de transporte de carga de petróleo o productos químicos por carretera. */
  fuelFreight: '78101807',
  /** Accessorial: demurrage (estadías) billed to the client; taxable, outside the freight family. */
  demurrage: '78141500',
  /** Toll road fees (casetas) re-billed to the client; taxable, not freight. */
  toll: '95111603',
} as const;

// ---------------------------------------------------------------------------
// People, streets, vehicles
// ---------------------------------------------------------------------------

export const FIRST_NAMES: readonly string[] = [
  'Juan',
  'José',
  'Luis',
  'Miguel',
  'Jesús',
  'Francisco',
  'Alejandro',
  'Roberto',
  'Ricardo',
  'Javier',
  'Fernando',
  'Martín',
  'Pedro',
  'Raúl',
  'Arturo',
  'Sergio',
  'Carlos',
  'Jorge',
  'Eduardo',
  'Víctor',
  'Héctor',
  'Ramón',
  'Armando',
  'Rafael',
  'Gerardo',
  'Alfredo',
  'Ernesto',
  'Salvador',
  'Isidro',
  'Rogelio',
  'Mario',
  'Andrés',
  'Óscar',
  'Daniel',
  'Hugo',
  'Enrique',
  'Guillermo',
  'Pablo',
  'Rubén',
  'Alberto',
  'Manuel',
  'Antonio',
  'Juan Carlos',
  'José Luis',
  'Luis Alberto',
  'Miguel Ángel',
  'José Antonio',
  'Jorge Alberto',
  'Francisco Javier',
  'María Elena',
  'Verónica',
  'Patricia',
  'Guadalupe',
];

export const SURNAMES: readonly string[] = [
  'Hernández',
  'García',
  'Martínez',
  'López',
  'González',
  'Pérez',
  'Rodríguez',
  'Sánchez',
  'Ramírez',
  'Cruz',
  'Flores',
  'Gómez',
  'Morales',
  'Vázquez',
  'Reyes',
  'Jiménez',
  'Torres',
  'Díaz',
  'Gutiérrez',
  'Ruiz',
  'Mendoza',
  'Aguilar',
  'Ortiz',
  'Moreno',
  'Castillo',
  'Romero',
  'Álvarez',
  'Méndez',
  'Chávez',
  'Rivera',
  'Juárez',
  'Ramos',
  'Domínguez',
  'Herrera',
  'Medina',
  'Castro',
  'Vargas',
  'Guzmán',
  'Velázquez',
  'Rojas',
  'Contreras',
  'Salazar',
  'Luna',
  'Ortega',
  'Santiago',
  'Guerrero',
  'Bautista',
  'Estrada',
  'Cortés',
  'Soto',
  'Alvarado',
  'Espinoza',
  'Lara',
  'Ávila',
  'Ríos',
  'Cervantes',
  'Silva',
  'Delgado',
  'Vega',
  'Márquez',
  'Sandoval',
  'Fuentes',
  'Carrillo',
  'Trejo',
  'Olvera',
  'Zamora',
  'Cabrera',
  'Villarreal',
  'Garza',
  'Treviño',
  'Cantú',
  'Quintanilla',
];

export const STREETS: readonly string[] = [
  'Av. Benito Juárez',
  'Av. Miguel Hidalgo',
  'Av. Revolución',
  'Calle 5 de Mayo',
  'Av. Insurgentes',
  'Blvd. Miguel Alemán',
  'Av. Lázaro Cárdenas',
  'Calle Morelos',
  'Av. Independencia',
  'Blvd. Adolfo Ruiz Cortines',
  'Av. Constitución',
  'Calle Allende',
  'Av. Universidad',
  'Calle Zaragoza',
  'Av. Venustiano Carranza',
  'Calle Matamoros',
  'Av. Reforma',
  'Calle Guerrero',
  'Av. Emiliano Zapata',
  'Av. Francisco I. Madero',
  'Blvd. Industrial',
  'Calle Industria',
  'Av. de las Torres',
  'Libramiento Norte',
  'Libramiento Sur',
  'Carretera Federal 57',
  'Carretera Federal 45',
  'Carretera Federal 180',
  'Carretera Federal 85',
  'Carretera Federal 150',
  'Autopista México-Querétaro',
  'Carretera Nacional',
  'Av. Aviación',
  'Calle Pino Suárez',
  'Av. Tecnológico',
  'Blvd. Aeropuerto',
];

export interface VehicleConfigDef {
  /** SAT c_ConfigAutotransporte. */
  config: 'T3S2R4' | 'T3S2' | 'C3';
  weight: number;
  /** Number of trailers / tanks hitched (pipas). */
  trailers: number;
  /** Tank capacity range in litres (whole vehicle). */
  capacity: readonly [number, number];
  axles: number;
  /** Typical toll cost per km on toll roads, MXN. */
  tollPerKm: number;
}

export const VEHICLE_CONFIGS: readonly VehicleConfigDef[] = [
  { config: 'T3S2R4', weight: 0.5, trailers: 2, capacity: [56_000, 62_000], axles: 9, tollPerKm: 3.9 },
  { config: 'T3S2', weight: 0.4, trailers: 1, capacity: [30_000, 40_000], axles: 5, tollPerKm: 2.4 },
  { config: 'C3', weight: 0.1, trailers: 0, capacity: [20_000, 24_000], axles: 3, tollPerKm: 1.35 },
];
