/**
 * Streaming XML → a small element tree, with saxes (a conformant, non-validating
 * streaming parser). What reaches the tree is bounded:
 *
 * - DTDs are refused outright (`<!DOCTYPE …>`): no internal entities (billion
 *   laughs) and no external entities or DTD fetches. saxes itself never
 *   expands anything but the five predefined entities and character
 *   references, so an undeclared `&x;` is a well-formedness error.
 * - Only elements in the namespaces the caller asks for are kept (the CFDI
 *   node set); everything else, e.g. a third-party Addenda, is parsed and
 *   dropped. Text content is never kept: CFDI data lives in attributes.
 * - Depth and element count are capped; the byte size is capped by the caller
 *   (per file, while streaming).
 */
import { StringDecoder } from 'node:string_decoder';
import { SaxesParser, type SaxesTagNS } from 'saxes';
import { ImportRejection } from './rejection.ts';

export interface XmlElement {
  /** Namespace URI ('' for none). */
  ns: string;
  /** Local name. */
  name: string;
  /** Attributes without a namespace, by local name. */
  attrs: Record<string, string>;
  children: XmlElement[];
}

export interface XmlTreeLimits {
  maxDepth: number;
  maxElements: number;
}

export const DEFAULT_XML_LIMITS: XmlTreeLimits = { maxDepth: 32, maxElements: 200_000 };

/** Incremental parser: `write` chunks as they arrive, then `end()` for the root. */
export class XmlTreeBuilder {
  private readonly parser = new SaxesParser({ xmlns: true, position: true });
  private readonly decoder = new StringDecoder('utf8');
  private readonly stack: (XmlElement | null)[] = [];
  private root: XmlElement | null = null;
  private rootSeen = false;
  private elements = 0;
  private failure: ImportRejection | null = null;

  constructor(
    private readonly keep: (ns: string) => boolean,
    private readonly limits: XmlTreeLimits = DEFAULT_XML_LIMITS,
  ) {
    this.parser.on('doctype', () => this.fail('DTDs (<!DOCTYPE>) are not accepted: CFDI files have none, and entity declarations are refused'));
    this.parser.on('error', (err) => this.fail(`malformed XML: ${err.message.replace(/\s+/g, ' ').trim()}`));
    this.parser.on('opentag', (tag) => this.open(tag as SaxesTagNS));
    this.parser.on('closetag', () => {
      this.stack.pop();
    });
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
    const kept = isRoot || (parent !== null && parent !== undefined && this.keep(ns));
    if (!kept) {
      this.stack.push(null);
      return;
    }
    const attrs: Record<string, string> = {};
    for (const a of Object.values(tag.attributes)) {
      if (!a.uri) attrs[a.local] = a.value;
    }
    const el: XmlElement = { ns, name: tag.local, attrs, children: [] };
    if (isRoot) {
      this.root = el;
      this.rootSeen = true;
    } else parent!.children.push(el);
    this.stack.push(el);
  }

  write(chunk: Buffer | string): void {
    if (this.failure) throw this.failure;
    const text = typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
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
      const rest = this.decoder.end();
      if (rest) this.parser.write(rest);
      this.parser.close();
    } catch (err) {
      if (err instanceof ImportRejection) throw err;
      this.fail(`malformed XML: ${(err as Error).message}`);
    }
    if (!this.root) this.fail('empty file: no XML root element');
    return this.root!;
  }
}

/** Parses a whole buffer (tests, small inputs). */
export function parseXmlTree(xml: Buffer | string, keep: (ns: string) => boolean, limits?: XmlTreeLimits): XmlElement {
  const b = new XmlTreeBuilder(keep, limits);
  b.write(xml);
  return b.end();
}

export const childrenOf = (el: XmlElement, ns: string, name: string): XmlElement[] => el.children.filter((c) => c.ns === ns && c.name === name);
export const childOf = (el: XmlElement, ns: string, name: string): XmlElement | undefined => el.children.find((c) => c.ns === ns && c.name === name);
