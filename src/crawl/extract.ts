/**
 * Page hooks made without code: the CLI's `--extract NAME=SELECTOR` (data
 * from each page by CSS selector) and `--links-in SELECTOR` (follow only the
 * links inside some parts of a page, Scrapy's `restrict_css`), and the
 * composition of several hooks into the one `onPage` a crawl takes. Pure:
 * no I/O, no clock; each hook reads the {@link PageContext} it is given.
 *
 * The selectors are fb55's `css-select`, on the domhandler tree the page's
 * `document()` gives (the libraries cheerio is built on); texts and
 * attributes are read with `domutils`.
 *
 * @module
 */
import { compile, selectAll, selectOne } from "css-select";
import type { AnyNode, Document, Element } from "domhandler";
import { getAttributeValue, textContent } from "domutils";
import { elementLinks } from "./document.js";
import { baseUrl, resolveLinks } from "./links.js";
import type { Item, OnPage, PageContext, PageResult } from "./page-hook.js";

/** A compiled css-select query: true for the elements the selector matches. */
type Query = ReturnType<typeof compile<AnyNode, Element>>;

/** One `--extract NAME=SELECTOR`, read: which value of which matches becomes the item's field `name`. */
export interface ExtractSpec {
  /** The field's name in each item. */
  readonly name: string;
  /** The CSS selector, as given. */
  readonly selector: string;
  /** The attribute read from a match (`SELECTOR@attr`), lowercased; null: its text. */
  readonly attribute: string | null;
  /** True (`SELECTOR[]`): every match's value, as an array; false: the first match's, or null. */
  readonly all: boolean;
  /** The selector, compiled. */
  readonly query: Query;
}

/** A field name: letters, digits, `_`, `-` and `.`; it becomes a JSON key and a CSV column. */
const FIELD_NAME = /^[\w.-]+$/;
/** `@attr` at the end of a selector: an attribute's name as markup writes one. */
const ATTRIBUTE_SUFFIX = /\s*@\s*([A-Za-z_:][\w:.-]*)$/;

/**
 * Reads `NAME=SELECTOR`: the text of the first element SELECTOR matches
 * (whitespace collapsed, trimmed); `SELECTOR@attr`, that element's attribute
 * (as written); `SELECTOR[]`, every match's text as an array;
 * `SELECTOR@attr[]`, every match's attribute (matches without it left out).
 *
 * The name ends at the first `=`, so a selector may hold `=` (`a[rel=next]`);
 * `@attr` and `[]` are read from the end, where a CSS selector cannot have
 * them (a `@` inside an attribute selector's quotes is followed by more).
 *
 * @throws TypeError naming the spec and why: no `=`, an empty or bad name, an
 * empty selector, or one css-select cannot compile (its message quoted:
 * `Unknown pseudo-class :nope`).
 * @example
 * ```ts
 * parseExtractSpec("title=h1");              // the first h1's text
 * parseExtractSpec("next=a[rel=next]@href"); // its href
 * parseExtractSpec("tags=.tag[]");           // every .tag's text
 * ```
 */
export function parseExtractSpec(spec: string): ExtractSpec {
  const equals = spec.indexOf("=");
  if (equals === -1) throw new TypeError(`${JSON.stringify(spec)} is not NAME=SELECTOR: no "="`);
  const name = spec.slice(0, equals).trim();
  if (!FIELD_NAME.test(name)) {
    throw new TypeError(`${JSON.stringify(spec)}: the NAME before "=" must be letters, digits, _, - or . (it names a JSON field and a CSV column), got ${JSON.stringify(name)}`);
  }
  let selector = spec.slice(equals + 1).trim();
  const all = selector.endsWith("[]");
  if (all) selector = selector.slice(0, -2).trimEnd();
  const attribute = ATTRIBUTE_SUFFIX.exec(selector);
  if (attribute !== null) selector = selector.slice(0, attribute.index).trimEnd();
  return { name, selector, attribute: attribute === null ? null : attribute[1].toLowerCase(), all, query: compileSelector(selector, spec) };
}

/**
 * Compiles a CSS selector with css-select, refusing an empty one (which
 * css-select takes, and matches nothing with).
 *
 * @param given - The text to name in the message: the whole spec or flag value.
 * @throws TypeError naming `given` and css-select's reason.
 */
export function compileSelector(selector: string, given: string = selector): Query {
  if (selector.trim() === "") throw new TypeError(`${JSON.stringify(given)}: the SELECTOR is empty`);
  try {
    return compile<AnyNode, Element>(selector);
  } catch (error) {
    throw new TypeError(`${JSON.stringify(given)}: bad CSS selector ${JSON.stringify(selector)} (${error instanceof Error ? error.message.trim() : String(error)})`, { cause: error });
  }
}

/**
 * The hook of `--extract`: one item per page, `{ name: value, … }` with a
 * field for each spec (see {@link parseExtractSpec} for the values).
 *
 * Only a page worth data gives one: a 2xx response in HTML (`text/html`,
 * `application/xhtml+xml`) on which at least one selector matched. Its item
 * then has every field, null (or `[]`) for the selectors that matched
 * nothing, so that every item has the same keys and a CSV the same columns.
 * A page where nothing matched gives no item, as a Scrapy spider yields
 * nothing from a page it finds nothing on: a crawl of a whole site with
 * `--extract price=.price` lists the product pages, not a row of nulls for
 * every other page. An error page (`404`) gives none, as Scrapy does not
 * call `parse` for it (its HttpErrorMiddleware) and crawlee counts it failed.
 *
 * @throws TypeError when two specs have one name.
 */
export function extractHook(specs: readonly ExtractSpec[]): OnPage {
  const names = new Set<string>();
  for (const spec of specs) {
    if (names.has(spec.name)) throw new TypeError(`the name ${JSON.stringify(spec.name)} is given twice: each field needs its own`);
    names.add(spec.name);
  }
  return function extract(page: PageContext): PageResult {
    if (!isHtmlPage(page) || page.status < 200 || page.status > 299) return undefined;
    const document = page.document();
    const item: Item = {};
    let found = false;
    for (const spec of specs) {
      const value = extractValue(spec, document);
      item[spec.name] = value;
      if (Array.isArray(value) ? value.length > 0 : value !== null) found = true;
    }
    return found ? [item] : undefined;
  };
}

/** One spec's value on one document: a string or null, or (`[]`) an array of strings. */
export function extractValue(spec: ExtractSpec, document: Document): string | null | string[] {
  if (spec.all) {
    const values: string[] = [];
    for (const element of selectAll<AnyNode, Element>(spec.query, document)) {
      const value = fieldValue(element, spec.attribute);
      if (value !== null) values.push(value);
    }
    return values;
  }
  if (spec.attribute === null) {
    const element = selectOne<AnyNode, Element>(spec.query, document);
    return element === null ? null : fieldValue(element, null);
  }
  // The first match that has the attribute: `a@href` is the first link's href, past an `<a name>`.
  for (const element of selectAll<AnyNode, Element>(spec.query, document)) {
    const value = fieldValue(element, spec.attribute);
    if (value !== null) return value;
  }
  return null;
}

/** An element's text, whitespace collapsed and trimmed, or its attribute as written (null when it has none). */
function fieldValue(element: Element, attribute: string | null): string | null {
  if (attribute !== null) return getAttributeValue(element, attribute) ?? null;
  return textContent(element).replace(/\s+/g, " ").trim();
}

/** The media types whose pages `--extract` and `--links-in` read as HTML. */
const HTML_TYPES: ReadonlySet<string> = new Set(["text/html", "application/xhtml+xml"]);

function isHtmlPage(page: PageContext): boolean {
  return page.contentType !== null && HTML_TYPES.has(page.contentType);
}

/**
 * The hook of `--links-in SELECTOR` (repeatable): the links followed from a
 * page are only those inside the elements a selector matches (the element
 * itself included), as Scrapy's `LinkExtractor(restrict_css=…)` takes them.
 *
 * The links are the crawl's own: `<a href>` and `<area href>`, and the
 * attributes of `linkAttributes` (`--link-attr`) on any element, in document
 * order, resolved against the page's first `<base href>` (or the page), http(s)
 * only, without fragment or credentials, each once: links.ts's
 * `resolveLinks` and `baseUrl`, the same as every page's links. A region
 * inside another is read once. A page with no matching element follows no
 * link. Pages that are not a `200` in HTML keep the links the crawl found
 * (none for an error page; an XML page's).
 *
 * @param selectors - CSS selectors, any one of which marks a region.
 * @param linkAttributes - More attributes links are taken from (lowercased), as the crawl's option.
 * @throws TypeError naming a selector that does not compile.
 */
export function linksInHook(selectors: readonly string[], linkAttributes: readonly string[] = []): OnPage {
  if (selectors.length === 0) throw new TypeError("linksInHook needs at least one selector");
  const queries = selectors.map((selector) => compileSelector(selector));
  const extra = new Set(linkAttributes.map((name) => name.toLowerCase()));
  return function linksIn(page: PageContext): PageResult {
    if (!isHtmlPage(page) || page.status !== 200) return undefined;
    const document = page.document();
    const base = selectOne<AnyNode, Element>("base[href]", document);
    const hrefs: string[] = [];
    for (const region of regions(queries, document)) collectHrefs(region, extra, hrefs);
    return { links: resolveLinks(hrefs, baseUrl(base === null ? null : (getAttributeValue(base, "href") ?? null), page.url)) };
  };
}

/** The elements any query matches, in document order, without those inside another one. */
function regions(queries: readonly Query[], document: Document): Element[] {
  const matched = new Set<Element>();
  for (const query of queries) for (const element of selectAll<AnyNode, Element>(query, document)) matched.add(element);
  const outer: Element[] = [];
  walk(document, function visit(element) {
    if (!matched.has(element)) return true;
    outer.push(element);
    return false; // Its own links are read from it; no need to look for regions inside.
  });
  return outer;
}

/** Depth-first over the elements under `node`, in document order; `enter` returning false skips an element's children. */
function walk(node: AnyNode, enter: (element: Element) => boolean): void {
  const children = "children" in node ? node.children : [];
  for (const child of children) {
    if (child.type !== "tag" && child.type !== "script" && child.type !== "style") continue;
    const element = child as Element;
    if (enter(element)) walk(element, enter);
  }
}

/** Pushes the hrefs of `region` and everything in it, in document order, as links.ts's tokenizer reads them. */
function collectHrefs(region: Element, extra: ReadonlySet<string>, hrefs: string[]): void {
  elementLinks(region, extra, hrefs);
  walk(region, function visit(element) {
    elementLinks(element, extra, hrefs);
    return true;
  });
}


/**
 * One hook made of several, called in order on each page: their items
 * concatenated, in hook order; the links to follow those of the last hook
 * that gives `links` (none giving them: the crawl's own). Async-capable: when
 * any hook returns a promise, the result is a promise of the whole, the
 * hooks running together; when none does, it is given at once, so a
 * synchronous hook stays synchronous. A hook that throws or rejects fails
 * the whole (the page's record gets the error).
 *
 * @example
 * ```ts
 * const onPage = composeHooks(extractHook([parseExtractSpec("title=h1")]), linksInHook(["nav"]));
 * ```
 */
export function composeHooks(...hooks: readonly OnPage[]): OnPage {
  if (hooks.length === 1) return hooks[0];
  return function composed(page: PageContext) {
    const results = hooks.map((hook) => hook(page));
    if (!results.some(isThenable)) return merged(results as PageResult[]);
    return Promise.all(results).then(merged);
  };
}

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === "object" && value !== null && typeof Reflect.get(value, "then") === "function";
}

/** The hooks' results as one: items in order, the last `links` given. */
function merged(results: readonly PageResult[]): PageResult {
  const items: Item[] = [];
  let links: readonly string[] | undefined;
  for (const result of results) {
    if (result === undefined || result === null) continue;
    if (Array.isArray(result)) {
      items.push(...(result as readonly Item[]));
      continue;
    }
    const { items: given, links: follow } = result as { readonly items?: readonly Item[]; readonly links?: readonly string[] };
    if (given !== undefined) items.push(...given);
    if (follow !== undefined) links = follow;
  }
  return links === undefined ? items : { items, links };
}
