/**
 * Streaming XML → a small element tree, with saxes (a conformant, non-validating
 * streaming parser). What reaches the tree is bounded:
 *
 * - DTDs are refused outright (`<!DOCTYPE …>`): no internal entities (billion
 *   laughs) and no external entities or DTD fetches. saxes itself never
 *   expands anything but the five predefined entities and character
 *   references, so an undeclared `&x;` is a well-formedness error.
 * - Only elements in the namespaces the caller asks for (given the kept
 *   parent) are kept (the CFDI node set); everything else, e.g. a third-party
 *   Addenda, is parsed and dropped. CFDI data lives in attributes; the text of a kept element is kept
 *   up to MAX_TEXT characters (the SAT's acknowledgement writes UUID and
 *   EstatusUUID as element text).
 * - Depth and element count are capped; the byte size is capped by the caller
 *   (per file, while streaming).
 *
 * Bytes are decoded as the XML declaration says: UTF-8 (the default and the CFDI 4.0 rule),
 * ISO-8859-1 or windows-1252, which older tools still write. Bytes that are not valid in
 * that encoding, a UTF-16 file, or any other declared encoding are refused with the reason:
 * text is never decoded into replacement characters and stored mangled.
 */
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { ImportRejection } from './rejection.ts';
import { ownEntry } from '../shared/own-entry.ts';

export interface XmlElement {
  /** Namespace URI ('' for none). */
  ns: string;
  /** Local name. */
  name: string;
  /** Attributes without a namespace, by local name. */
  attrs: Record<string, string>;
  children: XmlElement[];
  /** Text content directly inside the element (up to MAX_TEXT characters). */
  text: string;
}

/** Characters of text kept per element: CFDI data is in attributes, acknowledgement values are short. */
const MAX_TEXT = 1024;

/** How bytes become text: chosen from the byte order mark and the XML declaration. */
interface Decoder {
  write(bytes: Buffer): string;
  end(): string;
}

const ENCODINGS: Readonly<Record<string, 'utf-8' | 'latin1' | 'windows-1252'>> = {
  'utf-8': 'utf-8',
  utf8: 'utf-8',
  'us-ascii': 'utf-8',
  ascii: 'utf-8',
  'iso-8859-1': 'latin1',
  iso8859_1: 'latin1',
  'iso_8859-1': 'latin1',
  'iso8859-1': 'latin1',
  latin1: 'latin1',
  'latin-1': 'latin1',
  l1: 'latin1',
  'windows-1252': 'windows-1252',
  cp1252: 'windows-1252',
};

/** What an XML declaration's encoding label (lower-case) reads as here; undefined: not read. */
export const encodingOfLabel = (label: string): 'utf-8' | 'latin1' | 'windows-1252' | undefined => ownEntry(ENCODINGS, label);

/** Bytes of the head in which the XML declaration must end. */
const DECLARATION_BYTES = 512;

export interface XmlTreeLimits {
  maxDepth: number;
  maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlTreeLimits = { maxDepth: 32, maxElements: 200_000 };

/** Incremental parser: `write` chunks as they arrive, then `end()` for the root. */
export class XmlTreeBuilder {
  private readonly parser = new SaxesParser({ xmlns: true, position: true });
  /** Until the encoding is decided: the first bytes. */
  private head: Buffer | null = Buffer.alloc(0);
  private decoder: Decoder | null = null;
  private readonly stack: (XmlElement | null)[] = [];
  private root: XmlElement | null = null;
  private rootSeen = false;
  private elements = 0;
  private failure: ImportRejection | null = null;

  constructor(
    private readonly keep: (ns: string, parent: XmlElement) => boolean,
    private readonly limits: XmlTreeLimits = DEFAULT_XML_LIMITS,
  ) {
    this.parser.on('doctype', () => this.fail('DTDs (<!DOCTYPE>) are not accepted: CFDI files have none, and entity declarations are refused'));
    this.parser.on('error', (err) => this.fail(`malformed XML: ${err.message.replace(/\s+/g, ' ').trim()}`));
    this.parser.on('opentag', (tag) => this.open(tag));
    this.parser.on('closetag', () => {
      this.stack.pop();
    });
    this.parser.on('text', (text) => this.addText(text));
    this.parser.on('cdata', (text) => this.addText(text));
  }

  private addText(text: string): void {
    const el = this.stack[this.stack.length - 1];
    if (el && el.text.length < MAX_TEXT) el.text += text.slice(0, MAX_TEXT - el.text.length);
  }

  /**
   * The decoder the head of the file asks for, or null while the XML declaration may still be
   * incomplete (`final`: no more bytes will come).
   */
  private chooseDecoder(head: Buffer, final: boolean): Decoder | null {
    if (head.length < 2 && !final) return null;
    if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) {
      this.fail('the file is UTF-16 (byte order mark): CFDI 4.0 is UTF-8; save it as UTF-8');
    }
    let declared = 'utf-8';
    if (head.length < 3 && head[0] === 0xef && !final) return null;
    const start = head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    const probe = head.subarray(start, start + 5).toString('latin1');
    // Too few bytes yet to tell whether an XML declaration starts here.
    if (probe.length < 5 && '<?xml'.startsWith(probe) && !final) return null;
    if (probe === '<?xml') {
      const end = head.indexOf('?>', start);
      if (end < 0 && head.length < DECLARATION_BYTES && !final) return null;
      const declaration = head.subarray(start, end < 0 ? Math.min(head.length, DECLARATION_BYTES) : end).toString('latin1');
      declared = /\sencoding\s*=\s*["']([^"']*)["']/.exec(declaration)?.[1]?.toLowerCase() ?? 'utf-8';
    }
    const encoding = ownEntry(ENCODINGS, declared);
    if (encoding === undefined) {
      this.fail(
        `the XML declaration names the encoding "${declared.slice(0, 40)}", which is not read here: CFDI 4.0 is UTF-8 (ISO-8859-1 and windows-1252 are read too)`,
      );
    }
    if (encoding === 'latin1') {
      // Node's latin1 is ISO-8859-1 itself (TextDecoder's label maps to windows-1252).
      const d = new StringDecoder('latin1');
      return { write: (b) => d.write(b), end: () => d.end() };
    }
    const d = new TextDecoder(encoding, { fatal: true });
    const what = declared === 'utf-8' && encoding === 'utf-8' ? 'UTF-8 (declared, or the default without a declaration)' : `${declared} (declared)`;
    const decode = (b?: Buffer): string => {
      try {
        return b === undefined ? d.decode() : d.decode(b, { stream: true });
      } catch {
        return this.fail(`the file is not valid ${what}: a file in ISO-8859-1 must say so in its XML declaration (encoding="ISO-8859-1"); nothing was stored`);
      }
    };
    return { write: (b) => decode(b), end: () => decode() };
  }

  private fail(reason: string): never {
    this.failure ??= new ImportRejection(reason);
    throw this.failure;
  }

  private open(tag: SaxesTagNS): void {
    if (++this.elements > this.limits.maxElements) this.fail(`more than ${this.limits.maxElements} XML elements`);
    if (this.stack.length >= this.limits.maxDepth) this.fail(`XML nested deeper than ${this.limits.maxDepth} levels`);
    const parent = this.stack.length ? this.stack[this.stack.length - 1]! : undefined;
    const ns = tag.uri ?? '';
    // The root is always kept (to report what it is); below it, only the caller's namespaces
    // under a kept parent.
    const isRoot = !this.rootSeen;
    const kept = isRoot || (parent !== null && parent !== undefined && this.keep(ns, parent));
    if (!kept) {
      this.stack.push(null);
      return;
    }
    const attrs: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) {
      if (!a.uri) attrs[a.local] = a.value;
    }
    const el: XmlElement = { ns, name: tag.local, attrs, children: [], text: '' };
    if (isRoot) {
      this.root = el;
      this.rootSeen = true;
    } else parent!.children.push(el);
    this.stack.push(el);
  }

  /** Decodes bytes once the encoding is known (keeping the head until the declaration is complete). */
  private decode(chunk: Buffer, final: boolean): string {
    if (this.head !== null) {
      const head = Buffer.concat([this.head, chunk]);
      this.decoder = this.chooseDecoder(head, final);
      if (this.decoder === null) {
        this.head = head;
        return '';
      }
      this.head = null;
      chunk = head;
    }
    return this.decoder!.write(chunk);
  }

  write(chunk: Buffer | string): void {
    if (this.failure) throw this.failure;
    const text = typeof chunk === 'string' ? chunk : this.decode(chunk, false);
    try {
      if (text) this.parser.write(text);
    } catch (err) {
      if (err instanceof ImportRejection) throw err;
      this.fail(`malformed XML: ${(err as Error).message}`);
    }
  }

  end(): XmlElement {
    if (this.failure) throw this.failure;
    try {
      const rest = (this.head !== null ? this.decode(Buffer.alloc(0), true) : '') + (this.decoder?.end() ?? '');
      if (rest) this.parser.write(rest);
      this.parser.close();
    } catch (err) {
      if (err instanceof ImportRejection) throw err;
      this.fail(`malformed XML: ${(err as Error).message}`);
    }
    if (!this.root) this.fail('empty file: no XML root element');
    return this.root;
  }
}

/** Parses a whole buffer (tests, small inputs). */
export function parseXmlTree(xml: Buffer | string, keep: (ns: string, parent: XmlElement) => boolean, limits?: XmlTreeLimits): XmlElement {
  const b = new XmlTreeBuilder(keep, limits);
  b.write(xml);
  return b.end();
}

export const childrenOf = (el: XmlElement, ns: string, name: string): XmlElement[] => el.children.filter((c) => c.ns === ns && c.name === name);
export const childOf = (el: XmlElement, ns: string, name: string): XmlElement | undefined => el.children.find((c) => c.ns === ns && c.name === name);
