/**
 * A Mexican address as trips store it (Carta Porte's Domicilio): SAT keys for the
 * state and municipality, the state's name beside its key. Imports and the demo
 * generator build addresses the same way.
 */
import { ownEntry } from '../shared/own-entry.ts';

export interface MexicanAddress {
  street: string;
  city: string;
  /** SAT municipality key (c_Municipio), e.g. "193". */
  municipality: string;
  /** State name, e.g. "Veracruz". */
  province: string;
  /** SAT state key (c_Estado), e.g. "VER". */
  state: string;
  country: string;
  zip: string;
}

/** SAT c_Estado keys → state names (the states our carriers serve; an unknown key stands for itself). */
const STATE_NAMES: Readonly<Record<string, string>> = {
  VER: 'Veracruz',
  TAM: 'Tamaulipas',
  NLE: 'Nuevo León',
  PUE: 'Puebla',
  HID: 'Hidalgo',
  GTO: 'Guanajuato',
  JAL: 'Jalisco',
  QRO: 'Querétaro',
  SLP: 'San Luis Potosí',
  MEX: 'Estado de México',
  CMX: 'Ciudad de México',
  OAX: 'Oaxaca',
  TAB: 'Tabasco',
  COA: 'Coahuila',
  TLA: 'Tlaxcala',
  AGU: 'Aguascalientes',
  ZAC: 'Zacatecas',
};

/** A stored address; its province (state name) comes from the SAT state key, the key itself when unknown. */
export function mexicanAddress(a: Omit<MexicanAddress, 'province'>): MexicanAddress {
  const { street, city, municipality, state, country, zip } = a;
  return { street, city, municipality, province: ownEntry(STATE_NAMES, state) ?? state, state, country, zip };
}
