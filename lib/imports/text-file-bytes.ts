/**
 * The bytes of a file sent as JSON text (`encoding: utf8`, as an MCP agent sends one). The text
 * is already decoded, so it is written in the encoding its XML declaration names: an ISO-8859-1
 * or windows-1252 CFDI keeps its declaration and is read, and kept as its original, in that
 * encoding (docs/importing.md). Any other text is UTF-8 (an encoding the parser does not read is
 * refused there, naming it). A character the declared encoding cannot hold is the file's
 * rejection: stored, it would read as another. So is half of a surrogate pair alone, which JSON
 * can escape but no encoding holds (UTF-8 would write it as U+FFFD).
 */
import { LONE_SURROGATE } from '../shared/lone-surrogate.ts';
import { shown } from './rejection.ts';
import { encodingOfLabel } from './xml-tree.ts';

const DECLARED_ENCODING = /^\uFEFF?<\?xml[^>]*?\sencoding\s*=\s*["']([^"']*)["']/;

/** windows-1252 as bytes: its decoder's table turned around (0x80–0x9F hold € and the typographic signs; the rest is Latin-1). */
const CP1252_BYTES: ReadonlyMap<string, number> = (() => {
  const decoder = new TextDecoder('windows-1252');
  const map = new Map<string, number>();
  for (let b = 0; b < 256; b++) map.set(decoder.decode(Uint8Array.of(b)), b);
  return map;
})();

export function textFileBytes(text: string): Buffer | { rejection: string } {
  const lone = LONE_SURROGATE.exec(text);
  if (lone) {
    const unit = lone[0].charCodeAt(0).toString(16).toUpperCase();
    return {
      rejection: `the text holds half of a surrogate pair (U+${unit}) alone at character ${lone.index + 1}, which is no character: send the file as base64 bytes`,
    };
  }
  const declared = DECLARED_ENCODING.exec(text.slice(0, 512))?.[1]?.toLowerCase() ?? 'utf-8';
  const encoding = encodingOfLabel(declared);
  if (encoding === 'latin1') return singleByte(text, declared, (c) => (c.length === 1 && c.charCodeAt(0) <= 0xff ? c.charCodeAt(0) : undefined));
  if (encoding === 'windows-1252') return singleByte(text, declared, (c) => CP1252_BYTES.get(c));
  return Buffer.from(text, 'utf8');
}

function singleByte(text: string, declared: string, byteOf: (c: string) => number | undefined): Buffer | { rejection: string } {
  const out = Buffer.allocUnsafe(text.length);
  let n = 0;
  for (const c of text) {
    const b = byteOf(c);
    if (b === undefined) {
      return {
        rejection: `the text declares the encoding "${shown(declared)}", which cannot hold the character "${c}" (U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}); send it declared as UTF-8, or as base64 bytes`,
      };
    }
    out[n++] = b;
  }
  return out.subarray(0, n);
}
