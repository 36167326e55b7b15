/**
 * The link and sitemap readers load htmlparser2's Tokenizer and Parser from
 * their own files (src/crawl/htmlparser2-parts.ts), not from the package's
 * index: they must be the very classes the index exports, or an htmlparser2
 * release that moved or renamed a file would hand the crawl something else.
 */
import * as htmlparser2 from "htmlparser2";
import { describe, expect, it } from "vitest";
import { Tokenizer, domHandlerClass, xmlParser } from "../../src/crawl/htmlparser2-parts.js";

describe("htmlparser2's parts as the crawl loads them", () => {
  it("are the Tokenizer and the Parser the package's index exports", () => {
    expect(Tokenizer).toBe(htmlparser2.Tokenizer);
    expect(xmlParser()).toBe(htmlparser2.Parser);
  });
});

describe("domhandler's DomHandler as a page hook's document loads it", () => {
  it("is the class the package exports", async () => {
    const domhandler = await import("domhandler");
    expect(domHandlerClass()).toBe(domhandler.DomHandler);
  });
});
