/**
 * The crawl's cookie jar (src/crawl/cookies.ts): how the options give one,
 * what a response's Set-Cookie fields put in it, and what a request to a
 * URL carries. The jar is tough-cookie's own, with its RFC 6265 rules.
 */
import { createRequire } from "node:module";
import { CookieJar, MemoryCookieStore, Store } from "tough-cookie";
import { describe, expect, it } from "vitest";
import { newCookieJar, resolveCookies, storeCookies, withCookies } from "../../src/crawl/cookies.js";
import { resolveOptions } from "../../src/crawl/options.js";

const NOW = new Date();

/**
 * tough-cookie's CommonJS build, which the crawl requires (lazily, as it does
 * its other CommonJS dependencies): its CookieJar is not the ES module's
 * class, so `instanceof` is checked against this one.
 */
const required = createRequire(import.meta.url)("tough-cookie") as typeof import("tough-cookie");

describe("resolveCookies", () => {
  it("keeps no jar unless asked, a new one for true, the caller's own jar as it is", () => {
    expect(resolveCookies(undefined, undefined)).toBeNull();
    expect(resolveCookies(false, undefined)).toBeNull();
    const one = resolveCookies(true, undefined);
    const two = resolveCookies(true, undefined);
    expect(one).toBeInstanceOf(required.CookieJar);
    expect(one).not.toBe(two); // one jar per crawl
    const mine = new CookieJar();
    expect(resolveCookies(mine, undefined)).toBe(mine);
  });

  it("refuses what is neither a boolean nor a jar, and a jar whose store is not synchronous, naming cookies", () => {
    for (const bad of ["yes", 1, {}, { setCookieSync() {} }]) expect(() => resolveCookies(bad, undefined)).toThrow(/`cookies`/);
    class AsyncStore extends Store {
      override synchronous = false;
    }
    expect(() => resolveCookies(new CookieJar(new AsyncStore()), undefined)).toThrow(/`cookies` to be a CookieJar with a synchronous store/);
    expect(() => resolveCookies(new CookieJar(new MemoryCookieStore()), undefined)).not.toThrow();
  });

  it("refuses a cookieFile that is not a path, or with cookies: false", () => {
    expect(() => resolveCookies(undefined, 3)).toThrow(/`cookieFile` to be a file path/);
    expect(() => resolveCookies(undefined, "")).toThrow(/`cookieFile` to be a file path/);
    expect(() => resolveCookies(false, "/dev/null")).toThrow(/`cookies` not to be false with a `cookieFile`/);
  });

  it("is what resolveOptions gives as `cookies`, with the option names checked there", () => {
    expect(resolveOptions({}).cookies).toBeNull();
    expect(resolveOptions({ cookies: true }).cookies).toBeInstanceOf(required.CookieJar);
    expect(() => resolveOptions({ cookies: "on" as unknown as boolean })).toThrow(TypeError);
  });
});

describe("storeCookies and withCookies", () => {
  it("stores each Set-Cookie line, commas in Expires and all, and sends them back as one Cookie header", () => {
    const jar = newCookieJar();
    storeCookies(jar, "http://a.test/login", "session=s3cret; Path=/; HttpOnly\nseen=1; Expires=Wed, 21 Oct 2099 07:28:00 GMT; Path=/", NOW);
    expect(withCookies({}, jar, "http://a.test/members")).toEqual({ Cookie: "session=s3cret; seen=1" });
  });

  it("sends a host-only cookie to its host alone, a Domain cookie to subdomains, neither to another host", () => {
    const jar = newCookieJar();
    storeCookies(jar, "http://a.test/", "host=1; Path=/\nwide=2; Path=/; Domain=a.test", NOW);
    expect(jar.getCookieStringSync("http://a.test/")).toBe("host=1; wide=2");
    expect(jar.getCookieStringSync("http://www.a.test/x")).toBe("wide=2");
    expect(jar.getCookieStringSync("http://b.test/")).toBe("");
    expect(jar.getCookieStringSync("http://nota.test/")).toBe("");
  });

  it("keeps a cookie to its Path, and a Secure one to https", () => {
    const jar = newCookieJar();
    storeCookies(jar, "https://a.test/app/", "app=1; Path=/app\nsafe=2; Path=/; Secure", NOW);
    expect(jar.getCookieStringSync("https://a.test/app/page")).toBe("app=1; safe=2");
    expect(jar.getCookieStringSync("https://a.test/other")).toBe("safe=2");
    expect(jar.getCookieStringSync("http://a.test/app/page")).toBe("app=1");
  });

  it("drops what the rules refuse instead of throwing: another host's Domain, a public suffix, a line that is no cookie", () => {
    const jar = newCookieJar();
    storeCookies(jar, "http://a.test/", "x=1; Domain=b.test\ny=2; Domain=com\n;;;\nz=3", NOW);
    expect(jar.getCookieStringSync("http://a.test/")).toBe("z=3");
    expect(jar.getCookieStringSync("http://b.test/")).toBe("");
  });

  it("counts Max-Age from the wall clock it is given", () => {
    const jar = newCookieJar();
    storeCookies(jar, "http://a.test/", "old=1; Max-Age=60", new Date(Date.now() - 120_000));
    storeCookies(jar, "http://a.test/", "new=1; Max-Age=60", new Date(Date.now()));
    expect(jar.getCookieStringSync("http://a.test/")).toBe("new=1");
  });

  it("leaves the headers as they are (the same object) when no cookie goes to the URL, and adds to a Cookie header given", () => {
    const headers = { Accept: "text/html" };
    expect(withCookies(headers, null, "http://a.test/")).toBe(headers);
    const jar = newCookieJar();
    expect(withCookies(headers, jar, "http://a.test/")).toBe(headers);
    storeCookies(jar, "http://a.test/", "a=1", NOW);
    expect(withCookies(headers, jar, "http://a.test/")).toEqual({ Accept: "text/html", Cookie: "a=1" });
    expect(withCookies({ cookie: "mine=0" }, jar, "http://a.test/")).toEqual({ cookie: "mine=0; a=1" });
    expect(headers).toEqual({ Accept: "text/html" });
  });
});
