import { describe, expect, it } from "vitest";
import { defragment, dropCredentials, hostIsAllowed, inDomains, isHttpUrl, normalizeRoot, originOf, rootProblem, UrlPolicy } from "../../src/crawl/urls.js";

describe("normalizeRoot", () => {
  it("adds http:// to a root without a scheme", () => {
    expect(normalizeRoot("xkcd.com")).toBe("http://xkcd.com/");
    expect(normalizeRoot("xkcd.com/353/")).toBe("http://xkcd.com/353/");
  });

  it("treats host:port as a host, not a scheme", () => {
    expect(normalizeRoot("localhost:8080")).toBe("http://localhost:8080/");
    expect(normalizeRoot("127.0.0.1:3000/a?b=c")).toBe("http://127.0.0.1:3000/a?b=c");
  });

  it("adds http: to a scheme-relative root", () => {
    expect(normalizeRoot("//x.com/a")).toBe("http://x.com/a");
  });

  it("keeps an https root and normalises its spelling", () => {
    expect(normalizeRoot("HTTPS://Example.COM:443")).toBe("https://example.com/");
    expect(normalizeRoot("  http://example.com/a  ")).toBe("http://example.com/a");
  });

  it("drops the fragment", () => {
    expect(normalizeRoot("http://example.com/a#top")).toBe("http://example.com/a");
  });

  it("drops user:pass@, which the crawler never sends", () => {
    expect(normalizeRoot("http://user:secret@Example.com/a#top")).toBe("http://example.com/a");
    expect(normalizeRoot("//user@example.com/")).toBe("http://example.com/");
    expect(normalizeRoot("https://:pass@example.com")).toBe("https://example.com/");
  });

  it("encodes an internationalised host as punycode", () => {
    expect(normalizeRoot("bücher.de")).toBe("http://xn--bcher-kva.de/");
  });

  it("throws a TypeError naming the root for a non-http scheme", () => {
    expect(() => normalizeRoot("ftp://x")).toThrow(
      new TypeError('Expected `roots` to hold http(s) URLs, got "ftp://x": its scheme is ftp: (only http and https are crawled)'),
    );
    expect(() => normalizeRoot("mailto:a@b.com")).toThrow(TypeError);
    expect(() => normalizeRoot("javascript:alert(1)")).toThrow(TypeError);
  });

  it("says a port over 65535 is out of range, not that the URL is not http(s)", () => {
    expect(() => normalizeRoot("http://127.0.0.1:99999/")).toThrow(
      new TypeError('Expected `roots` to hold http(s) URLs, got "http://127.0.0.1:99999/": its port 99999 is out of range (0 to 65535)'),
    );
    expect(rootProblem("localhost:65536")).toBe("its port 65536 is out of range (0 to 65535)");
    expect(rootProblem("http://[::1]:70000/a")).toBe("its port 70000 is out of range (0 to 65535)");
    expect(rootProblem("http://user:pw@a.com:123456")).toBe("its port 123456 is out of range (0 to 65535)");
    expect(rootProblem("http://a.com:8o8o/")).toBe("its port '8o8o' is not a number");
    expect(rootProblem("http://127.0.0.1:65535/")).toBeNull();
  });

  it("says why a root is refused", () => {
    expect(rootProblem("mailto:a@b.com")).toBe("its scheme is mailto: (only http and https are crawled)");
    expect(rootProblem("exa mple.com")).toBe("it does not parse as a URL");
    expect(rootProblem("http://")).toBe("it does not parse as a URL");
    expect(rootProblem("a.com/x")).toBeNull();
  });

  it("throws a TypeError for a root that does not parse", () => {
    expect(() => normalizeRoot("")).toThrow(/got ""/);
    expect(() => normalizeRoot("http://")).toThrow(TypeError);
    expect(() => normalizeRoot("exa mple.com")).toThrow(TypeError);
    expect(() => normalizeRoot("http://[::1")).toThrow(TypeError);
  });

  it("throws a TypeError for a root that is not a string", () => {
    expect(() => normalizeRoot(42 as unknown as string)).toThrow(/got 42/);
  });
});

describe("originOf", () => {
  it("gives URL's origin for every spelling, after an origin it has found before as well", () => {
    const urls = [
      "http://a.com/x",
      "http://a.com/y?q#f",
      "http://a.com:8080/x",
      "http://a.co/x",
      "http://a.com.evil.net/x",
      "https://a.com/x",
      "http://u:p@a.com/x",
      "HTTP://A.COM:80/x",
      "http://a.com",
      "http://[::1]:81/x",
      "http://a.com//x",
      "file:///etc/passwd",
      "http://a.com/x",
    ];
    for (const first of urls) {
      originOf(first); // The origin it remembers, for the next call.
      for (const url of urls) expect(originOf(url), `${url} after ${first}`).toBe(new URL(url).origin);
    }
  });

  it("throws URL's TypeError for a string that is not an absolute URL", () => {
    originOf("http://a.com/x");
    expect(() => originOf("/x")).toThrow(TypeError);
    expect(() => originOf("")).toThrow(TypeError);
  });
});

describe("isHttpUrl", () => {
  it("accepts absolute http and https URLs", () => {
    expect(isHttpUrl("http://example.com/")).toBe(true);
    expect(isHttpUrl("https://[::1]:8443/x")).toBe(true);
  });

  it("refuses other schemes, relative URLs and garbage", () => {
    for (const url of ["ftp://example.com/", "mailto:a@b", "/relative", "example.com", "", "http://", "javascript:x"]) {
      expect(isHttpUrl(url), url).toBe(false);
    }
  });
});

describe("defragment", () => {
  it("removes the fragment and normalises the URL", () => {
    expect(defragment("HTTP://X.com/a#top")).toBe("http://x.com/a");
    expect(defragment("http://x.com/a?q=1#")).toBe("http://x.com/a?q=1");
  });

  it("leaves a URL without fragment as it is", () => {
    expect(defragment("http://x.com/a?q=1")).toBe("http://x.com/a?q=1");
  });

  it("cuts a string that is not a URL at its first #", () => {
    expect(defragment("/a/b#c#d")).toBe("/a/b");
    expect(defragment("no fragment")).toBe("no fragment");
  });
});

describe("hostIsAllowed", () => {
  const roots = new Set(["example.com", "www.other.org", "127.0.0.1", "[::1]"]);

  it("accepts a host equal to a root host", () => {
    expect(hostIsAllowed("example.com", roots, true)).toBe(true);
    expect(hostIsAllowed("www.other.org", roots, false)).toBe(true);
  });

  it("matches modulo a leading www. on either side when strict", () => {
    expect(hostIsAllowed("www.example.com", roots, true)).toBe(true);
    expect(hostIsAllowed("other.org", roots, true)).toBe(true);
  });

  it("refuses other subdomains when strict", () => {
    expect(hostIsAllowed("blog.example.com", roots, true)).toBe(false);
    expect(hostIsAllowed("www.www.example.com", roots, true)).toBe(false);
    expect(hostIsAllowed("example.org", roots, true)).toBe(false);
  });

  it("compares registrable domains by the Public Suffix List when lenient", () => {
    const uk = new Set(["example.co.uk"]);
    expect(hostIsAllowed("shop.example.co.uk", uk, false)).toBe(true);
    expect(hostIsAllowed("www.example.co.uk", uk, false)).toBe(true);
    expect(hostIsAllowed("other.co.uk", uk, false)).toBe(false);
    expect(hostIsAllowed("a.other.co.uk", uk, false)).toBe(false);
    expect(hostIsAllowed("co.uk", uk, false)).toBe(false);
    // A private suffix (github.io) is a public one here: one user's site does not allow another's.
    expect(hostIsAllowed("you.github.io", new Set(["me.github.io"]), false)).toBe(false);
    expect(hostIsAllowed("docs.me.github.io", new Set(["me.github.io"]), false)).toBe(true);
  });

  it("compares the registrable domains when lenient", () => {
    expect(hostIsAllowed("blog.example.com", roots, false)).toBe(true);
    expect(hostIsAllowed("a.b.other.org", roots, false)).toBe(true);
    expect(hostIsAllowed("example.net", roots, false)).toBe(false);
  });

  it("compares labels, not the labels joined without a dot", () => {
    // The chapter's lenient_host gave "examplecom" for both.
    expect(hostIsAllowed("examplec.om", roots, false)).toBe(false);
  });

  it("ignores one trailing dot", () => {
    expect(hostIsAllowed("example.com.", roots, true)).toBe(true);
    expect(hostIsAllowed("sub.example.com.", roots, false)).toBe(true);
  });

  it("matches IP literals only exactly, in both modes", () => {
    for (const strict of [true, false]) {
      expect(hostIsAllowed("127.0.0.1", roots, strict)).toBe(true);
      expect(hostIsAllowed("[::1]", roots, strict)).toBe(true);
      expect(hostIsAllowed("10.0.0.1", roots, strict)).toBe(false);
      expect(hostIsAllowed("192.168.0.1", new Set(["10.168.0.1"]), strict)).toBe(false);
      expect(hostIsAllowed("[::2]", roots, strict)).toBe(false);
    }
  });

  it("does not let a name match an IP root by its last labels", () => {
    expect(hostIsAllowed("www.0.1", new Set(["127.0.0.1"]), false)).toBe(false);
  });

  it("matches a single-label host such as localhost", () => {
    expect(hostIsAllowed("localhost", new Set(["localhost"]), false)).toBe(true);
    expect(hostIsAllowed("www.localhost", new Set(["localhost"]), true)).toBe(true);
    expect(hostIsAllowed("otherhost", new Set(["localhost"]), false)).toBe(false);
  });
});

describe("inDomains", () => {
  it("matches a domain and its subdomains, label by label", () => {
    const domains = ["example.com", "xn--bcher-kva.de"];
    for (const host of ["example.com", "www.example.com", "a.b.example.com", "xn--bcher-kva.de", "shop.xn--bcher-kva.de"]) expect(inDomains(host, domains)).toBe(true);
    for (const host of ["badexample.com", "example.com.evil.net", "com", "example.org"]) expect(inDomains(host, domains)).toBe(false);
  });

  it("matches an IP address only as itself", () => {
    expect(inDomains("10.0.0.1", ["10.0.0.1"])).toBe(true);
    expect(inDomains("1.10.0.0.1", ["10.0.0.1"])).toBe(false);
  });
});

describe("UrlPolicy with allowedDomains", () => {
  const root = "http://docs.example.com/guide/";

  it("allows the domains' hosts besides the roots', with strict and lenient alike", () => {
    for (const strict of [true, false]) {
      const policy = new UrlPolicy([root], { strict, exclude: null, allowedDomains: ["cdn.net"] });
      expect(policy.urlAllowed("http://docs.example.com/x")).toBe(true);
      expect(policy.hrefAllowed("https://img.cdn.net/a.png")).toBe(true);
      expect(policy.hrefAllowed("https://cdn.net/")).toBe(true);
      expect(policy.hrefAllowed("https://notcdn.net/")).toBe(false);
      expect(policy.hrefAllowed("http://blog.example.com/")).toBe(!strict); // the roots' rule as before
    }
  });

  it("leaves exclude and include in force on the domains' hosts", () => {
    const policy = new UrlPolicy([root], { strict: true, exclude: /\.png$/, include: /cdn|guide/, allowedDomains: ["cdn.net", "other.org"] });
    expect(policy.hrefAllowed("https://cdn.net/a.css")).toBe(true);
    expect(policy.hrefAllowed("https://cdn.net/a.png")).toBe(false);
    expect(policy.hrefAllowed("https://other.org/page")).toBe(false);
    expect(policy.hrefAllowed("https://other.org/guide")).toBe(true);
  });

  it("applies noParent on the roots' hosts only", () => {
    const policy = new UrlPolicy([root], { strict: true, exclude: null, noParent: true, allowedDomains: ["example.com"] });
    expect(policy.hrefAllowed("http://docs.example.com/guide/a")).toBe(true);
    expect(policy.hrefAllowed("http://docs.example.com/blog/")).toBe(false); // a root's host: under its directory only
    expect(policy.hrefAllowed("http://www.example.com/anything")).toBe(true); // only allowedDomains allows it: no root directory there
    expect(policy.urlAllowed("http://www.example.com/anything")).toBe(true);
  });

  it("changes nothing when left out or null", () => {
    const without = new UrlPolicy([root], { strict: true, exclude: null });
    const withNull = new UrlPolicy([root], { strict: true, exclude: null, allowedDomains: null });
    for (const url of ["http://docs.example.com/a", "http://cdn.net/", "http://www.docs.example.com/"]) expect(withNull.hrefAllowed(url)).toBe(without.hrefAllowed(url));
    expect(without.hrefAllowed("http://cdn.net/")).toBe(false);
  });
});

describe("dropCredentials", () => {
  it("removes the user name and password, and returns the URL it changed", () => {
    const url = new URL("http://user:secret@example.com:8080/a?b#c");
    expect(dropCredentials(url)).toBe(url);
    expect(url.href).toBe("http://example.com:8080/a?b#c");
  });

  it("leaves a URL without credentials as it was", () => {
    expect(dropCredentials(new URL("https://example.com/@home")).href).toBe("https://example.com/@home");
  });
});

describe("UrlPolicy", () => {
  const strict = { strict: true, exclude: null };

  it("normalises the roots and removes duplicates, keeping order", () => {
    const policy = new UrlPolicy(["b.com", "http://a.com/", "http://b.com/#x", "a.com"], strict);
    expect(policy.roots).toEqual(["http://b.com/", "http://a.com/"]);
  });

  it("counts a root with credentials and the same root without them as one root", () => {
    const policy = new UrlPolicy(["http://user:secret@a.com/", "a.com", "http://b@a.com/x"], strict);
    expect(policy.roots).toEqual(["http://a.com/", "http://a.com/x"]);
  });

  it("collects the hosts of the roots as rootDomains", () => {
    const policy = new UrlPolicy(["http://Example.com:8080/a", "https://[::1]:9/", "127.0.0.1:80"], strict);
    expect([...policy.rootDomains]).toEqual(["example.com", "[::1]", "127.0.0.1"]);
  });

  it("throws a TypeError for a bad root or no roots", () => {
    expect(() => new UrlPolicy(["ftp://x"], strict)).toThrow(/`roots`.*"ftp:\/\/x"/);
    expect(() => new UrlPolicy([], strict)).toThrow(TypeError);
  });

  it("allows http and https links to a root host", () => {
    const policy = new UrlPolicy(["example.com"], strict);
    expect(policy.urlAllowed("http://example.com/a")).toBe(true);
    expect(policy.urlAllowed("https://www.example.com/b?c")).toBe(true);
  });

  it("does not compare ports", () => {
    const policy = new UrlPolicy(["http://127.0.0.1:8080/"], strict);
    expect(policy.urlAllowed("http://127.0.0.1:9090/x")).toBe(true);
  });

  it("refuses other schemes, other hosts and strings that are not URLs", () => {
    const policy = new UrlPolicy(["example.com"], strict);
    const refused = ["ftp://example.com/", "mailto:me@example.com", "http://example.org/", "/a", "", "http://[oops/"];
    for (const url of refused) expect(policy.urlAllowed(url), url).toBe(false);
  });

  it("applies the host policy chosen by strict", () => {
    const lenient = new UrlPolicy(["example.com"], { strict: false, exclude: null });
    expect(lenient.urlAllowed("http://a.example.com/")).toBe(true);
    expect(new UrlPolicy(["example.com"], strict).urlAllowed("http://a.example.com/")).toBe(false);
  });

  it("refuses URLs that exclude matches anywhere in the string", () => {
    const policy = new UrlPolicy(["example.com"], { strict: true, exclude: /\.pdf$|private/ });
    expect(policy.urlAllowed("http://example.com/a.pdf")).toBe(false);
    expect(policy.urlAllowed("http://example.com/x/private/y")).toBe(false);
    expect(policy.urlAllowed("http://example.com/a.html")).toBe(true);
  });

  it("gives the same answer every time for a global exclude pattern", () => {
    const policy = new UrlPolicy(["example.com"], { strict: true, exclude: /skip/g });
    const urls = ["http://example.com/skip", "http://example.com/skip/b", "http://example.com/c/skip"];
    expect(urls.map((url) => policy.urlAllowed(url))).toEqual([false, false, false]);
  });

  it("answers a URL asked again as it did the first time", () => {
    const policy = new UrlPolicy(["example.com"], { strict: true, exclude: /private/ });
    const urls = ["http://example.com/a", "http://example.org/", "http://example.com/private", "/a"];
    const first = urls.map((url) => policy.urlAllowed(url));
    expect(first).toEqual([true, false, false, false]);
    expect(urls.map((url) => policy.urlAllowed(url))).toEqual(first);
  });
  it("allows only URLs include matches anywhere in the string, and lets exclude win", () => {
    const policy = new UrlPolicy(["example.com"], { strict: true, exclude: /private/, include: /\/docs\// });
    expect(policy.urlAllowed("http://example.com/docs/a")).toBe(true);
    expect(policy.urlAllowed("http://example.com/blog/a")).toBe(false);
    expect(policy.urlAllowed("http://example.com/docs/private/a")).toBe(false);
    expect(policy.urlAllowed("http://example.org/docs/a")).toBe(false);
  });

  it("gives the same answer every time for a global include pattern", () => {
    const policy = new UrlPolicy(["example.com"], { strict: true, exclude: null, include: /docs/g });
    expect([1, 2, 3].map(() => policy.urlAllowed("http://example.com/docs/"))).toEqual([true, true, true]);
  });

  describe("noParent", () => {
    const noParent = { strict: true, exclude: null, noParent: true };

    it("allows only paths under the directory of a root's path", () => {
      const policy = new UrlPolicy(["http://example.com/a/b.html"], noParent);
      const allowed = ["http://example.com/a/", "http://example.com/a/c.html", "http://example.com/a/sub/d?e=1", "https://example.com:8443/a/x"];
      const refused = ["http://example.com/", "http://example.com/a", "http://example.com/ab/c", "http://example.com/b/a/", "http://example.com/A/x"];
      for (const url of allowed) expect(policy.urlAllowed(url), url).toBe(true);
      for (const url of refused) expect(policy.urlAllowed(url), url).toBe(false);
    });

    it("takes a root ending in / as its own directory, and a root without one as its parent's", () => {
      expect(new UrlPolicy(["http://example.com/a/"], noParent).urlAllowed("http://example.com/a/x")).toBe(true);
      expect(new UrlPolicy(["http://example.com/a/"], noParent).urlAllowed("http://example.com/x")).toBe(false);
      expect(new UrlPolicy(["http://example.com/a"], noParent).urlAllowed("http://example.com/x")).toBe(true);
    });

    it("pairs each root's directory with the hosts that root allows", () => {
      const policy = new UrlPolicy(["http://a.com/docs/", "http://b.com/blog/"], noParent);
      expect(policy.urlAllowed("http://a.com/docs/1")).toBe(true);
      expect(policy.urlAllowed("http://www.a.com/docs/1")).toBe(true);
      expect(policy.urlAllowed("http://b.com/blog/1")).toBe(true);
      expect(policy.urlAllowed("http://a.com/blog/1")).toBe(false);
      expect(policy.urlAllowed("http://b.com/docs/1")).toBe(false);
    });

    it("compares paths as URL serialises them", () => {
      const policy = new UrlPolicy(["http://example.com/caf%C3%A9/"], noParent);
      expect(policy.urlAllowed("http://example.com/café/menu")).toBe(true);
      expect(policy.urlAllowed("http://example.com/a/../caf%C3%A9/menu")).toBe(true);
    });
  });

  it("holds maxDepth for visit(), Infinity when not given", () => {
    expect(new UrlPolicy(["example.com"], strict).maxDepth).toBe(Infinity);
    expect(new UrlPolicy(["example.com"], { ...strict, maxDepth: 2 }).maxDepth).toBe(2);
  });
});
