import { Buffer } from "node:buffer";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import type { FetchError } from "../../src/kernel/errors.js";
import type { HttpResponse } from "../../src/http/parser.js";
import { resolveOptions, type CrawlOptions } from "../../src/crawl/options.js";
import { ROBOTS_MAX_BYTES, ROBOTS_MAX_REDIRECTS, RobotsReading, userAgentToken } from "../../src/crawl/robots.js";
import { UrlPolicy } from "../../src/crawl/urls.js";

const ORIGIN = "http://127.0.0.1:8080";
const ROBOTS_URL = `${ORIGIN}/robots.txt`;
const USER_AGENT = "coroutine-crawler/1.2 (+https://x)";

function reading(options: CrawlOptions = {}): RobotsReading {
  const resolved = resolveOptions({ robots: true, userAgent: USER_AGENT, ...options });
  return new RobotsReading(ORIGIN, resolved, new UrlPolicy([`${ORIGIN}/`], resolved));
}

function response(status: number, body: string | Uint8Array = "", headers: Record<string, string> = {}): HttpResponse {
  return { status, headers, body: typeof body === "string" ? Buffer.from(body) : body };
}

function redirect(location: string, status = 301): HttpResponse {
  return response(status, "", { location });
}

/** Feeds the outcomes in turn and returns what `next()` said to each. */
function feed(robots: RobotsReading, ...outcomes: Array<HttpResponse | FetchError>): string[] {
  return outcomes.map(function step(outcome) {
    return robots.next(outcome);
  });
}

/** A reading fed one 200 response with this body. */
function readText(text: string, options: CrawlOptions = {}): RobotsReading {
  const robots = reading(options);
  expect(robots.next(response(200, text))).toBe("done");
  return robots;
}

describe("userAgentToken", () => {
  it("takes the product token before the version and comments", () => {
    expect(userAgentToken(USER_AGENT)).toBe("coroutine-crawler");
    expect(userAgentToken("  My_Bot ")).toBe("My_Bot");
  });

  it("stops at the first character a token may not hold", () => {
    expect(userAgentToken("bot2go/1.0")).toBe("bot");
  });

  it("gives * when the user agent starts with no token", () => {
    expect(userAgentToken("1.0 something")).toBe("*");
  });
});

describe("RobotsReading", () => {
  it("asks for /robots.txt at its origin first", () => {
    expect(reading().url).toBe(ROBOTS_URL);
  });

  it("has no rules or report before it is done", () => {
    const robots = reading();
    expect(() => robots.rules).toThrow(/not been read yet/);
    expect(() => robots.report).toThrow(/not been read yet/);
  });

  describe("a 200", () => {
    it("follows the group of the crawler's token rather than *", () => {
      const rules = readText(
        ["User-agent: *", "Disallow: /all", "", "User-agent: coroutine-crawler", "Disallow: /ours", ""].join("\n"),
      ).rules;
      expect(rules.verdict).toBe("rules");
      expect(rules.allows(`${ORIGIN}/ours/page`)).toBe(false);
      expect(rules.allows(`${ORIGIN}/all/page`)).toBe(true);
      expect(rules.allows(`${ORIGIN}/`)).toBe(true);
    });

    it("matches the token without regard to case", () => {
      const rules = readText("User-agent: Coroutine-Crawler\nDisallow: /x\n").rules;
      expect(rules.allows(`${ORIGIN}/x`)).toBe(false);
    });

    it("follows the * group when none names the crawler", () => {
      const rules = readText("User-agent: otherbot\nDisallow: /\n\nUser-agent: *\nDisallow: /private\n").rules;
      expect(rules.allows(`${ORIGIN}/private/a`)).toBe(false);
      expect(rules.allows(`${ORIGIN}/public`)).toBe(true);
    });

    it("lets the longest matching rule win, and Allow win a tie", () => {
      const rules = readText("User-agent: *\nDisallow: /docs\nAllow: /docs/public\nAllow: /same\nDisallow: /same\n").rules;
      expect(rules.allows(`${ORIGIN}/docs/secret`)).toBe(false);
      expect(rules.allows(`${ORIGIN}/docs/public/a`)).toBe(true);
      expect(rules.allows(`${ORIGIN}/same`)).toBe(true);
    });

    it("gives the group's Crawl-delay in milliseconds, or null when it has none", () => {
      expect(readText("User-agent: *\nCrawl-delay: 2.5\n").rules.crawlDelayMs).toBe(2500);
      expect(readText("User-agent: coroutine-crawler\nCrawl-delay: 1\n\nUser-agent: *\nCrawl-delay: 9\n").rules.crawlDelayMs).toBe(1000);
      expect(readText("User-agent: *\nDisallow: /x\n").rules.crawlDelayMs).toBeNull();
      expect(readText("User-agent: *\nCrawl-delay: soon\n").rules.crawlDelayMs).toBeNull();
    });

    it("reports the origin, URL, status, verdict, Crawl-delay and attempts", () => {
      expect(readText("User-agent: *\nCrawl-delay: 3\n").report).toEqual({
        origin: ORIGIN,
        url: ROBOTS_URL,
        status: 200,
        error: null,
        detail: null,
        verdict: "rules",
        crawlDelayMs: 3000,
        attempts: 1,
      });
    });

    it("decodes a gzip body", () => {
      const robots = reading();
      const body = gzipSync(Buffer.from("User-agent: *\nDisallow: /zipped\n"));
      expect(robots.next(response(200, body, { "content-encoding": "gzip" }))).toBe("done");
      expect(robots.rules.allows(`${ORIGIN}/zipped`)).toBe(false);
      expect(robots.rules.allows(`${ORIGIN}/plain`)).toBe(true);
    });

    it("ends as unreachable when the body cannot be decoded", () => {
      const robots = reading();
      expect(robots.next(response(200, "not gzip", { "content-encoding": "gzip" }))).toBe("done");
      expect(robots.report).toMatchObject({ status: 200, error: "BadResponse", verdict: "unreachable" });
      expect(robots.rules.allows(`${ORIGIN}/`)).toBe(false);
      expect(robots.rules.refusal?.error).toBe("BadResponse");
      expect(robots.rules.refusal?.detail).toMatch(new RegExp(`^robots\\.txt ${ROBOTS_URL} could not be read \\(1 attempt\\): .+`));
      expect(robots.report.detail).toBe(robots.rules.refusal?.detail.replace(/^[^)]*\): /, ""));
    });

    it("ends as unreachable, BodyTooLarge, when the body decodes past maxBodyBytes", () => {
      const robots = reading({ maxBodyBytes: 1000 });
      const body = gzipSync(Buffer.alloc(10_000, "#"));
      expect(robots.next(response(200, body, { "content-encoding": "gzip" }))).toBe("done");
      expect(robots.report).toMatchObject({ status: 200, error: "BodyTooLarge", verdict: "unreachable" });
      expect(robots.rules.refusal?.error).toBe("BodyTooLarge");
      expect(robots.rules.refusal?.detail).toContain("longer than maxBodyBytes (1000)");
    });

    /**
     * A file of ROBOTS_MAX_BYTES and more whose line `Disallow: /cabinet`
     * straddles the limit: only "Disallow: /c" is inside it.
     */
    function oversized(lineEnd: string): string {
      const start = `User-agent: *${lineEnd}Disallow: /early${lineEnd}`;
      const straddling = `Disallow: /cabinet${lineEnd}`;
      const inside = "Disallow: /c".length;
      const fillerLength = ROBOTS_MAX_BYTES - start.length - inside;
      const filler = `#${"x".repeat(fillerLength - 1 - lineEnd.length)}${lineEnd}`;
      return `${start}${filler}${straddling}Disallow: /late${lineEnd}`;
    }

    it("parses a body over 500 KiB up to its last whole line within 500 KiB", () => {
      const text = oversized("\n");
      expect(text.length).toBeGreaterThan(ROBOTS_MAX_BYTES);
      const rules = readText(text).rules;
      expect(rules.allows(`${ORIGIN}/early`)).toBe(false);
      expect(rules.allows(`${ORIGIN}/cabbage`)).toBe(true); // "Disallow: /c", the line cut short, is not read.
      expect(rules.allows(`${ORIGIN}/cabinet`)).toBe(true);
      expect(rules.allows(`${ORIGIN}/late`)).toBe(true);
    });

    it("cuts an oversized body after its last whole line when lines end with CR alone", () => {
      const rules = readText(oversized("\r")).rules;
      expect(rules.allows(`${ORIGIN}/early`)).toBe(false);
      expect(rules.allows(`${ORIGIN}/cabbage`)).toBe(true);
    });
  });

  describe("a 4xx", () => {
    it.each([400, 401, 403, 404, 410])("allows everything after a %i", (status) => {
      const robots = reading();
      expect(robots.next(response(status))).toBe("done");
      expect(robots.rules.verdict).toBe("allow-all");
      expect(robots.rules.allows(`${ORIGIN}/anything`)).toBe(true);
      expect(robots.report).toEqual({ origin: ORIGIN, url: ROBOTS_URL, status, error: null, detail: null, verdict: "allow-all", crawlDelayMs: null, attempts: 1 });
    });
  });

  describe("a 5xx or a 429", () => {
    it.each([500, 503, 429])("retries a %i until maxTries, then finds the origin unreachable", (status) => {
      const robots = reading({ maxTries: 3 });
      expect(feed(robots, response(status), response(status), response(status))).toEqual(["retry", "retry", "done"]);
      expect(robots.attempts).toBe(3);
      expect(robots.rules.verdict).toBe("unreachable");
      expect(robots.rules.allows(`${ORIGIN}/`)).toBe(false);
      expect(robots.report).toEqual({ origin: ORIGIN, url: ROBOTS_URL, status, error: null, detail: null, verdict: "unreachable", crawlDelayMs: null, attempts: 3 });
    });

    it("reads the rules when a retry succeeds", () => {
      const robots = reading({ maxTries: 3 });
      expect(feed(robots, response(503), response(200, "User-agent: *\nDisallow: /x\n"))).toEqual(["retry", "done"]);
      expect(robots.report).toMatchObject({ status: 200, verdict: "rules", attempts: 2 });
      expect(robots.rules.allows(`${ORIGIN}/x`)).toBe(false);
    });

    it("finds the origin unreachable at once when maxTries is 1", () => {
      const robots = reading({ maxTries: 1 });
      expect(robots.next(response(500))).toBe("done");
      expect(robots.report.verdict).toBe("unreachable");
    });
  });

  describe("a network error", () => {
    it("gives the pages of a 5xx origin RobotsUnreachable, with the status and attempts in the detail", () => {
      const robots = reading({ maxTries: 2 });
      expect(feed(robots, response(503), response(503))).toEqual(["retry", "done"]);
      expect(robots.rules.refusal).toEqual({ error: "RobotsUnreachable", detail: `robots.txt ${ROBOTS_URL} could not be read (2 attempts): status 503` });
    });

    it("retries a retryable error until maxTries, then finds the origin unreachable", () => {
      const robots = reading({ maxTries: 2 });
      expect(feed(robots, "ConnectionRefused", "ConnectionRefused")).toEqual(["retry", "done"]);
      expect(robots.report).toEqual({
        origin: ORIGIN,
        url: ROBOTS_URL,
        status: null,
        error: "ConnectionRefused",
        detail: null,
        verdict: "unreachable",
        crawlDelayMs: null,
        attempts: 2,
      });
      expect(robots.rules.refusal).toEqual({ error: "ConnectionRefused", detail: `robots.txt ${ROBOTS_URL} could not be read (2 attempts): ConnectionRefused` });
    });

    it("gives its pages the failure's name and detail: a TlsError's, tried once", () => {
      const robots = reading({ maxTries: 4 });
      expect(robots.next("TlsError", "CERT_HAS_EXPIRED: certificate has expired")).toBe("done");
      expect(robots.report).toMatchObject({ error: "TlsError", detail: "CERT_HAS_EXPIRED: certificate has expired", verdict: "unreachable", attempts: 1 });
      expect(robots.rules.refusal).toEqual({ error: "TlsError", detail: `robots.txt ${ROBOTS_URL} could not be read (1 attempt): CERT_HAS_EXPIRED: certificate has expired` });
    });

    it("does not retry a name that does not resolve, and retries one the resolver did not answer", () => {
      const notFound = reading({ maxTries: 4 });
      expect(notFound.next("HostNotFound", "ENOTFOUND: the name does not resolve")).toBe("done");
      expect(notFound.rules.refusal?.error).toBe("HostNotFound");
      const again = reading({ maxTries: 2 });
      const temporary = "EAI_AGAIN: the DNS server did not answer in time (a temporary failure)";
      expect([again.next("HostNotFound", temporary), again.next("HostNotFound", temporary)]).toEqual(["retry", "done"]);
      expect(again.report).toMatchObject({ error: "HostNotFound", detail: temporary, attempts: 2 });
    });

    it("finds the origin unreachable at once after a BadResponse", () => {
      const robots = reading({ maxTries: 4 });
      expect(robots.next("BadResponse")).toBe("done");
      expect(robots.report).toMatchObject({ status: null, error: "BadResponse", verdict: "unreachable", attempts: 1 });
    });

    it("ends as unreachable, with a NetworkError, when the stage gives up on it", () => {
      const robots = reading();
      expect(robots.next("Timeout")).toBe("retry");
      robots.fail();
      expect(robots.report).toMatchObject({ status: null, error: "NetworkError", verdict: "unreachable", attempts: 1 });
    });
  });

  describe("a redirect", () => {
    it("follows it and applies the file found there to the first origin", () => {
      const robots = reading();
      const target = "http://127.0.0.1:9090/moved/robots.txt";
      expect(robots.next(redirect(target))).toBe("follow");
      expect(robots.url).toBe(target);
      expect(robots.attempts).toBe(0);
      expect(robots.next(response(200, "User-agent: *\nDisallow: /private\n"))).toBe("done");
      expect(robots.rules.allows(`${ORIGIN}/private`)).toBe(false);
      expect(robots.report).toEqual({ origin: ORIGIN, url: target, status: 200, error: null, detail: null, verdict: "rules", crawlDelayMs: null, attempts: 2 });
    });

    it("resolves a relative Location against the URL requested", () => {
      const robots = reading();
      expect(robots.next(redirect("/elsewhere.txt", 302))).toBe("follow");
      expect(robots.url).toBe(`${ORIGIN}/elsewhere.txt`);
    });

    it(`follows ${ROBOTS_MAX_REDIRECTS} redirects, and allows everything after one more`, () => {
      const robots = reading();
      const steps: string[] = [];
      for (let hop = 1; hop <= ROBOTS_MAX_REDIRECTS + 1; hop++) steps.push(robots.next(redirect(`/hop-${hop}`, 307)));
      expect(steps).toEqual([...Array<string>(ROBOTS_MAX_REDIRECTS).fill("follow"), "done"]);
      expect(robots.report).toEqual({
        origin: ORIGIN,
        url: `${ORIGIN}/hop-${ROBOTS_MAX_REDIRECTS}`,
        status: 307,
        error: null,
        detail: null,
        verdict: "allow-all",
        crawlDelayMs: null,
        attempts: ROBOTS_MAX_REDIRECTS + 1,
      });
    });

    it("allows everything when it leads to a host the URL policy refuses", () => {
      const robots = reading();
      expect(robots.next(redirect("http://elsewhere.example/robots.txt", 302))).toBe("done");
      expect(robots.report).toMatchObject({ url: ROBOTS_URL, status: 302, verdict: "allow-all", attempts: 1 });
      expect(robots.rules.allows(`${ORIGIN}/anything`)).toBe(true);
    });

    it("allows everything when it has no Location", () => {
      const robots = reading();
      expect(robots.next(response(302))).toBe("done");
      expect(robots.report).toMatchObject({ status: 302, verdict: "allow-all" });
    });

    it("starts the count of attempts again at the new URL, and reports the attempts at every URL", () => {
      const robots = reading({ maxTries: 2 });
      expect(feed(robots, response(503), redirect("/moved.txt"), response(503), response(503))).toEqual(["retry", "follow", "retry", "done"]);
      expect(robots.report).toMatchObject({ url: `${ORIGIN}/moved.txt`, status: 503, verdict: "unreachable", attempts: 4 });
    });
  });
});
