import { describe, expect, it } from "vitest";
import type { CrawlOptions } from "../../src/crawl/options.js";
import { readFileSync } from "node:fs";
import { DEFAULT_OPTIONS, resolveOptions, retryDelay, VERSION } from "../../src/crawl/options.js";

/** The private CA of the TLS fixtures (test/fixtures/tls/README.md). */
const CA_PEM = readFileSync(new URL("../fixtures/tls/ca.pem", import.meta.url), "utf8");

/** Calls resolveOptions with a value the types would refuse, as a JavaScript caller could. */
function resolveUnchecked(options: unknown): ReturnType<typeof resolveOptions> {
  return resolveOptions(options as CrawlOptions);
}

describe("resolveOptions", () => {
  it("fills in every default when given nothing", () => {
    expect(resolveOptions()).toEqual({ ...DEFAULT_OPTIONS, seed: expect.any(Number) });
    expect(resolveOptions({})).toEqual({
      maxRedirect: 10,
      maxTries: 4,
      maxTasks: 10,
      exclude: null,
      include: null,
      noParent: false,
      maxDepth: Infinity,
      strict: true,
      allowedDomains: null,
      timeoutMs: 120_000,
      idleTimeoutMs: 30_000,
      retryDelayMs: 500,
      retryHttpCodes: [408, 429, 500, 502, 503, 504, 522, 524],
      maxPages: Infinity,
      maxBodyBytes: 10 * 1024 * 1024,
      skipNonHtml: false,
      userAgent: `coroutine-crawler/${VERSION}`,
      headers: {},
      cookies: null,
      cookieFile: null,
      ca: null,
      rejectUnauthorized: true,
      robots: false,
      sitemaps: false,
      maxPerHost: Infinity,
      delayMs: 0,
      delayJitter: 0,
      maxCrawlDelayMs: 30_000,
      maxRetryAfterMs: 60_000,
      linkAttributes: [],
      onRecord: null,
      onPage: null,
      onItem: null,
      keepRecords: true,
      signal: null,
      finishSignal: null,
      trace: null,
      state: null,
      seed: expect.any(Number),
      network: null,
      proxy: null,
      noProxy: [],
    });
  });

  it("checks allowedDomains: domains lowercased and in punycode, no URL, port or empty list", () => {
    expect(resolveOptions({ allowedDomains: ["Example.COM", ".b.example", "bücher.de", "example.com"] }).allowedDomains).toEqual(["example.com", "b.example", "xn--bcher-kva.de"]);
    for (const bad of [[], "example.com", [1], ["http://example.com/"], ["example.com:8080"], ["example.com/docs"], [""], ["a b"]]) {
      expect(() => resolveOptions({ allowedDomains: bad as string[] })).toThrow(/`allowedDomains`/);
    }
  });

  it("draws a seed for each crawl that gives none, and keeps one given", () => {
    const drawn = new Set(Array.from({ length: 20 }, () => resolveOptions().seed));
    expect(drawn.size).toBeGreaterThan(1); // 20 draws of 2^32 values: equal only by a fluke of about 1 in 10^7.
    for (const seed of drawn) expect(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32).toBe(true);
    expect(resolveOptions({ seed: 0 }).seed).toBe(0);
    expect(resolveOptions({ seed: 2 ** 32 - 1 }).seed).toBe(2 ** 32 - 1);
  });

  it.each([-1, 1.5, 2 ** 32, Number.NaN, "7"])("refuses the seed %s, naming the option", (seed) => {
    expect(() => resolveUnchecked({ seed })).toThrow(/^Expected `seed` to be an integer from 0 to 4294967295, got /);
  });

  it("takes a network with a connect() method and refuses anything else, naming `network`", () => {
    const network = { connect: (): never => { throw new Error("not called"); } };
    expect(resolveOptions({ network }).network).toBe(network);
    expect(resolveOptions({ network: null }).network).toBeNull();
    expect(() => resolveUnchecked({ network: {} })).toThrow(/`network`/);
    expect(() => resolveUnchecked({ network: "localhost" })).toThrow(TypeError);
  });

  it("treats an option set to undefined as absent", () => {
    expect(resolveOptions({ maxTasks: undefined, exclude: undefined, seed: 1 })).toEqual({ ...DEFAULT_OPTIONS, seed: 1 });
  });

  it("keeps the values it is given", () => {
    const onRecord = (): void => {};
    const trace = (): void => {};
    const signal = new AbortController().signal;
    const resolved = resolveOptions({
      maxRedirect: 0,
      maxTries: 1,
      maxTasks: 100,
      strict: false,
      timeoutMs: 0.5,
      maxPages: 7,
      maxBodyBytes: 1,
      userAgent: "bot/2.0 (+http://example.com/bot)",
      onRecord,
      trace,
      signal,
    });
    expect(resolved).toMatchObject({ maxRedirect: 0, maxTries: 1, maxTasks: 100, strict: false, timeoutMs: 0.5 });
    expect(resolved).toMatchObject({ maxPages: 7, maxBodyBytes: 1, userAgent: "bot/2.0 (+http://example.com/bot)" });
    expect(resolved.onRecord).toBe(onRecord);
    expect(resolved.trace).toBe(trace);
    expect(resolved.signal).toBe(signal);
  });

  it("accepts Infinity for maxPages, maxPerHost and maxDepth only", () => {
    expect(resolveOptions({ maxPages: Infinity }).maxPages).toBe(Infinity);
    expect(resolveOptions({ maxPerHost: Infinity }).maxPerHost).toBe(Infinity);
    expect(resolveOptions({ maxDepth: Infinity }).maxDepth).toBe(Infinity);
    expect(() => resolveOptions({ maxTasks: Infinity })).toThrow("Expected `maxTasks` to be an integer from 1 and up, got Infinity");
  });

  it.each([
    ["maxRedirect", -1, "Expected `maxRedirect` to be an integer from 0 and up, got -1"],
    ["maxRedirect", 1.5, "Expected `maxRedirect` to be an integer from 0 and up, got 1.5"],
    ["maxTries", 0, "Expected `maxTries` to be an integer from 1 and up, got 0"],
    ["maxTries", "4", 'Expected `maxTries` to be an integer from 1 and up, got "4"'],
    ["maxTasks", 0, "Expected `maxTasks` to be an integer from 1 and up, got 0"],
    ["maxTasks", Number.NaN, "Expected `maxTasks` to be an integer from 1 and up, got NaN"],
    ["maxTasks", null, "Expected `maxTasks` to be an integer from 1 and up, got null"],
    ["maxTasks", 2 ** 53, "Expected `maxTasks` to be an integer from 1 and up, got 9007199254740992"],
    ["maxPages", 0, "Expected `maxPages` to be an integer from 1 and up, got 0"],
    ["maxBodyBytes", 0, "Expected `maxBodyBytes` to be an integer from 1 and up, got 0"],
    ["maxBodyBytes", -Infinity, "Expected `maxBodyBytes` to be an integer from 1 and up, got -Infinity"],
    ["timeoutMs", 0, "Expected `timeoutMs` to be a number above 0 and at most 2147483647, got 0"],
    ["timeoutMs", -5, "Expected `timeoutMs` to be a number above 0 and at most 2147483647, got -5"],
    ["timeoutMs", Infinity, "Expected `timeoutMs` to be a number above 0 and at most 2147483647, got Infinity"],
    ["timeoutMs", 2 ** 31, "Expected `timeoutMs` to be a number above 0 and at most 2147483647, got 2147483648"],
    ["timeoutMs", Number.NaN, "Expected `timeoutMs` to be a number above 0 and at most 2147483647, got NaN"],
    ["strict", "yes", 'Expected `strict` to be a boolean, got "yes"'],
    ["strict", 1, "Expected `strict` to be a boolean, got 1"],
    ["exclude", 42, "Expected `exclude` to be a string or RegExp, got 42"],
    ["userAgent", "", 'Expected `userAgent` to be a non-empty line of printable ASCII, got ""'],
    ["userAgent", "   ", 'Expected `userAgent` to be a non-empty line of printable ASCII, got "   "'],
    ["userAgent", "bot\r\nX-Evil: 1", 'Expected `userAgent` to be a non-empty line of printable ASCII, got "bot\\r\\nX-Evil: 1"'],
    ["userAgent", "bot\u00e9", 'Expected `userAgent` to be a non-empty line of printable ASCII, got "boté"'],
    ["userAgent", 7, "Expected `userAgent` to be a non-empty line of printable ASCII, got 7"],
    ["onRecord", "log", 'Expected `onRecord` to be a function, got "log"'],
    ["onPage", "a.title", 'Expected `onPage` to be a function, got "a.title"'],
    ["onItem", {}, "Expected `onItem` to be a function, got [object Object]"],
    ["trace", {}, "Expected `trace` to be a function, got [object Object]"],
    ["signal", { aborted: false }, "Expected `signal` to be an AbortSignal, got [object Object]"],
    ["idleTimeoutMs", 0, "Expected `idleTimeoutMs` to be a number above 0 and at most 2147483647, got 0"],
    ["idleTimeoutMs", "30", 'Expected `idleTimeoutMs` to be a number above 0 and at most 2147483647, got "30"'],
    ["idleTimeoutMs", 2 ** 31, "Expected `idleTimeoutMs` to be a number above 0 and at most 2147483647, got 2147483648"],
    ["retryDelayMs", -1, "Expected `retryDelayMs` to be a number from 0 to 2147483647, got -1"],
    ["retryDelayMs", Number.NaN, "Expected `retryDelayMs` to be a number from 0 to 2147483647, got NaN"],
    ["retryDelayMs", Infinity, "Expected `retryDelayMs` to be a number from 0 to 2147483647, got Infinity"],
    ["rejectUnauthorized", "false", 'Expected `rejectUnauthorized` to be a boolean, got "false"'],
    ["rejectUnauthorized", 0, "Expected `rejectUnauthorized` to be a boolean, got 0"],
    ["ca", 42, "Expected `ca` to be PEM certificates, as a string or a Buffer, got 42"],
    ["ca", "", 'Expected `ca` to be PEM certificates, as a string or a Buffer, got ""'],
    ["ca", "test/fixtures/tls/ca.pem", 'Expected `ca` to be PEM certificates, as a string or a Buffer, got "test/fixtures/tls/ca.pem"'],
    ["ca", Buffer.from("garbage"), "Expected `ca` to be PEM certificates, as a string or a Buffer, got a Buffer of 7 bytes"],
    ["robots", "yes", 'Expected `robots` to be a boolean, got "yes"'],
    ["sitemaps", 1, "Expected `sitemaps` to be a boolean, got 1"],
    ["keepRecords", 0, "Expected `keepRecords` to be a boolean, got 0"],
    ["state", "", 'Expected `state` to be a directory path, got ""'],
    ["state", 1, "Expected `state` to be a directory path, got 1"],
    ["maxPerHost", 0, "Expected `maxPerHost` to be an integer from 1 and up, got 0"],
    ["maxPerHost", 1.5, "Expected `maxPerHost` to be an integer from 1 and up, got 1.5"],
    ["delayMs", -1, "Expected `delayMs` to be a number from 0 to 2147483647, got -1"],
    ["delayMs", "100", 'Expected `delayMs` to be a number from 0 to 2147483647, got "100"'],
    ["delayJitter", 1.5, "Expected `delayJitter` to be a number from 0 to 1, got 1.5"],
    ["delayJitter", -0.1, "Expected `delayJitter` to be a number from 0 to 1, got -0.1"],
    ["maxCrawlDelayMs", Number.NaN, "Expected `maxCrawlDelayMs` to be a number from 0 to 2147483647, got NaN"],
    ["maxRetryAfterMs", -5, "Expected `maxRetryAfterMs` to be a number from 0 to 2147483647, got -5"],
    ["maxDepth", -1, "Expected `maxDepth` to be an integer from 0 and up, got -1"],
    ["maxDepth", 1.5, "Expected `maxDepth` to be an integer from 0 and up, got 1.5"],
    ["maxDepth", "2", 'Expected `maxDepth` to be an integer from 0 and up, got "2"'],
    ["include", 42, "Expected `include` to be a string or RegExp, got 42"],
    ["include", "([a-z", 'Expected `include` to be a valid regular expression, got "([a-z"'],
    ["noParent", "yes", 'Expected `noParent` to be a boolean, got "yes"'],
    ["skipNonHtml", 1, "Expected `skipNonHtml` to be a boolean, got 1"],
    ["headers", "X-A: 1", 'Expected `headers` to be an object of header names and values, got "X-A: 1"'],
    ["headers", null, "Expected `headers` to be an object of header names and values, got null"],
    ["headers", [["X-A", "1"]], "Expected `headers` to be an object of header names and values, got X-A,1"],
    ["headers", { "X A": "1" }, 'Expected `headers` to have names that are HTTP tokens, got "X A"'],
    ["headers", { "X-A:": "1" }, 'Expected `headers` to have names that are HTTP tokens, got "X-A:"'],
    ["headers", { "": "1" }, 'Expected `headers` to have names that are HTTP tokens, got ""'],
    ["headers", { "X-A": "1\r\nX-Evil: 2" }, 'Expected `headers` to have values of printable ASCII on one line, got "1\\r\\nX-Evil: 2" for X-A'],
    ["headers", { "X-A": "a\u0000b" }, 'Expected `headers` to have values of printable ASCII on one line, got "a\\u0000b" for X-A'],
    ["headers", { "X-A": "caf\u00e9" }, 'Expected `headers` to have values of printable ASCII on one line, got "café" for X-A'],
    ["headers", { "X-A": 1 }, "Expected `headers` to have values of printable ASCII on one line, got 1 for X-A"],
    ["headers", { "X-A": "1", "x-a": "2" }, 'Expected `headers` to name each header once, got "X-A" and "x-a"'],
    ["headers", { "User-Agent": " " }, 'Expected `headers` to be a non-empty line of printable ASCII, got ""'],
    ["retryHttpCodes", 503, "Expected `retryHttpCodes` to be an array of HTTP statuses (integers from 100 to 599), got 503"],
    ["retryHttpCodes", [500, 600], "Expected `retryHttpCodes` to be an array of HTTP statuses (integers from 100 to 599), got 500,600"],
    ["retryHttpCodes", ["500"], "Expected `retryHttpCodes` to be an array of HTTP statuses (integers from 100 to 599), got 500"],
    ["retryHttpCodes", [500.5], "Expected `retryHttpCodes` to be an array of HTTP statuses (integers from 100 to 599), got 500.5"],
  ])("throws a TypeError naming %s for the bad value %o", (name, value, message) => {
    expect(() => resolveUnchecked({ [name]: value })).toThrow(new TypeError(message));
  });

  it("lowercases linkAttributes and drops repeats, and refuses what is no attribute name, naming `linkAttributes`", () => {
    expect(resolveOptions({ linkAttributes: ["Data-Href", "data-href", "src"] }).linkAttributes).toEqual(["data-href", "src"]);
    for (const bad of ["data-href", [""], ["a b"], ["x=y"], [1]]) {
      expect(() => resolveOptions({ linkAttributes: bad as string[] })).toThrow(/`linkAttributes`/);
    }
  });

  it("throws a TypeError for an unknown option", () => {
    expect(() => resolveUnchecked({ maxTask: 3 })).toThrow(new TypeError("Unknown option `maxTask`"));
  });

  it("throws a TypeError when the options are not an object", () => {
    expect(() => resolveUnchecked(null)).toThrow(new TypeError("Expected options to be an object, got null"));
    expect(() => resolveUnchecked(5)).toThrow(new TypeError("Expected options to be an object, got 5"));
  });

  it("compiles a string exclude as a regular expression", () => {
    const { exclude } = resolveOptions({ exclude: "\\.(pdf|zip)$" });
    expect(exclude).toBeInstanceOf(RegExp);
    expect(exclude?.test("http://x.test/a.pdf")).toBe(true);
    expect(exclude?.test("http://x.test/a.html")).toBe(false);
  });

  it("throws a TypeError naming exclude for a string that is not a valid regular expression", () => {
    const attempt = (): unknown => resolveOptions({ exclude: "([a-z" });
    expect(attempt).toThrow(new TypeError('Expected `exclude` to be a valid regular expression, got "([a-z"'));
    expect(attempt).toThrow(expect.objectContaining({ cause: expect.any(SyntaxError) }));
  });

  it("strips the g and y flags from an exclude RegExp and keeps the others", () => {
    const { exclude } = resolveOptions({ exclude: /private/giy });
    expect(exclude?.flags).toBe("i");
    expect(exclude?.source).toBe("private");
  });

  it("gives the same answer for every URL with an exclude that had the g flag", () => {
    const pattern = /skip/g;
    const { exclude } = resolveOptions({ exclude: pattern });
    const answers = [1, 2, 3].map(() => exclude?.test("http://x.test/skip"));
    expect(answers).toEqual([true, true, true]);
  });

  it("does not share the caller's RegExp", () => {
    const pattern = /a/;
    expect(resolveOptions({ exclude: pattern }).exclude).not.toBe(pattern);
  });

  it("takes PEM certificates as a string or a Buffer for ca, and a boolean for rejectUnauthorized", () => {
    expect(resolveOptions({ ca: CA_PEM }).ca).toBe(CA_PEM);
    const buffer = Buffer.from(CA_PEM);
    expect(resolveOptions({ ca: buffer, rejectUnauthorized: false })).toMatchObject({ ca: buffer, rejectUnauthorized: false });
  });

  it("throws a TypeError naming ca for a PEM block that does not parse, or an array of certificates", () => {
    const broken = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
    expect(() => resolveOptions({ ca: broken })).toThrow(/^Expected `ca` to be PEM certificates, as a string or a Buffer, got "-----BEGIN CERTIFICATE-----\\nnot base64/);
    expect(() => resolveUnchecked({ ca: [CA_PEM] })).toThrow(/^Expected `ca` to be PEM certificates/);
  });

  it("takes the politeness options as given", () => {
    expect(resolveOptions({ robots: true, maxPerHost: 2, delayMs: 250, delayJitter: 0.5, maxCrawlDelayMs: 5000, maxRetryAfterMs: 0 })).toMatchObject({
      robots: true,
      maxPerHost: 2,
      delayMs: 250,
      delayJitter: 0.5,
      maxCrawlDelayMs: 5000,
      maxRetryAfterMs: 0,
    });
  });

  it("takes an idle timeout and a retry delay, 0 included for the delay", () => {
    expect(resolveOptions({ idleTimeoutMs: 250, retryDelayMs: 0 })).toMatchObject({ idleTimeoutMs: 250, retryDelayMs: 0 });
  });

  it("compiles a string include as a regular expression, without the g and y flags", () => {
    expect(resolveOptions({ include: "^http://x\\.test/docs/" }).include?.test("http://x.test/docs/a")).toBe(true);
    expect(resolveOptions({ include: /docs/gi }).include?.flags).toBe("i");
  });

  it("takes noParent, maxDepth and skipNonHtml as given, 0 included for maxDepth", () => {
    expect(resolveOptions({ noParent: true, maxDepth: 0, skipNonHtml: true })).toMatchObject({ noParent: true, maxDepth: 0, skipNonHtml: true });
  });

  describe("headers", () => {
    it("keeps the names as given and the values without spaces around them, frozen", () => {
      const { headers } = resolveOptions({ headers: { "X-Api-Key": "  k1 ", accept: "text/html", "X-Empty": "" } });
      expect(headers).toEqual({ "X-Api-Key": "k1", accept: "text/html", "X-Empty": "" });
      expect(Object.isFrozen(headers)).toBe(true);
    });

    it.each(["Host", "content-length", "Transfer-Encoding", "Connection", "Keep-Alive", "Upgrade", "TE", "Trailer", "Proxy-Connection", "Expect", "Accept-Encoding"])(
      "refuses %s, which the crawler sets itself",
      (name) => {
        expect(() => resolveOptions({ headers: { [name]: "x" } })).toThrow(new TypeError(`Expected \`headers\` not to set ${name}, which the crawler sets itself`));
      },
    );

    it("takes a User-Agent header as userAgent, in any case, and refuses it beside userAgent", () => {
      expect(resolveOptions({ headers: { "user-agent": " mybot/1 ", "X-A": "1" } })).toMatchObject({ userAgent: "mybot/1", headers: { "X-A": "1" } });
      expect(() => resolveOptions({ headers: { "User-Agent": "a/1" }, userAgent: "b/1" })).toThrow(
        new TypeError("Expected `headers` not to set User-Agent when `userAgent` is given: give it once"),
      );
    });

    it("does not keep the caller's object", () => {
      const given = { "X-A": "1" };
      const { headers } = resolveOptions({ headers: given });
      given["X-A"] = "2";
      expect(headers).toEqual({ "X-A": "1" });
    });
  });

  it("keeps DEFAULT_OPTIONS frozen", () => {
    expect(Object.isFrozen(DEFAULT_OPTIONS)).toBe(true);
  });
});

describe("retryDelay", () => {
  it("doubles the pause after each failed attempt", () => {
    expect([1, 2, 3, 4].map((failed) => retryDelay(500, failed))).toEqual([500, 1000, 2000, 4000]);
  });

  it("caps the pause at 30 s, or at retryDelayMs when that is longer", () => {
    expect(retryDelay(500, 7)).toBe(30_000);
    expect(retryDelay(500, 2000)).toBe(30_000);
    expect(retryDelay(60_000, 3)).toBe(60_000);
  });

  it("is 0 after any number of failures when retryDelayMs is 0", () => {
    expect([1, 5, 2000].map((failed) => retryDelay(0, failed))).toEqual([0, 0, 0]);
  });
});
