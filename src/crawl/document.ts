/**
 * A page parsed into a tree, for a page hook that asks for its document
 * (`PageContext.document()`), and the page's links read from that tree, so
 * that a page is parsed once.
 *
 * @module
 */
import type { ChildNode, Document, Element } from "domhandler";
import { domHandlerClass, xmlParser } from "./htmlparser2-parts.js";
import { pageLinks } from "./links.js";

/**
 * Parses a page's text with htmlparser2's `Parser` into a domhandler tree
 * (a `Document`), as css-select and domutils query it: HTML rules (tag and
 * attribute names lowercased, entities decoded, `<script>`, `<style>`,
 * `<title>` and `<textarea>` read as text except inside `<svg>` and `<math>`),
 * the settings {@link parseLinks} gives the tokenizer. Never throws on bad
 * markup: the parser mends it as it goes.
 *
 * @param html - The decoded text of the page.
 * @remarks The Parser keeps its open elements newest-first
 * (`this.stack.unshift(name)`, htmlparser2 12.0.0): a page of a few hundred
 * thousand unclosed elements costs seconds, as src/crawl/links.ts says. That
 * is why the crawl reads links with the tokenizer alone, and parses a tree
 * only when a hook asks for one.
 */
export function parseDocument(html: string): Document {
  const DomHandler = domHandlerClass();
  const Parser = xmlParser();
  const handler = new DomHandler();
  new Parser(handler, { xmlMode: false, decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true }).end(html);
  return handler.root;
}

/**
 * The links of a parsed page, the very list {@link parseLinks} gives for the
 * text it was parsed from: the href of every `<a>` and `<area>` element in
 * document order (a pre-order walk of the tree is the order their start tags
 * came in), the first `<base>` with an href as the base, then resolved alike
 * ({@link pageLinks}). The parser already read `<script>` and `<style>` as
 * text outside svg and math, so the walk needs no rule of its own.
 *
 * The walk keeps its own stack, not the call stack: a page of 100,000 nested
 * elements is a deep tree.
 *
 * @param document - The tree {@link parseDocument} built.
 * @param pageUrl - The absolute URL the page was fetched from.
 * @param attributes - More attributes links are taken from, on any element (the option `linkAttributes`, lowercased).
 * @remarks On markup that closes what it opens, the two agree (a property
 * test holds them to it). Where svg or math is mis-nested
 * (`<div><svg></div><style>…`), the Parser closes the svg at the `</div>`
 * and the tokenizer's reader only at `</svg>` (ForeignContent in
 * src/crawl/links.ts): there the tree's answer is the Parser's.
 */
export function documentLinks(document: Document, pageUrl: string, attributes: readonly string[] = []): string[] {
  const extra: ReadonlySet<string> = new Set(attributes);
  const hrefs: string[] = [];
  let baseHref: string | null = null;
  const stack: ChildNode[] = [];
  for (let i = document.children.length - 1; i >= 0; i--) stack.push(document.children[i] as ChildNode);
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (!("children" in node)) continue; // Text, a comment, a declaration: no links, no children.
    if ("attribs" in node) {
      if (node.name === "base" && baseHref === null && node.attribs["href"] !== undefined) baseHref = node.attribs["href"];
      elementLinks(node, extra, hrefs);
    }
    const { children } = node;
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as ChildNode);
  }
  return pageLinks(hrefs, baseHref, pageUrl);
}

/**
 * Pushes one element's links onto `hrefs`, in attribute order, as the
 * tokenizer's reader takes them (src/crawl/links.ts): an `<a>`'s or
 * `<area>`'s href, and the value of each `extra` attribute (the option
 * `linkAttributes`, lowercased) on any element; a `<base>`'s href is never a
 * link. domhandler keeps the first of a repeated attribute, as the reader does.
 */
export function elementLinks(element: Element, extra: ReadonlySet<string>, hrefs: string[]): void {
  const tag = element.name;
  const anchor = tag === "a" || tag === "area";
  if (!anchor && extra.size === 0) return;
  for (const [name, value] of Object.entries(element.attribs)) {
    if (name === "href" ? anchor || (extra.has(name) && tag !== "base") : extra.has(name)) hrefs.push(value);
  }
}
