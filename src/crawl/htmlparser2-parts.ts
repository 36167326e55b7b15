/**
 * htmlparser2's `Tokenizer` and `Parser`, each loaded from its own file of
 * the package rather than from its index: the index also loads domhandler,
 * domutils, dom-serializer and the entity encoder, 28 modules where the
 * Tokenizer needs 7, and more than half of what starting a crawl cost in
 * stages 1 and 2 (docs/benchmarks.md, start-up). The package's `exports` map
 * names only its index, so the two files are found beside it; a test checks
 * that each is the very class the index exports. The `crawl` command's
 * bundle imports the Tokenizer's file instead (scripts/build-bin.mjs), which
 * the line that loads it must keep its form for.
 *
 * @module
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { DomHandler as DomHandlerClass } from "domhandler";
import type { Parser as HtmlParser, Tokenizer as HtmlTokenizer } from "htmlparser2";

const requireFile = createRequire(import.meta.url);
/** The folder of htmlparser2's compiled files, where its index resolves. */
function folder(): string {
  return dirname(requireFile.resolve("htmlparser2"));
}

/** htmlparser2's `Tokenizer` (the file's default export): every page's links are read with it. */
export const Tokenizer = (requireFile(join(folder(), "Tokenizer.js")) as { default: typeof HtmlTokenizer }).default;

let parser: typeof HtmlParser | null = null;

/** htmlparser2's `Parser`, loaded the first time a sitemap is read, or a page hook asks for a document. */
export function xmlParser(): typeof HtmlParser {
  parser ??= (requireFile(join(folder(), "Parser.js")) as { Parser: typeof HtmlParser }).Parser;
  return parser;
}

let domHandler: typeof DomHandlerClass | null = null;

/**
 * domhandler's `DomHandler`, which builds the tree css-select and domutils
 * query: loaded the first time a page hook asks for a document, so that a
 * crawl without one never loads it.
 */
export function domHandlerClass(): typeof DomHandlerClass {
  domHandler ??= (requireFile("domhandler") as { DomHandler: typeof DomHandlerClass }).DomHandler;
  return domHandler;
}
