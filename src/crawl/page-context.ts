/**
 * The page hook at work: the page it sees (a {@link PageContext} whose text,
 * links and document are read only when asked), what it gave back, read, and
 * a hook's promise as a stage waits for it.
 *
 * @module
 */
import type { Document } from "domhandler";
import { decodeText } from "./body.js";
import { documentLinks, parseDocument } from "./document.js";
import { pageLinks, parseLinks } from "./links.js";
import type { PageBody } from "./page.js";
import type { Item, PageContext, PageResult } from "./page-hook.js";

/**
 * One page as the `onPage` hook sees it. The text is decoded the first time
 * it is read; the links and the document likewise, each once, and from one
 * parse: when the hook asked for `document()` before reading `links`, the
 * links come from that tree ({@link documentLinks}), else from the tokenizer
 * ({@link parseLinks}), as a crawl without a hook reads them; the crawl reads
 * `links` after the hook, and gets the same list. A hook that reads `links`
 * and then asks for `document()` pays for both passes.
 *
 * @remarks A page body is decoded and searched for links only when it is a
 * `200` `text/html` or `application/xml` (as without a hook): for any other
 * page `links` is empty, while `text` and `document()` read whatever came.
 */
export class HookPage implements PageContext {
  readonly finalUrl: string;
  readonly bytes: Uint8Array;
  private decoded: string | null = null;
  private tree: Document | null = null;
  private found: readonly string[] | null = null;

  constructor(
    readonly url: string,
    readonly status: number,
    readonly headers: Readonly<Record<string, string>>,
    readonly contentType: string | null,
    readonly depth: number,
    private readonly body: PageBody,
    private readonly linkAttributes: readonly string[] = [],
  ) {
    this.finalUrl = url;
    this.bytes = body.bytes;
  }

  /** The body decoded in its charset, once. @throws FetchFailure `BodyTooLarge` for a text longer than a string holds. */
  get text(): string {
    this.decoded ??= decodeText(this.body.bytes, this.body.encoding);
    return this.decoded;
  }

  /** The page's links, read once: from the document when it was parsed, else with the tokenizer. */
  get links(): readonly string[] {
    this.found ??= Object.freeze(!this.body.linkBody ? [] : this.tree !== null ? documentLinks(this.tree, this.url, this.linkAttributes) : parseLinks(this.text, this.url, this.linkAttributes));
    return this.found;
  }

  /** The page parsed into a domhandler tree, once (src/crawl/document.ts). */
  document(): Document {
    this.tree ??= parseDocument(this.text);
    return this.tree;
  }
}

/** What a hook gave back, read: its items and, when it named them, the links to follow instead of the page's. */
export interface HookAnswer {
  readonly items: readonly Item[];
  /** The links to follow, resolved against the page URL; null: the page's own. */
  readonly links: string[] | null;
}

/**
 * Reads what a hook returned (or its promise fulfilled with): nothing, an
 * array of items, or `{ items, links }`; `links` are resolved against the
 * page URL, kept when http(s), without fragment or `user:pass@`, each once.
 *
 * @throws TypeError for anything else (an item that is not an object, links
 * that are not strings), saying what was wrong: the page's `ExtractError`.
 */
export function readAnswer(result: PageResult, pageUrl: string): HookAnswer {
  if (result === undefined || result === null) return { items: [], links: null };
  if (Array.isArray(result)) return { items: checkedItems(result), links: null };
  if (typeof result !== "object") throw extractFailure(`onPage returned ${typeof result}; expected items, { items, links }, or nothing`);
  const { items = [], links } = result as { items?: unknown; links?: unknown };
  if (!Array.isArray(items)) throw extractFailure("onPage returned `items` that is not an array");
  if (links === undefined) return { items: checkedItems(items), links: null };
  if (!Array.isArray(links) || !links.every((link) => typeof link === "string")) throw extractFailure("onPage returned `links` that is not an array of strings");
  return { items: checkedItems(items), links: pageLinks(links, null, pageUrl) };
}

function checkedItems(items: readonly unknown[]): readonly Item[] {
  for (const item of items) {
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw extractFailure(`onPage returned an item that is not an object: ${String(item)}`);
  }
  return items as readonly Item[];
}

/** What a hook threw or rejected with, in words: an `ExtractError` record's `detail`. */
export function extractDetail(reason: unknown): string {
  if (reason instanceof Error) return reason.message;
  try {
    return String(reason);
  } catch {
    return "onPage threw a value that has no string form";
  }
}

/** The error of a hook's answer the crawl cannot read. */
function extractFailure(message: string): TypeError {
  return new TypeError(message);
}

/** Whether a hook's return value is a promise (any thenable): then the stage waits for it. */
export function isThenable(value: unknown): value is PromiseLike<PageResult> {
  return (typeof value === "object" || typeof value === "function") && value !== null && typeof (value as { then?: unknown }).then === "function";
}

/** How a hook's promise settled: fulfilled with its result, or rejected with its reason. */
export type HookSettled = { readonly value: PageResult } | { readonly error: unknown };

/**
 * A hook's promise as the crawl core hands it to a stage (a `hook` step),
 * for the stage to wait on in its own style and hand back, settled, to
 * `CrawlCore.hooked()`: stage 1 registers a callback ({@link whenSettled}),
 * stage 2 wraps it in a Future of its own (through the same callback), stage
 * 3 awaits {@link settled}. A stage that gives up on it (its crawl stopped)
 * calls {@link cancel}: a callback registered is then never called.
 *
 * @remarks The one place the stages' waiting meets a Promise they did not
 * make: stages 1 and 2 call no Promise method, so the `.then` is here.
 */
export class PendingHook {
  private cancelled = false;

  constructor(private readonly result: PromiseLike<PageResult>) {}

  /** Calls `settled` once the hook's promise settles (unless cancelled first); returns this, to be cancelled. */
  whenSettled(settled: (outcome: HookSettled) => void): this {
    const hook = this;
    this.result.then(
      function fulfilled(value) {
        if (!hook.cancelled) settled({ value });
      },
      function rejected(error: unknown) {
        if (!hook.cancelled) settled({ error });
      },
    );
    return this;
  }

  /** The hook's promise, settled: never rejects. */
  settled(): Promise<HookSettled> {
    const hook = this;
    return new Promise(function waitFor(resolve) { hook.whenSettled(resolve); });
  }

  /** The stage gave up waiting: a callback registered is not called. */
  cancel(): void {
    this.cancelled = true;
  }
}
