/**
 * The SAT's verification URL a printed CFDI carries as its QR code (docs/domain.md, "The printed
 * form"): `https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id=<UUID>&re=<RFC
 * emisor>&rr=<RFC receptor>&tt=<Total>&fe=<last 8 characters of the Sello>`, the same for CFDI
 * 3.3 and 4.0. Pure.
 */

export const VERIFICATION_BASE = 'https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx';

/**
 * `tt`: the Total without non-significant zeros, up to 18 integer and 6 decimal digits, at least
 * one decimal ("1000.00" → "1000.0", "0" → "0.0", "2010.010" → "2010.01"); the XML's Total has at
 * most 6 decimals (t_Importe), more are rounded half up. Decimal text throughout: no float.
 * (CFDI 3.2's zero-padded 10.6 form, `0000001234.567800`, is not used by 3.3 or 4.0.)
 */
export function verificationTotal(total: string): string {
  const m = /^\s*(\d*)(?:\.(\d*))?\s*$/.exec(total);
  if (!m) return '0.0';
  let units = BigInt(`${m[1] || '0'}${(m[2] ?? '').padEnd(7, '0').slice(0, 7)}`);
  units = (units + 5n) / 10n; // to 6 decimals, half up
  const digits = units.toString().padStart(7, '0');
  const integer = digits.slice(0, -6);
  const decimals = digits.slice(-6).replace(/0+$/, '');
  return `${integer}.${decimals || '0'}`;
}

/**
 * The values go in as the standard's expression writes them, not URL-encoded: an RFC's `&` as the
 * XML escapes it (`&amp;`), the Sello's base64 characters (`/`, `+`, `=`) as they are — what the
 * SAT's reader and public CFDI-to-PDF code expect (docs/domain.md cites the source).
 */
const rfcParam = (rfc: string): string => rfc.replaceAll('&', '&amp;');

export function verificationUrl(input: { uuid: string; rfcEmisor: string; rfcReceptor: string; total: string; sello: string }): string {
  return (
    `${VERIFICATION_BASE}?id=${input.uuid}&re=${rfcParam(input.rfcEmisor)}&rr=${rfcParam(input.rfcReceptor)}` +
    `&tt=${verificationTotal(input.total)}&fe=${input.sello.slice(-8)}`
  );
}
