import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/crawl/options.js";
import { dropCredentials, UrlPolicy } from "../../src/crawl/urls.js";

/** A link as links.ts and page.ts hand it to visit(): serialised by WHATWG URL, credentials and fragment dropped. */
function serialised(url: string): string | null {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  parsed.hash = "";
  return dropCredentials(parsed).href;
}

const urls = fc.webUrl({
  validSchemes: ["http", "https"],
  withQueryParameters: true,
  withFragments: true,
  authoritySettings: { withIPv4: true, withIPv6: true, withPort: true, withUserInfo: true },
});

const policies = fc.record({
  root: fc.oneof(urls, fc.constantFrom("http://example.com/a/b.html", "http://www.example.com/", "http://127.0.0.1:8080/x/", "http://[::1]/")),
  strict: fc.boolean(),
  noParent: fc.boolean(),
  exclude: fc.constantFrom(undefined, "\\?", "/a"),
  include: fc.constantFrom(undefined, "a", "\\.com"),
});

describe("UrlPolicy.hrefAllowed", () => {
  it("answers as urlAllowed does for every serialised http(s) URL, on links of the root's host and of others", () => {
    fc.assert(
      fc.property(policies, urls, fc.string(), ({ root, strict, noParent, exclude, include }, url, path) => {
        const policy = new UrlPolicy([root], resolveOptions({ strict, noParent, exclude, include }));
        const relative = URL.canParse(path, root) ? [new URL(path, root).href] : []; // A string that does not resolve (`\/` against an http URL) is no link.
        for (const candidate of [url, ...relative]) {
          const href = serialised(candidate);
          if (href === null) continue;
          expect(policy.hrefAllowed(href), `${href} under ${root}`).toBe(policy.urlAllowed(href));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses what urlAllowed refuses among strings that are not serialised URLs", () => {
    const policy = new UrlPolicy(["http://example.com/"], resolveOptions({}));
    for (const text of ["", "example.com/a", "mailto:a@example.com", "HTTP://EXAMPLE.COM/a", "http://user:pw@example.com/a", "http://example.com"]) {
      expect(policy.hrefAllowed(text), text).toBe(policy.urlAllowed(text));
    }
  });
});
