/**
 * RFC (Registro Federal de Contribuyentes) shape rules. A company (persona
 * moral) has 3 name letters, a person (persona física) 4; then the YYMMDD of
 * incorporation/birth and a 3-character homoclave whose last character is the
 * check digit (0-9 or A). The check digit itself is not verified: legacy and
 * test data often carry made-up homoclaves, and retention rules only need the
 * taxpayer type.
 */

export type TaxpayerKind = 'company' | 'person' | 'public';

/** Generic RFC for the public at large (sales to unidentified individuals). */
export const PUBLIC_RFC = 'XAXX010101000';
/** Generic RFC for foreign residents; treated like the public RFC (no retention). */
export const FOREIGN_RFC = 'XEXX010101000';

const RFC_RE = /^([A-ZÑ&]{3,4})(\d{2})(\d{2})(\d{2})([A-Z0-9]{2}[0-9A])$/;

/** Trim and upper-case (RFCs are case-insensitive in practice, stored upper). */
export function normalizeRfc(rfc: string): string {
  return rfc.trim().toUpperCase();
}

/** 12 (company) or 13 (person) characters with a plausible YYMMDD. */
export function isValidRfc(rfc: string): boolean {
  const m = RFC_RE.exec(normalizeRfc(rfc));
  if (!m) return false;
  const month = Number(m[3]);
  const day = Number(m[4]);
  return month >= 1 && month <= 12 && day >= 1 && day <= 31;
}

/**
 * Taxpayer kind of an RFC. The generic public and foreign RFCs are 'public'.
 * Otherwise the length decides (12 company, 13 person) even when the shape is
 * off — a lower-case or odd-homoclave legacy RFC is still that kind of
 * taxpayer. Returns 'unknown' when neither length fits, so a caller can refuse
 * to judge rather than guess (see `isValidRfc` for strict validation).
 */
export function taxpayerKind(rfc: string): TaxpayerKind | 'unknown' {
  const n = normalizeRfc(rfc);
  if (n === PUBLIC_RFC || n === FOREIGN_RFC) return 'public';
  if (n.length === 12) return 'company';
  if (n.length === 13) return 'person';
  return 'unknown';
}
