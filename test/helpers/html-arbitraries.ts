/**
 * Generated HTML for the property tests of the link readers: the tokenizer's
 * (`parseLinks`, test/crawl/links.property.test.ts) and the tree walk's
 * (`documentLinks`, test/crawl/document.property.test.ts), held to the same answers.
 */
import fc from "fast-check";

/** An href as pages write them: absolute, relative, odd schemes, junk. */
export const href = fc.oneof(
  fc.webUrl({ withFragments: true, withQueryParameters: true }),
  fc.constantFrom("", "#", "#top", "/", "..", "./a", "?q=1", "//other.example/x", " /spaced ", "\n/nl\t"),
  fc.constantFrom("javascript:void(0)", "mailto:a@b.c", "data:,x", "ftp://f.example/", "http://[::1", "http://"),
  fc.constantFrom("http://u:p@h.example/x", "//user@h.example/y", "https://:pw@h.example/"),
  fc.string({ maxLength: 20 }),
);

/** Pieces of HTML, well-formed or not, that a page might contain. */
export const fragment = fc.oneof(
  href.map((value) => `<a href="${value}">`),
  href.map((value) => `<A HREF='${value}'>`),
  href.map((value) => `<area href=${value}>`),
  href.map((value) => `<base href="${value}">`),
  href.map((value) => `<script>"<a href='${value}'>"</script>`),
  href.map((value) => `<style>/* <a href="${value}"> */</style>`),
  fc.constantFrom("</a>", "<p>", "<!--", "-->", "<![CDATA[", "]]>", "&amp;", "&#", "<", ">", '"', "'", "=", "<a", " href"),
  fc.string({ maxLength: 10 }),
);

export const htmlish = fc.array(fragment, { maxLength: 30 }).map((parts) => parts.join(""));

export const pageUrl = fc.oneof(fc.webUrl(), fc.constantFrom("http://example.com/dir/page", "not a url", ""));

/** Escapes a value for a double-quoted attribute, as a page generator would. */
export function attribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
}

/** More of what start tags can look like: odd spacing, repeats, bare and self-closed attributes, entities. */
export const tagFragment = fc.oneof(
  href.map((value) => `<a\nhref = "${value}" href="/second">`),
  href.map((value) => `<a title="x" HrEf="${value}"/>`),
  href.map((value) => `<area shape=rect href=${value} />`),
  href.map((value) => `<a href="${attribute(value)}&amp;x=1&#38;y&lt;">`),
  fc.constantFrom("<a href>", "<base href>", "<a href=>", "<a href=/x&amp", "<a b='>' href=/q>", "<a/href=/s>"),
  fc.constantFrom("<title>", "</title>", "<textarea>", "</textarea>", "<xmp>", "</xmp>", "<iframe>", "</iframe>"),
  fc.constantFrom("<noembed>", "</noembed>", "<noframes>", "<plaintext>", "</script>", "</style>", "<script/>"),
  fc.constantFrom("<p>", "</p>", "<div>", "</div>", "<form>", "</form>", "<li>", "<table><td>", "<br/>", "</br>"),
);

/**
 * Elements that close what they open, with svg and math among them: where htmlparser2's
 * Parser reads `<style>`, `<script>` and `<title>` as markup. (Mis-nested svg is where the
 * two differ: see ForeignContent in links.ts.) No `<p>` or nested `<a>`: the Parser closes
 * those implicitly, so `</p>` may end an svg there; no self-closed island: `<title/>` stays open.
 */
export const { tree } = fc.letrec<{ tree: string; node: string }>((tie) => ({
  tree: fc.array(tie("node"), { maxLength: 5 }).map((nodes) => nodes.join("")),
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.oneof(
      href.map((value) => `<a href="${attribute(value)}">link</a>`),
      href.map((value) => `<area href="${attribute(value)}">`),
      href.map((value) => `<base href="${attribute(value)}">`),
      href.map((value) => `<a href="${attribute(value)}"/>`),
      fc
        .tuple(fc.constantFrom("style", "script", "title", "textarea", "xmp", "iframe", "noembed"), href)
        .map(([name, value]) => `<${name}><a href="${attribute(value)}"></${name}>`),
      fc.constantFrom("<svg/>", "<math/>", "<path/>", "<b/>", "<br>", "text", "<!-- <a href=/c> -->"),
      fc.constantFrom("<![CDATA[<a href=/cdata>]]>", "<plaintext>"),
    ),
    fc
      .tuple(
        fc.constantFrom("svg", "math", "foreignObject", "mi", "mtext", "annotation-xml", "desc", "title", "g", "b", "div"),
        fc.boolean(),
        tie("tree"),
      )
      .map(([name, upper, content]) => {
        const tag = upper ? name.toUpperCase() : name;
        return `<${tag}>${content}</${tag}>`;
      }),
  ),
}));
