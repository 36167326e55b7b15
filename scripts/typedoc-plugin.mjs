// @ts-check
/**
 * A typedoc plugin for the API reference (typedoc.json lists it under "plugin").
 *
 * - Each project document (docs/*.md) is listed under its title, the text of
 *   its first `# ` heading, instead of its file name. The page keeps its file
 *   name in its address (documents/start-here.html): the title is set after
 *   the router has named the pages.
 * - A heading keeps its code words: typedoc builds a heading's anchor and its
 *   "On This Page" entry from the heading's plain text only, so "Big crawls:
 *   `--jsonl`" became "big-crawls" and "`--compare`" an empty entry. The
 *   markdown-it rule below gives each inline code span of a heading its text
 *   as a child token, which typedoc's text extraction reads; the span itself
 *   still renders as <code>.
 */
import { Application, Converter, RendererEvent } from "typedoc";

/** The text of a document's first level-1 heading, backticks dropped, or undefined. */
function titleOf(markdown) {
  const heading = /^# +(.+?) *#* *$/m.exec(markdown.replace(/^```[\s\S]*?^```/gm, ""));
  return heading === null ? undefined : heading[1].replace(/`/g, "");
}

/** @param {import("typedoc").Application} app */
export function load(app) {
  /** @type {Map<import("typedoc").DocumentReflection, string>} */
  const titles = new Map();
  app.converter.on(Converter.EVENT_CREATE_DOCUMENT, (_context, document) => {
    const title = titleOf(document.content.map((part) => part.text).join(""));
    if (title !== undefined) titles.set(document, title);
  });
  app.renderer.on(RendererEvent.BEGIN, () => {
    for (const [document, title] of titles) document.name = title;
  });

  // Set once the options are read: typedoc resets them after loading plugins.
  app.on(Application.EVENT_BOOTSTRAP_END, () => {
    const loader = app.options.getValue("markdownItLoader");
    app.options.setValue("markdownItLoader", (/** @type {any} */ parser) => {
      parser.core.ruler.push("heading_code_text", (/** @type {any} */ state) => {
        state.tokens.forEach((/** @type {any} */ token, /** @type {number} */ index) => {
          if (token.type !== "heading_open") return;
          for (const child of state.tokens[index + 1]?.children ?? []) {
            if (child.type !== "code_inline" || child.children) continue;
            const text = new state.Token("text", "", 0);
            text.content = child.content;
            child.children = [text];
          }
        });
      });
      loader(parser);
    });
  });
}
